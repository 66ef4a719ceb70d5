#include "runtime/engine/collective_context.h"

#include "runtime/engine/collective_call.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/inline_graph_runner.h"
#include "runtime/engine/tbb_graph_runner.h"

namespace flowio::runtime {

CollectiveContext::CollectiveContext(MPI_Comm file_comm, const io::FileDescriptor& file,
                                     io::SieveLock& sieve_lock, io::StorageBackend& backend,
                                     Engine& engine)
    : file_(file_comm, file, sieve_lock, backend, engine.arena()), engine_(engine) {}

CollectiveContext::~CollectiveContext() { background_.reset(); }

std::vector<OperationStatistics> CollectiveContext::statistics() const {
  std::lock_guard lock(mutex_);
  std::vector<OperationStatistics> out;
  const std::size_t kept = std::min(logged_, kLogged);
  out.reserve(kept);
  for (std::size_t i = logged_ - kept; i < logged_; ++i) {
    out.push_back(log_slot(i % kLogged).statistics());
  }
  return out;
}

void CollectiveContext::log(OperationRecord&& record) {
  std::lock_guard lock(mutex_);
  const std::size_t slot = logged_ % kLogged;
  if (slot / kLogChunk == log_chunks_.size()) {
    log_chunks_.push_back(std::make_unique<OperationRecord[]>(kLogChunk));
  }
  log_slot(slot) = std::move(record);
  ++logged_;
}

InlineGraphRunner& CollectiveContext::inline_runner() {
  if (!inline_) inline_ = std::make_unique<InlineGraphRunner>();
  return *inline_;
}

GraphRunner& CollectiveContext::runner(bool run_inline, const CollectiveSettings& settings) {
  if (run_inline) return inline_runner();
  const int aggregators = static_cast<int>(settings.aggregator_ranks.size());
  std::lock_guard lock(mutex_);
  const bool stale =
      background_ && (background_->buffers_in_flight() != settings.buffers_in_flight ||
                      background_->aggregators() != aggregators);
  // Only the operation asking is live: nothing runs in the old graph.
  if (!background_ || (stale && order_.only_one_live())) {
    background_.reset();
    background_ =
        std::make_unique<TbbGraphRunner>(engine_, settings.buffers_in_flight, aggregators);
  }
  return *background_;
}

Future<std::size_t> start_collective(CollectiveContext& context, CollectiveRequest request,
                                     std::function<void()> on_done) {
  return CollectiveCall::start(context, std::move(request), std::move(on_done));
}

std::size_t run_collective(CollectiveContext& context, CollectiveRequest&& request,
                           std::function<void()>&& on_done, std::exception_ptr& failure) {
  return CollectiveCall::run(context, std::move(request), std::move(on_done), failure);
}

}  // namespace flowio::runtime
