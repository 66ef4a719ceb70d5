// MemoryLayout: where a process's data lives in memory, `count` copies of
// a flattened memory type from a buffer. Its data bytes, in typemap order,
// form the stream that a view places in the file.
#pragma once

#include <cstdint>

#include "runtime/core/flat_type.h"

namespace flowio::core {

struct MemoryLayout {
  const FlatType* type = nullptr;
  std::int64_t count = 0;
  std::int64_t buffer_address = 0;

  std::int64_t bytes() const { return type->size() * count; }
  // True when the stream is one contiguous run of memory, so that stream
  // byte n lives at address_of(n).
  bool contiguous() const { return count <= 1 ? type->is_single_run() : type->is_contiguous(); }
  std::int64_t address_of(std::int64_t n) const { return buffer_address + type->true_lb() + n; }
};

}  // namespace flowio::core
