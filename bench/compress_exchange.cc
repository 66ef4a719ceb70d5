#include "bench/compress_exchange.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>

#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/point_to_point.h"
#include "flowio/error.h"

namespace bench::compress {
namespace {

using flowio::exchange::CompressionRule;

// What the progress thread hands back to the rank's main thread: arrived
// receives and freed send buffers, and the first MPI error.
class Mailbox {
 public:
  void arrived(std::size_t receive, std::size_t payload_bytes) {
    {
      std::lock_guard lock(mutex_);
      arrivals_.push_back({receive, payload_bytes});
    }
    ready_.notify_one();
  }
  void sent(std::size_t buffer) {
    {
      std::lock_guard lock(mutex_);
      free_buffers_.push_back(buffer);
    }
    ready_.notify_one();
  }
  void failed(int code) {
    {
      std::lock_guard lock(mutex_);
      if (error_ == MPI_SUCCESS) error_ = code;
    }
    ready_.notify_one();
  }

  struct Arrival {
    std::size_t receive;
    std::size_t payload_bytes;
  };
  // Waits until there is an arrival or (if `want_buffer`) a free buffer;
  // takes all arrivals, and a buffer if asked and available.
  std::vector<Arrival> wait(bool block, bool want_buffer, std::optional<std::size_t>& buffer) {
    std::unique_lock lock(mutex_);
    if (block) {
      ready_.wait(lock, [&] {
        return error_ != MPI_SUCCESS || !arrivals_.empty() ||
               (want_buffer && !free_buffers_.empty());
      });
    }
    flowio::check_mpi(error_, "exchange harness");
    std::vector<Arrival> taken(arrivals_.begin(), arrivals_.end());
    arrivals_.clear();
    if (want_buffer && !free_buffers_.empty()) {
      buffer = free_buffers_.front();
      free_buffers_.pop_front();
    }
    return taken;
  }
  // Waits until `count` buffers are free: every send has completed.
  void wait_all_sent(std::size_t count) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return error_ != MPI_SUCCESS || free_buffers_.size() == count; });
    flowio::check_mpi(error_, "exchange harness");
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Arrival> arrivals_;
  std::deque<std::size_t> free_buffers_;
  int error_ = MPI_SUCCESS;
};

}  // namespace

std::int64_t ExchangeHarness::Message::nodes() const {
  return static_cast<std::int64_t>(end - first);
}

ExchangeHarness::~ExchangeHarness() { MPI_Comm_free(&comm_); }

ExchangeHarness::ExchangeHarness(const Mesh& mesh, int messages_in_flight,
                                 flowio::runtime::Progress& progress)
    : mesh_(mesh), messages_in_flight_(std::max(1, messages_in_flight)), progress_(progress) {
  flowio::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  local_ = mesh.local_data(rank_);
  realm_.resize(static_cast<std::size_t>((mesh.realm_end(rank_) - mesh.realm_first(rank_)) *
                                         mesh.node_bytes()));
  const int ranks = mesh.ranks();
  // Windows in order, aggregators round-robin from the next rank, so
  // that every peer gets data early.
  // A message's tag is its window's position in its realm, so that a
  // receive can only match the message it was posted for.
  std::vector<std::vector<const Window*>> by_aggregator(static_cast<std::size_t>(ranks));
  for (const Window& window : mesh.windows()) {
    by_aggregator[static_cast<std::size_t>(window.aggregator)].push_back(&window);
  }
  for (const auto& list : by_aggregator) {
    if (list.size() > 32767) {
      throw std::invalid_argument("exchange harness: more than 32767 windows in a realm");
    }
  }
  std::size_t most = 0;
  for (const auto& list : by_aggregator) most = std::max(most, list.size());
  for (std::size_t index = 0; index < most; ++index) {
    for (int step = 1; step < ranks; ++step) {
      const int peer = (rank_ + step) % ranks;
      const auto& list = by_aggregator[static_cast<std::size_t>(peer)];
      if (index >= list.size()) continue;
      const auto [first, end] = mesh.local_range(rank_, *list[index]);
      if (end > first) sends_.push_back({peer, static_cast<int>(index), first, end});
    }
  }
  const auto& mine = by_aggregator[static_cast<std::size_t>(rank_)];
  for (std::size_t index = 0; index < mine.size(); ++index) {
    for (int client = 0; client < ranks; ++client) {
      const auto [first, end] = mesh.local_range(client, *mine[index]);
      if (end == first) continue;
      (client == rank_ ? own_ : receives_).push_back({client, static_cast<int>(index), first, end});
    }
  }
}

std::int64_t ExchangeHarness::realm_offset() const {
  return mesh_.realm_first(rank_) * mesh_.node_bytes();
}

void ExchangeHarness::scatter(int client, const Message& message, const std::byte* data) {
  const std::vector<std::int64_t>& nodes = mesh_.nodes_of(client);
  const std::int64_t node_bytes = mesh_.node_bytes();
  const std::int64_t realm_first = mesh_.realm_first(rank_);
  for (std::size_t i = message.first; i < message.end; ++i) {
    std::memcpy(realm_.data() + (nodes[i] - realm_first) * node_bytes,
                data + static_cast<std::int64_t>(i - message.first) * node_bytes,
                static_cast<std::size_t>(node_bytes));
  }
}

