#include "runtime/direct_call.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "exchange/access_codec.h"
#include "runtime/aggregator_conversion.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/collective_stages.h"
#include "runtime/core/injection_point.h"
#include "runtime/message_tags.h"
#include "runtime/plan_cache.h"
#include "runtime/plan_compiler.h"
#include "runtime/progress.h"

namespace flowio::runtime {
namespace {

// The statistics an operation settled at its gather leaves (what
// OperationRecorder would sum, and its trace spans, made here on one
// thread without its atomic counters): the offsets stage from the call to
// `offsets_end`, the early access's io span, and the agreement's span
// when one ran (`agree_end` > 0).
void log_settled(CollectiveContext& context, const CollectiveRequest& request,
                 std::uint64_t sequence, std::int64_t started, std::int64_t offsets_end,
                 const EarlyAccess& early, int aggregators, std::int64_t agree_begin = 0,
                 std::int64_t agree_end = 0) {
  OperationRecord record = record_of(request, sequence);
  record.nanoseconds = (agree_end > 0 ? agree_end : offsets_end) - started;
  record.aggregators = aggregators;
  record.aggregator = early.accessed;
  record.iterations = early.accessed ? 1 : 0;
  if (early.accessed) record.methods = 1u << static_cast<unsigned>(Method::direct);
  const auto span = [&](Stage stage, std::int64_t begin, std::int64_t end, StageSums sums) {
    trace_span(stage, context.rank(), request.writing, sequence, begin, end);
    if (sums.nanoseconds != 0 || sums.bytes != 0 || sums.io_requests != 0) {
      record.add_stage(stage, sums);
    }
  };
  // In stage order, as OperationRecorder::fill gives them.
  span(Stage::offsets, started, offsets_end, {offsets_end - started});
  if (early.accessed) {
    span(Stage::io, early.io_begin_ns, early.io_end_ns,
         {early.io_end_ns - early.io_begin_ns, early.io_bytes, 0, 0});
  }
  if (agree_end > 0) span(Stage::agree, agree_begin, agree_end, {agree_end - agree_begin});
  context.log(std::move(record));
}

}  // namespace

// The view and the hints are fixed while plans are kept (the file forgets
// them when either changes, and when the program describes other realms);
// the realms are in the key too, so that a plan never serves realms other
// than its own, whatever drops plans or not.
std::uint64_t plan_key(const CollectiveRequest& request) {
  const core::RealmSettings& realms = request.settings->realms;
  const std::uint64_t values[] = {static_cast<std::uint64_t>(request.access.stream_begin()),
                                  static_cast<std::uint64_t>(request.access.bytes()),
                                  request.writing ? 1u : 2u,
                                  realms.tiling ? realms.tiling->key() : 0u};
  return PlanCache::combine(values);
}

bool may_go_direct(const CollectiveRequest& request, const core::AccessSummary& summary) {
  using Buffering = CollectiveSettings::Buffering;
  const Buffering buffering = request.settings->buffering;
  return buffering == Buffering::disable ||
         (buffering == Buffering::automatic && !needs_gathering(summary, *request.settings));
}

std::size_t reported_bytes(CollectiveContext& context, const CollectiveRequest& request,
                           std::optional<std::int64_t> found) {
  const core::Access& access = request.access;
  std::int64_t moved = access.bytes();
  if (!request.writing && !access.empty()) {
    moved = found ? *found : access.bytes_before(context.file().size());
  }
  if (request.conversion) moved = request.conversion->memory_bytes_within(moved);
  return static_cast<std::size_t>(moved);
}

OperationRecord record_of(const CollectiveRequest& request, std::uint64_t sequence) {
  OperationRecord record;
  record.sequence = sequence;
  record.writing = request.writing;
  record.bytes = request.access.bytes();
  record.realm_policy = request.settings->realms.policy;
  record.alltoallw = request.settings->alltoallw;
  record.read_access = request.settings->window_io.file_readable;
  return record;
}

EarlyAccess access_early(CollectiveContext& context, const CollectiveRequest& request,
                         std::int64_t started_ns) {
  EarlyAccess early;
  auto guarded = [&](const char* stage, auto&& body) {
    if (early.failure) return;
    try {
      body();
    } catch (...) {
      early.failure = std::current_exception();
      early.failed_stage = stage;
    }
  };
  guarded("offsets", [] { core::injection_point("collective.offsets"); });
  sync::Lease own_bytes;
  if (request.atomic) {
    guarded("direct_lock", [&] {
      own_bytes = request.atomic->lock_access(request.access, request.writing).get();
    });
  }
  early.io_begin_ns = started_ns;
  guarded("direct_io", [&] {
    if (request.access.empty()) return;
    // Until here only a few arithmetic steps were taken, unless a lease
    // was waited for: the io stage starts at the call, one clock read
    // (30 ns on these machines, a twentieth of a small call) fewer.
    if (request.atomic) early.io_begin_ns = now_ns();
    early.io_bytes = move_own_part(context, request);
    early.io_end_ns = now_ns();
    early.accessed = true;
  });
  if (request.writing && request.settings->durable && early.accessed) {
    guarded("persist", [&] { context.file().sync_data(); });
    early.persisted = true;
  }
  return early;
}

std::optional<std::size_t> CollectiveOperation::run_alone(CollectiveContext& context,
                                                          const CollectiveRequest& request,
                                                          std::exception_ptr& failure) {
  if (context.ranks() != 1 || !request.blocking || request.without_data() || !context.idle()) {
    return std::nullopt;
  }
  const std::int64_t started = now_ns();
  const CollectiveSettings& settings = *request.settings;
  const core::AccessSummary summary = core::AccessSummary::of(
      request.access, settings.realms.policy == core::RealmPolicy::load_balanced);
  if (!may_go_direct(request, summary)) return std::nullopt;

  const std::uint64_t sequence = context.take_sequence();
  const EarlyAccess early = access_early(context, request, started);
  // As an operation that accessed its part early, up to its gather
  // (nothing travels on one process): the offsets stage spans the access.
  const std::int64_t offsets_end =
      early.accessed && !early.persisted && !early.failure ? early.io_end_ns : now_ns();

  // The outcome: on one process, the agreement's verdict is this
  // process's own failure, reported as the agreement reports it.
  std::exception_ptr result;
  std::int64_t agree_begin = 0;
  std::int64_t agree_end = 0;
  if (early.failure) {
    agree_begin = offsets_end;
    OutcomeAgreement agreement;
    agreement.post(context.comm(), message_tag(MessageKind::outcome, sequence), 0, 1, early.failure,
                   early.failed_stage);
    result = agreement.outcome(request.writing ? "collective write" : "collective read");
    agree_end = now_ns();
  }
  std::size_t moved = 0;
  if (!result) {
    try {
      moved = reported_bytes(context, request,
                             early.accessed ? std::optional(early.io_bytes) : std::nullopt);
    } catch (...) {
      result = std::current_exception();
    }
  }
  log_settled(context, request, sequence, started, offsets_end, early, summary.bytes > 0 ? 1 : 0,
              agree_begin, agree_end);
  context.end_sequence(sequence);
  failure = result;
  return result ? 0 : moved;
}

std::optional<std::size_t> CollectiveOperation::run_settled(CollectiveContext& context,
                                                            CollectiveRequest& request,
                                                            std::function<void()>& on_done,
                                                            std::exception_ptr& failure) {
  const int ranks = context.ranks();
  if (ranks == 1 || ranks > AnnouncementExchange::kMostPointToPointRanks || !request.blocking ||
      request.without_data()) {
    return std::nullopt;
  }
  const std::int64_t started = now_ns();
  const bool load_balanced = request.settings->realms.policy == core::RealmPolicy::load_balanced;
  // The announcement begin() would make: other processes may take the
  // operation's path for the same call (it is decided by what each sees
  // alone), and read it the same.
  std::vector<Announcement> announcements(static_cast<std::size_t>(ranks));
  Announcement& own = announcements[static_cast<std::size_t>(context.rank())];
  own.summary = core::AccessSummary::of(request.access, load_balanced);
  if (!may_go_direct(request, own.summary)) return std::nullopt;
  own.summary.metadata_words = context.view_access_words(request.access);
  own.plan_key = plan_key(request);
  own.direction = request.writing ? 1 : 2;
  own.needs_lock = request.atomic && request.atomic->needs_lock(request.access) ? 1 : 0;
  own.plan_failures = context.plan_failures();
  own.reversed_unit = reversed_unit_to_announce(request);
  // As begin(): alone on the file, or not here.
  if (!context.begin_operation(true)) {
    context.end_operation();
    return std::nullopt;
  }

  const std::uint64_t sequence = context.take_sequence();
  const int tag = message_tag(MessageKind::announcement, sequence);
  AnnouncementExchange exchange;
  std::span<MPI_Request> requests;
  EarlyAccess early;
  try {
    // The receives first: the others' announcements may arrive during the
    // access.
    exchange.receive(announcements, context.rank(), context.comm(), tag);
    early = access_early(context, request, started);
    own.accessed_early = 1;
    own.failed_early = early.failure ? 1 : 0;
    requests = exchange.post(announcements, context.rank(), context.comm(), tag,
                             context.gather_comm(), load_balanced);
  } catch (...) {
    // MPI refused to post a message: receives already posted may still
    // write into the announcements, whose memory is left to them; the
    // file's collective calls cannot go on after this anyway.
    new std::vector<Announcement>(std::move(announcements));
    context.end_sequence(sequence);
    context.end_operation();
    throw;
  }
  const int code = wait_all_on_caller(requests, MPI_STATUSES_IGNORE);
  const std::int64_t gathered = now_ns();

  // Settled if every process did its part early without failing, and all
  // made the same call; anything else (a failure somewhere, a process that
  // did not go direct, a refusal, mismatched calls, the exchange failing)
  // is the operation's to handle, from its gather on.
  const bool settled =
      code == MPI_SUCCESS &&
      std::all_of(announcements.begin(), announcements.end(), [&own](const Announcement& a) {
        return a.accessed_early && !a.failed_early && a.direction == own.direction;
      });
  if (!settled) {
    SettledAttempt attempt{sequence,        started, gathered, code, std::move(announcements),
                           std::move(early)};
    return resume_at_gather(context, std::move(request), std::move(on_done), std::move(attempt),
                            failure);
  }
  std::exception_ptr result;
  std::size_t moved = 0;
  try {
    moved = reported_bytes(context, request,
                           early.accessed ? std::optional(early.io_bytes) : std::nullopt);
  } catch (...) {
    result = std::current_exception();
  }
  log_settled(
      context, request, sequence, started, gathered, early,
      static_cast<int>(std::count_if(announcements.begin(), announcements.end(),
                                     [](const Announcement& a) { return a.summary.bytes > 0; })));
  context.end_sequence(sequence);
  context.end_operation();
  on_done();
  failure = result;
  return result ? 0 : moved;
}

}  // namespace flowio::runtime
