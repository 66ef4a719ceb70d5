#include "exchange/stream_conversion.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "exchange/external32.h"
#include "exchange/stream_pack.h"
#include "flowio/error.h"
#include "runtime/core/type_arguments.h"

namespace flowio::exchange {
namespace {

// Noncontiguous memory is packed (or unpacked) this many native bytes at
// a time next to the conversion, so that the staged bytes are still in
// cache when they are converted.
constexpr std::int64_t kStagingBytes = 64 * 1024;
// User conversion functions take at most this many items per call, so
// that an int count (MPI_Register_datarep) never overflows.
constexpr std::int64_t kUserItemsPerCall = std::int64_t{1} << 30;

// Walks the elements [first, last) of `signature` in batches of one type
// and at most kStagingBytes native bytes (one element at least), in
// stream order: batch(run, n, native, file_offset) for n elements of
// run.type whose native bytes start at stream byte `native` and whose
// file bytes start `file_offset` bytes after those of `first`.
template <typename Batch>
void for_each_batch(const core::TypeSignature& signature, const core::SignaturePosition& first,
                    const core::SignaturePosition& last, Batch&& batch) {
  std::int64_t native = first.native;
  std::int64_t file_offset = 0;
  signature.for_each_run(first.element, last.element, [&](const core::ElementRun& run) {
    const std::int64_t per_batch = std::max<std::int64_t>(1, kStagingBytes / run.native_size);
    for (std::int64_t left = run.count; left > 0;) {
      const std::int64_t n = std::min(left, per_batch);
      batch(run, n, native, file_offset);
      native += n * run.native_size;
      file_offset += n * run.file_size;
      left -= n;
    }
  });
}

}  // namespace

StreamConversion::StreamConversion(std::shared_ptr<const DataRepresentation> representation,
                                   std::shared_ptr<const core::FlatType> flat_memory_type,
                                   const core::MemoryLayout& memory, MPI_Datatype memory_type)
    : representation_(std::move(representation)),
      flat_memory_type_(std::move(flat_memory_type)),
      memory_(memory),
      signature_(
          core::TypeSignature::of(memory_type, memory.count, representation_->extent_function())) {
  const UserRepresentation* user = representation_->user();
  const std::vector<core::ElementRun> types = signature_.element_types();
  keeps_bytes_ = std::all_of(types.begin(), types.end(), [user](const core::ElementRun& run) {
    return user != nullptr ? !user->read && !user->write && run.file_size == run.native_size
                           : external32_keeps_bytes(run.type);
  });
  if (user == nullptr && !types.empty()) {
    reversed_unit_ = external32_reversed_unit(types.front().type);
    for (const core::ElementRun& run : types) {
      if (external32_reversed_unit(run.type) != reversed_unit_) reversed_unit_ = 0;
    }
  }
  if (user == nullptr) return;
  if (!user->read || !user->write) {
    // Without a conversion function the bytes are moved as they are, which
    // only works where the file keeps every element's native size.
    const core::TypeSignature one =
        core::TypeSignature::of(memory_type, 1, representation_->extent_function());
    one.for_each_run(0, one.total().element, [&](const core::ElementRun& run) {
      if (run.file_size != run.native_size) {
        throw UsageError(ErrorCode::conversion,
                         "data representation \"" + representation_->name() +
                             "\" has no conversion function but stores an element in " +
                             std::to_string(run.file_size) + " bytes instead of " +
                             std::to_string(run.native_size));
      }
    });
  }
  memory_type_ = memory_type;
  if (!core::is_named(memory_type)) {
    check_mpi(MPI_Type_dup(memory_type, &memory_type_), "MPI_Type_dup");
    own_memory_type_ = true;
  }
}

StreamConversion::~StreamConversion() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (own_memory_type_ && !finalized) MPI_Type_free(&memory_type_);
}

std::int64_t StreamConversion::memory_bytes_within(std::int64_t file_bytes) const {
  return signature_.element_at_file_byte(file_bytes).native;
}

void StreamConversion::call_user(bool reading, std::int64_t first, std::int64_t count,
                                 char* file) const {
  const UserRepresentation& user = *representation_->user();
  const UserRepresentation::Conversion& convert = reading ? user.read : user.write;
  void* user_buffer = reinterpret_cast<void*>(memory_.buffer_address);
  std::int64_t file_at = signature_.element_start(first).file;
  for (std::int64_t done = 0; done < count;) {
    const std::int64_t items = std::min(count - done, kUserItemsPerCall);
    const std::int64_t file_end = signature_.element_start(first + done + items).file;
    const int code = convert(user_buffer, memory_type_, items, file, first + done);
    if (code != MPI_SUCCESS) {
      throw UsageError(ErrorCode::conversion, std::string(reading ? "the read" : "the write") +
                                                  " conversion function of data representation \"" +
                                                  representation_->name() + "\" returned error " +
                                                  std::to_string(code));
    }
    file += file_end - file_at;
    file_at = file_end;
    done += items;
  }
}

