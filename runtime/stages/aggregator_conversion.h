// Who converts a collective write's data to the file's data
// representation: the client, before it sends each message (the convert
// stage, pack_stage.cc), or its aggregator, on the way of the window
// to the file (io/window_io.h, WindowPiece::reversed_unit).
//
// Why the aggregator: a native client sends straight from the user's
// memory, while a client that converts first makes one more pass over
// its data, into a buffer larger than any cache; on a node whose cores
// are all busy that pass was what kept external32 writes under 0.9x of
// native (6ba8c59:bench/README.md, "external32 against native"). An aggregator
// writes its window through a cache-sized buffer instead, converting
// each part of it just before it goes to the file: a pass in cache.
//
// When: the conversion only reverses the byte order of units of one size
// (StreamConversion::reversed_unit: external32 with every element a type
// of that unit, e.g. all doubles), and the message begins and ends on a
// unit boundary of the client's stream, so that its bytes are whole units
// whatever the file pieces cut them into. Point-to-point exchange only:
// Alltoallw rounds (round_stage.cc) keep the client's conversion. Reads
// keep it too. Each process announces its unit with its call
// (Announcement::reversed_unit); client and aggregator then answer alike
// for each message, since both know its place in the client's stream.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/stages/announcement_exchange.h"

namespace flowio::runtime {

struct CollectiveRequest;

// What this process announces (Announcement::reversed_unit) for `request`.
std::int32_t reversed_unit_to_announce(const CollectiveRequest& request);

// The unit in which the aggregator converts `client_rank`'s message of
// bytes [from, from + bytes) of its stream, or 0 when the client
// converts it (or nothing needs converting); `announcements` are the
// call's, `request` this process's.
std::int32_t aggregator_unit(std::span<const Announcement> announcements,
                             const CollectiveRequest& request, int client_rank, std::int64_t from,
                             std::int64_t bytes);

}  // namespace flowio::runtime
