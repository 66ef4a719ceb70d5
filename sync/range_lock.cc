#include "sync/range_lock.h"

#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "flowio/error.h"
#include "sync/channel.h"
#include "sync/home_poll.h"
#include "sync/lock_window.h"
#include "sync/range_table.h"

namespace flowio::sync {
namespace {

constexpr int kWakeTag = 1;  // plus the waiter's local slot

int table_words(MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  return kRangeTableHeaderWords + ranks * RangeLock::kSlotsPerProcess * kRangeSlotWords;
}

}  // namespace

struct RangeLock::State : std::enable_shared_from_this<State> {
  enum class Phase { free, requesting, held, releasing };

  // One of this process's slots in the table.
  struct Slot {
    Phase phase = Phase::free;
    RangeSlot entry;
    Promise<Lease> promise;
    // Buffers of the table writes in flight, which must not move.
    std::uint64_t ticket_out = 0;
    std::uint64_t ticket_old = 0;
    std::array<std::uint64_t, kRangeSlotWords> entry_out{};
    std::array<std::uint64_t, kRangeSlotWords> entry_old{};
  };

  struct Queued {
    RangeSlot entry;
    Promise<Lease> promise;
  };

  State(MPI_Comm comm, ProgressPort& progress, int home_rank, std::unique_ptr<Lock> mutex)
      : channel(comm, progress),
        home(home_rank),
        words(table_words(comm)),
        table(channel, channel.rank() == home_rank ? table_words(comm) : 0),
        table_mutex(std::move(mutex)) {
    if (channel.rank() == home && table.remote()) {
      home_poll = std::make_unique<HomePoll>(progress, channel.comm(), table, words);
    }
  }

  Channel channel;
  int home;
  int words;
  LockWindow table;
  std::unique_ptr<HomePoll> home_poll;
  std::unique_ptr<Lock> table_mutex;

  std::mutex mutex;
  std::condition_variable settled;  // a slot became free
  std::array<Slot, kSlotsPerProcess> slots;
  std::deque<Queued> queued;
  std::exception_ptr broken;

  int table_index(int slot) const { return channel.rank() * kSlotsPerProcess + slot; }
  static int word_of(int index) { return kRangeTableHeaderWords + index * kRangeSlotWords; }

  // Takes a free slot for `entry`, or queues it; called with `mutex` held.
  Future<Lease> admit(RangeSlot entry, std::unique_lock<std::mutex>& lock) {
    for (int s = 0; s < kSlotsPerProcess; ++s) {
      Slot& slot = slots[static_cast<std::size_t>(s)];
      if (slot.phase != Phase::free) continue;
      slot.phase = Phase::requesting;
      slot.entry = entry;
      slot.promise = Promise<Lease>();
      Future<Lease> future = slot.promise.get_future();
      lock.unlock();
      insert(s);
      return future;
    }
    queued.push_back(Queued{entry, Promise<Lease>()});
    return queued.back().promise.get_future();
  }

  // Runs `step` with the table mutex held and the table read into a
  // snapshot; `step` must eventually release the table lease.
  using TableStep = std::function<void(std::shared_ptr<Lease> table_lease,
                                       std::shared_ptr<std::vector<std::uint64_t>> snapshot)>;
  void with_table(TableStep step, std::function<void(std::exception_ptr)> failed) {
    table_mutex->acquire(ByteRange::everything(), LockMode::exclusive)
        .then(inline_executor(), [self = shared_from_this(), step = std::move(step),
                                  failed](Future<Lease> taken) {
          std::shared_ptr<Lease> lease;
          try {
            lease = std::make_shared<Lease>(taken.get());
          } catch (...) {
            failed(std::current_exception());
            return;
          }
          auto snapshot =
              std::make_shared<std::vector<std::uint64_t>>(static_cast<std::size_t>(self->words));
          MPI_Request read = MPI_REQUEST_NULL;
          try {
            read = self->table.get(snapshot->data(), self->words, self->home, 0);
          } catch (...) {
            failed(std::current_exception());
            return;
          }
          self->channel.watch_or_test({read}, [step, failed, lease, snapshot](int code) {
            if (code != MPI_SUCCESS) {
              failed(std::make_exception_ptr(MpiError("range lock: reading the table", code)));
              return;
            }
            step(lease, snapshot);
          });
        });
  }

