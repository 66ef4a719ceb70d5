// What the stages of several pipelines (collective_stages.h) share: the
// tag of a data message, packing and unpacking a process's stream as it
// lies in the file, whether a process failed at the call, the start of an
// operation's compression stage, waiting for an atomic-mode lease, and
// leaving a data pipeline.
#pragma once

#include <cstdint>
#include <functional>

namespace flowio::runtime {

class CollectiveOperation;

int data_tag(const CollectiveOperation& op, std::int64_t window);

// Everything here counts bytes of the process's stream as it lies in the
// file. Natively that is its memory's data, packed; in another data
// representation (a view in external32, or a user one) the request carries
// a conversion, and packing converts from memory, unpacking converts into
// it, one buffer iteration at a time.
void pack_for_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                   char* destination);
void unpack_from_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                      const char* source);

bool anyone_failed_early(const CollectiveOperation& op);

// Whether this operation's point-to-point messages are framed
// (compression not off); the first call begins its stage of the file's
// compression rule. Control and data stages of one operation call it in
// turn, never at once.
bool begin_compression(CollectiveOperation& op);

// Atomic mode: runs `then` once the operation holds the lease it asked for
// (at once when it asked for none). Inline, the caller waits for it here;
// in the background the lease's continuation, on the progress thread, runs
// `then`, which only hands work on (no worker waits for a lock).
void after_atomic_lease(CollectiveOperation& op, std::function<void()> then);

// Leaving a data pipeline (client, window, round): one item fewer.
void leave_item(CollectiveOperation& op);

// Where a stage's work on one item begins: the injection point `point`
// ("collective.<stage>", a string literal; runtime/core/injection_point.h)
// through which a test makes the stage fail. What it throws becomes the
// operation's failure in that stage, as any failure of the stage's own
// work does; the stage then skips its work but still plays its part in
// the message schedule (a process that failed sends empty messages where
// data would go, and receives what its partners send), so that no
// partner waits for a message that never comes.
void enter_stage(CollectiveOperation& op, const char* point);

}  // namespace flowio::runtime
