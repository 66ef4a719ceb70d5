// The plan check of a collective operation whose plan was compiled: every
// process tells every other whether it made its part of the plan (realm
// calc, metadata transfer, decode, items), before any data phase starts.
// A process that could not make its part takes part in no data phase, and
// its partners would wait there for messages it never sends; after the
// check, either every process made its part and the data phases run, or
// every process knows one did not and they all go to the outcome
// agreement (runtime/outcome_agreement.h), which names the rank and stage.
//
// The messages: to every other process, one notice, of 1 byte (made) or
// none (not made), on the operation's metadata tag, after any description
// this process sent it. A process without a plan may have sent no
// description where its aggregator expected one: its notice then takes the
// description's place (exchange::MetadataExchange::every_description_came
// tells), and is all that comes from it. A process that did not post its
// metadata receives (it has no plan) does not know which descriptions come
// to it, so its first receive from each process has room for one; when a
// description comes, a second receive takes the notice. Messages of one
// process on one tag arrive in the order sent, so nothing is left over and
// no later operation meets a stray message.
//
// One message latency on every compiled plan, and none on calls that reuse
// a kept plan, go direct or are settled by their gather. All to all: n-1
// sends and receives per process.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace flowio::runtime {

// One operation's check. Used by one thread at a time; its buffers live
// here until the requests complete.
class PlanCheck {
 public:
  // What this process already knows of another's part, and how much room
  // the first receive from it needs.
  struct Peer {
    bool failed = false;   // its notice came already: no plan there
    std::size_t room = 1;  // > 1: a description may come before the notice
  };

  // Posts the notices (`made`: this process made its part) and the first
  // receives, one per peer not failed already (`peers[rank]` is unused).
  std::vector<MPI_Request> post(MPI_Comm comm, int tag, int rank, bool made,
                                std::span<const Peer> peers);
  // Once post()'s requests are complete (`statuses` in their order): the
  // receives of notices that came after a description (none unless a
  // first receive had room for one).
  std::vector<MPI_Request> after_first(std::span<const MPI_Status> statuses);
  // Once every request is complete (`statuses` of after_first's): every
  // process made its part.
  bool everyone_made(std::span<const MPI_Status> statuses) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0;
  bool made_ = false;
  std::byte notice_{1};
  bool anyone_failed_ = false;
  std::vector<int> from_;                      // the rank of each first receive
  std::vector<std::vector<std::byte>> rooms_;  // their buffers
  std::vector<int> second_from_;               // the rank of each second receive
  std::vector<std::byte> second_notices_;
};

}  // namespace flowio::runtime
