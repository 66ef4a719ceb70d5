// Realms: the realm calc, or the plan kept from an earlier call with the
// same accesses.
#include <algorithm>

#include "runtime/engine/clock.h"
#include "runtime/plan/plan_cache.h"
#include "runtime/plan/plan_compiler.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {
namespace {

// Plans of calls whose processes together have more pieces than this are
// not kept: their window lists would hold too much memory for what a rerun
// saves. Decided from the gathered summaries, the same on every process.
constexpr std::int64_t kMostPiecesKept = std::int64_t{1} << 20;

// Every process's part of the call's key, read from its announcement.
struct AnnouncedParts {
  const Announcements* announcements;
  PlanKeyPart operator()(std::size_t rank) const {
    const Announcement& a = (*announcements)[rank];
    return PlanKeyPart{a.stream_begin, a.summary.bytes};
  }
};

}  // namespace

// Runs in call order on every process (the control pipeline passes
// operations one at a time, in the order they were called), so every
// process's cache gives the same answer: nothing before the cache's answer
// can throw, and the cache never allocates, so a failure here cannot make
// one process's cache or choice unlike the others'.
//
// A process whose realm calc fails (or that failed earlier, alone) has no
// plan: it sends no descriptions and takes part in the plan check, which
// tells every process (plan_check_stage).
void realms_stage(Operation& op, std::size_t, Next next) {
  Planning& planning = op.phase<Planning>();
  if (planning.gather != GatherOutcome::go_on) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  enter_stage(op, "collective.realms");
  const CollectiveSettings& settings = *op.request().settings;
  FileContext& file = op.file();
  planning.summaries.reserve(planning.announcements.size());
  for (const Announcement& a : planning.announcements) planning.summaries.push_back(a.summary);
  const bool own_parts_only =
      std::any_of(planning.announcements.begin(), planning.announcements.end(),
                  [](const Announcement& a) { return a.own_part_only != 0; });
  if (own_parts_only || !decide_two_phase(planning.summaries, settings)) {
    planning.origin = PlanOrigin::direct;
    op.recorder().record(Stage::realms, begin);
    next();
    return;
  }
  std::int64_t pieces = 0;
  std::int64_t plan_failures = 0;
  for (const Announcement& a : planning.announcements) {
    pieces += a.summary.pieces;
    plan_failures = std::max(plan_failures, a.plan_failures);
  }
  file.plans().note_failures(plan_failures);
  const PlanKey<AnnouncedParts> key{op.request().writing, settings.realms.tiling.get(),
                                    AnnouncedParts{&planning.announcements}};
  if (std::optional<std::shared_ptr<CollectivePlan>> kept = file.plans().find(key)) {
    // A null plan is one whose compiling failed here at once: every other
    // process knows of the failure (data_route).
    planning.plan = std::move(*kept);
    planning.origin = PlanOrigin::reused;
    op.recorder().record(Stage::realms, begin);
    next();
    return;
  }
  planning.origin = PlanOrigin::compiled;
  std::shared_ptr<CollectivePlan> plan;
  op.guarded([&] { plan = std::make_shared<CollectivePlan>(); }, "realms");
  // Kept on every process alike, made or not: the check marks it complete
  // only if every process made its part.
  if (pieces <= kMostPiecesKept) file.plans().insert(key, plan);
  planning.plan = std::move(plan);
  if (planning.plan && !op.failed()) {
    op.guarded(
        [&] {
          plan_realms_step(settings, planning.summaries, file.rank(), file.persistent_unit(),
                           *planning.plan);
        },
        "realms");
  }
  op.recorder().record(Stage::realms, begin);
  next();
}

}  // namespace flowio::runtime
