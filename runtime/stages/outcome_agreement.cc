#include "runtime/stages/outcome_agreement.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "flowio/error.h"
#include "runtime/engine/collective_error.h"

namespace flowio::runtime {

std::vector<MPI_Request> OutcomeAgreement::post(MPI_Comm comm, int tag, int rank, int ranks,
                                                std::exception_ptr local_failure,
                                                const char* stage) {
  comm_ = comm;
  tag_ = tag;
  rank_ = rank;
  ranks_ = ranks;
  local_failure_ = std::move(local_failure);
  own_ = std::make_unique<OwnVerdicts>();
  Verdict& mine = own_->mine;
  Verdict& agreed = own_->outcome;
  if (local_failure_) {
    FailureFacts facts = facts_of(local_failure_);
    if (stage != nullptr) facts.message = std::string("in stage ") + stage + ": " + facts.message;
    mine.failed_rank = rank;
    mine.code = facts.code;
    mine.system_errno = facts.system_errno;
    mine.mpi_code = facts.mpi_code;
    std::strncpy(mine.message, facts.message.c_str(), sizeof mine.message - 1);
  }
  std::vector<MPI_Request> requests;
  if (ranks == 1) {
    agreed = mine;
    return requests;
  }
  if (ranks <= kMostAllToAllRanks) {
    // Every process sends its verdict to every other and decides alone.
    verdicts_.resize(static_cast<std::size_t>(ranks));
    verdicts_[static_cast<std::size_t>(rank)] = mine;
    requests.reserve(2 * static_cast<std::size_t>(ranks - 1));
    for (int other = 0; other < ranks; ++other) {
      if (other == rank) continue;
      MPI_Request request;
      check_mpi(MPI_Irecv(&verdicts_[static_cast<std::size_t>(other)], sizeof(Verdict), MPI_BYTE,
                          other, tag, comm, &request),
                "MPI_Irecv");
      requests.push_back(request);
    }
    for (int other = 0; other < ranks; ++other) {
      if (other == rank) continue;
      MPI_Request request;
      check_mpi(MPI_Isend(&mine, sizeof mine, MPI_BYTE, other, tag, comm, &request), "MPI_Isend");
      requests.push_back(request);
    }
    return requests;
  }
  if (rank != 0) {
    requests.resize(2);
    check_mpi(MPI_Isend(&mine, sizeof mine, MPI_BYTE, 0, tag, comm, &requests[0]), "MPI_Isend");
    check_mpi(MPI_Irecv(&agreed, sizeof agreed, MPI_BYTE, 0, tag, comm, &requests[1]), "MPI_Irecv");
    return requests;
  }
  verdicts_.resize(static_cast<std::size_t>(ranks));
  verdicts_[0] = mine;
  for (int from = 1; from < ranks; ++from) {
    MPI_Request request;
    check_mpi(MPI_Irecv(&verdicts_[static_cast<std::size_t>(from)], sizeof(Verdict), MPI_BYTE, from,
                        tag, comm, &request),
              "MPI_Irecv");
    requests.push_back(request);
  }
  return requests;
}

std::vector<MPI_Request> OutcomeAgreement::reply() {
  std::vector<MPI_Request> requests;
  if (ranks_ == 1 || (rank_ != 0 && ranks_ > kMostAllToAllRanks)) return requests;
  // Verdicts are in rank order: the first failed one is the lowest rank's.
  const auto failed = std::find_if(verdicts_.begin(), verdicts_.end(),
                                   [](const Verdict& v) { return v.failed_rank >= 0; });
  Verdict& agreed = own_->outcome;
  if (failed != verdicts_.end()) agreed = *failed;
  if (ranks_ <= kMostAllToAllRanks) return requests;  // every process decided alike
  for (int to = 1; to < ranks_; ++to) {
    MPI_Request request;
    check_mpi(MPI_Isend(&agreed, sizeof agreed, MPI_BYTE, to, tag_, comm_, &request), "MPI_Isend");
    requests.push_back(request);
  }
  return requests;
}

std::exception_ptr OutcomeAgreement::outcome(const char* operation) const {
  // Every process reports the same error, the lowest failing rank's, this
  // one included: its own failure is reported as the others see it (same
  // class, errno and MPI code; the message names the rank and stage).
  // No failure agreed, yet one here: the agreement itself could not run
  // (its messages could not be posted).
  if (!own_ || own_->outcome.failed_rank < 0) return local_failure_;
  const Verdict& verdict = own_->outcome;
  FailureFacts facts{
      verdict.code, verdict.system_errno, verdict.mpi_code,
      std::string(verdict.message, strnlen(verdict.message, sizeof verdict.message))};
  try {
    throw_agreed_failure(facts, verdict.failed_rank, operation);
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace flowio::runtime
