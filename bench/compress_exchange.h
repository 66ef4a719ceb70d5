// The exchange stage of a two-phase collective write of the mesh, alone,
// with compression: the proof of exchange/compress and
// exchange/compression_rule before the engine's graph has a compress node.
//
// Every rank is a client and an aggregator (its realm: compress_mesh.h). A
// client sends, for every window of every other aggregator, one message
// with its nodes in that window (contiguous in its local data, so there
// is nothing to pack): (rule) -> compress into a spare buffer, or raw ->
// MPI_Isend of the header and the payload (post_framed_send), windows in
// order and aggregators round-robin, with at most `messages_in_flight`
// frames outstanding; the progress thread (runtime/engine/progress.h) drives the
// sends and receives meanwhile, so compressing message k+1 overlaps
// sending message k. An aggregator posts a receive for every message it
// expects at the start, the header aside and the payload into a region of
// the message's size (it knows the size from the mesh, as a real
// aggregator does from the metadata) and, between compressions and after
// the last one, decodes each arrived frame in place and scatters its
// nodes into its realm buffer. A client's own nodes are copied directly.
// This is the engine's protocol as exchange/compress_stage.h describes
// it.
//
// The rule sees what the engine's would: the message's peer and size,
// the number of messages in the stream, samples taken on demand, and the
// time each send was in flight (post to completion, on the progress
// thread) and each compression and decompression took.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "bench/compress_mesh.h"
#include "exchange/compression_rule.h"
#include "flowio/statistics.h"
#include "runtime/engine/progress.h"

namespace bench::compress {

class ExchangeHarness {
 public:
  // Borrows `mesh` and `progress` for the harness's life.
  // Collective (duplicates MPI_COMM_WORLD for its messages).
  ExchangeHarness(const Mesh& mesh, int messages_in_flight, flowio::runtime::Progress& progress);
  ExchangeHarness(const ExchangeHarness&) = delete;
  ExchangeHarness& operator=(const ExchangeHarness&) = delete;
  ~ExchangeHarness();

  // One exchange (collective over MPI_COMM_WORLD, which the mesh's ranks
  // are). Adds what this rank did to `totals`; `rule` (this rank's,
  // kept across calls like a file's) decides and learns. Throws MpiError
  // or MalformedMessage on failure.
  // The exchange is one stage of the rule (compress_stage.h).
  void run(flowio::exchange::CompressionRule& rule, flowio::CompressionStatistics& totals);

  // This rank's realm as the last run left it, and where it starts in
  // the file.
  const std::vector<std::byte>& realm() const { return realm_; }
  std::int64_t realm_offset() const;
  // Whether realm() holds exactly the mesh's values of the realm's nodes.
  bool realm_is_correct() const;

 private:
  // A message this rank sends or receives: the client's nodes in one
  // window of the aggregator (the peer is the other of the two).
  struct Message {
    int peer = 0;
    int tag = 0;            // the window's position in the aggregator's realm
    std::size_t first = 0;  // positions in nodes_of(client)
    std::size_t end = 0;
    std::int64_t nodes() const;
  };

  void scatter(int client, const Message& message, const std::byte* data);

  const Mesh& mesh_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int messages_in_flight_;
  flowio::runtime::Progress& progress_;
  std::vector<std::byte> local_;
  std::vector<std::byte> realm_;
  std::vector<Message> sends_;      // in sending order
  std::vector<Message> receives_;   // from other ranks
  std::vector<Message> own_;        // this rank's nodes in its own realm
  std::vector<std::byte> scratch_;  // a compressed payload being decoded
};

}  // namespace bench::compress