  void insert(int s) {
    auto self = shared_from_this();
    with_table(
        [self, s](std::shared_ptr<Lease> table_lease,
                  std::shared_ptr<std::vector<std::uint64_t>> snapshot) {
          Slot& slot = self->slots[static_cast<std::size_t>(s)];
          slot.entry.ticket = (*snapshot)[0] + 1;
          std::vector<RangeSlot> after = slots_of_table(*snapshot);
          const auto index = static_cast<std::size_t>(self->table_index(s));
          after[index] = slot.entry;
          const bool must_wait = blocked(after, index);
          slot.ticket_out = slot.entry.ticket;
          slot.entry_out = {slot.entry.ticket, slot.entry.begin, slot.entry.end,
                            slot.entry.exclusive};
          std::vector<MPI_Request> writes(2, MPI_REQUEST_NULL);
          try {
            writes[0] = self->table.replace(&slot.ticket_out, &slot.ticket_old, 1, self->home, 0);
            writes[1] =
                self->table.replace(slot.entry_out.data(), slot.entry_old.data(), kRangeSlotWords,
                                    self->home, word_of(static_cast<int>(index)));
          } catch (...) {
            self->request_failed(s, std::current_exception());
            return;
          }
          self->channel.watch_or_test(writes, [self, s, table_lease, must_wait](int code) {
            table_lease->release();
            if (code != MPI_SUCCESS) {
              self->request_failed(
                  s, std::make_exception_ptr(MpiError("range lock: writing the table", code)));
            } else if (must_wait) {
              self->await_wake(s);
            } else {
              self->grant(s);
            }
          });
        },
        [self, s](std::exception_ptr failure) { self->request_failed(s, failure); });
  }

  // The last earlier request to leave sends the wake-up; it may arrive
  // before this receive is posted and then waits in MPI's queue.
  void await_wake(int s) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code =
        MPI_Irecv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, kWakeTag + s, channel.comm(), &request);
    if (code != MPI_SUCCESS) {
      request_failed(s, std::make_exception_ptr(MpiError("range lock: MPI_Irecv", code)));
      return;
    }
    channel.watch({request}, [self = shared_from_this(), s](int received) {
      if (received != MPI_SUCCESS) {
        self->request_failed(s, std::make_exception_ptr(MpiError("range lock: wake-up", received)));
      } else {
        self->grant(s);
      }
    });
  }

  void grant(int s) {
    Promise<Lease> promise;
    {
      std::lock_guard lock(mutex);
      Slot& slot = slots[static_cast<std::size_t>(s)];
      slot.phase = Phase::held;
      promise = std::move(slot.promise);
    }
    promise.set_value(Lease([self = shared_from_this(), s] { self->remove(s); }));
  }

  void remove(int s) {
    {
      std::lock_guard lock(mutex);
      slots[static_cast<std::size_t>(s)].phase = Phase::releasing;
    }
    auto self = shared_from_this();
    with_table(
        [self, s](std::shared_ptr<Lease> table_lease,
                  std::shared_ptr<std::vector<std::uint64_t>> snapshot) {
          Slot& slot = self->slots[static_cast<std::size_t>(s)];
          const auto index = static_cast<std::size_t>(self->table_index(s));
          auto woken = std::make_shared<std::vector<std::size_t>>(
              unblocked_by_release(slots_of_table(*snapshot), index));
          slot.entry_out = {0, 0, 0, 0};
          MPI_Request clear = MPI_REQUEST_NULL;
          try {
            clear =
                self->table.replace(slot.entry_out.data(), slot.entry_old.data(), kRangeSlotWords,
                                    self->home, word_of(static_cast<int>(index)));
          } catch (...) {
            self->release_failed(s, std::current_exception());
            return;
          }
          self->channel.watch_or_test({clear}, [self, s, table_lease, woken](int code) {
            table_lease->release();
            if (code != MPI_SUCCESS) {
              self->release_failed(
                  s, std::make_exception_ptr(MpiError("range lock: clearing the table", code)));
              return;
            }
            self->wake(s, *woken);
          });
        },
        [self, s](std::exception_ptr failure) { self->release_failed(s, failure); });
  }

  void wake(int s, const std::vector<std::size_t>& woken) {
    std::vector<MPI_Request> sends;
    for (const std::size_t index : woken) {
      const int owner = static_cast<int>(index) / kSlotsPerProcess;
      const int tag = kWakeTag + static_cast<int>(index) % kSlotsPerProcess;
      MPI_Request request = MPI_REQUEST_NULL;
      const int code = MPI_Isend(nullptr, 0, MPI_BYTE, owner, tag, channel.comm(), &request);
      if (code != MPI_SUCCESS) {
        release_failed(s, std::make_exception_ptr(MpiError("range lock: MPI_Isend", code)));
        return;
      }
      sends.push_back(request);
    }
    channel.watch(std::move(sends), [self = shared_from_this(), s](int code) {
      if (code != MPI_SUCCESS) {
        self->release_failed(s, std::make_exception_ptr(MpiError("range lock: wake-up", code)));
      } else {
        self->slot_free(s);
      }
    });
  }

  // The slot is free again: the next queued request takes it.
  void slot_free(int s) {
    std::unique_lock lock(mutex);
    Slot& slot = slots[static_cast<std::size_t>(s)];
    if (queued.empty() || broken) {
      slot.phase = Phase::free;
      settled.notify_all();
      return;
    }
    Queued next = std::move(queued.front());
    queued.pop_front();
    slot.phase = Phase::requesting;
    slot.entry = next.entry;
    slot.promise = std::move(next.promise);
    lock.unlock();
    insert(s);
  }

  // After a failure the table's state is unknown: every request of this
  // process fails, now and later.
  void request_failed(int s, std::exception_ptr failure) {
    Promise<Lease> promise;
    std::deque<Queued> failed;
    {
      std::lock_guard lock(mutex);
      broken = failure;
      Slot& slot = slots[static_cast<std::size_t>(s)];
      slot.phase = Phase::free;
      promise = std::move(slot.promise);
      failed = std::move(queued);
      settled.notify_all();
    }
    promise.set_exception(failure);
    for (Queued& request : failed) request.promise.set_exception(failure);
  }

  void release_failed(int s, std::exception_ptr failure) {
    std::deque<Queued> failed;
    {
      std::lock_guard lock(mutex);
      broken = failure;
      slots[static_cast<std::size_t>(s)].phase = Phase::free;
      failed = std::move(queued);
      settled.notify_all();
    }
    for (Queued& request : failed) request.promise.set_exception(failure);
  }
};

