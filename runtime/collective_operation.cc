#include "runtime/collective_operation.h"

#include <oneapi/tbb/flow_graph.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>
#include <string>

#include "exchange/access_codec.h"
#include "exchange/stream_pack.h"
#include "flowio/error.h"
#include "io/view_transfer.h"
#include "io/window_io.h"
#include "runtime/collective_error.h"
#include "runtime/core/realm_policy.h"
#include "runtime/trace.h"

namespace flowio::runtime {

namespace flow = tbb::flow;

namespace {

enum Stage { kOffsets, kRealms, kMetadata, kPack, kExchange, kIo, kUnpack, kAgree, kStages };
constexpr const char* kStageNames[kStages] = {"offsets",  "realms", "metadata", "pack",
                                              "exchange", "io",     "unpack",   "agree"};

// Views whose description is at most this many words are always sent as
// the view: walking the pieces to compare would cost more than it saves.
constexpr std::size_t kAlwaysSendViewWords = 256;

struct StageCounters {
  std::atomic<std::int64_t> nanoseconds{0};
  std::atomic<std::int64_t> bytes{0};
  std::atomic<std::int64_t> messages{0};
  std::atomic<std::int64_t> io_requests{0};
};

// Merges consecutive runs of pieces, each sorted by offset, into one
// sorted list: O(n log runs).
void merge_sorted_runs(std::vector<io::WindowPiece>& pieces, std::vector<std::size_t> run_ends) {
  const auto by_offset = [](const io::WindowPiece& a, const io::WindowPiece& b) {
    return a.offset < b.offset;
  };
  while (run_ends.size() > 1) {
    std::vector<std::size_t> merged;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < run_ends.size(); i += 2) {
      if (i + 1 < run_ends.size()) {
        std::inplace_merge(pieces.begin() + begin, pieces.begin() + run_ends[i],
                           pieces.begin() + run_ends[i + 1], by_offset);
        merged.push_back(run_ends[i + 1]);
      } else {
        merged.push_back(run_ends[i]);
      }
      begin = merged.back();
    }
    run_ends.swap(merged);
  }
}

// Frees a buffer's memory (assigning {} would keep its capacity).
void release(std::vector<char>& buffer) { std::vector<char>().swap(buffer); }

}  // namespace

CollectiveContext::CollectiveContext(MPI_Comm comm, const io::FileDescriptor& file,
                                     io::StorageBackend& backend, Engine& engine)
    : file_(file), backend_(backend), engine_(engine) {
  for (MPI_Comm* mine : {&metadata_comm_, &data_comm_, &agree_comm_}) {
    check_mpi(MPI_Comm_dup(comm, mine), "MPI_Comm_dup");
    // Failures come back as codes, to reach the futures, not abort.
    MPI_Comm_set_errhandler(*mine, MPI_ERRORS_RETURN);
  }
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &ranks_);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub != nullptr) tag_bound_ = *tag_ub;
}

CollectiveContext::~CollectiveContext() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm* mine : {&metadata_comm_, &data_comm_, &agree_comm_}) MPI_Comm_free(mine);
}

std::vector<OperationStatistics> CollectiveContext::statistics() const {
  std::lock_guard lock(mutex_);
  return {log_.begin(), log_.end()};
}

void CollectiveContext::log(OperationStatistics statistics) {
  std::lock_guard lock(mutex_);
  log_.push_back(std::move(statistics));
  if (log_.size() > 1024) log_.pop_front();
}

void CollectiveContext::run_in_order(std::function<void()> phase) {
  {
    std::lock_guard lock(mutex_);
    if (busy_) {
      waiting_.push_back(std::move(phase));
      return;
    }
    busy_ = true;
  }
  engine_.submit(std::move(phase));
}

bool CollectiveContext::try_run_now() {
  std::lock_guard lock(mutex_);
  if (busy_) return false;
  busy_ = true;
  return true;
}

void CollectiveContext::data_phase_done() {
  std::function<void()> next;
  {
    std::lock_guard lock(mutex_);
    if (waiting_.empty()) {
      busy_ = false;
      return;
    }
    next = std::move(waiting_.front());
    waiting_.pop_front();
  }
  engine_.submit(std::move(next));
}

class CollectiveOperation : public std::enable_shared_from_this<CollectiveOperation> {
 public:
  CollectiveOperation(CollectiveContext& context, CollectiveRequest request,
                      std::function<void()> on_done)
      : context_(context), request_(std::move(request)), on_done_(std::move(on_done)) {}

  Future<std::size_t> start();

 private:
  using Async = flow::async_node<std::size_t, std::size_t>;

  // A client's message to (write) or from (read) one aggregator window.
  struct ClientItem {
    int peer = 0;
    int tag = 0;
    std::int64_t from = 0;  // position in this process's data stream
    std::int64_t bytes = 0;
    std::int64_t received = 0;  // reads: bytes that lay before end of file
    std::vector<char> staging;  // when memory is not contiguous
    char* data = nullptr;
    MPI_Request request = MPI_REQUEST_NULL;
    std::int64_t posted_ns = 0;
  };

  // One window of this aggregator's realm: the clients' parts, laid out
  // one after another in `buffer`.
  struct WindowItem {
    core::Window window;
    struct Part {
      std::size_t client;
      std::int64_t bytes;
      std::int64_t at;
      std::int64_t before_end = 0;  // reads: bytes of the part before end of file
    };
    std::vector<Part> parts;
    std::int64_t total = 0;
    std::vector<char> buffer;
    std::vector<MPI_Request> requests;
    std::int64_t posted_ns = 0;
  };

  struct Client {
    int rank = 0;
    core::Access access;
  };

  // One round of the Alltoallw exchange: every process takes part in every
  // round, as a client (its data for each aggregator's window of the round)
  // and as an aggregator (its own window of the round, if it has one).
  struct Round {
    struct Share {
      int peer;
      std::int64_t from;  // position in this process's data stream
      std::int64_t bytes;
    };
    std::vector<Share> shares;          // client side, by slot
    std::vector<char> client_data;      // the shares, one after another
    std::optional<std::size_t> window;  // index into windows_
    std::vector<int> client_counts, client_displacements;
    std::vector<int> window_counts, window_displacements;
  };

