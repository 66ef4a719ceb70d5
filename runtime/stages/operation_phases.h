// The phases of a collective operation on this process, each with the data
// it holds: what the stages before it produced, handed on, and what its own
// stages fill in. An operation is in one phase at a time (Operation holds a
// std::variant of them); each phase is made from the one before it, by the
// stage that ends that one (the gather) or by the runner between
// pipelines (engine/pipelines.cc), when nothing of the old phase is in
// flight, so a stage sees only the data of its own phase, typed.
//
//   Announcing  offsets (at the call): this process's announcement posted,
//               the others' arriving; its part moved already, maybe
//   Planning    gather -> realms -> metadata -> plan -> plan check
//   Moving      the data phase: client items, windows, Alltoallw rounds,
//               or this process's own part (direct)
//   Agreeing    persist -> agree (none when the gather settled the call)
//
// Within a phase, the comment on each member names the stage that writes
// it; the stages after it only read it. In the data phase several items
// run at once: each writes only its own run (ClientRun, WindowRun,
// RoundRun), and what they share is read-only.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exchange/compress_stage.h"
#include "exchange/compression_rule.h"
#include "exchange/metadata_exchange.h"
#include "flowio/future.h"
#include "flowio/statistics.h"
#include "runtime/core/kept_block_allocator.h"
#include "runtime/core/realm_policy.h"
#include "runtime/plan/collective_plan.h"
#include "runtime/plan/live_round_exchange.h"
#include "runtime/plan/plan_check.h"
#include "runtime/stages/announcement_exchange.h"
#include "runtime/stages/byte_buffer.h"
#include "runtime/stages/outcome_agreement.h"
#include "runtime/stages/recycled_buffers.h"
#include "sync/lock.h"

namespace flowio::runtime {

// Every process's announcement, by rank. One process's is kept from call
// to call (KeptBlockAllocator): a small call on one process made and freed
// it every time.
using Announcements = std::vector<Announcement, core::KeptBlockAllocator<Announcement>>;

// This process's part, moved at the call by the offsets stage (a blocking
// call that runs inline, whose part would go direct).
struct EarlyPart {
  bool accessed = false;   // bytes were moved (the access is not empty)
  bool persisted = false;  // a durable write was synced after its data
  std::int64_t bytes = 0;  // moved; a read's: what it found
};

// Offsets: written by the offsets stage, at the call; read by the gather.
struct Announcing {
  Announcements announcements;      // by rank; this process's filled in
  AnnouncementExchange exchange;    // owns the requests' room
  std::span<MPI_Request> requests;  // to complete (none on one process)
  EarlyPart early;
};

// What the announcements settle, alike on every process.
enum class GatherOutcome {
  go_on,    // the data is still to be planned and moved
  settled,  // every process did its part early and none failed: the gather
            // was the whole protocol, nothing is left to plan, move or agree
  failed,   // a failure every process sees (bad arguments, calls that
            // differ, the exchange itself, an early part that failed): no
            // data phase anywhere, straight to the agreement
};

// Where the plan comes from, once the realms stage has decided.
enum class PlanOrigin {
  none,      // no plan to run: the gather settled or failed
  direct,    // every process accesses its own part (no exchange)
  compiled,  // two-phase, compiled for this call (the plan check follows)
  reused,    // two-phase, kept from an earlier call with the same accesses
};

// Gather, realms, metadata, plan and plan check. Made from Announcing by
// the gather stage once every announcement is in.
struct Planning {
  explicit Planning(Announcing&& announcing);

