#include "runtime/collective_context.h"

#include "exchange/access_codec.h"
#include "exchange/peer_locality.h"
#include "flowio/error.h"
#include "runtime/collective_operation.h"
#include "runtime/engine.h"
#include "runtime/inline_graph_runner.h"
#include "runtime/tbb_graph_runner.h"

namespace flowio::runtime {

CollectiveContext::CollectiveContext(MPI_Comm file_comm, const io::FileDescriptor& file,
                                     io::SieveLock& sieve_lock, io::StorageBackend& backend,
                                     Engine& engine)
    : gather_comm_(file_comm),
      file_(file),
      sieve_lock_(sieve_lock),
      backend_(backend),
      engine_(engine) {
  check_mpi(MPI_Comm_dup(file_comm, &comm_), "MPI_Comm_dup");
  // Failures come back as codes, to reach the futures, not abort.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  byte_types_.assign(static_cast<std::size_t>(ranks_), MPI_BYTE);
  shares_memory_ = exchange::peers_sharing_memory(comm_);
}

CollectiveContext::~CollectiveContext() {
  background_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

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

std::int64_t CollectiveContext::view_access_words(const core::Access& access) {
  if (access.empty()) return static_cast<std::int64_t>(exchange::encode_view_access(access).size());
  if (access.view() != counted_view_) {
    counted_words_ = static_cast<std::int64_t>(exchange::encode_view_access(access).size());
    counted_view_ = access.view();
  }
  return counted_words_;
}

void CollectiveContext::forget_plans(int plans_kept) {
  plans_.clear();
  plans_.set_capacity(static_cast<std::size_t>(std::max(plans_kept, 0)));
}

bool CollectiveContext::begin_operation(bool blocking) {
  // Acquire: an operation that finds none outstanding sees everything the
  // earlier ones did before they ended (the gate's and the scheduler's
  // state included), as if it had taken a lock they released.
  const bool alone = outstanding_.fetch_add(1, std::memory_order_acq_rel) == 0;
  return blocking && alone;
}

void CollectiveContext::end_operation() { outstanding_.fetch_sub(1, std::memory_order_release); }

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
  // Only this operation outstanding: nothing runs in the old graph.
  if (!background_ || (stale && outstanding_.load(std::memory_order_acquire) == 1)) {
    background_.reset();
    background_ =
        std::make_unique<TbbGraphRunner>(engine_, settings.buffers_in_flight, aggregators);
  }
  return *background_;
}

std::shared_ptr<exchange::CompressionRule> CollectiveContext::compression_rule(
    const exchange::CompressionSettings& settings) {
  std::lock_guard lock(mutex_);
  if (!compression_rule_ || !(compression_rule_->settings() == settings)) {
    compression_rule_ =
        std::make_shared<exchange::CompressionRule>(settings, ranks_, shares_memory_);
  }
  return compression_rule_;
}

Future<std::size_t> start_collective(CollectiveContext& context, CollectiveRequest request,
                                     std::function<void()> on_done) {
  return CollectiveOperation::start(context, std::move(request), std::move(on_done));
}

std::size_t run_collective(CollectiveContext& context, CollectiveRequest&& request,
                           std::function<void()>&& on_done, std::exception_ptr& failure) {
  return CollectiveOperation::run(context, std::move(request), std::move(on_done), failure);
}

}  // namespace flowio::runtime
