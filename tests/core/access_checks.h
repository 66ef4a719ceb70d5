// Helpers shared by the tests of Access and of its metadata encoding (and
// the object set and remap tests, for random filetypes): random views and
// filetypes a view accepts, the true pieces of a stream range, and a check of every
// query an Access answers against a byte-by-byte model of its data.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "tests/support/random_types.h"

namespace flowio::core::testing {

// Pieces sorted by offset with touching neighbours joined: the one true
// piece list of a set of bytes.
inline std::vector<Piece> joined(const std::vector<Piece>& pieces) {
  std::vector<Piece> out;
  for (const Piece& piece : pieces) {
    if (!out.empty() && out.back().offset + out.back().length == piece.offset) {
      out.back().length += piece.length;
    } else {
      out.push_back(piece);
    }
  }
  return out;
}

// The file pieces of stream bytes [stream_begin, stream_end) of `view`,
// joined.
inline std::vector<Piece> view_pieces(const FileView& view, std::int64_t stream_begin,
                                      std::int64_t stream_end) {
  std::vector<Piece> pieces;
  if (stream_end <= stream_begin) return pieces;
  PieceCursor cursor = view.file_pieces(stream_begin);
  std::int64_t remaining = stream_end - stream_begin;
  Piece batch[64];
  while (remaining > 0) {
    const std::size_t n = cursor.next(batch, remaining);
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) {
      pieces.push_back(batch[i]);
      remaining -= batch[i].length;
    }
  }
  return joined(pieces);
}

// Whether `type`'s tiles overlap: a few of the generator's "monotone"
// types have an extent below their true extent, and FileView rightly
// refuses them. A refusal of any other type is an error.
inline bool tiles_overlap(MPI_Datatype type) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  return extent < true_extent;
}

// A random monotone filetype (with data, at most `max_bytes` of it) that a
// view with displacement 0 and etype MPI_BYTE accepts; types whose tiles
// overlap are drawn again. The caller frees it; `description` says what it
// is.
inline MPI_Datatype accepted_filetype(std::mt19937_64& rng, std::int64_t max_bytes,
                                      std::string& description) {
  for (;;) {
    MPI_Datatype type = flowio::testing::random_datatype(rng, flowio::testing::TypeShape::monotone,
                                                         max_bytes, &description);
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if (size > 0) {
      try {
        const FileView check(0, MPI_BYTE, type);
        return type;
      } catch (const flowio::UsageError&) {
        if (!tiles_overlap(type)) {
          MPI_Type_free(&type);
          throw;
        }
      }
    }
    MPI_Type_free(&type);
  }
}

// A view over a random monotone filetype (with data) that FileView
// accepts, a random displacement and MPI_BYTE or MPI_INT as etype.
struct RandomView {
  std::shared_ptr<const FileView> view;
  std::int64_t filetype_size = 0;
  std::string description;
};

inline RandomView random_view(std::mt19937_64& rng, std::int64_t max_bytes = 2048) {
  RandomView out;
  while (!out.view) {
    MPI_Datatype type = flowio::testing::random_datatype(rng, flowio::testing::TypeShape::monotone,
                                                         max_bytes, &out.description);
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if (size > 0) {
      const std::int64_t displacement = static_cast<std::int64_t>(rng() % 100);
      const MPI_Datatype etype = size % 4 == 0 && rng() % 2 == 0 ? MPI_INT : MPI_BYTE;
      try {
        out.view = std::make_shared<const FileView>(displacement, etype, type);
      } catch (const flowio::UsageError&) {
        if (!tiles_overlap(type)) {
          MPI_Type_free(&type);
          throw;
        }
      }
      out.filetype_size = size;
      out.description += " displacement " + std::to_string(displacement) +
                         (etype == MPI_INT ? " etype INT" : " etype BYTE");
    }
    MPI_Type_free(&type);
  }
  return out;
}

// A random stream range [begin, end) of a view whose filetype holds
// `filetype_size` bytes: it starts within the first three filetypes and
// spans up to three more. Empty ranges come up only when `may_be_empty`.
struct StreamRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

inline StreamRange random_stream_range(std::mt19937_64& rng, std::int64_t filetype_size,
                                       bool may_be_empty) {
  const auto below = [&rng](std::int64_t bound) {
    return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bound));
  };
  const std::int64_t begin = below(3 * filetype_size);
  const std::int64_t length =
      may_be_empty ? below(3 * filetype_size + 1) : below(3 * filetype_size) + 1;
  return {begin, begin + length};
}