void StreamConversion::to_file(const core::SignaturePosition& first,
                               const core::SignaturePosition& last, char* file) const {
  if (const UserRepresentation* user = representation_->user()) {
    if (user->write) return call_user(false, first.element, last.element - first.element, file);
    return pack_stream(memory_, first.native, last.native - first.native, file);
  }
  thread_local std::vector<char> staging;
  for_each_batch(signature_, first, last,
                 [&](const core::ElementRun& run, std::int64_t n, std::int64_t native,
                     std::int64_t file_offset) {
                   const char* from = nullptr;
                   if (memory_.contiguous()) {
                     from = reinterpret_cast<const char*>(memory_.address_of(native));
                   } else {
                     const std::int64_t bytes = n * run.native_size;
                     staging.resize(static_cast<std::size_t>(bytes));
                     pack_stream(memory_, native, bytes, staging.data());
                     from = staging.data();
                   }
                   to_external32(run.type, n, from, file + file_offset);
                 });
}

void StreamConversion::from_file(const core::SignaturePosition& first,
                                 const core::SignaturePosition& last, const char* file) const {
  if (const UserRepresentation* user = representation_->user()) {
    if (user->read) {
      return call_user(true, first.element, last.element - first.element, const_cast<char*>(file));
    }
    return unpack_stream(memory_, first.native, last.native - first.native, file);
  }
  thread_local std::vector<char> staging;
  for_each_batch(signature_, first, last,
                 [&](const core::ElementRun& run, std::int64_t n, std::int64_t native,
                     std::int64_t file_offset) {
                   if (memory_.contiguous()) {
                     from_external32(run.type, n, file + file_offset,
                                     reinterpret_cast<char*>(memory_.address_of(native)));
                   } else {
                     const std::int64_t bytes = n * run.native_size;
                     staging.resize(static_cast<std::size_t>(bytes));
                     from_external32(run.type, n, file + file_offset, staging.data());
                     unpack_stream(memory_, native, bytes, staging.data());
                   }
                 });
}

void StreamConversion::pack(std::int64_t from, std::int64_t bytes, char* destination) const {
  if (bytes <= 0) return;
  const std::int64_t end = from + bytes;
  core::SignaturePosition at = signature_.element_at_file_byte(from);
  if (at.file < from) {
    // The range starts inside an element: convert it whole, keep its tail.
    const core::SignaturePosition next = signature_.element_start(at.element + 1);
    std::vector<char> element(static_cast<std::size_t>(next.file - at.file));
    to_file(at, next, element.data());
    const std::int64_t take = std::min(end, next.file) - from;
    std::memcpy(destination, element.data() + (from - at.file), static_cast<std::size_t>(take));
    if (next.file >= end) return;
    at = next;
  }
  const core::SignaturePosition last = signature_.element_at_file_byte(end);
  if (last.element > at.element) to_file(at, last, destination + (at.file - from));
  if (last.file < end) {
    // ... and ends inside one: keep its head.
    const core::SignaturePosition next = signature_.element_start(last.element + 1);
    std::vector<char> element(static_cast<std::size_t>(next.file - last.file));
    to_file(last, next, element.data());
    std::memcpy(destination + (last.file - from), element.data(),
                static_cast<std::size_t>(end - last.file));
  }
}

void StreamConversion::unpack(std::int64_t from, std::int64_t bytes, const char* source) {
  if (bytes <= 0) return;
  const std::int64_t end = from + bytes;
  core::SignaturePosition at = signature_.element_at_file_byte(from);
  if (at.file < from) {
    const core::SignaturePosition next = signature_.element_start(at.element + 1);
    collect(at, from - at.file, source, std::min(end, next.file) - from);
    if (next.file >= end) return;
    at = next;
  }
  const core::SignaturePosition last = signature_.element_at_file_byte(end);
  if (last.element > at.element) from_file(at, last, source + (at.file - from));
  if (last.file < end) collect(last, 0, source + (last.file - from), end - last.file);
}

void StreamConversion::collect(const core::SignaturePosition& element, std::int64_t offset,
                               const char* bytes, std::int64_t length) {
  const core::SignaturePosition next = signature_.element_start(element.element + 1);
  const std::int64_t size = next.file - element.file;
  std::vector<char> complete;
  {
    std::lock_guard lock(mutex_);
    Partial& partial = partial_[element.element];
    if (partial.bytes.empty()) partial.bytes.resize(static_cast<std::size_t>(size));
    std::memcpy(partial.bytes.data() + offset, bytes, static_cast<std::size_t>(length));
    partial.filled += length;
    if (partial.filled < size) return;
    complete = std::move(partial.bytes);
    partial_.erase(element.element);
  }
  from_file(element, next, complete.data());
}

}  // namespace flowio::exchange
