#include "sync/mcs_mutex.h"

namespace flowio::sync {
namespace {

constexpr int kSuccessorTag = 1;  // int payload: the successor's rank
constexpr int kHandOffTag = 2;    // zero bytes

}  // namespace

McsMutex::McsMutex(MPI_Comm comm, ProgressPort& progress, int home)
    : channel_(comm, progress), home_(home), tail_(channel_, channel_.rank() == home ? 1 : 0) {
  if (channel_.rank() == home_ && tail_.remote()) {
    home_poll_ = std::make_unique<HomePoll>(progress, channel_.comm(), tail_, 1);
  }
}

void McsMutex::acquire(Done granted) {
  operand_ = tail_value();
  MPI_Request swap = tail_.fetch_and_op(&operand_, &result_, home_, 0, MPI_REPLACE);
  channel_.watch_or_test({swap}, [this, granted = std::move(granted)](int code) {
    if (code != MPI_SUCCESS) {
      granted(mpi_failure(code, "lock: swap into the queue's tail"));
      return;
    }
    if (result_ == 0) {
      granted(nullptr);
      return;
    }
    const int predecessor = static_cast<int>(result_ - 1);
    link_ = channel_.rank();
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int posted =
        MPI_Isend(&link_, 1, MPI_INT, predecessor, kSuccessorTag, channel_.comm(), &requests[0]);
    if (posted == MPI_SUCCESS) {
      posted = MPI_Irecv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, kHandOffTag, channel_.comm(),
                         &requests[1]);
    }
    if (posted != MPI_SUCCESS) {
      granted(mpi_failure(posted, "lock: joining the queue"));
      return;
    }
    channel_.watch({requests[0], requests[1]}, [granted](int waited) {
      granted(mpi_failure(waited, "lock: waiting in the queue"));
    });
  });
}

void McsMutex::release(Done released) {
  // The successor may have told us already: then one message ends the
  // release, as in the paper's hybrid algorithm.
  int arrived = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  const int probed = MPI_Improbe(MPI_ANY_SOURCE, kSuccessorTag, channel_.comm(), &arrived, &message,
                                 MPI_STATUS_IGNORE);
  if (probed != MPI_SUCCESS) {
    released(mpi_failure(probed, "unlock: MPI_Improbe"));
    return;
  }
  if (arrived) {
    usurper_ = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    const int posted = MPI_Imrecv(&successor_, 1, MPI_INT, &message, &request);
    await_successor(posted, "unlock: MPI_Imrecv", request, std::move(released));
    return;
  }
  operand_ = 0;
  MPI_Request empty = tail_.fetch_and_op(&operand_, &queued_tail_, home_, 0, MPI_REPLACE);
  channel_.watch_or_test({empty}, [this, released = std::move(released)](int code) {
    if (code != MPI_SUCCESS) {
      released(mpi_failure(code, "unlock: swap of the queue's tail"));
      return;
    }
    if (queued_tail_ == tail_value()) {
      released(nullptr);  // nobody queued behind this process
      return;
    }
    operand_ = queued_tail_;
    MPI_Request back = tail_.fetch_and_op(&operand_, &usurper_, home_, 0, MPI_REPLACE);
    channel_.watch({back}, then_unless_failed("unlock: swap back of the queue's tail",
                                              &McsMutex::pass_to_successor, released));
  });
}

// Processes queued behind this one, so a successor's message is on its
// way (it swapped itself in after us and then sends it).
void McsMutex::pass_to_successor(Done released) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int posted =
      MPI_Irecv(&successor_, 1, MPI_INT, MPI_ANY_SOURCE, kSuccessorTag, channel_.comm(), &request);
  await_successor(posted, "unlock: MPI_Irecv of the successor", request, std::move(released));
}

void McsMutex::await_successor(int posted, const char* posting, MPI_Request request,
                               Done released) {
  if (posted != MPI_SUCCESS) {
    released(mpi_failure(posted, posting));
    return;
  }
  channel_.watch({request}, then_unless_failed("unlock: receiving the successor",
                                               &McsMutex::send_to_successor, std::move(released)));
}

std::function<void(int)> McsMutex::then_unless_failed(const char* what,
                                                      void (McsMutex::*next)(Done), Done released) {
  return [this, what, next, released = std::move(released)](int code) {
    if (code != MPI_SUCCESS) {
      released(mpi_failure(code, what));
      return;
    }
    (this->*next)(released);
  };
}

void McsMutex::send_to_successor(Done released) {
  MPI_Request request = MPI_REQUEST_NULL;
  int posted = MPI_SUCCESS;
  if (usurper_ == 0) {
    posted = MPI_Isend(nullptr, 0, MPI_BYTE, successor_, kHandOffTag, channel_.comm(), &request);
  } else {
    link_ = successor_;
    posted = MPI_Isend(&link_, 1, MPI_INT, static_cast<int>(usurper_ - 1), kSuccessorTag,
                       channel_.comm(), &request);
  }
  if (posted != MPI_SUCCESS) {
    released(mpi_failure(posted, "unlock: MPI_Isend to the successor"));
    return;
  }
  channel_.watch({request}, [released = std::move(released)](int code) {
    released(mpi_failure(code, "unlock: message to the successor"));
  });
}

void McsMutex::close() {
  channel_.quiesce();
  if (home_poll_) home_poll_->stop();
  tail_.close();
}

}  // namespace flowio::sync
