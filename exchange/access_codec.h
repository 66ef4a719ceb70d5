// Metadata encoding: an Access as a flat array of 64-bit words, to be sent
// from a client to an aggregator. A view-based access is sent as its
// flattened filetype (size proportional to the filetype's distinct nodes
// and blocks, not to the number of pieces); the client may instead send the
// explicit pieces that fall into the aggregator's realm, when that is
// smaller.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/access.h"

namespace flowio::exchange {

// Words encoding a view-based access (view + stream range).
std::vector<std::int64_t> encode_view_access(const core::Access& access);
// Words encoding an explicit list of pieces.
std::vector<std::int64_t> encode_pieces(std::span<const core::Piece> pieces);

// Rebuilds an Access from either encoding. The words come from another
// process and are checked as input: an encoding that set_view or a client
// could not have produced (pieces out of order or overlapping, a filetype
// that decreases, overlaps or has no data, negative offsets or sizes,
// offsets past 2^61) throws MpiError or UsageError; nothing is read past
// `words`.
core::Access decode_access(std::span<const std::int64_t> words);

}  // namespace flowio::exchange
