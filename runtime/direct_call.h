// What a collective call whose parts go direct (each process moves its own
// bytes) is made of, shared by the operation (collective_operation.cc) and
// the calls settled without one (direct_call.cc: CollectiveOperation::
// run_alone on one process, run_settled on a few): whether a part may go
// direct, the part moved early on the caller's thread, the key announced
// for the plan cache, what the call reports moved, and its record.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>

#include "runtime/collective_request.h"
#include "runtime/core/realm_policy.h"
#include "runtime/operation_recorder.h"

namespace flowio::runtime {

class CollectiveContext;

// The key of this process's access for the plan cache: its range of the
// view's stream, the direction and the datatype realms' fingerprint.
std::uint64_t plan_key(const CollectiveRequest& request);

// Whether this process's own part would let the call go direct.
bool may_go_direct(const CollectiveRequest& request, const core::AccessSummary& summary);

// What a call reports moved: a write, all its bytes; a read, what it found
// (`found`, when counted) or else what lies before the end of file. In
// memory bytes, whole elements, where a data representation converts (the
// counts above are of the stream in the file). May throw (the file's size).
std::size_t reported_bytes(CollectiveContext& context, const CollectiveRequest& request,
                           std::optional<std::int64_t> found);

// The fields of an operation's record that its request decides.
OperationRecord record_of(const CollectiveRequest& request, std::uint64_t sequence);

// A blocking call's own part, moved on the caller's thread before anything
// is exchanged: the stages of an early access (test injection point
// "collective.offsets", the atomic lease, the data, a durable write's
// sync), the first failure kept with its stage, as an operation keeps it.
struct EarlyAccess {
  std::exception_ptr failure;
  const char* failed_stage = nullptr;
  bool accessed = false;   // bytes were moved (the access is not empty)
  bool persisted = false;  // a durable write was synced after its data
  std::int64_t io_begin_ns = 0;
  std::int64_t io_end_ns = 0;
  std::int64_t io_bytes = 0;  // moved; a read's count is what it found
};
// `started_ns`: when the call began (the io span starts there unless a
// lease was waited for).
EarlyAccess access_early(CollectiveContext& context, const CollectiveRequest& request,
                         std::int64_t started_ns);

}  // namespace flowio::runtime
