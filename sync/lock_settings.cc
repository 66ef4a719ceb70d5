#include "sync/lock_settings.h"

#include "flowio/error.h"
#include "runtime/core/value_names.h"
#include "sync/fcntl_lock.h"
#include "sync/hybrid_mutex.h"
#include "sync/mcs_mutex.h"
#include "sync/mutex_lock.h"
#include "sync/one_sided_mutex.h"
#include "sync/range_lock.h"
#include "sync/waitlist.h"

namespace flowio::sync {
namespace {

constexpr int kHome = 0;

constexpr core::ValueName<LockAlgorithm> kAlgorithmNames[] = {
    {LockAlgorithm::hybrid, "hybrid"},
    {LockAlgorithm::one_sided, "one_sided"},
    {LockAlgorithm::mcs, "mcs"},
    {LockAlgorithm::fcntl, "fcntl"}};

std::unique_ptr<MutexProtocol> make_protocol(LockAlgorithm algorithm, MPI_Comm comm,
                                             ProgressPort& progress) {
  switch (algorithm) {
    case LockAlgorithm::one_sided:
      return std::make_unique<OneSidedMutex>(comm, progress, kHome);
    case LockAlgorithm::mcs:
      return std::make_unique<McsMutex>(comm, progress, kHome);
    default:
      return std::make_unique<HybridMutex>(comm, progress, kHome);
  }
}

}  // namespace

const char* lock_algorithm_name(LockAlgorithm algorithm) {
  return core::name_of(kAlgorithmNames, algorithm);
}

LockSettings LockSettings::from_hints(const Hints& hints) {
  LockSettings settings;
  if (const auto found = hints.find("flowio_lock"); found != hints.end()) {
    settings.algorithm = core::value_named(kAlgorithmNames, found->second, "hint flowio_lock");
  }
  if (const auto found = hints.find("flowio_lock_ranges"); found != hints.end()) {
    if (found->second != "enable" && found->second != "disable") {
      throw UsageError(ErrorCode::invalid_argument, "hint flowio_lock_ranges: \"" + found->second +
                                                        "\" is not enable or disable");
    }
    settings.ranges = found->second == "enable";
  }
  return settings;
}

void LockSettings::describe(Hints& hints) const {
  hints["flowio_lock"] = lock_algorithm_name(algorithm);
  hints["flowio_lock_ranges"] = ranges ? "enable" : "disable";
}

std::unique_ptr<Lock> make_lock(LockSettings& settings, MPI_Comm comm, const std::string& path,
                                ProgressPort& progress) {
  int chosen[2] = {static_cast<int>(settings.algorithm), settings.ranges ? 1 : 0};
  check_mpi(MPI_Bcast(chosen, 2, MPI_INT, kHome, comm), "MPI_Bcast of the lock settings");
  settings.algorithm = static_cast<LockAlgorithm>(chosen[0]);
  settings.ranges = chosen[1] != 0;
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  if (ranks > kWaitlistMaxProcesses && (settings.algorithm == LockAlgorithm::hybrid ||
                                        settings.algorithm == LockAlgorithm::one_sided)) {
    settings.algorithm = LockAlgorithm::mcs;
  }
  if (settings.algorithm == LockAlgorithm::fcntl) {
    return std::make_unique<FcntlLock>(path, settings.ranges);
  }
  auto mutex = std::make_unique<MutexLock>(make_protocol(settings.algorithm, comm, progress));
  if (!settings.ranges) return mutex;
  return std::make_unique<RangeLock>(comm, progress, kHome, std::move(mutex));
}

}  // namespace flowio::sync
