#include "runtime/object_file_index.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "exchange/access_codec.h"
#include "flowio/error.h"

namespace flowio::runtime {
namespace {

// "FLOWIOBJ" read as a little-endian word.
constexpr std::int64_t kMagic = 0x4a424f4f49574f4c;
constexpr std::int64_t kVersion = 1;

std::int64_t round_up(std::int64_t bytes, std::int64_t unit) {
  return (bytes + unit - 1) / unit * unit;
}

[[noreturn]] void not_an_object_file(const std::string& path, const std::string& why) {
  throw UsageError(ErrorCode::invalid_argument,
                   "object file " + path + ": not a flowio object file (" + why + ")");
}

std::vector<std::int64_t> encode_access(const core::Access& access) {
  if (access.view() || access.empty()) return exchange::encode_view_access(access);
  return exchange::encode_pieces(access.pieces());
}

}  // namespace

ObjectFileIndex ObjectFileIndex::plan(std::vector<core::Access> consumers,
                                      std::int64_t source_size) {
  ObjectFileIndex index;
  index.consumers_ = std::move(consumers);
  index.source_size_ = source_size;
  index.sections_.resize(index.consumers_.size());
  // The index's length does not depend on the section offsets it holds.
  index.index_bytes_ = static_cast<std::int64_t>(index.words().size() * sizeof(std::int64_t));
  std::int64_t at = round_up(index.index_bytes_, kSectionAlignment);
  for (std::size_t c = 0; c < index.consumers_.size(); ++c) {
    const std::int64_t bytes = index.consumers_[c].bytes_before(source_size);
    index.sections_[c] = ObjectFileSection{at, bytes};
    index.file_size_ = at + bytes;
    at = round_up(at + bytes, kSectionAlignment);
  }
  if (index.consumers_.empty()) index.file_size_ = index.index_bytes_;
  return index;
}

std::vector<std::int64_t> ObjectFileIndex::words() const {
  std::vector<std::int64_t> words = {kMagic, kVersion, index_bytes_, source_size_,
                                     static_cast<std::int64_t>(consumers_.size())};
  for (std::size_t c = 0; c < consumers_.size(); ++c) {
    const std::vector<std::int64_t> access = encode_access(consumers_[c]);
    words.insert(words.end(), {sections_[c].offset, sections_[c].bytes,
                               static_cast<std::int64_t>(access.size())});
    words.insert(words.end(), access.begin(), access.end());
  }
  return words;
}

std::vector<std::byte> ObjectFileIndex::encode() const {
  const std::vector<std::int64_t> all = words();
  std::vector<std::byte> bytes(all.size() * sizeof(std::int64_t));
  std::memcpy(bytes.data(), all.data(), bytes.size());
  return bytes;
}

std::int64_t ObjectFileIndex::index_bytes_in(std::span<const std::byte> header,
                                             const std::string& path) {
  if (header.size() < kHeaderBytes) not_an_object_file(path, "shorter than its header");
  std::int64_t words[5];
  std::memcpy(words, header.data(), sizeof words);
  if (words[0] != kMagic) not_an_object_file(path, "no magic number");
  if (words[1] != kVersion) {
    not_an_object_file(
        path, "version " + std::to_string(words[1]) + ", expected " + std::to_string(kVersion));
  }
  if (words[2] < static_cast<std::int64_t>(kHeaderBytes) || words[2] % 8 != 0) {
    not_an_object_file(path, "index size " + std::to_string(words[2]));
  }
  return words[2];
}

ObjectFileIndex ObjectFileIndex::decode(std::span<const std::byte> bytes, const std::string& path) {
  const std::int64_t index_bytes = index_bytes_in(bytes, path);
  if (static_cast<std::int64_t>(bytes.size()) < index_bytes)
    not_an_object_file(path, "index cut short");
  std::vector<std::int64_t> words(static_cast<std::size_t>(index_bytes) / sizeof(std::int64_t));
  std::memcpy(words.data(), bytes.data(), static_cast<std::size_t>(index_bytes));
  ObjectFileIndex index;
  index.index_bytes_ = index_bytes;
  index.source_size_ = words[3];
  const std::int64_t count = words[4];
  std::size_t at = 5;
  const auto take = [&](std::size_t n) {
    if (words.size() - at < n) not_an_object_file(path, "index cut short");
    const std::size_t first = at;
    at += n;
    return first;
  };
  if (count < 0 || index.source_size_ < 0) not_an_object_file(path, "negative counts");
  for (std::int64_t c = 0; c < count; ++c) {
    const std::size_t entry = take(3);
    const ObjectFileSection section{words[entry], words[entry + 1]};
    const std::int64_t length = words[entry + 2];
    if (section.offset < index_bytes || section.bytes < 0 || length < 0) {
      not_an_object_file(path, "bad section of consumer " + std::to_string(c));
    }
    const std::size_t first = take(static_cast<std::size_t>(length));
    try {
      index.consumers_.push_back(exchange::decode_access(
          std::span<const std::int64_t>(words).subspan(first, static_cast<std::size_t>(length))));
    } catch (const Error&) {
      not_an_object_file(path, "malformed view of consumer " + std::to_string(c));
    }
    index.sections_.push_back(section);
    index.file_size_ = std::max(index.file_size_, section.offset + section.bytes);
  }
  if (at != words.size()) not_an_object_file(path, "trailing words in the index");
  if (count == 0) index.file_size_ = index_bytes;
  return index;
}

std::int64_t ObjectFileIndex::data_bytes() const {
  std::int64_t total = 0;
  for (const ObjectFileSection& section : sections_) total += section.bytes;
  return total;
}

}  // namespace flowio::runtime
