#include "runtime/stages/file_context.h"

#include <algorithm>

#include "exchange/access_codec.h"
#include "exchange/peer_locality.h"
#include "flowio/error.h"

namespace flowio::runtime {

FileContext::FileContext(MPI_Comm file_comm, const io::FileDescriptor& file,
                         io::SieveLock& sieve_lock, io::StorageBackend& backend,
                         tbb::task_arena& workers)
    : gather_comm_(file_comm),
      file_(file),
      sieve_lock_(sieve_lock),
      backend_(backend),
      workers_(workers) {
  check_mpi(MPI_Comm_dup(file_comm, &comm_), "MPI_Comm_dup");
  // Failures come back as codes, to reach the futures, not abort.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  byte_types_.assign(static_cast<std::size_t>(ranks_), MPI_BYTE);
  shares_memory_ = exchange::peers_sharing_memory(comm_);
  plans_.set_key_ranks(ranks_);
}

FileContext::~FileContext() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

std::int64_t FileContext::view_access_words(const core::Access& access) {
  if (access.empty()) return static_cast<std::int64_t>(exchange::encode_view_access(access).size());
  if (access.view() != counted_view_) {
    counted_words_ = static_cast<std::int64_t>(exchange::encode_view_access(access).size());
    counted_view_ = access.view();
  }
  return counted_words_;
}

void FileContext::forget_plans(int plans_kept) {
  plans_.clear();
  plans_.set_capacity(static_cast<std::size_t>(std::max(plans_kept, 0)));
}

std::shared_ptr<exchange::CompressionRule> FileContext::compression_rule(
    const exchange::CompressionSettings& settings) {
  std::lock_guard lock(mutex_);
  if (!compression_rule_ || !(compression_rule_->settings() == settings)) {
    compression_rule_ =
        std::make_shared<exchange::CompressionRule>(settings, ranks_, shares_memory_);
  }
  return compression_rule_;
}

}  // namespace flowio::runtime