  // Decided by every process alike, from the gathered announcements.
  bool two_phase() const;
  bool anyone_failed_early() const;
  bool everyone_accessed_early() const;
  // Whether this process's own part would let the call go direct.
  bool may_go_direct() const;
  // Whether a process's access alone calls for two-phase I/O (automatic
  // buffering): many pieces, small on average.
  bool needs_gathering(const core::AccessSummary& summary) const;
  void gathered(int code);
  void plan_and_send_metadata();
  void send_metadata(std::vector<MPI_Request>& requests);
  void receive_metadata(std::vector<MPI_Request>& requests);
  void run_data_phase();
  void run_independently();
  void build_rounds();
  void build_round_graph();
  void post_round_exchange(std::size_t index, Async::gateway_type& gateway);
  void build_client_items();
  void build_windows();
  void build_graph();
  std::vector<io::WindowPiece> window_pieces(WindowItem& item);

  // Stage bodies; they record failures instead of throwing, so that every
  // process goes through the whole protocol and no one waits forever.
  void pack(ClientItem& item);
  MPI_Request post_client_message(ClientItem& item);
  void client_message_done(ClientItem& item, int code, const MPI_Status* status);
  void post_client_exchange(std::size_t index, Async::gateway_type& gateway);
  void unpack(ClientItem& item);
  void post_window_messages(WindowItem& item);
  void window_messages_done(WindowItem& item, int code);
  void post_window_exchange(std::size_t index, Async::gateway_type& gateway);
  bool fits_in_flight() const;
  void run_all_on_caller();
  void write_window(WindowItem& item);
  void read_window(WindowItem& item);
  void record_window_io(const WindowItem& item, std::int64_t begin_ns,
                        const io::WindowIoResult& result);
  void item_done();
  void finish();

  void fail(std::exception_ptr failure);
  template <typename Body>
  void guarded(Body&& body);
  // `window_index` -1 for the whole operation; `role` is appended to the
  // trace label, which is only built when a trace is being recorded.
  void account(Stage stage, std::int64_t begin_ns, std::int64_t window_index, const char* role = "",
               std::int64_t bytes = 0, std::int64_t messages = 0, std::int64_t requests = 0);
  std::string label(std::int64_t window_index) const;

  CollectiveContext& context_;
  CollectiveRequest request_;
  std::function<void()> on_done_;
  std::shared_ptr<CollectiveOperation> self_;  // alive until finished
  // A blocking call run by its caller's thread: it waits for MPI and for
  // the graph itself instead of handing over to the progress thread.
  bool on_caller_ = false;
  bool direct_ = false;  // this process accessed the file itself
  // Reads: what that access found before end of file.
  std::optional<std::int64_t> direct_bytes_read_;
  Promise<std::size_t> promise_;
  std::uint64_t sequence_ = 0;
  std::int64_t started_ns_ = 0;

  // What each process tells the others at the start: its access, and
  // whether it has already done its part itself (accessed_early), with
  // what outcome.
  struct Announcement {
    core::AccessSummary summary;
    std::int64_t accessed_early = 0;
    std::int64_t failed_early = 0;
  };
  Announcement announcement_;
  std::vector<Announcement> announcements_;
  std::vector<core::AccessSummary> summaries_;
  MPI_Request summary_request_ = MPI_REQUEST_NULL;
  std::optional<core::RealmLayout> layout_;
  int slot_ = -1;  // this process's aggregator slot, or -1

  std::vector<std::int64_t> view_words_;  // this access, described by its view
  std::vector<std::vector<std::int64_t>> metadata_out_;
  std::vector<std::vector<std::int64_t>> metadata_in_;
  std::vector<Client> clients_;

  std::vector<ClientItem> client_items_;
  std::vector<Round> rounds_;
  // MPI_BYTE for every rank: the type arrays of every MPI_Ialltoallw, which
  // like its count arrays must stay untouched until it completes.
  std::vector<MPI_Datatype> round_types_;
  std::vector<WindowItem> windows_;
  std::atomic<std::size_t> remaining_{0};
  std::set<std::string> methods_;
  std::mutex mutex_;  // methods_, failure_
  std::exception_ptr failure_;
  StageCounters stages_[kStages];

  // The graph first: nodes are destroyed before it.
  std::unique_ptr<flow::graph> graph_;
  std::vector<std::unique_ptr<flow::graph_node>> nodes_;
  std::vector<flow::input_node<std::size_t>*> sources_;
};

void CollectiveOperation::fail(std::exception_ptr failure) {
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = std::move(failure);
}

template <typename Body>
void CollectiveOperation::guarded(Body&& body) {
  try {
    body();
  } catch (...) {
    fail(std::current_exception());
  }
}

std::string CollectiveOperation::label(std::int64_t window_index) const {
  return std::string(request_.writing ? "write#" : "read#") + std::to_string(sequence_) +
         (window_index >= 0 ? " w" + std::to_string(window_index) : "");
}

void CollectiveOperation::account(Stage stage, std::int64_t begin_ns, std::int64_t window_index,
                                  const char* role, std::int64_t bytes, std::int64_t messages,
                                  std::int64_t requests) {
  const std::int64_t end_ns = now_ns();
  StageCounters& counters = stages_[stage];
  counters.nanoseconds += end_ns - begin_ns;
  counters.bytes += bytes;
  counters.messages += messages;
  counters.io_requests += requests;
  Trace& trace = Trace::process();
  if (trace.enabled()) {
    trace.record(kStageNames[stage], context_.rank_, label(window_index) + role, begin_ns, end_ns);
  }
}