void ExchangeHarness::run(CompressionRule& rule, flowio::CompressionStatistics& totals) {
  namespace ex = flowio::exchange;
  const double started = ex::compress_stage_clock();
  const std::int64_t node_bytes = mesh_.node_bytes();
  ex::CompressStage stage(rule);  // the whole exchange is one stage
  flowio::CompressionStatistics statistics;
  Mailbox mailbox;

  // Receives first, each watched on its own so that it is handled as
  // soon as it arrives: the frame's header into `headers`, its payload
  // into `regions`, where the raw message belongs.
  std::vector<std::array<std::byte, ex::kFrameHeaderBytes>> headers(receives_.size());
  std::vector<std::vector<std::byte>> regions(receives_.size());
  for (std::size_t i = 0; i < receives_.size(); ++i) {
    const Message& message = receives_[i];
    regions[i].resize(static_cast<std::size_t>(message.nodes() * node_bytes));
    std::vector<MPI_Request> requests;
    ex::post_framed_receive(comm_, headers[i].data(), regions[i].data(),
                            static_cast<std::int64_t>(regions[i].size()), message.peer, message.tag,
                            requests);
    progress_.watch(std::move(requests),
                    [&mailbox, i](int code, std::span<const MPI_Status> statuses) {
                      if (code != MPI_SUCCESS) return mailbox.failed(code);
                      int count = 0;  // of the payload, the second message
                      MPI_Get_count(&statuses[1], MPI_BYTE, &count);
                      mailbox.arrived(i, static_cast<std::size_t>(count));
                    });
  }

  for (const Message& message : own_) {
    scatter(rank_, message, local_.data() + message.first * static_cast<std::size_t>(node_bytes));
  }

  // Receive -> decompress -> unpack (scatter into the realm).
  std::size_t received = 0;
  const auto handle = [&](const std::vector<Mailbox::Arrival>& arrivals) {
    for (const Mailbox::Arrival& arrival : arrivals) {
      const std::size_t i = arrival.receive;
      const std::size_t got =
          stage.decode(headers[i], regions[i], arrival.payload_bytes, scratch_, statistics);
      if (got != regions[i].size()) {
        throw ex::MalformedMessage("a message of " + std::to_string(got) + " bytes, " +
                                   std::to_string(regions[i].size()) + " expected");
      }
      scatter(receives_[i].peer, receives_[i], regions[i].data());
      ++received;
    }
  };

  // Per message in flight: its header and a spare buffer to compress into.
  // A client's nodes of a window are contiguous in its local data, which
  // raw messages are sent from (the pack has nothing to do).
  const std::size_t slots =
      std::min<std::size_t>(static_cast<std::size_t>(messages_in_flight_), sends_.size());
  std::vector<ex::CompressStage::Outgoing> outgoing(slots);
  std::vector<std::vector<std::byte>> spare(slots);
  for (std::size_t slot = 0; slot < slots; ++slot) mailbox.sent(slot);

  // Compress (or not) -> send.
  const std::int64_t depth = static_cast<std::int64_t>(sends_.size());
  for (const Message& message : sends_) {
    std::optional<std::size_t> slot;
    while (!slot) handle(mailbox.wait(true, true, slot));
    const std::span<const std::byte> data(
        local_.data() + message.first * static_cast<std::size_t>(node_bytes),
        static_cast<std::size_t>(message.nodes() * node_bytes));
    ex::CompressStage::Outgoing& frame = outgoing[*slot];
    frame = stage.encode(message.peer, data, spare[*slot], depth, statistics);
    std::vector<MPI_Request> requests;
    const double posted = ex::compress_stage_clock();
    ex::post_framed_send(comm_, frame.header.data(), frame.payload.data(),
                         static_cast<std::int64_t>(frame.payload.size()), message.peer, message.tag,
                         requests);
    const int peer = message.peer;
    const std::size_t used = *slot;
    progress_.watch(std::move(requests), [&mailbox, &stage, &frame, peer, used, posted](
                                             int code, std::span<const MPI_Status>) {
      if (code != MPI_SUCCESS) return mailbox.failed(code);
      stage.record_send(peer, frame, posted, ex::compress_stage_clock());
      mailbox.sent(used);
    });
  }
  while (received < receives_.size()) {
    std::optional<std::size_t> unused;
    handle(mailbox.wait(true, false, unused));
  }
  mailbox.wait_all_sent(slots);
  stage.finish(ex::compress_stage_clock() - started, statistics);
  ex::add_statistics(totals, statistics);
}

bool ExchangeHarness::realm_is_correct() const {
  const std::int64_t node_bytes = mesh_.node_bytes();
  std::vector<std::byte> expected(static_cast<std::size_t>(node_bytes));
  for (std::int64_t node = mesh_.realm_first(rank_); node < mesh_.realm_end(rank_); ++node) {
    mesh_.node_values(node, expected.data());
    if (std::memcmp(expected.data(), realm_.data() + (node - mesh_.realm_first(rank_)) * node_bytes,
                    static_cast<std::size_t>(node_bytes)) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace bench::compress
