// StageHarness: the stages of a collective operation run one at a time,
// by a test, on a scratch file of their own: what an open file lends
// them (FileContext), requests made from pieces of the file and a buffer,
// and an inline executor whose waits the test drives. The stage tests
// bring an operation to a stage's input by running the stages before it
// (as the pipelines would, engine/pipelines.cc), run the stage alone and
// check what it produced.
//
// Collective: every process of the communicator makes the harness and
// runs the same stages in the same order.
#pragma once

#include <mpi.h>
#include <oneapi/tbb/task_arena.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flowio/hints.h"
#include "io/file_descriptor.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "runtime/core/access.h"
#include "runtime/engine/executors.h"
#include "runtime/stages/stages.h"

namespace flowio::testing {

class StageHarness {
 public:
  // A fresh file `name` in the test's scratch directory, open on every
  // process of MPI_COMM_WORLD.
  explicit StageHarness(const std::string& name);
  ~StageHarness();
  StageHarness(const StageHarness&) = delete;
  StageHarness& operator=(const StageHarness&) = delete;

  runtime::FileContext& file() { return *context_; }
  const std::string& path() const { return path_; }

  // This process's part of a collective call as the file would make it:
  // `blocks` blocks of `length` bytes through a view in which the
  // processes' blocks interleave (block k of process r at file offset
  // (k * ranks + r) * length), its data contiguous at `buffer`, under
  // `hints`.
  runtime::CollectiveRequest request(bool writing, std::int64_t length, int blocks, void* buffer,
                                     const Hints& hints = {}) const;
  // The same with this process's data every other block of `length` in
  // memory (a vector type: packed through staging); `buffer` holds
  // 2 * length * blocks bytes.
  runtime::CollectiveRequest strided_request(bool writing, std::int64_t length, int blocks,
                                             void* buffer, const Hints& hints = {}) const;
  // An operation for `request`, whose waits this harness's executor
  // takes; `runs_inline` as a blocking call alone on its file (its part
  // may move at the call). Operations made by one harness get sequence
  // numbers 0, 1, 2, ... in the order they are made.
  std::unique_ptr<runtime::Operation> operation(runtime::CollectiveRequest request,
                                                bool runs_inline = true);

  // Runs `stage` for `item` of `op` and returns whether it called `next`
  // at once; else `finish()` drives the executor until it does.
  struct Started {
    runtime::StageBody stage;
    std::size_t item;
    bool done;  // the stage called `next`
  };
  using Finished = std::shared_ptr<Started>;
  Finished start(runtime::StageBody stage, runtime::Operation& op, std::size_t item = 0);
  // Tests the executor's waits until `finished` is set; fails the test
  // case after 60 s (a stage whose wait never ends would hang it).
  void finish(const Finished& finished);

  // The whole file, read after every process's stages are through
  // (collective: a barrier first).
  std::vector<std::byte> file_bytes() const;
  // `bytes` of the file at `offset`, read by this process alone.
  std::vector<std::byte> read_here(std::int64_t offset, std::int64_t bytes) const;

 private:
  std::string path_;
  io::FileDescriptor fd_;
  std::unique_ptr<io::SieveLock> sieve_lock_;
  std::unique_ptr<io::StorageBackend> backend_;
  tbb::task_arena workers_{1};
  std::unique_ptr<runtime::FileContext> context_;
  runtime::InlineExecutor executor_;
  std::uint64_t sequence_ = 0;
};

// One operation's stages, run by a test in the order the pipelines run
// them (engine/pipelines.h), each stage of the data phase for all of the
// operation's items at once (so that every item's messages are posted
// before any waits for its partners'), with the runner's changes of phase
// between them.
class StageWalk {
 public:
  StageWalk(StageHarness& harness, runtime::CollectiveRequest request, bool runs_inline = true);

  runtime::Operation& op() { return *op_; }
  // Runs the stages from where the walk is until `stage` has run (for
  // every item of its pipeline); fails the test case when the walk passes
  // its end without running it (the call's route has no such stage).
  void through(runtime::StageBody stage);
  // The rest of the call; returns the agreed outcome (null: success on
  // every process).
  std::exception_ptr to_end();
  // The data phase's items (once it has begun).
  const runtime::DataItems& items() const { return items_; }

 private:
  // Runs the next step (a stage for every item of its pipeline, all of
  // an Alltoallw exchange's rounds, or a change of phase), putting the
  // stages it ran in `ran`; false at the end.
  bool step(std::vector<runtime::StageBody>& ran);
  // Stages run side by side, each for its count of items.
  using Step = std::vector<std::pair<runtime::StageBody, std::size_t>>;
  void run_for_all_items(const Step& step);

  StageHarness& harness_;
  std::unique_ptr<runtime::Operation> op_;
  std::vector<Step> steps_;  // the control stages, then the data phase's
  std::size_t next_ = 0;
  bool data_begun_ = false;
  bool agreement_begun_ = false;
  runtime::DataItems items_;
};

// The stage's name in test messages.
const char* stage_name(runtime::StageBody stage);

// Contiguous test data: byte i of process `rank`'s buffer of `bytes`.
std::vector<std::byte> pattern(int rank, std::int64_t bytes);

}  // namespace flowio::testing
