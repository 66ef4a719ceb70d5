#include "exchange/metadata_exchange.h"

#include <algorithm>

#include "exchange/access_codec.h"
#include "flowio/error.h"

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

std::vector<MPI_Request> MetadataExchange::post(MPI_Comm comm, int tag, const core::Access& mine,
                                                std::span<const std::int64_t> view_words,
                                                const core::RealmLayout& layout,
                                                std::span<const int> aggregator_ranks, int slot,
                                                std::span<const int> client_ranks,
                                                std::span<const std::int64_t> client_words) {
  std::vector<MPI_Request> requests;
  // Sized first, so that no buffer moves once a message is posted.
  incoming_.resize(client_ranks.size());
  for (std::size_t i = 0; i < client_ranks.size(); ++i) {
    incoming_[i].resize(static_cast<std::size_t>(client_words[i]));
  }
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
    }
  }
  std::size_t next = 0;
  for (int s = 0; s < layout.slots() && !mine.empty(); ++s) {
    if (!layout.realm_meets(s, mine.file_begin(), mine.file_end())) continue;
    const std::vector<std::int64_t>& words = outgoing_[next++];
    MPI_Request request;
    check_mpi(MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T,
                        aggregator_ranks[static_cast<std::size_t>(s)], tag, comm, &request),
              "MPI_Isend");
    requests.push_back(request);
  }
  if (slot >= 0) {
    for (std::size_t i = 0; i < client_ranks.size(); ++i) {
      MPI_Request request;
      check_mpi(MPI_Irecv(incoming_[i].data(), static_cast<int>(incoming_[i].size()), MPI_INT64_T,
                          client_ranks[i], tag, comm, &request),
                "MPI_Irecv");
      requests.push_back(request);
    }
  }
  messages_ = static_cast<std::int64_t>(requests.size());
  return requests;
}

std::vector<core::Access> MetadataExchange::decode() {
  std::vector<core::Access> accesses;
  accesses.reserve(incoming_.size());
  for (const std::vector<std::int64_t>& words : incoming_) accesses.push_back(decode_access(words));
  incoming_.clear();
  outgoing_.clear();
  return accesses;
}

}  // namespace flowio::exchange