Future<std::size_t> CollectiveOperation::start() {
  started_ns_ = now_ns();
  self_ = shared_from_this();
  sequence_ = context_.next_sequence_++;
  Future<std::size_t> future = promise_.get_future();
  core::AccessSummary& summary = announcement_.summary;
  summary = core::AccessSummary::of(
      request_.access, request_.settings.realms.policy == core::RealmPolicy::load_balanced);
  view_words_ = exchange::encode_view_access(request_.access);
  summary.metadata_words = static_cast<std::int64_t>(view_words_.size());
  announcements_.resize(static_cast<std::size_t>(context_.ranks_));
  // A blocking call with nothing else outstanding on the file runs on the
  // caller's thread, which would only wait otherwise: no hand-offs between
  // threads for small accesses. It still goes to the graph for two-phase.
  on_caller_ = request_.blocking && context_.try_run_now();
  // With nothing outstanding here, every earlier operation is done on every
  // process (each ends with a collective that follows all its I/O), so a
  // part that will likely go direct can be accessed now, before the
  // summaries are gathered, and its outcome announced with them: if every
  // process did so and none failed, the call needs no second collective
  // to agree on its outcome. If two-phase I/O is chosen after all, the
  // early access was only redundant: it moved the same bytes (collective
  // accesses of different processes must not overlap), and aggregators
  // touch the file only after the gather, that is after it.
  if (on_caller_ && may_go_direct()) {
    run_independently();
    announcement_.accessed_early = 1;
    announcement_.failed_early = failure_ ? 1 : 0;
  }
  // Posted here, on the caller's thread, so that every process posts its
  // operations' collectives in the same order.
  check_mpi(
      MPI_Iallgather(&announcement_, sizeof announcement_, MPI_BYTE, announcements_.data(),
                     sizeof announcement_, MPI_BYTE, context_.metadata_comm_, &summary_request_),
      "MPI_Iallgather");
  account(kOffsets, started_ns_, -1);
  if (on_caller_) {
    gathered(wait_all_yielding({&summary_request_, 1}, MPI_STATUSES_IGNORE));
    plan_and_send_metadata();
    return future;
  }
  context_.run_in_order([this] {
    context_.engine_.progress().watch(
        {summary_request_}, [this](int code, std::span<const MPI_Status>) {
          gathered(code);
          context_.engine_.submit([this] { plan_and_send_metadata(); });
        });
  });
  return future;
}

void CollectiveOperation::gathered(int code) {
  if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("MPI_Iallgather", code)));
  summaries_.clear();
  for (const Announcement& announcement : announcements_) {
    summaries_.push_back(announcement.summary);
  }
}

bool CollectiveOperation::may_go_direct() const {
  using Buffering = CollectiveSettings::Buffering;
  const Buffering buffering = request_.settings.buffering;
  return buffering == Buffering::disable ||
         (buffering == Buffering::automatic && !needs_gathering(announcement_.summary));
}

// One piece per process is one request each however small; large pieces
// gain nothing from being gathered.
bool CollectiveOperation::needs_gathering(const core::AccessSummary& summary) const {
  return summary.pieces > 1 && summary.bytes < request_.settings.direct_threshold * summary.pieces;
}

bool CollectiveOperation::anyone_failed_early() const {
  return std::any_of(announcements_.begin(), announcements_.end(),
                     [](const Announcement& a) { return a.failed_early != 0; });
}

bool CollectiveOperation::everyone_accessed_early() const {
  return std::all_of(announcements_.begin(), announcements_.end(),
                     [](const Announcement& a) { return a.accessed_early != 0; });
}

bool CollectiveOperation::two_phase() const {
  using Buffering = CollectiveSettings::Buffering;
  const CollectiveSettings& settings = request_.settings;
  if (settings.buffering != Buffering::automatic) return settings.buffering == Buffering::enable;
  return std::any_of(summaries_.begin(), summaries_.end(),
                     [this](const core::AccessSummary& s) { return needs_gathering(s); });
}

void CollectiveOperation::plan_and_send_metadata() {
  const std::int64_t begin = now_ns();
  const bool anyone = std::any_of(summaries_.begin(), summaries_.end(),
                                  [](const core::AccessSummary& s) { return s.bytes > 0; });
  // After a failed early access every process goes direct, straight to
  // the agreement that reports it.
  if (failure_ || !anyone || anyone_failed_early() || !two_phase()) {
    run_data_phase();
    return;
  }
  const CollectiveSettings& settings = request_.settings;
  layout_ = core::plan_realms(settings.realms, summaries_, context_.persistent_unit_);
  const auto mine =
      std::find(settings.aggregator_ranks.begin(), settings.aggregator_ranks.end(), context_.rank_);
  if (mine != settings.aggregator_ranks.end()) {
    slot_ = static_cast<int>(mine - settings.aggregator_ranks.begin());
  }
  account(kRealms, begin, -1);
  const std::int64_t metadata_begin = now_ns();
  std::vector<MPI_Request> requests;
  guarded([&] {
    send_metadata(requests);
    receive_metadata(requests);
  });
  auto received = [this, metadata_begin](int code) {
    if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("metadata exchange", code)));
    account(kMetadata, metadata_begin, -1, "", 0,
            static_cast<std::int64_t>(metadata_out_.size() + metadata_in_.size()));
  };
  if (on_caller_) {
    received(wait_all_yielding(requests, MPI_STATUSES_IGNORE));
    run_data_phase();
    return;
  }
  context_.engine_.progress().watch(std::move(requests),
                                    [this, received](int code, std::span<const MPI_Status>) {
                                      received(code);
                                      context_.engine_.submit([this] { run_data_phase(); });
                                    });
}

void CollectiveOperation::send_metadata(std::vector<MPI_Request>& requests) {
  const core::Access& access = request_.access;
  if (access.empty()) return;
  const int slots = layout_->slots();
  const std::vector<std::int64_t>& view_words = view_words_;
  // For large filetypes, the pieces each aggregator needs may be fewer
  // words than the filetype: split the pieces by realm and compare.
  std::vector<std::vector<core::Piece>> pieces_by_slot;
  if (view_words.size() > kAlwaysSendViewWords) {
    pieces_by_slot.resize(static_cast<std::size_t>(slots));
    access.for_each_piece(access.file_begin(), access.file_end(), [&](core::Piece piece) {
      while (piece.length > 0) {
        const core::Window window = layout_->window_at(piece.offset);
        const std::int64_t take = std::min(piece.offset + piece.length, window.end) - piece.offset;
        std::vector<core::Piece>& list = pieces_by_slot[static_cast<std::size_t>(window.slot)];
        if (!list.empty() && list.back().offset + list.back().length == piece.offset) {
          list.back().length += take;
        } else {
          list.push_back(core::Piece{piece.offset, take});
        }
        piece.offset += take;
        piece.length -= take;
      }
    });
  }
  const int tag = static_cast<int>(sequence_ % static_cast<std::uint64_t>(context_.tag_bound_));
  for (int slot = 0; slot < slots; ++slot) {
    if (!layout_->realm_meets(slot, access.file_begin(), access.file_end())) continue;
    const bool as_list =
        !pieces_by_slot.empty() && 2 * pieces_by_slot[slot].size() + 2 < view_words.size();
    metadata_out_.push_back(as_list ? exchange::encode_pieces(pieces_by_slot[slot]) : view_words);
    const std::vector<std::int64_t>& words = metadata_out_.back();
    MPI_Request request;
    check_mpi(
        MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T,
                  request_.settings.aggregator_ranks[slot], tag, context_.metadata_comm_, &request),
        "MPI_Isend");
    requests.push_back(request);
  }
}

