// LockProgress: the runtime's progress thread as sync/'s ProgressPort, so
// that locks (below the runtime) wait on it without naming it.
#pragma once

#include "runtime/engine/progress.h"
#include "sync/progress_port.h"

namespace flowio::runtime {

class LockProgress final : public sync::ProgressPort {
 public:
  // `progress` must outlive this port and every wait handed to it.
  explicit LockProgress(Progress& progress) : progress_(progress) {}

  void watch(std::vector<MPI_Request> requests, Done done) override;
  void poll(Poll poll) override;

 private:
  Progress& progress_;
};

}  // namespace flowio::runtime
