// The offsets stage's message: what each process tells the others at a
// collective call (its Announcement), and how every process comes to hold
// everyone's.
//
// A small call's cost is mostly this exchange, so it takes the cheapest
// form the file's communicator allows:
//   one process     nothing travels;
//   up to kMostPointToPointRanks processes
//                   point to point on the operations' communicator, each
//                   process sending its announcement to every other (one
//                   message latency; MPICH's nonblocking allgather costs
//                   two to three times as much on two processes, its
//                   schedule being run by the progress engine). Tagged by
//                   the operation's sequence number, so no common order
//                   with other calls is needed;
//   more            MPI_Iallgather on the file's communicator, posted in
//                   call order (messages grow with log n, not n).
// Every process of a file has the same number of processes, so all pick
// the same form.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/core/realm_policy.h"

namespace flowio::runtime {

// What each process tells the others at the call: its access summary,
// where its access lies in its view's stream (its part of the plan
// cache's key), and whether it has already done its part itself
// (accessed_early), with what outcome.
struct Announcement {
  std::int64_t stream_begin = 0;  // with summary.bytes, its key part (plan/plan_cache.h)
  // How many of the file's plans this process knew had failed to compile
  // when it made the call (CollectiveContext::plan_failures): the plan
  // cache drops its plans when any process knew of a new failure
  // (PlanCache::note_failures).
  std::int64_t plan_failures = 0;
  std::int32_t refused = 0;  // CollectiveRequest::refused
  // A write whose data its aggregators convert to the file's
  // representation themselves (runtime/aggregator_conversion.h): the
  // unit whose byte order they reverse; 0 when this process converts its
  // data before sending it, or nothing needs converting.
  std::int32_t reversed_unit = 0;
  std::int8_t direction = 0;  // 1: a write, 2: a read
  std::int8_t accessed_early = 0;
  std::int8_t failed_early = 0;
  // Atomic mode: the access touches an object shared with another process
  // (sync::AtomicMode::needs_lock). Two-phase I/O takes the lock when any
  // process's does; every process sees the same announcements, so they
  // all decide alike.
  std::int8_t needs_lock = 0;
  // Its view's pieces overlap (a read-only file): only this process can
  // read its part, which goes direct (CollectiveRequest::own_part_only).
  std::int8_t own_part_only = 0;
  // Last, its quantiles at its end: without them (AccessSummary::of
  // without quantiles) an announcement fits MPI's quickest small-message
  // path (kShortAnnouncementBytes).
  core::AccessSummary summary;
};

// The most an announcement without quantiles may take. Measured with
// MPICH 4.0 over UCX 1.13 shared memory (Debian 12): a message of up to 88
// bytes travels inline in the receiver's queue; from 89 bytes on, each
// message takes a buffer of the shared segment, which costs 0.6 us more per
// exchange, and a page fault (about 2 us on a virtual machine) for each of
// a process's first ~64 messages per peer, which is every call of a short
// run.
inline constexpr std::size_t kShortAnnouncementBytes = 88;
inline constexpr std::size_t kAnnouncementBytesWithoutQuantiles =
    offsetof(Announcement, summary) + offsetof(core::AccessSummary, quantile);
static_assert(kAnnouncementBytesWithoutQuantiles <= kShortAnnouncementBytes,
              "an announcement without quantiles must stay on MPI's short-message path");

// One operation's exchange of announcements. Used by one thread at a time;
// the buffers given to post() must outlive the requests.
class AnnouncementExchange {
 public:
  static constexpr int kMostPointToPointRanks = 8;
  // Room for the point-to-point form's requests, or the allgather's one.
  static constexpr std::size_t kMostRequests = kMostPointToPointRanks > 1
                                                   ? 2 * (kMostPointToPointRanks - 1)
                                                   : 1;

  // Posts, in the point-to-point form, the receives of the other
  // processes' announcements into their slots of `all` (one per process,
  // zeroed), on `comm` with `tag`; nothing in the other forms. Optional:
  // post() posts them if this was not called. Posted before this process
  // does its own part early (stages/offsets_stage.cc), they let the
  // announcements that arrive meanwhile land in place instead of in MPI's
  // unexpected-message queue, to be found there and copied again.
  void receive(std::span<Announcement> all, int rank, MPI_Comm comm, int tag);
  // Posts the exchange of `all[rank]` (this process's, filled in by the
  // caller) into the other slots of `all` (one per process, zeroed; the
  // receives of receive(), if it was called, with the same `all`, `rank`,
  // `comm` and `tag`). Point-to-point messages go on `comm` with `tag`,
  // without the summary's quantiles unless `with_quantiles` (the slots of
  // those who left them out keep zeros); the allgather on `gather_comm`,
  // in call order. Returns the requests to complete (none on one
  // process); they live in this object.
  std::span<MPI_Request> post(std::span<Announcement> all, int rank, MPI_Comm comm, int tag,
                              MPI_Comm gather_comm, bool with_quantiles = true);

 private:
  std::array<MPI_Request, kMostRequests> requests_{};
  std::size_t count_ = 0;
  bool received_ = false;  // receive() posted the receives
};

}  // namespace flowio::runtime