void CollectiveOperation::receive_metadata(std::vector<MPI_Request>& requests) {
  if (slot_ < 0) return;
  const int tag = static_cast<int>(sequence_ % static_cast<std::uint64_t>(context_.tag_bound_));
  // Sized first, so that no buffer moves once a receive is posted.
  std::vector<int> senders;
  for (int rank = 0; rank < context_.ranks_; ++rank) {
    const core::AccessSummary& s = summaries_[static_cast<std::size_t>(rank)];
    if (s.bytes > 0 && layout_->realm_meets(slot_, s.file_begin, s.file_end)) {
      senders.push_back(rank);
    }
  }
  metadata_in_.resize(senders.size());
  clients_.resize(senders.size());
  for (std::size_t i = 0; i < senders.size(); ++i) {
    clients_[i].rank = senders[i];
    std::vector<std::int64_t>& words = metadata_in_[i];
    words.resize(static_cast<std::size_t>(summaries_[senders[i]].metadata_words));
    MPI_Request request;
    check_mpi(MPI_Irecv(words.data(), static_cast<int>(words.size()), MPI_INT64_T, senders[i], tag,
                        context_.metadata_comm_, &request),
              "MPI_Irecv");
    requests.push_back(request);
  }
}

void CollectiveOperation::run_data_phase() {
  if (failure_ || !layout_) {
    if (!failure_ && !announcement_.accessed_early) run_independently();
    finish();
    return;
  }
  guarded([&] {
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      clients_[i].access = exchange::decode_access(metadata_in_[i]);
    }
    metadata_in_.clear();
    metadata_out_.clear();
    view_words_.clear();
    if (request_.settings.alltoallw) {
      build_rounds();
    } else {
      build_client_items();
      build_windows();
    }
  });
  if (failure_) {
    // Every process is told at the agreement; the partners of this one
    // time out of nothing, because the agreement is their next step too.
    client_items_.clear();
    windows_.clear();
    rounds_.clear();
  }
  remaining_ = rounds_.empty() ? client_items_.size() + windows_.size() : rounds_.size();
  if (remaining_ == 0) {
    finish();
    return;
  }
  if (on_caller_ && rounds_.empty() && fits_in_flight()) {
    run_all_on_caller();
    finish();
    return;
  }
  if (rounds_.empty()) {
    build_graph();
  } else {
    build_round_graph();
  }
  for (flow::input_node<std::size_t>* source : sources_) source->activate();
  if (on_caller_) {
    graph_->wait_for_all();
    finish();
  }
}

// The graph's limiters allow this many windows and client items in flight
// (build_graph), which bounds memory by buffers_in_flight windows and as
// many staged client items. Running everything at once stays within the
// same bound when there are no more windows than that and the staging of
// all client items together (noncontiguous memory only) is no larger than
// that many windows.
bool CollectiveOperation::fits_in_flight() const {
  const auto in_flight = static_cast<std::size_t>(request_.settings.buffers_in_flight);
  if (windows_.size() > in_flight) return false;
  if (request_.memory.contiguous()) {
    return client_items_.size() <= in_flight * static_cast<std::size_t>(layout_->slots());
  }
  std::int64_t staged = 0;
  for (const ClientItem& item : client_items_) staged += item.bytes;
  return staged <= static_cast<std::int64_t>(in_flight) * request_.settings.realms.window_bytes;
}

void CollectiveOperation::run_independently() {
  guarded([&] {
    const core::Access& access = request_.access;
    if (access.empty()) return;
    const std::int64_t begin = now_ns();
    const core::MemoryLayout& memory = request_.memory;
    const core::FileView& view = *access.view();
    std::int64_t moved = 0;
    if (memory.contiguous()) {
      moved = request_.writing ? io::write_to_view(context_.backend_, context_.file_.get(), view,
                                                   access.stream_begin(), memory)
                               : io::read_from_view(context_.backend_, context_.file_.get(), view,
                                                    access.stream_begin(), memory);
    } else {
      // Small memory pieces make slow iovecs: stage through a buffer of at
      // most one window, packed or unpacked by memcpy.
      const std::int64_t chunk = std::min(access.bytes(), request_.settings.realms.window_bytes);
      // Not value-initialized: every byte is packed or read before use.
      const auto staging = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(chunk));
      const core::FlatType bytes_type(core::make_run(1), 0, 1);
      for (std::int64_t from = 0; from < access.bytes(); from += chunk) {
        const std::int64_t length = std::min(chunk, access.bytes() - from);
        const core::MemoryLayout staged{&bytes_type, length,
                                        reinterpret_cast<std::int64_t>(staging.get())};
        if (request_.writing) {
          exchange::pack_stream(memory, from, length, staging.get());
          moved += io::write_to_view(context_.backend_, context_.file_.get(), view,
                                     access.stream_begin() + from, staged);
        } else {
          const std::int64_t got = io::read_from_view(context_.backend_, context_.file_.get(), view,
                                                      access.stream_begin() + from, staged);
          exchange::unpack_stream(memory, from, got, staging.get());
          moved += got;
          if (got < length) break;  // end of file
        }
      }
    }
    account(kIo, begin, -1, "", moved);
    if (!request_.writing) direct_bytes_read_ = moved;
    std::lock_guard lock(mutex_);
    methods_.insert("direct");
    direct_ = true;
  });
}

void CollectiveOperation::build_client_items() {
  const core::Access& access = request_.access;
  const bool contiguous = request_.memory.contiguous();
  std::int64_t x = access.file_begin();
  while (x < access.file_end()) {
    const core::Window window = layout_->window_at(x);
    const std::int64_t from = access.bytes_before(window.begin);
    const std::int64_t to = access.bytes_before(window.end);
    if (to > from) {
      ClientItem item;
      item.peer = request_.settings.aggregator_ranks[static_cast<std::size_t>(window.slot)];
      item.tag = static_cast<int>(window.index % context_.tag_bound_);
      item.from = from;
      item.bytes = to - from;
      if (contiguous) item.data = reinterpret_cast<char*>(request_.memory.address_of(from));
      client_items_.push_back(std::move(item));
    }
    x = access.next_data_at_or_after(window.end);
  }
}

