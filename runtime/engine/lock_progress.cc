#include "runtime/engine/lock_progress.h"

namespace flowio::runtime {

void LockProgress::watch(std::vector<MPI_Request> requests, Done done) {
  progress_.watch(std::move(requests), std::move(done));
}

void LockProgress::poll(Poll poll) {
  progress_.poll([poll = std::move(poll)] {
    switch (poll()) {
      case PollResult::busy:
        return Progress::PollResult::busy;
      case PollResult::done:
        return Progress::PollResult::done;
      default:
        return Progress::PollResult::idle;
    }
  });
}

}  // namespace flowio::runtime
