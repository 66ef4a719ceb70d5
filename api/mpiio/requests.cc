#include "api/mpiio/requests.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "api/mpiio/errors.h"
#include "api/mpiio/layer_file.h"
#include "flowio/transfer.h"

namespace flowio::mpiio {
namespace {

// A poll this soon after the previous one comes from a wait loop.
constexpr auto kWaitLoopPoll = std::chrono::microseconds(50);
// How long a polling waiter sleeps on the operation before returning to
// MPI's loop.
constexpr auto kPollSleep = std::chrono::microseconds(200);

class PendingRequest {
 public:
  PendingRequest(MPI_File handle, MPI_Errhandler handler) : handle_(handle), handler_(handler) {}

  MPI_File handle() const { return handle_; }
  void set_request(MPI_Request request) { request_ = request; }

  // The operation's thread, once: records the outcome, then completes the
  // request itself unless a waiter polls it.
  void finish(Future<std::size_t> done) {
    {
      std::lock_guard lock(mutex_);
      try {
        bytes_ = done.get();
      } catch (...) {
        error_ = error_code_of(std::current_exception());
      }
      done_ = true;
    }
    finished_.notify_all();
    // Sequentially consistent with polled_'s store in poll(): either this
    // thread sees the waiter, or the waiter sees done_.
    if (!polled_.load()) complete();
  }

  // MPI's poll function (MPI_Wait, MPI_Test, the -any/-some forms), called
  // without MPI's lock.
  void poll() {
    polled_.store(true);
    std::unique_lock lock(mutex_);
    if (!done_) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_poll_ < kWaitLoopPoll) {
        finished_.wait_for(lock, kPollSleep, [this] { return done_; });
      }
      last_poll_ = std::chrono::steady_clock::now();
    }
    const bool done = done_;
    lock.unlock();
    if (done) complete();
  }

  // MPI's wait function (MPI_Waitall), called without MPI's lock.
  void wait() {
    polled_.store(true);
    {
      std::unique_lock lock(mutex_);
      finished_.wait(lock, [this] { return done_; });
    }
    complete();
  }

  // Completes the request if the operation is done (MPI_Request_get_status).
  void complete_if_done() {
    bool done = false;
    {
      std::lock_guard lock(mutex_);
      done = done_;
    }
    if (done) complete();
  }

  // MPI's query function.
  int query(MPI_Status* status) const {
    std::lock_guard lock(mutex_);
    fill_status(status, bytes_);
    status->MPI_ERROR = error_;
    return error_;
  }

 private:
  // Exactly once, from whichever thread gets here first once done_ holds.
  void complete();

  const MPI_File handle_;
  const MPI_Errhandler handler_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::atomic<bool> polled_{false};
  std::atomic<bool> completed_{false};
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::size_t bytes_ = 0;
  int error_ = MPI_SUCCESS;
  std::chrono::steady_clock::time_point last_poll_{};  // poller's thread
};

// Requests started and not yet completed, by handle: for
// MPI_Request_get_status and complete_requests(). A handle is removed
// before its request is completed, so MPI cannot have reused it.
struct Registry {
  std::mutex mutex;
  std::unordered_map<MPI_Request, std::shared_ptr<PendingRequest>> pending;
};

Registry& registry() {
  static auto* instance = new Registry();  // used until exit
  return *instance;
}

std::shared_ptr<PendingRequest> find_pending(MPI_Request request) {
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  const auto found = all.pending.find(request);
  return found == all.pending.end() ? nullptr : found->second;
}

void PendingRequest::complete() {
  if (completed_.exchange(true)) return;
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    all.pending.erase(request_);
  }
  if (error_ != MPI_SUCCESS) report(handler_, handle_, error_);
  MPI_Request completing = request_;
  MPI_Grequest_complete(completing);
}

// MPI's state for a request: MPI frees it (free_function) when the program
// frees the request, which may be before the operation is done; the
// registry and the operation's continuation hold their own references.
using State = std::shared_ptr<PendingRequest>;

int query_function(void* state, MPI_Status* status) {
  return (*static_cast<State*>(state))->query(status);
}

int free_function(void* state) {
  delete static_cast<State*>(state);
  return MPI_SUCCESS;
}

// flowio operations cannot be withdrawn once started; MPI allows a cancel
// that does nothing when the operation completes anyway.
int cancel_function(void*, int) { return MPI_SUCCESS; }

int poll_function(void* state, MPI_Status*) {
  (*static_cast<State*>(state))->poll();
  return MPI_SUCCESS;
}

int wait_function(int count, void** states, double, MPI_Status*) {
  for (int i = 0; i < count; ++i) (*static_cast<State*>(states[i]))->wait();
  return MPI_SUCCESS;
}

}  // namespace

void fill_status(MPI_Status* status, std::size_t bytes) {
  if (status != MPI_STATUS_IGNORE) *status = Transfer(bytes, MPI_BYTE).status();
}

int start_request(Future<std::size_t> operation, LayerFile& file, MPI_File handle,
                  MPI_Request* request) {
  auto pending = std::make_shared<PendingRequest>(handle, file.errhandler);
  auto* state = new State(pending);
  const int started = MPIX_Grequest_start(query_function, free_function, cancel_function,
                                          poll_function, wait_function, state, request);
  if (started != MPI_SUCCESS) {
    delete state;
    operation.wait();
    return started;
  }
  pending->set_request(*request);
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    all.pending.emplace(*request, pending);
  }
  // Runs at once when the operation is already done (it was carried out
  // at the call), else on the thread that finishes it; it must not touch
  // the LayerFile, which may be closed by then.
  operation.then(inline_executor(),
                 [pending](Future<std::size_t> done) { pending->finish(std::move(done)); });
  return MPI_SUCCESS;
}

void complete_requests(MPI_File handle) {
  std::vector<std::shared_ptr<PendingRequest>> left;
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    for (const auto& [request, pending] : all.pending) {
      if (handle == MPI_FILE_NULL || pending->handle() == handle) left.push_back(pending);
    }
  }
  for (const auto& pending : left) pending->wait();
}

}  // namespace flowio::mpiio

using namespace flowio::mpiio;

// MPICH 4.0.2 does not call a generalized request's poll function here, so
// a request only a waiter would complete is looked at first.
// (When the layer forwards, no request is pending here.)
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (auto pending = find_pending(request)) pending->complete_if_done();
  return PMPI_Request_get_status(request, flag, status);
}