  // Gather.
  Announcements announcements;
  std::vector<core::AccessSummary> summaries;  // from the announcements
  GatherOutcome gather = GatherOutcome::go_on;
  EarlyPart early;  // handed on from the offsets stage
  // Realms: the plan (compiled here, or kept from an earlier call; null
  // when none could be made on this process) and where it comes from.
  std::shared_ptr<CollectivePlan> plan;
  PlanOrigin origin = PlanOrigin::none;
  // Metadata: this process's access described by its view, then the
  // clients' descriptions received (compiled plans).
  std::vector<std::int64_t> view_words;
  exchange::MetadataExchange metadata;
  bool descriptions_posted = false;
  // Compression not off: the file's rule as the operation began and its
  // stage, begun by the metadata stage (which frames its messages) or by
  // the data phase; handed on to the data phase.
  std::shared_ptr<exchange::CompressionRule> compression_rule;
  std::unique_ptr<exchange::CompressStage> compression;
  CompressionStatistics metadata_compression;
  // Plan (atomic mode, two-phase): the lease every process's access needs,
  // asked for in call order.
  Future<sync::Lease> lease;
  // Plan check: every process made its part of a compiled plan.
  PlanCheck check;
  bool made_everywhere = true;
  // Then, for an Alltoallw plan, the rounds with data anywhere.
  LiveRoundExchange live_rounds;
};

// How the data moves, as the control stages decided (alike everywhere).
enum class DataRoute {
  none,       // nothing to move here: straight to the agreement
  direct,     // this process accesses its own part
  two_phase,  // client items and windows, or Alltoallw rounds
};

// A frame header's room, for a framed message (exchange/compress_stage.h).
using FrameHeaderBytes = std::array<std::byte, exchange::kFrameHeaderBytes>;

// A client message in flight: written by its client item's stages only.
struct ClientRun {
  ByteBuffer staging;  // when memory is not contiguous
  // Another data representation: the item's bytes in the file's
  // representation, written by the convert stage (a recycled buffer).
  RecycledBuffers::Lease converted;
  char* data = nullptr;
  std::int64_t received = 0;  // reads: bytes that lay before end of file
  std::int64_t posted_ns = 0;
  // Framed messages: what a write sends, and where a compressed frame is
  // built; the header a read receives and the payload bytes that came.
  exchange::CompressStage::Outgoing outgoing;
  std::vector<std::byte> spare;
  FrameHeaderBytes header{};
  std::int64_t payload_bytes = 0;
  std::vector<std::byte> scratch;
  CompressionStatistics compression;
  // A write's message went empty: this process had failed (its aggregator
  // then leaves the window unwritten).
  bool sent_empty = false;
};

// A window in flight on its aggregator: written by its window item's
// stages (or its round's).
struct WindowRun {
  ByteBuffer buffer;
  std::vector<std::int64_t> before_end;  // reads: bytes of each part before end of file
  std::int64_t posted_ns = 0;
  // Framed messages, one per part: what a read sends (and where its
  // compressed frames are built); the headers a write receives and the
  // payload bytes that came.
  std::vector<exchange::CompressStage::Outgoing> outgoing;
  std::vector<std::vector<std::byte>> spares;
  std::vector<FrameHeaderBytes> headers;
  std::vector<std::int64_t> payload_bytes;
  std::vector<std::byte> scratch;
  CompressionStatistics compression;
  // A write's part came empty: its client had failed, so the window is
  // not written (the operation fails everywhere through the agreement).
  bool client_failed = false;
};

// An Alltoallw round in flight: written by its round's stages.
struct RoundRun {
  const RoundPlan* part = nullptr;  // this process's part, if it has one
  ByteBuffer client_data;           // its shares, one after another
  // By rank, for MPI_Ialltoallw_c, made for the round and let go after it:
  // a client's displacements add up its shares for every aggregator of
  // the round, which passes 2^31 with enough aggregators (128 windows of
  // 16 MiB).
  std::vector<MPI_Count> client_counts, window_counts;
  std::vector<MPI_Aint> client_displacements, window_displacements;
  std::int64_t posted_ns = 0;
};

// The data phase. Made from Planning by the runner when the operation's
// turn comes (engine/pipelines.cc); the shared members are written there
// and read-only while items run.
struct Moving {
  Moving(Planning&& planning, DataRoute route);
  Moving(const Moving&) = delete;
  Moving& operator=(const Moving&) = delete;

  const DataRoute route;
  Announcements announcements;
  std::shared_ptr<const CollectivePlan> plan;
  PlanOrigin origin;
  GatherOutcome gather;
  EarlyPart early;
  std::shared_ptr<exchange::CompressionRule> compression_rule;
  std::unique_ptr<exchange::CompressStage> compression;
  // Point-to-point messages are framed (compression not off).
  bool framed = false;
  std::int64_t messages_sent = 0;  // framed data messages this process sends
  std::int64_t started_ns = 0;     // a two-phase data phase's start (the compression stage's time)
  // Atomic mode: the lease asked for at the plan (two-phase), or by the
  // direct lock stage (this process's own bytes), and then held until the
  // data is moved (direct) or the outcome agreed (two-phase).
  Future<sync::Lease> lease_pending;
  sync::Lease lease;
  // Items: each writes only its own run.
  std::vector<ClientRun> client_runs;
  std::vector<WindowRun> window_runs;
  std::vector<RoundRun> round_runs;
  std::atomic<std::size_t> remaining{0};  // items not yet done
  // Direct: written by the direct io stage.
  bool accessed_directly = false;
  std::optional<std::int64_t> read_directly;  // what a direct read found
};

// Persist and agree. Made from Moving by the runner when the last item is
// done (or at once when there was nothing to move); made from Planning
// when the gather settled the call, which then completes at once (nothing
// is left to move, persist or agree).
struct Agreeing {
  explicit Agreeing(Moving&& moving);
  explicit Agreeing(Planning&& settled);

  Announcements announcements;
  std::shared_ptr<const CollectivePlan> plan;
  PlanOrigin origin;
  GatherOutcome gather;
  DataRoute route;
  // What this process moved: bytes accessed itself (early or direct), and
  // for reads what was found before end of file, when counted.
  bool accessed_directly = false;
  std::optional<std::int64_t> found;
  sync::Lease lease;  // two-phase, atomic mode: let go after the agreement
  // Agree: the messages, then the verdict every process reports alike.
  OutcomeAgreement agreement;
  std::int64_t begin_ns = 0;
  std::exception_ptr outcome;
};

}  // namespace flowio::runtime