// Compares every answer of `access` with the model of its data, `truth`
// (sorted, not overlapping, touching pieces joined): bytes, extent, the
// piece estimate, bytes_before, offset_of, next_data_at_or_after and
// for_each_piece over random and boundary offsets. Returns the first
// disagreement, or "" when there is none.
inline std::string check_access(const Access& access, const std::vector<Piece>& truth,
                                std::mt19937_64& rng) {
  // The file offset of every data byte, in stream order: small enough for
  // the sizes these tests use, and obviously right.
  std::vector<std::int64_t> data;
  for (const Piece& piece : truth) {
    for (std::int64_t i = 0; i < piece.length; ++i) data.push_back(piece.offset + i);
  }
  const auto bytes = static_cast<std::int64_t>(data.size());
  const std::int64_t file_begin = data.empty() ? 0 : data.front();
  const std::int64_t file_end = data.empty() ? 0 : data.back() + 1;
  const auto describe = [](std::int64_t got, std::int64_t expected) {
    return ": got " + std::to_string(got) + ", expected " + std::to_string(expected);
  };
  if (access.bytes() != bytes) return "bytes()" + describe(access.bytes(), bytes);
  if (access.empty() != (bytes == 0)) return "empty() disagrees with bytes()";
  if (access.file_begin() != file_begin) {
    return "file_begin()" + describe(access.file_begin(), file_begin);
  }
  if (access.file_end() != file_end) return "file_end()" + describe(access.file_end(), file_end);
  if (access.estimated_pieces() < static_cast<std::int64_t>(truth.size())) {
    return "estimated_pieces()" + describe(access.estimated_pieces(), std::ssize(truth)) +
           " or more";
  }

  // Offsets probed: every one near the data when the extent is small,
  // otherwise the edges of the pieces (of 1000 random ones when there are
  // more) and random offsets.
  std::vector<std::int64_t> probes;
  const std::int64_t low = file_begin - 3, high = file_end + 3;
  if (high - low <= 4096) {
    for (std::int64_t x = low; x <= high; ++x) probes.push_back(x);
  } else {
    std::vector<Piece> edges = truth;
    if (edges.size() > 1000) {
      std::shuffle(edges.begin(), edges.end(), rng);
      edges.resize(1000);
    }
    for (const Piece& piece : edges) {
      for (std::int64_t x : {piece.offset - 1, piece.offset, piece.offset + 1,
                             piece.offset + piece.length - 1, piece.offset + piece.length}) {
        probes.push_back(x);
      }
    }
    std::uniform_int_distribution<std::int64_t> any(low, high);
    for (int i = 0; i < 2000; ++i) probes.push_back(any(rng));
  }
  for (std::int64_t x : probes) {
    const auto at_or_after = std::lower_bound(data.begin(), data.end(), x);
    const std::int64_t below = at_or_after - data.begin();
    if (access.bytes_before(x) != below) {
      return "bytes_before(" + std::to_string(x) + ")" + describe(access.bytes_before(x), below);
    }
    const std::int64_t next = at_or_after == data.end() ? file_end : *at_or_after;
    if (access.next_data_at_or_after(x) != next) {
      return "next_data_at_or_after(" + std::to_string(x) + ")" +
             describe(access.next_data_at_or_after(x), next);
    }
  }

  std::vector<std::int64_t> positions;
  if (bytes <= 4096) {
    for (std::int64_t n = 0; n < bytes; ++n) positions.push_back(n);
  } else {
    std::uniform_int_distribution<std::int64_t> any(0, bytes - 1);
    for (int i = 0; i < 2000; ++i) positions.push_back(any(rng));
    positions.push_back(bytes - 1);
  }
  for (std::int64_t n : positions) {
    if (access.offset_of(n) != data[static_cast<std::size_t>(n)]) {
      return "offset_of(" + std::to_string(n) + ")" +
             describe(access.offset_of(n), data[static_cast<std::size_t>(n)]);
    }
  }

  // for_each_piece over random ranges, some empty or reversed, some
  // reaching past the data on either side, and over the whole extent.
  std::uniform_int_distribution<std::int64_t> any(low - 10, high + 10);
  for (int range = 0; range < 40; ++range) {
    std::int64_t from = any(rng), to = any(rng);
    if (range == 0) from = file_begin, to = file_end;
    if (range > 2 && from > to) std::swap(from, to);
    std::vector<Piece> expected;
    for (const Piece& piece : truth) {
      const std::int64_t begin = std::max(piece.offset, from);
      const std::int64_t end = std::min(piece.offset + piece.length, to);
      if (begin < end) expected.push_back(Piece{begin, end - begin});
    }
    std::vector<Piece> visited;
    access.for_each_piece(from, to, [&](const Piece& piece) { visited.push_back(piece); });
    const std::string where =
        "for_each_piece(" + std::to_string(from) + ", " + std::to_string(to) + ")";
    for (std::size_t i = 0; i < visited.size(); ++i) {
      if (visited[i].length <= 0) return where + ": an empty piece";
      if (i > 0 && visited[i].offset < visited[i - 1].offset + visited[i - 1].length) {
        return where + ": pieces out of order or overlapping";
      }
    }
    const std::vector<Piece> got = joined(visited);
    if (got != expected) {
      std::string text = where + ": got";
      for (const Piece& p : got)
        text += " [" + std::to_string(p.offset) + "+" + std::to_string(p.length) + "]";
      text += ", expected";
      for (const Piece& p : expected)
        text += " [" + std::to_string(p.offset) + "+" + std::to_string(p.length) + "]";
      return text;
    }
  }
  return "";
}

}  // namespace flowio::core::testing
