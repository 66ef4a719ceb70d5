#include "runtime/engine/executors.h"

namespace flowio::runtime {

void BackgroundExecutor::wait_for(std::vector<MPI_Request> requests, Done done) {
  progress_.watch(std::move(requests), std::move(done));
}

void BackgroundExecutor::run_io(std::function<void()> io) { io_.post(std::move(io)); }

void InlineExecutor::wait_for(std::vector<MPI_Request> requests, Done done) {
  std::vector<MPI_Status> statuses(requests.size());
  // Most small messages are complete by now (eager sends, data already
  // arrived): one test saves a trip through the caller's loop.
  int flag = 0;
  const int code =
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, statuses.data());
  if (flag || code != MPI_SUCCESS) {
    done(code, statuses);
    return;
  }
  groups_.push_back(Group{std::move(requests), std::move(statuses), std::move(done)});
}

bool InlineExecutor::test() {
  bool any = false;
  for (auto group = groups_.begin(); group != groups_.end();) {
    int flag = 0;
    const int code = MPI_Testall(static_cast<int>(group->requests.size()), group->requests.data(),
                                 &flag, group->statuses.data());
    if (flag || code != MPI_SUCCESS) {
      // Taken out first: the callback may add groups.
      Group complete = std::move(*group);
      group = groups_.erase(group);
      complete.done(code, complete.statuses);
      any = true;
    } else {
      ++group;
    }
  }
  return any;
}

}  // namespace flowio::runtime
