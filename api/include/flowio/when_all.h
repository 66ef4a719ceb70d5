// when_all and wait_all: many Futures as one, the MPI_Waitall of the API.
//
//   std::vector<flowio::Future<std::size_t>> writes;
//   for (int v = 0; v < variables; ++v)
//     writes.push_back(file.iwrite_at_all(offset[v], data[v], n, MPI_DOUBLE));
//   compute();
//   std::vector<std::size_t> bytes = flowio::wait_all(std::move(writes));
//
// Both wait for every Future, failed or not, before they report: an
// operation still in flight may be using its buffer, so nothing returns
// (or throws) while any is pending. If any failed, the exception of the
// first one that failed in the order given (lowest index, not earliest in
// time) is rethrown; the others' exceptions are dropped. To see every
// error, wait() for each Future and get() them one by one instead.
//
// Thread safety: as for Future: the Futures are consumed, and the caller
// must not use them from another thread meanwhile.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "flowio/executor.h"
#include "flowio/future.h"

namespace flowio {

// What waiting for every Future<T> gives: their values in the order given,
// nothing for Future<void>.
template <typename T>
using AllValues = std::conditional_t<std::is_void_v<T>, void, std::vector<T>>;

namespace detail {

// Takes the values of `ready` (every one ready) in order, or rethrows the
// exception of the first that failed, once each has been taken.
template <typename T>
AllValues<T> take_all(std::vector<Future<T>>& ready) {
  std::exception_ptr first_failure;
  if constexpr (std::is_void_v<T>) {
    for (Future<T>& future : ready) {
      try {
        future.get();
      } catch (...) {
        if (!first_failure) first_failure = std::current_exception();
      }
    }
    if (first_failure) std::rethrow_exception(first_failure);
  } else {
    std::vector<T> values;
    values.reserve(ready.size());
    for (Future<T>& future : ready) {
      try {
        values.push_back(future.get());
      } catch (...) {
        if (!first_failure) first_failure = std::current_exception();
      }
    }
    if (first_failure) std::rethrow_exception(first_failure);
    return values;
  }
}

}  // namespace detail

// Blocks the caller until every Future is ready, then returns their values
// in order, or rethrows the exception of the first that failed (see
// above). Every Future must be valid(). Waits on the calling thread: no
// continuation and no other thread is involved.
template <typename T>
AllValues<T> wait_all(std::vector<Future<T>> futures) {
  for (const Future<T>& future : futures) future.wait();
  return detail::take_all(futures);
}

// A Future that becomes ready once every one of `futures` is, with their
// values in order, or the exception of the first that failed (see above).
// Ready at once for an empty vector. Every Future must be valid(). The
// last input to complete assembles the result on the thread that completed
// it (a short loop that never blocks); continuations on the result run
// where its then() says.
template <typename T>
Future<AllValues<T>> when_all(std::vector<Future<T>> futures) {
  struct Gathering {
    explicit Gathering(std::size_t count) : ready(count), remaining(count) {}
    std::vector<Future<T>> ready;
    // Counts down as inputs complete; the thread that takes it to zero
    // assembles the result. acq_rel: that thread sees every other input's
    // store into `ready`.
    std::atomic<std::size_t> remaining;
    Promise<AllValues<T>> promise;
  };
  auto gathering = std::make_shared<Gathering>(futures.size());
  Future<AllValues<T>> all = gathering->promise.get_future();
  auto assemble = [](Gathering& done) {
    try {
      if constexpr (std::is_void_v<T>) {
        detail::take_all(done.ready);
        done.promise.set_value();
      } else {
        done.promise.set_value(detail::take_all(done.ready));
      }
    } catch (...) {
      done.promise.set_exception(std::current_exception());
    }
  };
  if (futures.empty()) {
    assemble(*gathering);
    return all;
  }
  for (std::size_t i = 0; i < futures.size(); ++i) {
    // The Future then() returns is dropped: the input itself is kept.
    futures[i].then(inline_executor(), [gathering, i, assemble](Future<T> ready) {
      gathering->ready[i] = std::move(ready);
      if (gathering->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) assemble(*gathering);
    });
  }
  return all;
}

}  // namespace flowio
