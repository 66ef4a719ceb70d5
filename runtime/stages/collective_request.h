// CollectiveRequest: one process's part of a collective call, as the file
// hands it to the runtime.
#pragma once

#include <exception>
#include <functional>
#include <memory>

#include "exchange/stream_conversion.h"
#include "runtime/core/access.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "runtime/plan/collective_settings.h"
#include "sync/atomic_mode.h"

namespace flowio::runtime {

struct CollectiveRequest {
  bool writing = false;
  // Nonzero when this process's arguments were bad: the ErrorCode, plus
  // one. The process takes part without data, and the operation fails on
  // every process with that code (the gather tells them all).
  int refused = 0;
  // This process's part failed before the call reached the runtime (while
  // the file described it, or in a read it made itself,
  // api/file_collective.cc): the process takes part without data, and
  // every process gets the failure from the agreement, as if the part had
  // failed in the operation.
  std::exception_ptr failed_before;
  const char* failed_before_stage = nullptr;  // the stage it names
  // The caller waits for the result at once (write_all, not iwrite_all).
  bool blocking = false;
  core::Access access;  // where its data goes in the file (file stream bytes)
  std::shared_ptr<const core::FlatType> memory_type;
  core::MemoryLayout memory;  // where its data is in memory (memory.type = memory_type)
  // Set when the file's data representation is not native: the stream in
  // the file is then this conversion's, not the memory's bytes.
  std::shared_ptr<exchange::StreamConversion> conversion;
  // Parsed from the hints once per direction and shared by the calls made
  // under them.
  std::shared_ptr<const CollectiveSettings> settings;
  // Atomic mode (File::set_atomicity), or null. The call stays collective
  // and its file accesses run under a lease (sync/atomic_mode.h): with
  // two-phase I/O one lease over every process's access, asked for in call
  // order at the plan and taken by one process for all, held through the
  // data phase and let go after the agreement; a direct access, a lease
  // over this process's own bytes around it.
  std::shared_ptr<sync::AtomicMode> atomic;

  // Called once, on any thread, as soon as the call no longer reads or
  // writes `memory` on this process: its data phase here is over (every
  // byte packed, sent, received or written by this process), or it never
  // has one (its part failed before, the gather failed or settled the
  // call, or the call's start threw). Always before persist and the
  // agreement, so before the call completes: a notification that the
  // memory is free, not of the outcome, which may still be a failure.
  // Empty: no one asks. It runs on one of the engine's threads (or the
  // caller's, inline): it must not throw, and must not block.
  std::function<void()> on_memory_released;

  // The access can only be moved by this process itself (its view's
  // pieces overlap, which a read-only file allows): every process then
  // accesses its own part (direct), whatever the hints say.
  bool own_part_only = false;

  // Refused or failed before: this process takes part without data.
  bool without_data() const { return refused != 0 || failed_before != nullptr; }
};

}  // namespace flowio::runtime
