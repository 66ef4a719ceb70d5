#include "sync/home_poll.h"

namespace flowio::sync {

HomePoll::HomePoll(ProgressPort& progress, MPI_Comm comm, const LockWindow& window, int words)
    : state_(std::make_shared<State>()) {
  state_->comm = comm;
  state_->window = &window;
  state_->words = words;
  stopped_ = state_->stopped.get_future();
  progress.poll([state = state_] {
    if (state->stopping.load(std::memory_order_acquire)) {
      state->stopped.set_value();
      return ProgressPort::PollResult::done;
    }
    // Any MPI call will do to let MPICH apply what arrived; this one
    // neither receives nor blocks.
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, state->comm, &flag, MPI_STATUS_IGNORE);
    state->window->sync();
    // A cheap fingerprint of the words: any change of the lock's state
    // changes one of them.
    std::uint64_t fingerprint = 0;
    for (int i = 0; i < state->words; ++i) {
      fingerprint = fingerprint * 1000003u + state->window->load(i);
    }
    const bool changed = fingerprint != state->last;
    state->last = fingerprint;
    return changed ? ProgressPort::PollResult::busy : ProgressPort::PollResult::idle;
  });
}

HomePoll::~HomePoll() { stop(); }

void HomePoll::stop() {
  if (!stopped_.valid()) return;
  state_->stopping.store(true, std::memory_order_release);
  stopped_.get();
}

}  // namespace flowio::sync