void CollectiveOperation::build_windows() {
  if (slot_ < 0 || clients_.empty()) return;
  std::int64_t x = layout_->begin();
  while (const std::optional<core::Window> window = layout_->window_of_slot_from(slot_, x)) {
    WindowItem item;
    item.window = *window;
    for (std::size_t c = 0; c < clients_.size(); ++c) {
      const core::Access& access = clients_[c].access;
      const std::int64_t bytes =
          access.bytes_before(window->end) - access.bytes_before(window->begin);
      if (bytes > 0) {
        item.parts.push_back(WindowItem::Part{c, bytes, item.total, bytes});
        item.total += bytes;
      }
    }
    if (item.total > 0) windows_.push_back(std::move(item));
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (const Client& client : clients_) {
      const std::int64_t data = client.access.next_data_at_or_after(window->end);
      if (data < client.access.file_end()) next = std::min(next, data);
    }
    if (next == std::numeric_limits<std::int64_t>::max()) break;
    x = next;
  }
}

void CollectiveOperation::build_rounds() {
  const int slots = layout_->slots();
  const std::size_t ranks = static_cast<std::size_t>(context_.ranks_);
  // Every process lists every slot's windows the same way (all of them,
  // with or without data), so round r means the same windows everywhere.
  std::vector<std::vector<core::Window>> windows_by_slot(static_cast<std::size_t>(slots));
  std::size_t round_count = 0;
  for (int slot = 0; slot < slots; ++slot) {
    std::vector<core::Window>& list = windows_by_slot[static_cast<std::size_t>(slot)];
    std::int64_t x = layout_->begin();
    while (const std::optional<core::Window> window = layout_->window_of_slot_from(slot, x)) {
      list.push_back(*window);
      x = window->end;
    }
    round_count = std::max(round_count, list.size());
  }
  std::vector<int> client_of_rank(ranks, -1);
  for (std::size_t c = 0; c < clients_.size(); ++c)
    client_of_rank[clients_[c].rank] = static_cast<int>(c);
  const core::Access& access = request_.access;
  rounds_.resize(round_count);
  round_types_.assign(ranks, MPI_BYTE);
  for (std::size_t r = 0; r < round_count; ++r) {
    Round& round = rounds_[r];
    round.client_counts.assign(ranks, 0);
    round.client_displacements.assign(ranks, 0);
    round.window_counts.assign(ranks, 0);
    round.window_displacements.assign(ranks, 0);
    std::int64_t at = 0;
    for (int slot = 0; slot < slots; ++slot) {
      const std::vector<core::Window>& list = windows_by_slot[static_cast<std::size_t>(slot)];
      if (r >= list.size()) continue;
      const std::int64_t from = access.bytes_before(list[r].begin);
      const std::int64_t bytes = access.bytes_before(list[r].end) - from;
      if (bytes == 0) continue;
      const int peer = request_.settings.aggregator_ranks[static_cast<std::size_t>(slot)];
      round.shares.push_back(Round::Share{peer, from, bytes});
      round.client_counts[static_cast<std::size_t>(peer)] = static_cast<int>(bytes);
      round.client_displacements[static_cast<std::size_t>(peer)] = static_cast<int>(at);
      at += bytes;
    }
    if (slot_ < 0) continue;
    const std::vector<core::Window>& mine = windows_by_slot[static_cast<std::size_t>(slot_)];
    if (r >= mine.size()) continue;
    WindowItem item;
    item.window = mine[r];
    for (std::size_t c = 0; c < clients_.size(); ++c) {
      const core::Access& client = clients_[c].access;
      const std::int64_t bytes =
          client.bytes_before(item.window.end) - client.bytes_before(item.window.begin);
      if (bytes == 0) continue;
      item.parts.push_back(WindowItem::Part{c, bytes, item.total, bytes});
      const std::size_t peer = static_cast<std::size_t>(clients_[c].rank);
      round.window_counts[peer] = static_cast<int>(bytes);
      round.window_displacements[peer] = static_cast<int>(item.total);
      item.total += bytes;
    }
    round.window = windows_.size();
    windows_.push_back(std::move(item));
  }
}

void CollectiveOperation::build_round_graph() {
  graph_ = std::make_unique<flow::graph>();
  flow::graph& graph = *graph_;
  const bool writing = request_.writing;
  auto source = std::make_unique<flow::input_node<std::size_t>>(
      graph, [next = std::size_t{0}, count = rounds_.size()](tbb::flow_control& control) mutable {
        if (next == count) {
          control.stop();
          return std::size_t{0};
        }
        return next++;
      });
  auto limiter = std::make_unique<flow::limiter_node<std::size_t>>(
      graph, static_cast<std::size_t>(request_.settings.buffers_in_flight));
  // Serial up to the exchange: rounds are collective calls, posted in
  // round order on every process.
  auto prepare = std::make_unique<flow::function_node<std::size_t, std::size_t>>(
      graph, flow::serial, [this, writing](std::size_t index) {
        Round& round = rounds_[index];
        std::int64_t bytes = 0;
        for (const Round::Share& share : round.shares) bytes += share.bytes;
        round.client_data.resize(static_cast<std::size_t>(bytes));
        if (round.window) {
          WindowItem& item = windows_[*round.window];
          item.buffer.resize(static_cast<std::size_t>(item.total));
          if (!writing) read_window(item);
        }
        if (writing) {
          const std::int64_t begin = now_ns();
          std::int64_t at = 0;
          guarded([&] {
            for (const Round::Share& share : round.shares) {
              exchange::pack_stream(request_.memory, share.from, share.bytes,
                                    round.client_data.data() + at);
              at += share.bytes;
            }
          });
          account(kPack, begin, static_cast<std::int64_t>(index), "", bytes);
        }
        return index;
      });
  auto exchange = std::make_unique<Async>(graph, flow::serial,
                                          [this](std::size_t index, Async::gateway_type& gateway) {
                                            post_round_exchange(index, gateway);
                                          });
  auto after = std::make_unique<flow::function_node<std::size_t, flow::continue_msg>>(
      graph, flow::unlimited, [this, writing](std::size_t index) {
        Round& round = rounds_[index];
        if (round.window && writing) write_window(windows_[*round.window]);
        if (!writing) {
          const std::int64_t begin = now_ns();
          std::int64_t at = 0;
          guarded([&] {
            // What lies past end of file is not unpacked: the memory there
            // stays as it was, as after an independent read.
            const std::int64_t valid = request_.access.bytes_before(context_.file_.size());
            for (const Round::Share& share : round.shares) {
              const std::int64_t bytes =
                  std::clamp<std::int64_t>(valid - share.from, 0, share.bytes);
              exchange::unpack_stream(request_.memory, share.from, bytes,
                                      round.client_data.data() + at);
              at += share.bytes;
            }
          });
          account(kUnpack, begin, static_cast<std::int64_t>(index), "", at);
        }
        if (round.window) release(windows_[*round.window].buffer);
        release(round.client_data);
        item_done();
        return flow::continue_msg();
      });
  flow::make_edge(*source, *limiter);
  flow::make_edge(*limiter, *prepare);
  flow::make_edge(*prepare, *exchange);
  flow::make_edge(*exchange, *after);
  flow::make_edge(*after, limiter->decrementer());
  sources_.push_back(source.get());
  nodes_.push_back(std::move(source));
  nodes_.push_back(std::move(limiter));
  nodes_.push_back(std::move(prepare));
  nodes_.push_back(std::move(exchange));
  nodes_.push_back(std::move(after));
}

