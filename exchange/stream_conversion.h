// StreamConversion: one access's data between memory (native, `count`
// copies of the memory datatype from a buffer) and its stream as it lies in
// a file of another data representation. pack() and unpack() work on any
// byte range of that stream, the ranges a collective operation's buffer
// iterations cut, so conversion runs per iteration, beside packing, and
// overlaps the exchange and the file I/O of the other iterations.
//
// Byte ranges may split an element (a window boundary falls where it
// falls): pack() converts the whole element and keeps the part asked for;
// unpack() keeps the part it got and stores the element once all its bytes
// have arrived, whatever the order of the calls.
//
// Thread safety: pack() and unpack() may run on several threads at once
// for different ranges. The memory (and, for user representations, the
// datatype handle, duplicated here) must stay valid while the object lives.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "exchange/data_representation.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/type_signature.h"

namespace flowio::exchange {

class StreamConversion {
 public:
  // `memory` describes `count` copies of `memory_type` from the buffer
  // (memory.type is memory_type's flattened form, kept alive by
  // `flat_memory_type`). Throws UsageError(conversion) when the
  // representation cannot store an element of the type, or a user
  // representation without conversion functions gives an element another
  // size in the file than in memory.
  StreamConversion(std::shared_ptr<const DataRepresentation> representation,
                   std::shared_ptr<const core::FlatType> flat_memory_type,
                   const core::MemoryLayout& memory, MPI_Datatype memory_type);
  ~StreamConversion();
  StreamConversion(const StreamConversion&) = delete;
  StreamConversion& operator=(const StreamConversion&) = delete;

  // True when every element keeps its bytes in the file (one-byte types in
  // external32, a user representation without conversion functions): the
  // data can then move as in native, without this object.
  bool keeps_bytes() const { return keeps_bytes_; }

  // The unit u when the conversion only reverses the byte order of u-byte
  // units (external32 with every element of a type it converts so, all
  // with the same unit; core/byte_order.h), else 0. Then any range of the
  // stream that begins and ends on a multiple of u converts without
  // knowing its elements, and the stream has the same bytes in memory as
  // in the file: an aggregator can convert the native bytes a client sent
  // (runtime/stages/aggregator_conversion.h).
  std::int64_t reversed_unit() const { return reversed_unit_; }

  // Bytes of the stream in the file, and of the data in memory.
  std::int64_t file_bytes() const { return signature_.total().file; }
  std::int64_t memory_bytes() const { return signature_.total().native; }
  // Memory bytes of the whole elements among the first `file_bytes` bytes
  // of the stream: what a read that found `file_bytes` bytes delivered.
  std::int64_t memory_bytes_within(std::int64_t file_bytes) const;

  // Writes bytes [from, from + bytes) of the file stream, converted from
  // memory, to `destination`. Throws UsageError(conversion) when a user
  // conversion function fails.
  void pack(std::int64_t from, std::int64_t bytes, char* destination) const;
  // Converts bytes [from, from + bytes) of the file stream, read from
  // `source`, into memory. An element whose bytes are split between calls
  // is stored by the call that completes it.
  void unpack(std::int64_t from, std::int64_t bytes, const char* source);

 private:
  // Elements [first, last) between memory and `file` (their file form).
  void to_file(const core::SignaturePosition& first, const core::SignaturePosition& last,
               char* file) const;
  void from_file(const core::SignaturePosition& first, const core::SignaturePosition& last,
                 const char* file) const;
  // Adds `length` bytes at `offset` of the element at `element`; stores
  // the element when it is complete.
  void collect(const core::SignaturePosition& element, std::int64_t offset, const char* bytes,
               std::int64_t length);
  void call_user(bool reading, std::int64_t first, std::int64_t count, char* file) const;

  std::shared_ptr<const DataRepresentation> representation_;
  std::shared_ptr<const core::FlatType> flat_memory_type_;
  core::MemoryLayout memory_;
  MPI_Datatype memory_type_ = MPI_DATATYPE_NULL;  // our duplicate, for user functions
  bool own_memory_type_ = false;
  core::TypeSignature signature_;
  bool keeps_bytes_ = false;
  std::int64_t reversed_unit_ = 0;

  struct Partial {
    std::vector<char> bytes;
    std::int64_t filled = 0;
  };
  std::mutex mutex_;
  std::map<std::int64_t, Partial> partial_;  // by element index
};

}  // namespace flowio::exchange
