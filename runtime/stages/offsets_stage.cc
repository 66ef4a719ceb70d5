// Offsets: each process tells every other what it accesses (its
// announcement: the access summary, where it lies in its view's stream,
// the direction, whether it refused or did its part already), and the
// gather settles what every process then knows alike.
#include <algorithm>
#include <string>

#include "flowio/error.h"
#include "runtime/core/injection_point.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/aggregator_conversion.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {
namespace {

// This process's part, moved on the caller's thread before anything is
// exchanged: the injection point "collective.offsets" passed, its atomic
// lease, its data, a durable write's sync; the first failure kept with its
// stage.
EarlyPart move_early(Operation& op) {
  const CollectiveRequest& request = op.request();
  EarlyPart early;
  sync::Lease own_bytes;  // atomic mode: waited for here
  if (request.atomic) {
    op.guarded(
        [&] { own_bytes = request.atomic->lock_access(request.access, request.writing).get(); },
        "direct_lock");
  }
  if (op.failed()) return early;
  // Since the call, only a few arithmetic steps were taken, unless a lease
  // was waited for: the io span starts at the call (a clock read costs
  // 30 ns on these machines, a twentieth of a small call).
  const std::int64_t begin = request.atomic ? now_ns() : op.started_ns();
  op.guarded(
      [&] {
        if (request.access.empty()) return;
        early.bytes = move_own_part(op.file(), request);
        early.accessed = true;
        op.recorder().record(Stage::io, begin, -1, "", early.bytes);
        op.recorder().add_method(Method::direct);
      },
      "direct_io");
  if (request.writing && request.settings->durable && early.accessed && !op.failed()) {
    op.guarded([&] { op.file().file().sync_data(); }, "persist");
    early.persisted = true;
  }
  return early;
}

}  // namespace

// With nothing else outstanding (an inline operation), every earlier
// operation is done on every process (each ends with a collective step
// that follows all its I/O), so a part that will likely go direct is
// accessed now, before the summaries are gathered, and its outcome
// announced with them: if every process did so and none failed, the
// gather is the whole protocol. If two-phase I/O is chosen after all, the
// early access was only redundant: it moved the same bytes (collective
// accesses of different processes must not overlap), and aggregators
// touch the file only after the gather.
void offsets_stage(Operation& op, std::size_t, Next next) {
  const CollectiveRequest& request = op.request();
  FileContext& file = op.file();
  Announcing& announcing = op.phase<Announcing>();
  announcing.announcements.resize(static_cast<std::size_t>(file.ranks()));
  Announcement& own = announcing.announcements[static_cast<std::size_t>(file.rank())];
  const bool load_balanced = request.settings->realms.policy == core::RealmPolicy::load_balanced;
  own.summary = core::AccessSummary::of(request.access, load_balanced);
  // The description itself is encoded only if the call needs it; its
  // length is announced.
  own.summary.metadata_words = file.view_access_words(request.access);
  own.stream_begin = request.access.stream_begin();
  own.refused = request.refused;
  own.direction = request.writing ? 1 : 2;
  own.needs_lock = request.atomic && request.atomic->needs_lock(request.access) ? 1 : 0;
  own.own_part_only = request.own_part_only ? 1 : 0;
  own.plan_failures = file.plan_failures();
  own.reversed_unit = reversed_unit_to_announce(request);
  // The other processes' announcements may arrive while this one does its
  // part early: their receives are posted first, so that they land in
  // place (point to point; the allgather form posts everything below).
  const int tag = op.tag(MessageKind::announcement);
  announcing.exchange.receive(announcing.announcements, file.rank(), file.comm(), tag);
  // A failure here (a test's injection point, an early part) is announced
  // with the summary: every process then goes straight to the agreement.
  op.guarded([] { core::injection_point("collective.offsets"); }, "offsets");
  if (request.failed_before) op.fail(request.failed_before, request.failed_before_stage);
  if (op.runs_inline() && request.refused == 0 && !op.failed() &&
      may_go_direct(request, own.summary)) {
    announcing.early = move_early(op);
    own.accessed_early = 1;
  }
  own.failed_early = op.failed() ? 1 : 0;
  announcing.requests = announcing.exchange.post(announcing.announcements, file.rank(), file.comm(),
                                                 tag, file.gather_comm(), load_balanced);
  next();
}

namespace {

// What the announcements settle, once every one is in (`code`: how their
// exchange ended).
void settle_gather(Operation& op, int code) {
  const Announcing& announced = op.phase<Announcing>();
  const EarlyPart early = announced.early;
  // Alone, with its part moved early, nothing happened since that access
  // ended: its end is the offsets stage's.
  const bool nothing_since = announced.requests.empty() && early.accessed && !early.persisted;
  op.recorder().record_until(Stage::offsets, op.started_ns(),
                             nothing_since ? op.recorder().last_end_ns() : now_ns());
  Planning& planning = op.begin_phase<Planning, Announcing>();
  if (code != MPI_SUCCESS) {
    op.fail(std::make_exception_ptr(MpiError("MPI_Iallgather", code)), "offsets");
    planning.gather = GatherOutcome::failed;
  }
  const Announcements& all = planning.announcements;
  if (code == MPI_SUCCESS) {
    // Every process sees the same announcements, so every one fails
    // alike here, and the stages after the gather move nothing.
    for (std::size_t rank = 0; rank < all.size(); ++rank) {
      if (all[rank].refused != 0) {
        op.fail(std::make_exception_ptr(
                    UsageError(static_cast<ErrorCode>(all[rank].refused - 1),
                               "process " + std::to_string(rank) +
                                   " passed bad arguments to this collective call")),
                "offsets");
        planning.gather = GatherOutcome::failed;
        break;
      }
      if (all[rank].direction != all.front().direction) {
        op.fail(std::make_exception_ptr(
                    UsageError(ErrorCode::not_same,
                               "processes made different collective calls: some read, some write")),
                "offsets");
        planning.gather = GatherOutcome::failed;
        break;
      }
    }
  }
  if (planning.gather == GatherOutcome::go_on) {
    if (std::all_of(all.begin(), all.end(),
                    [](const Announcement& a) { return a.accessed_early && !a.failed_early; })) {
      planning.gather = GatherOutcome::settled;
    } else if (anyone_failed_early(all)) {
      planning.gather = GatherOutcome::failed;
    }
  }
}

}  // namespace

// The gather: once every announcement is in, what they settle, alike on
// every process. The offsets stage ends here.
void gather_stage(Operation& op, std::size_t, Next next) {
  Announcing& announcing = op.phase<Announcing>();
  if (announcing.requests.empty()) {
    // One process: its announcement is the only one, nothing to wait for.
    settle_gather(op, MPI_SUCCESS);
    next();
    return;
  }
  std::vector<MPI_Request> requests(announcing.requests.begin(), announcing.requests.end());
  op.executor().wait_for(std::move(requests),
                         [&op, next = std::move(next)](int code, std::span<const MPI_Status>) {
                           settle_gather(op, code);
                           next();
                         });
}

}  // namespace flowio::runtime
