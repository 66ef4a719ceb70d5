// The metadata stage of a collective operation: every client sends each
// aggregator whose realm its access meets a description of that access,
// and every aggregator receives one from each client its realm meets. A
// description is the client's view with its stream range (compact: the
// flattened filetype, whatever the number of pieces) or the explicit
// pieces inside that aggregator's realm, whichever is smaller
// (access_codec.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/access.h"
#include "runtime/core/realm_layout.h"

namespace flowio::exchange {

// One operation's metadata in flight: the buffers live here until the
// requests complete. Used by one thread at a time.
class MetadataExchange {
 public:
  // Posts this process's sends (as a client, `view_words` being `mine`
  // encoded as its view) and receives (as aggregator `slot`, from
  // `client_ranks`, whose descriptions are at most `client_words[i]` words)
  // on `comm` with `tag`. Returns the requests; the caller completes them
  // before decode().
  std::vector<MPI_Request> post(MPI_Comm comm, int tag, const core::Access& mine,
                                std::span<const std::int64_t> view_words,
                                const core::RealmLayout& layout,
                                std::span<const int> aggregator_ranks, int slot,
                                std::span<const int> client_ranks,
                                std::span<const std::int64_t> client_words);

  // The clients' accesses, in the order of `client_ranks`. Throws MpiError
  // for a description that does not decode.
  std::vector<core::Access> decode();

  std::int64_t messages() const { return messages_; }

 private:
  std::vector<std::vector<std::int64_t>> outgoing_;
  std::vector<std::vector<std::int64_t>> incoming_;
  std::int64_t messages_ = 0;
};

}  // namespace flowio::exchange
