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

#include "exchange/compress_stage.h"
#include "flowio/statistics.h"
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
  // on `comm` with `tag`. Returns the requests; the caller completes them,
  // then calls received() and decode(). With `frames` (compression not
  // off on every process), each description travels as a frame
  // (compress_stage.h), compressed when the rule says so; `statistics`
  // (borrowed until decode()) counts it. What it throws (a failed
  // allocation) it throws before posting anything; an MPI error aside, a
  // call that returns has posted every message.
  std::vector<MPI_Request> post(MPI_Comm comm, int tag, const core::Access& mine,
                                std::span<const std::int64_t> view_words,
                                const core::RealmLayout& layout,
                                std::span<const int> aggregator_ranks, int slot,
                                std::span<const int> client_ranks,
                                std::span<const std::int64_t> client_words, CompressStage* frames,
                                CompressionStatistics& statistics);

  // The statuses of the requests post() returned, in their order, once
  // complete: how long each received frame is.
  void received(std::span<const MPI_Status> statuses);

  // Once received() was called: whether every client's message is a
  // description. A message of at most kMostNoticeBytes in place of one is
  // the client's notice that it has no plan (runtime/plan/plan_check.h): it
  // cannot be decoded, and the operation fails everywhere.
  bool every_description_came() const;
  bool description_came(std::size_t client) const;
  // Descriptions are never this short (at least two words, or a frame
  // header).
  static constexpr std::size_t kMostNoticeBytes = 1;
  // The most bytes a description of at most `words` words may take on the
  // wire (framed or not).
  static std::size_t wire_bytes(std::int64_t words, bool framed);

  // The clients' accesses, in the order of `client_ranks`. Throws MpiError
  // for a description that does not decode (MalformedMessage for a frame
  // that does not). Passes the injection point "collective.metadata_decode"
  // once the first access is decoded (core/injection_point.h), where a test
  // makes the decode fail part way.
  std::vector<core::Access> decode();

  std::int64_t messages() const { return messages_; }

 private:
  std::vector<std::vector<std::int64_t>> outgoing_;
  std::vector<std::vector<std::int64_t>> incoming_;
  std::int64_t messages_ = 0;
  // Framed descriptions.
  CompressStage* frames_ = nullptr;
  CompressionStatistics* statistics_ = nullptr;
  std::vector<std::vector<std::byte>> outgoing_frames_;
  std::vector<std::vector<std::byte>> incoming_frames_;
  std::vector<std::size_t> incoming_lengths_;
  std::vector<std::int64_t> incoming_words_;  // at most, per client
  std::size_t sends_ = 0;
};

}  // namespace flowio::exchange
