#include "exchange/metadata_exchange.h"

#include <algorithm>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/core/injection_point.h"

namespace flowio::exchange {
namespace {

// Views whose description is at most this many words are always sent as
// the view: walking the pieces to compare would cost more than it saves.
constexpr std::size_t kAlwaysSendViewWords = 256;

// The pieces of `access` cut at window boundaries and grouped by the slot
// whose realm holds them, touching pieces joined.
std::vector<std::vector<core::Piece>> pieces_by_slot(const core::Access& access,
                                                     const core::RealmLayout& layout) {
  std::vector<std::vector<core::Piece>> lists(static_cast<std::size_t>(layout.slots()));
  access.for_each_piece(access.file_begin(), access.file_end(), [&](core::Piece piece) {
    while (piece.length > 0) {
      const core::Window window = layout.window_at(piece.offset);
      const std::int64_t take = std::min(piece.offset + piece.length, window.end) - piece.offset;
      std::vector<core::Piece>& list = lists[static_cast<std::size_t>(window.slot)];
      if (!list.empty() && list.back().offset + list.back().length == piece.offset) {
        list.back().length += take;
      } else {
        list.push_back(core::Piece{piece.offset, take});
      }
      piece.offset += take;
      piece.length -= take;
    }
  });
  return lists;
}

}  // namespace

std::vector<MPI_Request> MetadataExchange::post(
    MPI_Comm comm, int tag, const core::Access& mine, std::span<const std::int64_t> view_words,
    const core::RealmLayout& layout, std::span<const int> aggregator_ranks, int slot,
    std::span<const int> client_ranks, std::span<const std::int64_t> client_words,
    CompressStage* frames, CompressionStatistics& statistics) {
  std::vector<MPI_Request> requests;
  frames_ = frames;
  statistics_ = &statistics;
  // Sized first, so that no buffer moves once a message is posted.
  incoming_words_.assign(client_words.begin(), client_words.end());
  if (frames_ != nullptr) {
    incoming_frames_.resize(client_ranks.size());
    for (std::size_t i = 0; i < client_ranks.size(); ++i) {
      incoming_frames_[i].resize(
          frame_bound(static_cast<std::size_t>(client_words[i]) * sizeof(std::int64_t)));
    }
  } else {
    incoming_.resize(client_ranks.size());
    for (std::size_t i = 0; i < client_ranks.size(); ++i) {
      incoming_[i].resize(static_cast<std::size_t>(client_words[i]));
    }
  }
  // Every buffer is made before the first message is posted, so that a
  // failed allocation leaves nothing in flight.
  std::vector<int> destinations;
  if (!mine.empty()) {
    std::vector<std::vector<core::Piece>> pieces;
    if (view_words.size() > kAlwaysSendViewWords) pieces = pieces_by_slot(mine, layout);
    for (int s = 0; s < layout.slots(); ++s) {
      if (!layout.realm_meets(s, mine.file_begin(), mine.file_end())) continue;
      const auto index = static_cast<std::size_t>(s);
      const bool as_list = !pieces.empty() && 2 * pieces[index].size() + 2 < view_words.size();
      outgoing_.push_back(as_list
                              ? encode_pieces(pieces[index])
                              : std::vector<std::int64_t>(view_words.begin(), view_words.end()));
      destinations.push_back(aggregator_ranks[index]);
    }
  }
  if (frames_ != nullptr) {
    for (std::size_t i = 0; i < outgoing_.size(); ++i) {
      outgoing_frames_.push_back(frames_->encode_words(
          destinations[i], outgoing_[i], static_cast<std::int64_t>(outgoing_.size()), statistics));
    }
  }
  requests.reserve(outgoing_.size() + (slot >= 0 ? client_ranks.size() : 0));
  for (std::size_t i = 0; i < outgoing_.size(); ++i) {
    MPI_Request request;
    if (frames_ != nullptr) {
      const std::vector<std::byte>& frame = outgoing_frames_[i];
      check_mpi(MPI_Isend_c(frame.data(), static_cast<MPI_Count>(frame.size()), MPI_BYTE,
                            destinations[i], tag, comm, &request),
                "MPI_Isend_c");
    } else {
      const std::vector<std::int64_t>& words = outgoing_[i];
      check_mpi(MPI_Isend_c(words.data(), static_cast<MPI_Count>(words.size()), MPI_INT64_T,
                            destinations[i], tag, comm, &request),
                "MPI_Isend_c");
    }
    requests.push_back(request);
  }
  sends_ = requests.size();
  if (slot >= 0) {
    for (std::size_t i = 0; i < client_ranks.size(); ++i) {
      MPI_Request request;
      if (frames_ != nullptr) {
        check_mpi(MPI_Irecv_c(incoming_frames_[i].data(),
                              static_cast<MPI_Count>(incoming_frames_[i].size()), MPI_BYTE,
                              client_ranks[i], tag, comm, &request),
                  "MPI_Irecv_c");
      } else {
        check_mpi(MPI_Irecv_c(incoming_[i].data(), static_cast<MPI_Count>(incoming_[i].size()),
                              MPI_INT64_T, client_ranks[i], tag, comm, &request),
                  "MPI_Irecv_c");
      }
      requests.push_back(request);
    }
  }
  messages_ = static_cast<std::int64_t>(requests.size());
  return requests;
}

bool MetadataExchange::every_description_came() const {
  return std::none_of(incoming_lengths_.begin(), incoming_lengths_.end(),
                      [](std::size_t bytes) { return bytes <= kMostNoticeBytes; });
}

bool MetadataExchange::description_came(std::size_t client) const {
  return client >= incoming_lengths_.size() || incoming_lengths_[client] > kMostNoticeBytes;
}

std::size_t MetadataExchange::wire_bytes(std::int64_t words, bool framed) {
  const auto bytes = static_cast<std::size_t>(words) * sizeof(std::int64_t);
  return framed ? frame_bound(bytes) : bytes;
}

void MetadataExchange::received(std::span<const MPI_Status> statuses) {
  incoming_lengths_.clear();
  for (std::size_t i = sends_; i < statuses.size(); ++i) {
    MPI_Count count = 0;
    MPI_Get_count_c(&statuses[i], MPI_BYTE, &count);
    incoming_lengths_.push_back(static_cast<std::size_t>(count));
  }
}

std::vector<core::Access> MetadataExchange::decode() {
  std::vector<core::Access> accesses;
  accesses.reserve(incoming_words_.size());
  if (frames_ != nullptr) {
    if (incoming_lengths_.size() != incoming_frames_.size()) {
      throw MpiError("metadata exchange: received() not called with every status", 0);
    }
    for (std::size_t i = 0; i < incoming_frames_.size(); ++i) {
      const std::vector<std::int64_t> words = frames_->decode_words(
          std::span<const std::byte>(incoming_frames_[i]).first(incoming_lengths_[i]),
          static_cast<std::size_t>(incoming_words_[i]), *statistics_);
      accesses.push_back(decode_access(words));
      if (i == 0) core::injection_point("collective.metadata_decode");
    }
  } else {
    for (const std::vector<std::int64_t>& words : incoming_) {
      accesses.push_back(decode_access(words));
      if (accesses.size() == 1) core::injection_point("collective.metadata_decode");
    }
  }
  incoming_.clear();
  outgoing_.clear();
  incoming_frames_.clear();
  outgoing_frames_.clear();
  return accesses;
}

}  // namespace flowio::exchange
