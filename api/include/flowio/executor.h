// Executor: where a continuation (Future::then) runs.
//
// A Future is completed by whichever thread finishes its operation:
// flowio's progress thread, its I/O thread, a oneTBB worker of a
// collective operation's graph, or the caller (small accesses are done at
// the call). Those threads are few (on a 2-core node, one oneTBB worker),
// and every operation in flight needs them: a continuation that blocks one
// of them, for instance by waiting on another flowio Future, can stop the
// very operation it waits for. So continuations run on flowio's
// continuation pool unless the caller asks otherwise.
//
//   file.iwrite_at_all(0, data, n, MPI_DOUBLE)
//       .then([&](flowio::Future<std::size_t> written) {   // on the pool
//         written.get();
//         return file.iread_at(0, other, n, MPI_DOUBLE).get();  // may block
//       });
#pragma once

#include <functional>

namespace flowio {

// Runs tasks somewhere. Implementations state where and on which thread.
// Thread safety: execute() may be called from any thread, at any time,
// including from inside a task it runs.
class Executor {
 public:
  virtual ~Executor() = default;
  // Runs `task` once, now or later. `task` must not throw: an exception
  // leaving it ends the program (std::terminate), as one leaving a thread
  // does.
  virtual void execute(std::function<void()> task) = 0;
};

// Runs each task at once, on the thread that calls execute(): for
// Future::then, the thread that completes the Future (flowio's progress
// or I/O thread, a oneTBB worker, or the caller of then() when the Future
// is ready already). For short continuations that never block (store a
// value, fulfil a Promise, post work elsewhere): they cost no thread
// hand-off. A continuation that blocks here may stop flowio's operations.
Executor& inline_executor() noexcept;

// flowio's continuation pool, the default of Future::then: each task runs
// on a thread of the pool, and a task queued while every thread of the
// pool is busy gets a new thread, so a task may block (on another Future,
// a lock, MPI) without keeping any other task, or any flowio operation,
// from running. Threads that stay idle for a second end. The pool lives
// until the process exits; tasks still running then are not waited for.
// If the system refuses a new thread while none is free, the task runs at
// once on the caller of execute(), as inline_executor() would.
Executor& continuation_pool() noexcept;

}  // namespace flowio