RangeLock::RangeLock(MPI_Comm comm, ProgressPort& progress, int home,
                     std::unique_ptr<Lock> table_mutex)
    : state_(std::make_shared<State>(comm, progress, home, std::move(table_mutex))) {}

RangeLock::~RangeLock() = default;

Future<Lease> RangeLock::acquire(ByteRange range, LockMode mode) {
  if (range.end <= range.begin) return make_ready_future(Lease());
  if (range.begin < 0) {
    throw UsageError(ErrorCode::invalid_argument, "range lock: negative offset");
  }
  std::unique_lock lock(state_->mutex);
  if (state_->broken) return make_exception_future<Lease>(state_->broken);
  RangeSlot entry;
  entry.begin = static_cast<std::uint64_t>(range.begin);
  entry.end = static_cast<std::uint64_t>(range.end);
  entry.exclusive = mode == LockMode::exclusive ? 1 : 0;
  return state_->admit(entry, lock);
}

void RangeLock::close() {
  {
    std::unique_lock lock(state_->mutex);
    for (const State::Slot& slot : state_->slots) {
      if (slot.phase == State::Phase::requesting || slot.phase == State::Phase::held) {
        throw UsageError(ErrorCode::invalid_argument,
                         "closing a range lock that this process holds or waits for");
      }
    }
    if (!state_->queued.empty()) {
      throw UsageError(ErrorCode::invalid_argument,
                       "closing a range lock that this process waits for");
    }
    // Releases in progress end on their own.
    state_->settled.wait(lock, [this] {
      for (const State::Slot& slot : state_->slots) {
        if (slot.phase != State::Phase::free) return false;
      }
      return true;
    });
  }
  state_->table_mutex->close();
  state_->channel.quiesce();
  if (state_->home_poll) state_->home_poll->stop();
  state_->table.close();
}

std::string RangeLock::name() const { return state_->table_mutex->name(); }

}  // namespace flowio::sync
