// MutexLock: a Lock over a whole resource, made of a distributed mutex
// algorithm (MutexProtocol) and a local queue. The algorithms admit one
// acquisition per process at a time; the queue serves this process's
// threads in the order they asked, one after another, each holding the
// lock for the whole process. Ranges and modes are ignored: every lease
// is exclusive.
//
// Between two local holders the lock is released and acquired again,
// not passed on inside the process: the other processes keep their turn
// (the algorithms' fairness holds process by process).
#pragma once

#include <memory>

#include "sync/lock.h"
#include "sync/mutex_protocol.h"

namespace flowio::sync {

class MutexLock final : public Lock {
 public:
  explicit MutexLock(std::unique_ptr<MutexProtocol> protocol);
  ~MutexLock() override;

  Future<Lease> acquire(ByteRange range, LockMode mode) override;
  void close() override;
  std::string name() const override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace flowio::sync
