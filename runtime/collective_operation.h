// Collective operations: two-phase collective I/O compiled into a oneTBB
// flow graph per call.
//
// Phases of one operation, all off the caller's thread except the first:
//   offsets   (at the call) this process's access and its summary, whose
//             MPI_Iallgather is posted at once, in call order;
//   realms    every process computes the same realm layout from the
//             gathered summaries;
//   metadata  clients send each aggregator whose realm they touch a
//             description of their access (flattened filetype or explicit
//             pieces, whichever is smaller);
//   data      two pipelines with a bounded number of buffer iterations in
//             flight: the client's (pack -> send, or receive -> unpack) and
//             the aggregator's (receive -> write, or read -> send), one item
//             per window of the realm. MPI requests complete on the progress
//             thread, which hands them back to the graph (async_node);
//   agree     the processes agree on the outcome, and every future
//             completes with the value or the same error.
// The data phases of a file's operations run one at a time in call order,
// so data sieving never races with another operation's writes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "exchange/stream_conversion.h"
#include "flowio/future.h"
#include "flowio/statistics.h"
#include "io/file_descriptor.h"
#include "io/storage_backend.h"
#include "runtime/collective_settings.h"
#include "runtime/core/access.h"
#include "runtime/core/memory_layout.h"
#include "runtime/engine.h"

namespace flowio::runtime {

// What an open file lends its collective operations. The file owns it and
// waits for every operation before destroying it.
class CollectiveContext {
 public:
  // Duplicates `comm` three times (collective over it).
  CollectiveContext(MPI_Comm comm, const io::FileDescriptor& file, io::StorageBackend& backend,
                    Engine& engine);
  ~CollectiveContext();
  CollectiveContext(const CollectiveContext&) = delete;
  CollectiveContext& operator=(const CollectiveContext&) = delete;

  // Statistics of completed operations, oldest first.
  std::vector<OperationStatistics> statistics() const;

 private:
  friend class CollectiveOperation;

  // Runs `phase` on the engine once every operation started before it
  // has called data_phase_done().
  void run_in_order(std::function<void()> phase);
  // Takes the turn at once if no operation is running or waiting; the
  // caller then runs its phase itself.
  bool try_run_now();
  void data_phase_done();
  void log(OperationStatistics statistics);

  MPI_Comm metadata_comm_ = MPI_COMM_NULL;  // summaries and access descriptions
  MPI_Comm data_comm_ = MPI_COMM_NULL;      // data messages, tagged by window
  MPI_Comm agree_comm_ = MPI_COMM_NULL;     // outcome agreement, in call order
  int rank_ = 0;
  int ranks_ = 1;
  int tag_bound_ = 32767;
  const io::FileDescriptor& file_;
  io::StorageBackend& backend_;
  Engine& engine_;
  std::uint64_t next_sequence_ = 0;  // caller's thread only
  // Set by the first operation with persistent realms; read and written
  // only in data phases, which run one at a time.
  std::optional<std::int64_t> persistent_unit_;

  mutable std::mutex mutex_;
  bool busy_ = false;
  std::deque<std::function<void()>> waiting_;
  std::deque<OperationStatistics> log_;
};

// One process's part of a collective call.
struct CollectiveRequest {
  bool writing = false;
  // The caller waits for the result at once (write_all, not iwrite_all).
  bool blocking = false;
  core::Access access;  // where its data goes in the file (file stream bytes)
  std::shared_ptr<const core::FlatType> memory_type;
  core::MemoryLayout memory;  // where its data is in memory (memory.type = memory_type)
  // Set when the file's data representation is not native: the stream in
  // the file is then this conversion's, not the memory's bytes.
  std::shared_ptr<exchange::StreamConversion> conversion;
  CollectiveSettings settings;
};

// Starts a collective operation. Must be called by every process of the
// file, in the same order. `on_done` runs after the future completes (the
// file counts its outstanding operations with it).
Future<std::size_t> start_collective(CollectiveContext& context, CollectiveRequest request,
                                     std::function<void()> on_done);

}  // namespace flowio::runtime
