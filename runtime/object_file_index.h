// ObjectFileIndex: the layout of an object file, the file a remapping
// writes for a group of consumers (Logan and Dickens' dynamic remapping).
// Each consumer gets one section holding its data in the order of its
// view's stream, so that it reads everything with one contiguous request;
// bytes several consumers read (shared objects) are in each of their
// sections.
//
// On disk (64-bit integers in the machine's byte order, as MPI's "native"
// representation; the file is meant for the machine family that wrote it):
//   words 0-4  magic, version, index bytes, source size, consumer count;
//   then per consumer: section offset, section bytes, the length of its
//   access encoding and the encoding itself (exchange/access_codec: a view
//   travels as its flattened filetype, so the index stays small however
//   many pieces the view has);
//   zeros up to the first section; sections start at multiples of 4096 (a
//   page: reads of a section can be direct or mapped), in consumer order.
//
// Immutable once built; may be shared across threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/access.h"

namespace flowio::runtime {

struct ObjectFileSection {
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

class ObjectFileIndex {
 public:
  // Bytes of the fixed header: what a reader fetches first to learn
  // index_bytes().
  static constexpr std::size_t kHeaderBytes = 5 * sizeof(std::int64_t);
  static constexpr std::int64_t kSectionAlignment = 4096;

  // The layout for `consumers` (consumer c reads consumers[c]) of a source
  // file of `source_size` bytes. Consumer c's section holds the part of its
  // access that lies below source_size: what reading the source through
  // its view returns, short at end of file as a read is.
  static ObjectFileIndex plan(std::vector<core::Access> consumers, std::int64_t source_size);

  // The index bytes a header announces. Throws UsageError(invalid_argument)
  // naming `path` when `header` (kHeaderBytes long) is not the start of an
  // object file of this version.
  static std::int64_t index_bytes_in(std::span<const std::byte> header, const std::string& path);
  // Parses the whole index (index_bytes_in() bytes from the file's start);
  // throws UsageError(invalid_argument) naming `path` when it is malformed.
  static ObjectFileIndex decode(std::span<const std::byte> index, const std::string& path);
  // The index as written at the file's start (index_bytes() long).
  std::vector<std::byte> encode() const;

  std::size_t consumer_count() const { return consumers_.size(); }
  const core::Access& consumer(std::size_t c) const { return consumers_[c]; }
  const std::vector<core::Access>& consumers() const { return consumers_; }
  const ObjectFileSection& section(std::size_t c) const { return sections_[c]; }
  std::int64_t source_size() const { return source_size_; }
  std::int64_t index_bytes() const { return index_bytes_; }
  // One past the last section's last byte: the object file's size.
  std::int64_t file_size() const { return file_size_; }
  // Bytes of all sections (the consumers' data, shared bytes counted once
  // per consumer).
  std::int64_t data_bytes() const;

 private:
  ObjectFileIndex() = default;
  std::vector<std::int64_t> words() const;

  std::vector<core::Access> consumers_;
  std::vector<ObjectFileSection> sections_;
  std::int64_t source_size_ = 0;
  std::int64_t index_bytes_ = 0;
  std::int64_t file_size_ = 0;
};

}  // namespace flowio::runtime
