#include "sync/channel.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "flowio/error.h"
#include "flowio/future.h"

namespace flowio::sync {
namespace {

constexpr auto kTestHere = std::chrono::microseconds(20);

// True while this thread runs a callback of a Channel's watch or poll:
// it is the progress thread, which must not stop to test.
thread_local bool in_progress_callback = false;

// Marks the progress thread for the callbacks a callback starts inline.
class ProgressCallback {
 public:
  ProgressCallback() : was_(std::exchange(in_progress_callback, true)) {}
  ~ProgressCallback() { in_progress_callback = was_; }
  ProgressCallback(const ProgressCallback&) = delete;
  ProgressCallback& operator=(const ProgressCallback&) = delete;

 private:
  bool was_;
};

}  // namespace

std::exception_ptr mpi_failure(int code, const char* what) {
  return code == MPI_SUCCESS ? nullptr : std::make_exception_ptr(MpiError(what, code));
}

Channel::Channel(MPI_Comm comm, ProgressPort& progress) : progress_(progress) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup for a lock");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  const char* forced = std::getenv("FLOWIO_LOCK_WINDOWS");
  if (forced != nullptr && std::strcmp(forced, "mpi") == 0) return;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type for a lock");
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // The same answer everywhere: if one node holds every process, every
  // process finds its node that large.
  shares_memory_ = node_size == size_;
}

Channel::~Channel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

void Channel::watch(std::vector<MPI_Request> requests, std::function<void(int)> done) {
  {
    std::lock_guard lock(mutex_);
    ++in_flight_;
  }
  progress_.watch(std::move(requests),
                  [this, done = std::move(done)](int code, std::span<const MPI_Status>) {
                    {
                      ProgressCallback marked;
                      done(code);
                    }
                    finished();
                  });
}

void Channel::watch_or_test(std::vector<MPI_Request> requests, std::function<void(int)> done) {
  const auto deadline = std::chrono::steady_clock::now() +
                        (in_progress_callback ? std::chrono::microseconds(0) : kTestHere);
  do {
    int complete = 0;
    const int code = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &complete,
                                 MPI_STATUSES_IGNORE);
    if (complete || code != MPI_SUCCESS) {
      done(code);
      return;
    }
  } while (std::chrono::steady_clock::now() < deadline);
  watch(std::move(requests), std::move(done));
}

void Channel::poll(ProgressPort::Poll poll) {
  {
    std::lock_guard lock(mutex_);
    ++in_flight_;
  }
  progress_.poll([this, poll = std::move(poll)] {
    ProgressCallback marked;
    const ProgressPort::PollResult result = poll();
    if (result == ProgressPort::PollResult::done) finished();
    return result;
  });
}

// The last touch of this Channel by a callback: quiesce() may return (and
// the channel be destroyed) as soon as the count reaches zero.
void Channel::finished() {
  std::lock_guard lock(mutex_);
  if (--in_flight_ == 0) quiet_.notify_all();
}

void Channel::quiesce() {
  {
    std::unique_lock lock(mutex_);
    quiet_.wait(lock, [this] { return in_flight_ == 0; });
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &barrier), "MPI_Ibarrier closing a lock");
  auto outcome = std::make_shared<Promise<int>>();
  Future<int> reached = outcome->get_future();
  progress_.watch({barrier},
                  [outcome](int code, std::span<const MPI_Status>) { outcome->set_value(code); });
  check_mpi(reached.get(), "MPI_Ibarrier closing a lock");
}

}  // namespace flowio::sync
