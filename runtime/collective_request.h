// CollectiveRequest: one process's part of a collective call, as the file
// hands it to the runtime.
#pragma once

#include <memory>

#include "runtime/collective_settings.h"
#include "runtime/core/access.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"

namespace flowio::runtime {

struct CollectiveRequest {
  bool writing = false;
  // The caller waits for the result at once (write_all, not iwrite_all).
  bool blocking = false;
  core::Access access;  // where its data goes in the file
  std::shared_ptr<const core::FlatType> memory_type;
  core::MemoryLayout memory;  // where its data is in memory (memory.type = memory_type)
  // Parsed from the hints once per direction and shared by the calls made
  // under them.
  std::shared_ptr<const CollectiveSettings> settings;
};

}  // namespace flowio::runtime