void CollectiveOperation::post_round_exchange(std::size_t index, Async::gateway_type& gateway) {
  Round& round = rounds_[index];
  gateway.reserve_wait();
  const std::int64_t begin = now_ns();
  char* window_data = round.window ? windows_[*round.window].buffer.data() : nullptr;
  const bool writing = request_.writing;
  // Writes: clients send their shares, aggregators receive windows.
  // Reads: the other way round.
  char* send = writing ? round.client_data.data() : window_data;
  char* receive = writing ? window_data : round.client_data.data();
  const std::vector<int>& send_counts = writing ? round.client_counts : round.window_counts;
  const std::vector<int>& send_displacements =
      writing ? round.client_displacements : round.window_displacements;
  const std::vector<int>& receive_counts = writing ? round.window_counts : round.client_counts;
  const std::vector<int>& receive_displacements =
      writing ? round.window_displacements : round.client_displacements;
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  guarded([&] {
    check_mpi(
        MPI_Ialltoallw(send, send_counts.data(), send_displacements.data(), round_types_.data(),
                       receive, receive_counts.data(), receive_displacements.data(),
                       round_types_.data(), context_.data_comm_, requests.data()),
        "MPI_Ialltoallw");
  });
  if (requests[0] == MPI_REQUEST_NULL) requests.clear();
  context_.engine_.progress().watch(
      std::move(requests), [this, index, begin, &gateway](int code, std::span<const MPI_Status>) {
        if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("MPI_Ialltoallw", code)));
        account(kExchange, begin, static_cast<std::int64_t>(index), " alltoallw");
        gateway.try_put(index);
        gateway.release_wait();
      });
}

void CollectiveOperation::build_graph() {
  graph_ = std::make_unique<flow::graph>();
  flow::graph& graph = *graph_;
  const int in_flight = request_.settings.buffers_in_flight;
  const bool writing = request_.writing;

  // Adds an input node for `count` items behind a limiter of `limit`, and
  // returns the limiter, whose decrementer the last stage feeds.
  auto add_source = [&](std::size_t count, std::size_t limit) -> flow::limiter_node<std::size_t>& {
    auto source = std::make_unique<flow::input_node<std::size_t>>(
        graph, [next = std::size_t{0}, count](tbb::flow_control& control) mutable -> std::size_t {
          if (next == count) {
            control.stop();
            return 0;
          }
          return next++;
        });
    auto limiter = std::make_unique<flow::limiter_node<std::size_t>>(graph, limit);
    flow::make_edge(*source, *limiter);
    sources_.push_back(source.get());
    auto& result = *limiter;
    nodes_.push_back(std::move(source));
    nodes_.push_back(std::move(limiter));
    return result;
  };
  auto add = [&](auto node) -> auto& {
    auto& result = *node;
    nodes_.push_back(std::move(node));
    return result;
  };
  auto done_node = [&] {
    return std::make_unique<flow::function_node<std::size_t, flow::continue_msg>>(
        graph, flow::unlimited, [this](std::size_t) {
          item_done();
          return flow::continue_msg();
        });
  };

  if (!client_items_.empty()) {
    // Zero-copy items pin no buffer of ours: let more of them fly.
    const std::size_t limit =
        static_cast<std::size_t>(in_flight) * (request_.memory.contiguous() ? layout_->slots() : 1);
    auto& limiter = add_source(client_items_.size(), limit);
    auto& exchange = add(std::make_unique<Async>(
        graph, flow::unlimited, [this](std::size_t index, Async::gateway_type& gateway) {
          post_client_exchange(index, gateway);
        }));
    auto& prepare = add(std::make_unique<flow::function_node<std::size_t, std::size_t>>(
        graph, flow::unlimited, [this, writing](std::size_t index) {
          if (writing) pack(client_items_[index]);
          return index;
        }));
    auto& after = add(std::make_unique<flow::function_node<std::size_t, std::size_t>>(
        graph, flow::unlimited, [this, writing](std::size_t index) {
          ClientItem& item = client_items_[index];
          if (!writing) unpack(item);
          release(item.staging);
          return index;
        }));
    auto& done = add(done_node());
    flow::make_edge(limiter, prepare);
    flow::make_edge(prepare, exchange);
    flow::make_edge(exchange, after);
    flow::make_edge(after, done);
    flow::make_edge(done, limiter.decrementer());
  }
  if (!windows_.empty()) {
    auto& limiter = add_source(windows_.size(), static_cast<std::size_t>(in_flight));
    auto& exchange = add(std::make_unique<Async>(
        graph, flow::unlimited, [this](std::size_t index, Async::gateway_type& gateway) {
          post_window_exchange(index, gateway);
        }));
    // Writes: receive, then write. Reads: read, then send.
    // File I/O is handed to the I/O thread; the window comes back to the
    // graph when it is done, so no worker waits for the file.
    auto& before = add(std::make_unique<Async>(
        graph, flow::unlimited, [this, writing](std::size_t index, Async::gateway_type& gateway) {
          WindowItem& item = windows_[index];
          item.buffer.resize(static_cast<std::size_t>(item.total));
          if (writing) {
            gateway.try_put(index);
            return;
          }
          gateway.reserve_wait();
          context_.engine_.io().post([this, index, &gateway] {
            read_window(windows_[index]);
            gateway.try_put(index);
            gateway.release_wait();
          });
        }));
    auto& after = add(std::make_unique<Async>(
        graph, flow::unlimited, [this, writing](std::size_t index, Async::gateway_type& gateway) {
          if (!writing) {
            release(windows_[index].buffer);
            gateway.try_put(index);
            return;
          }
          gateway.reserve_wait();
          context_.engine_.io().post([this, index, &gateway] {
            write_window(windows_[index]);
            release(windows_[index].buffer);
            gateway.try_put(index);
            gateway.release_wait();
          });
        }));
    auto& done = add(done_node());
    flow::make_edge(limiter, before);
    flow::make_edge(before, exchange);
    flow::make_edge(exchange, after);
    flow::make_edge(after, done);
    flow::make_edge(done, limiter.decrementer());
  }
}

