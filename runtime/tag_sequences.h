// TagSequences: hands out the sequence numbers that a file's collective
// operations carry in their message tags (message_tags.h), in call order,
// and never one whose tags another operation of this process may still
// use.
//
// A tag keeps kSequenceBits of the sequence number, so operations
// kSequencesApart apart share tags. Two such operations must never be live
// on one process at once: their stages post messages and receives
// independently (a later operation's metadata stage may run while an
// earlier one is in its plan check), so a receive of one could match a
// message of the other. When they are never live at once on any process,
// each process sends and receives every (peer, tag) pair's messages in
// operation order, and MPI's non-overtaking rule pairs each message with
// the receive of its own operation. So take() waits, when the operation
// kSequencesApart earlier is still live here, until it ends.
//
// An operation is live from take() until end(): end() is called once
// every message it sends has been posted and every receive it posted has
// completed (its outcome is agreed), or once it is known that it will
// post nothing more.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "runtime/message_tags.h"

namespace flowio::runtime {

// Thread safety: take() is called by one thread at a time (the file's
// caller, in call order); end() from any thread.
class TagSequences {
 public:
  // The next sequence number. Blocks while the operation that took the
  // same tag bits kSequencesApart numbers earlier is live; that operation
  // must be able to end without this thread (it runs in the background).
  std::uint64_t take();
  // Operation `sequence` has no message or receive left in flight here.
  void end(std::uint64_t sequence);

 private:
  std::uint64_t next_ = 0;
  // By tag bits: whether the operation holding them is live. Acquire in
  // take() pairs with end()'s release: the new operation's messages are
  // posted after everything the old one did.
  std::array<std::atomic<bool>, kSequencesApart> live_{};
};

}  // namespace flowio::runtime
