#include "runtime/stages/operation.h"

#include "exchange/compress_stage.h"

namespace flowio::runtime {

Operation::Operation(FileContext& file, CollectiveRequest&& request, std::uint64_t sequence,
                     bool runs_inline, Executor& executor, std::int64_t started_ns)
    : file_(file),
      request_(std::move(request)),
      sequence_(sequence),
      runs_inline_(runs_inline),
      executor_(executor),
      started_ns_(started_ns),
      recorder_(file.rank(), request_.writing, sequence, runs_inline) {}

void Operation::fail(std::exception_ptr failure, const char* stage) {
  std::lock_guard lock(mutex_);
  if (failure_) return;
  failure_ = std::move(failure);
  failed_stage_ = stage;
  failed_.store(true, std::memory_order_release);
}

std::exception_ptr Operation::failure() const {
  // Most operations never fail: they ask without taking the lock.
  if (!failed_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(mutex_);
  return failure_;
}

const char* Operation::failed_stage() const {
  std::lock_guard lock(mutex_);
  return failed_stage_;
}

void Operation::release_memory() {
  // Relaxed: the flag only makes the call once. What the data phase did
  // with the memory happens before this call already (the last item to
  // leave took every item's end through Moving::remaining, a
  // read-modify-write in sequential consistency), and the callback hands
  // that on to its waiter through its own synchronization.
  if (memory_released_.exchange(true, std::memory_order_relaxed)) return;
  if (request_.on_memory_released) request_.on_memory_released();
}

void Operation::add_compression(const CompressionStatistics& statistics) {
  std::lock_guard lock(mutex_);
  if (!compression_) compression_ = std::make_unique<CompressionStatistics>();
  exchange::add_statistics(*compression_, statistics);
  compressed_.store(true, std::memory_order_release);
}

std::unique_ptr<CompressionStatistics> Operation::compression_statistics() const {
  // Most operations frame no message: they ask without taking the lock.
  if (!compressed_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(mutex_);
  return compression_ ? std::make_unique<CompressionStatistics>(*compression_) : nullptr;
}

Planning::Planning(Announcing&& announcing)
    : announcements(std::move(announcing.announcements)), early(announcing.early) {}

Moving::Moving(Planning&& planning, DataRoute route_)
    : route(route_),
      announcements(std::move(planning.announcements)),
      plan(std::move(planning.plan)),
      origin(planning.origin),
      gather(planning.gather),
      early(planning.early),
      compression_rule(std::move(planning.compression_rule)),
      compression(std::move(planning.compression)),
      lease_pending(std::move(planning.lease)) {}

Agreeing::Agreeing(Moving&& moving)
    : announcements(std::move(moving.announcements)),
      plan(std::move(moving.plan)),
      origin(moving.origin),
      gather(moving.gather),
      route(moving.route),
      accessed_directly(moving.accessed_directly || moving.early.accessed),
      lease(std::move(moving.lease)) {
  // A direct read counted what it found, and so did the messages of a
  // two-phase one (each aggregator sends what its read found); rounds
  // carry fixed counts, so the file's size tells there.
  if (route == DataRoute::two_phase) {
    if (!plan->alltoallw) {
      std::int64_t received = 0;
      for (const ClientRun& run : moving.client_runs) received += run.received;
      found = received;
    }
  } else if (moving.read_directly) {
    found = moving.read_directly;
  } else if (moving.early.accessed) {
    found = moving.early.bytes;
  }
}

Agreeing::Agreeing(Planning&& settled)
    : announcements(std::move(settled.announcements)),
      origin(settled.origin),
      gather(settled.gather),
      route(DataRoute::none),
      accessed_directly(settled.early.accessed) {
  if (settled.early.accessed) found = settled.early.bytes;
}

}  // namespace flowio::runtime
