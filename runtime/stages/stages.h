// The stages of a collective operation: every body the pipelines of
// engine/pipelines.h are made of, and what the runner asks of the stages
// between pipelines. Each stage's file is named after the stage as the
// statistics and the trace name it (operation_recorder.h):
//
//   offsets_stage.cc     offsets (at the call) and the gather
//   realms_stage.cc      realms: realm calc, or the plan cache's answer
//   metadata_stage.cc    metadata transfer
//   plan_stage.cc        the plan's items, and the plan check
//   pack_stage.cc        pack (convert, in another data representation)
//   compress_stage.cc    compress
//   exchange_stage.cc    exchange: client messages, window messages
//   decompress_stage.cc  decompress
//   unpack_stage.cc      unpack (convert back)
//   io_stage.cc          io: a window read or written by its aggregator
//   round_stage.cc       Alltoallw rounds: prepare, exchange, finish
//   direct_stage.cc      a process's own part: lock, io
//   persist_stage.cc     persist (durable writes)
//   agree_stage.cc       agree: the outcome every process reports
//
// A stage body runs for one item of one operation and calls `next` when
// the item may go on: at once, or later from the executor when it waits
// for MPI or the file. Bodies keep failures in the operation (fail,
// guarded) instead of throwing, so every process goes through every stage
// and none waits for a message that never comes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/engine/operation_order.h"
#include "runtime/stages/operation.h"

namespace flowio::runtime {

// How a stage lets its item go on: `next()`, called once, at once or later
// from the executor. A plain function and two words, not a std::function:
// a small call passes through a dozen stages, and making, moving and
// destroying a std::function at each cost it more than the stage's work.
class Next {
 public:
  using Resume = void (*)(void* context, std::uintptr_t token);
  Next(Resume resume, void* context, std::uintptr_t token = 0)
      : resume_(resume), context_(context), token_(token) {}
  void operator()() const { resume_(context_, token_); }

 private:
  Resume resume_;
  void* context_;
  std::uintptr_t token_;
};

using StageBody = void (*)(Operation& op, std::size_t item, Next next);

// Control, one item per operation, in call order. The offsets stage runs
// on the caller's thread at the call (gathers are collective calls posted
// in call order); its end (the announcements in) is the gather stage's.
void offsets_stage(Operation& op, std::size_t item, Next next);
void gather_stage(Operation& op, std::size_t item, Next next);
void realms_stage(Operation& op, std::size_t item, Next next);
void metadata_stage(Operation& op, std::size_t item, Next next);
void plan_stage(Operation& op, std::size_t item, Next next);
void plan_check_stage(Operation& op, std::size_t item, Next next);

// Client items (one per message to an aggregator).
void pack_stage(Operation& op, std::size_t item, Next next);
void convert_stage(Operation& op, std::size_t item, Next next);
void client_compress_stage(Operation& op, std::size_t item, Next next);
void client_exchange_stage(Operation& op, std::size_t item, Next next);
void client_decompress_stage(Operation& op, std::size_t item, Next next);
void unpack_stage(Operation& op, std::size_t item, Next next);
void convert_back_stage(Operation& op, std::size_t item, Next next);

// Windows (one per window of this aggregator).
void window_read_stage(Operation& op, std::size_t item, Next next);
void window_compress_stage(Operation& op, std::size_t item, Next next);
void window_exchange_stage(Operation& op, std::size_t item, Next next);
void window_decompress_stage(Operation& op, std::size_t item, Next next);
void window_write_stage(Operation& op, std::size_t item, Next next);

// Alltoallw rounds (one per round, in order).
void round_prepare_stage(Operation& op, std::size_t item, Next next);
void round_exchange_stage(Operation& op, std::size_t item, Next next);
void round_finish_stage(Operation& op, std::size_t item, Next next);

// This process's own part (one item).
void direct_lock_stage(Operation& op, std::size_t item, Next next);
void direct_io_stage(Operation& op, std::size_t item, Next next);

// The agreement (one item).
void persist_stage(Operation& op, std::size_t item, Next next);
void agree_stage(Operation& op, std::size_t item, Next next);

// Between the control stages and the data phase (the operation is in
// Planning): how its data moves, alike on every process, and what its
// data phase may touch (OperationOrder).
DataRoute data_route(Operation& op);
DataFootprint data_footprint(Operation& op);
// The data phase has begun (Moving, made with data_route()'s answer):
// sizes its runs, begins compression where messages are framed, and
// returns how many items enter each of its pipelines.
struct DataItems {
  std::size_t client = 0;
  std::size_t window = 0;
  std::size_t round = 0;
};
DataItems prepare_data_phase(Operation& op);
// Atomic mode: runs `then` once the data phase holds the lease it asked
// for (at once when none). Inline, the caller waits for it here; in the
// background the lease's continuation runs `then`, which only hands work
// on (no worker waits for a lock).
void after_lease(Operation& op, Next then);

// This process's own part of a direct-mode operation: moves `request`'s
// data between its memory and its pieces of the file and returns the bytes
// moved (a read's: those before the end of the file). Throws what the
// access throws. `request.access` is not empty.
std::int64_t move_own_part(FileContext& file, const CollectiveRequest& request);

}  // namespace flowio::runtime