void CollectiveOperation::pack(ClientItem& item) {
  if (item.data != nullptr) return;
  const std::int64_t begin = now_ns();
  guarded([&] {
    item.staging.resize(static_cast<std::size_t>(item.bytes));
    exchange::pack_stream(request_.memory, item.from, item.bytes, item.staging.data());
  });
  item.data = item.staging.data();
  account(kPack, begin, item.tag, "", item.bytes);
}

void CollectiveOperation::unpack(ClientItem& item) {
  if (item.staging.empty()) return;
  const std::int64_t begin = now_ns();
  guarded([&] {
    exchange::unpack_stream(request_.memory, item.from, item.received, item.staging.data());
  });
  account(kUnpack, begin, item.tag, "", item.received);
}

MPI_Request CollectiveOperation::post_client_message(ClientItem& item) {
  MPI_Request request = MPI_REQUEST_NULL;
  item.posted_ns = now_ns();
  guarded([&] {
    if (!request_.writing && item.data == nullptr) {
      item.staging.resize(static_cast<std::size_t>(item.bytes));
      item.data = item.staging.data();
    }
    if (request_.writing) {
      check_mpi(MPI_Isend(item.data, static_cast<int>(item.bytes), MPI_BYTE, item.peer, item.tag,
                          context_.data_comm_, &request),
                "MPI_Isend");
    } else {
      check_mpi(MPI_Irecv(item.data, static_cast<int>(item.bytes), MPI_BYTE, item.peer, item.tag,
                          context_.data_comm_, &request),
                "MPI_Irecv");
    }
  });
  return request;
}

void CollectiveOperation::client_message_done(ClientItem& item, int code,
                                              const MPI_Status* status) {
  // A read's message stops at end of file: count what came.
  if (!request_.writing && code == MPI_SUCCESS && status != nullptr) {
    int received = 0;
    MPI_Get_count(status, MPI_BYTE, &received);
    item.received = received;
  }
  if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("data exchange", code)));
  account(kExchange, item.posted_ns, item.tag, " client", item.bytes, 1);
}

void CollectiveOperation::post_client_exchange(std::size_t index, Async::gateway_type& gateway) {
  gateway.reserve_wait();
  std::vector<MPI_Request> requests;
  const MPI_Request request = post_client_message(client_items_[index]);
  if (request != MPI_REQUEST_NULL) requests.push_back(request);
  context_.engine_.progress().watch(
      std::move(requests), [this, index, &gateway](int code, std::span<const MPI_Status> statuses) {
        client_message_done(client_items_[index], code,
                            statuses.size() == 1 ? &statuses[0] : nullptr);
        gateway.try_put(index);
        gateway.release_wait();
      });
}

void CollectiveOperation::post_window_messages(WindowItem& item) {
  item.posted_ns = now_ns();
  const int tag = static_cast<int>(item.window.index % context_.tag_bound_);
  guarded([&] {
    for (const WindowItem::Part& part : item.parts) {
      MPI_Request request;
      char* data = item.buffer.data() + part.at;
      const int peer = clients_[part.client].rank;
      if (request_.writing) {
        check_mpi(MPI_Irecv(data, static_cast<int>(part.bytes), MPI_BYTE, peer, tag,
                            context_.data_comm_, &request),
                  "MPI_Irecv");
      } else {
        check_mpi(MPI_Isend(data, static_cast<int>(part.before_end), MPI_BYTE, peer, tag,
                            context_.data_comm_, &request),
                  "MPI_Isend");
      }
      item.requests.push_back(request);
    }
  });
}

void CollectiveOperation::window_messages_done(WindowItem& item, int code) {
  if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("data exchange", code)));
  account(kExchange, item.posted_ns, item.window.index, " aggregator", item.total,
          static_cast<std::int64_t>(item.parts.size()));
}

void CollectiveOperation::post_window_exchange(std::size_t index, Async::gateway_type& gateway) {
  WindowItem& item = windows_[index];
  gateway.reserve_wait();
  post_window_messages(item);
  context_.engine_.progress().watch(std::move(item.requests),
                                    [this, index, &gateway](int code, std::span<const MPI_Status>) {
                                      window_messages_done(windows_[index], code);
                                      gateway.try_put(index);
                                      gateway.release_wait();
                                    });
}

// Every item at once: the caller posts all messages, waits for them with
// one MPI_Waitall, and does the file I/O itself. Used for blocking calls
// whose items fit in the buffers the pipeline would have in flight anyway,
// where handing each stage to another thread costs more than the stage.
void CollectiveOperation::run_all_on_caller() {
  const bool writing = request_.writing;
  for (WindowItem& item : windows_) {
    item.buffer.resize(static_cast<std::size_t>(item.total));
    if (!writing) read_window(item);
  }
  std::vector<MPI_Request> requests;
  for (WindowItem& item : windows_) {
    post_window_messages(item);
    requests.insert(requests.end(), item.requests.begin(), item.requests.end());
    item.requests.clear();
  }
  const std::size_t first_client_request = requests.size();
  for (ClientItem& item : client_items_) {
    if (writing) pack(item);
    requests.push_back(post_client_message(item));
  }
  std::vector<MPI_Status> statuses(requests.size());
  const int code = wait_all_yielding(requests, statuses.data());
  for (WindowItem& item : windows_) window_messages_done(item, code);
  for (std::size_t i = 0; i < client_items_.size(); ++i) {
    ClientItem& item = client_items_[i];
    client_message_done(item, code, &statuses[first_client_request + i]);
    if (!writing) unpack(item);
    release(item.staging);
  }
  for (WindowItem& item : windows_) {
    if (writing) write_window(item);
    release(item.buffer);
  }
}

