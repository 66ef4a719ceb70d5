// What the stages of several pipelines (stages.h) share: packing and
// unpacking a process's stream as it lies in the file, whether a process's
// part may go direct, the start of an operation's compression stage, and
// where a stage's work on one item begins.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/stages/announcement_exchange.h"
#include "runtime/stages/operation.h"

namespace flowio::runtime {

// Everything here counts bytes of the process's stream as it lies in the
// file. Natively that is its memory's data, packed; in another data
// representation (a view in external32, or a user one) the request carries
// a conversion, and packing converts from memory, unpacking converts into
// it, one buffer iteration at a time.
void pack_for_file(const Operation& op, std::int64_t from, std::int64_t bytes, char* destination);
void unpack_from_file(const Operation& op, std::int64_t from, std::int64_t bytes,
                      const char* source);

// Whether this process's own part would let the call go direct.
bool may_go_direct(const CollectiveRequest& request, const core::AccessSummary& summary);

// Whether some process's part failed at the call (what it announced).
bool anyone_failed_early(std::span<const Announcement> announcements);

// Compression not off: begins this operation's stage of the file's
// compression rule (in `rule`, `stage`) unless begun already; returns
// whether messages are framed. Control and data stages of one operation
// call it in turn, never at once.
bool begin_compression(const Operation& op, std::shared_ptr<exchange::CompressionRule>& rule,
                       std::unique_ptr<exchange::CompressStage>& stage);

// Where a stage's work on one item begins: the injection point `point`
// ("collective.<stage>", a string literal; runtime/core/injection_point.h)
// through which a test makes the stage fail. What it throws becomes the
// operation's failure in that stage, as any failure of the stage's own
// work does; the stage then skips its work but still plays its part in
// the message schedule (a process that failed sends empty messages where
// data would go, and receives what its partners send), so that no
// partner waits for a message that never comes.
void enter_stage(Operation& op, const char* point);

}  // namespace flowio::runtime
