#include "sync/atomic_mode.h"

#include <map>

#include "flowio/error.h"
#include "sync/channel.h"

namespace flowio::sync {
namespace {

constexpr int kLeader = 0;

LockMode mode_for(bool writing) { return writing ? LockMode::exclusive : LockMode::shared; }

}  // namespace

struct AtomicMode::State : std::enable_shared_from_this<State> {
  State(MPI_Comm comm, ProgressPort& progress) : announcements(comm, progress) {}

  Channel announcements;  // the leader's "held" (an MPI_Ibcast per operation)
  std::unique_ptr<Lock> lock;
  // Replaced only between accesses (set_objects); read by every access,
  // hence the mutex rather than a bare pointer swap.
  mutable std::mutex objects_mutex;
  std::shared_ptr<const ObjectSet> objects;

  std::shared_ptr<const ObjectSet> current_objects() const {
    std::lock_guard guard(objects_mutex);
    return objects;
  }

  // The leader announces operations in the order they were started, as
  // the others post their broadcasts, even when a later operation's lease
  // comes first (disjoint ranges).
  std::mutex mutex;
  std::uint64_t started = 0;
  std::uint64_t next_to_announce = 0;
  std::map<std::uint64_t, std::shared_ptr<int>> outcomes;  // ready to announce

  // Posts the broadcasts that may go now, in order.
  void announce_ready() {
    std::unique_lock lock_guard(mutex);
    for (auto found = outcomes.find(next_to_announce); found != outcomes.end();
         found = outcomes.find(next_to_announce)) {
      std::shared_ptr<int> outcome = found->second;
      outcomes.erase(found);
      ++next_to_announce;
      MPI_Request request = MPI_REQUEST_NULL;
      const int code =
          MPI_Ibcast(outcome.get(), 1, MPI_INT, kLeader, announcements.comm(), &request);
      if (code != MPI_SUCCESS) continue;  // the others wait in vain: MPI is broken anyway
      announcements.watch({request}, [outcome](int) {});
    }
  }
};

AtomicMode::AtomicMode(MPI_Comm comm, const std::string& path, LockSettings& settings,
                       ProgressPort& progress)
    : state_(std::make_shared<State>(comm, progress)) {
  state_->lock = make_lock(settings, comm, path, progress);
  settings_ = settings;
}

AtomicMode::~AtomicMode() = default;

void AtomicMode::set_objects(std::shared_ptr<const ObjectSet> objects) {
  std::lock_guard guard(state_->objects_mutex);
  state_->objects = std::move(objects);
}

bool AtomicMode::needs_lock(const core::Access& access) const {
  if (access.empty()) return false;
  const std::shared_ptr<const ObjectSet> objects = state_->current_objects();
  return !objects || objects->touches_shared(access);
}

Future<Lease> AtomicMode::lock_access(const core::Access& access, bool writing) {
  if (!needs_lock(access)) return make_ready_future(Lease());
  return state_->lock->acquire({access.file_begin(), access.file_end()}, mode_for(writing));
}

bool AtomicMode::may_rewrite_extent(const core::Access& access, bool leased) const {
  if (access.empty()) return false;
  const std::shared_ptr<const ObjectSet> objects = state_->current_objects();
  if (!objects) return leased;
  return !objects->others_may_access(access.file_begin(), access.file_end(),
                                     state_->announcements.rank(), leased);
}

Future<Lease> AtomicMode::lock_collective(ByteRange hull, bool writing) {
  std::uint64_t sequence = 0;
  {
    std::lock_guard lock(state_->mutex);
    sequence = state_->started++;
  }
  if (state_->announcements.rank() != kLeader) {
    auto outcome = std::make_shared<int>(MPI_SUCCESS);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Ibcast(outcome.get(), 1, MPI_INT, kLeader, state_->announcements.comm(), &request),
        "MPI_Ibcast in atomic mode");
    auto announced = std::make_shared<Promise<Lease>>();
    Future<Lease> future = announced->get_future();
    state_->announcements.watch({request}, [outcome, announced](int code) {
      if (code == MPI_SUCCESS && *outcome == MPI_SUCCESS) {
        announced->set_value(Lease());
      } else {
        announced->set_exception(std::make_exception_ptr(
            MpiError("atomic mode: the leader's lock for a collective operation",
                     code != MPI_SUCCESS ? code : *outcome)));
      }
    });
    return future;
  }
  auto state = state_;
  return state_->lock->acquire(hull, mode_for(writing))
      .then(inline_executor(), [state, sequence](Future<Lease> acquired) {
        // Announced whatever happened, so that no process waits in vain;
        // a failure travels as an MPI error class.
        auto outcome = std::make_shared<int>(MPI_SUCCESS);
        Lease lease;
        std::exception_ptr failure;
        try {
          lease = acquired.get();
        } catch (const Error& error) {
          *outcome = error.mpi_code() != MPI_SUCCESS ? error.mpi_code() : MPI_ERR_OTHER;
          failure = std::current_exception();
        } catch (...) {
          *outcome = MPI_ERR_OTHER;
          failure = std::current_exception();
        }
        {
          std::lock_guard lock(state->mutex);
          state->outcomes.emplace(sequence, outcome);
        }
        state->announce_ready();
        if (failure) std::rethrow_exception(failure);
        return lease;
      });
}

void AtomicMode::close() {
  state_->lock->close();
  state_->announcements.quiesce();
}

}  // namespace flowio::sync