std::vector<io::WindowPiece> CollectiveOperation::window_pieces(WindowItem& item) {
  std::vector<io::WindowPiece> pieces;
  std::vector<std::size_t> run_ends;
  for (const WindowItem::Part& part : item.parts) {
    char* data = item.buffer.data() + part.at;
    clients_[part.client].access.for_each_piece(
        item.window.begin, item.window.end, [&](core::Piece piece) {
          pieces.push_back(io::WindowPiece{piece.offset, piece.length, data});
          data += piece.length;
        });
    run_ends.push_back(pieces.size());
  }
  merge_sorted_runs(pieces, std::move(run_ends));
  return pieces;
}

void CollectiveOperation::record_window_io(const WindowItem& item, std::int64_t begin_ns,
                                           const io::WindowIoResult& result) {
  {
    std::lock_guard lock(mutex_);
    if (result.method != io::WindowMethod::none) {
      methods_.insert(io::window_method_name(result.method));
    }
  }
  account(kIo, begin_ns, item.window.index, "", result.file_bytes, 0, result.requests);
}

void CollectiveOperation::write_window(WindowItem& item) {
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  guarded([&] {
    if (failure_) return;  // the operation fails anyway; keep the file as it was
    std::vector<char> staging;
    result = io::write_window(context_.backend_, context_.file_.get(), window_pieces(item),
                              request_.settings.window_io, staging);
  });
  record_window_io(item, begin, result);
}

void CollectiveOperation::read_window(WindowItem& item) {
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  guarded([&] {
    std::vector<char> staging;
    result = io::read_window(context_.backend_, context_.file_.get(), window_pieces(item),
                             request_.settings.window_io, staging);
    // Each client's part is in file order: what lies past end of file is
    // its tail, which is not sent, so that the client's memory there is
    // left as it was (as an independent read leaves it).
    if (result.bytes_read < item.total) {
      const std::int64_t end = std::min(item.window.end, context_.file_.size());
      for (WindowItem::Part& part : item.parts) {
        const core::Access& access = clients_[part.client].access;
        part.before_end = std::clamp<std::int64_t>(
            access.bytes_before(end) - access.bytes_before(item.window.begin), 0, part.bytes);
      }
    }
  });
  record_window_io(item, begin, result);
}

void CollectiveOperation::item_done() {
  if (--remaining_ == 0 && !on_caller_) context_.engine_.submit([this] { finish(); });
}

void CollectiveOperation::finish() {
  if (graph_) {
    graph_->wait_for_all();
    nodes_.clear();
    graph_.reset();
  }
  const std::int64_t agree_begin = now_ns();
  std::size_t moved = 0;
  std::exception_ptr outcome;
  try {
    // Every process decides alike whether the gather already told the
    // outcome: direct, everyone done early, no one failed.
    const bool told = !layout_ && everyone_accessed_early() && !anyone_failed_early();
    if (!told) {
      agree_on_outcome(context_.agree_comm_, failure_,
                       request_.writing ? "collective write" : "collective read");
    } else if (failure_) {
      std::rethrow_exception(failure_);  // the gather itself failed here
    }
    const core::Access& access = request_.access;
    moved = static_cast<std::size_t>(access.bytes());
    if (!request_.writing && !access.empty()) {
      // A direct read counted what it found; otherwise the file's size
      // tells where the data ended.
      moved = static_cast<std::size_t>(!layout_ && direct_bytes_read_
                                           ? *direct_bytes_read_
                                           : access.bytes_before(context_.file_.size()));
    }
  } catch (...) {
    outcome = std::current_exception();
  }
  account(kAgree, agree_begin, -1);

  OperationStatistics statistics;
  statistics.sequence = sequence_;
  statistics.writing = request_.writing;
  statistics.bytes = request_.access.bytes();
  statistics.seconds = static_cast<double>(now_ns() - started_ns_) * 1e-9;
  statistics.aggregators = static_cast<int>(request_.settings.aggregator_ranks.size());
  statistics.aggregator = slot_ >= 0;
  statistics.iterations =
      static_cast<std::int64_t>(client_items_.size() + windows_.size() + rounds_.size());
  if (!layout_) {
    // Direct mode: every process with data accessed the file itself, in
    // one pass.
    statistics.aggregators =
        static_cast<int>(std::count_if(summaries_.begin(), summaries_.end(),
                                       [](const core::AccessSummary& s) { return s.bytes > 0; }));
    statistics.aggregator = direct_;
    statistics.iterations = direct_ ? 1 : 0;
  }
  statistics.realm_policy = core::realm_policy_name(request_.settings.realms.policy);
  for (const std::string& method : methods_) {
    statistics.method += (statistics.method.empty() ? "" : "+") + method;
  }
  statistics.exchange = request_.settings.alltoallw ? "alltoallw" : "point_to_point";
  statistics.read_access = request_.settings.window_io.file_readable;
  for (int stage = 0; stage < kStages; ++stage) {
    const StageCounters& counters = stages_[stage];
    statistics.stages.push_back(StageStatistics{
        kStageNames[stage], static_cast<double>(counters.nanoseconds.load()) * 1e-9,
        counters.bytes.load(), counters.messages.load(), counters.io_requests.load()});
  }
  context_.log(std::move(statistics));

  client_items_.clear();
  windows_.clear();
  rounds_.clear();
  clients_.clear();
  if (outcome) {
    promise_.set_exception(outcome);
  } else {
    promise_.set_value(moved);
  }
  context_.data_phase_done();
  std::function<void()> on_done = std::move(on_done_);
  self_.reset();  // may destroy this
  on_done();
}

Future<std::size_t> start_collective(CollectiveContext& context, CollectiveRequest request,
                                     std::function<void()> on_done) {
  auto operation =
      std::make_shared<CollectiveOperation>(context, std::move(request), std::move(on_done));
  return operation->start();
}

}  // namespace flowio::runtime
