// Message tags of collective operations. All of a file's collective
// traffic travels on one communicator; a tag says which operation (by
// sequence number) and which message of it a point-to-point message is,
// so that several operations may be in flight at once without their
// messages meeting.
//
// Layout (MPICH guarantees tags up to 2^28 - 1): 2 bits of kind, 8 bits of
// sequence number (operations live at once on a process never share them:
// TagSequences hands out no number whose bits are still in use), 18 bits
// of index (a
// window index; two windows of one operation 2^18 apart are never in
// flight at once, and messages between two processes with one tag never
// overtake each other).
#pragma once

#include <cstdint>

namespace flowio::runtime {

enum class MessageKind { metadata = 0, data = 1, outcome = 2, announcement = 3 };

constexpr int kSequenceBits = 8;
constexpr int kIndexBits = 18;
constexpr std::uint64_t kSequencesApart = std::uint64_t{1} << kSequenceBits;

constexpr int message_tag(MessageKind kind, std::uint64_t sequence, std::int64_t index = 0) {
  const auto kind_bits = static_cast<std::uint64_t>(kind);
  const std::uint64_t sequence_bits = sequence & (kSequencesApart - 1);
  const std::uint64_t index_bits =
      static_cast<std::uint64_t>(index) & ((std::uint64_t{1} << kIndexBits) - 1);
  return static_cast<int>((kind_bits << (kSequenceBits + kIndexBits)) |
                          (sequence_bits << kIndexBits) | index_bits);
}

}  // namespace flowio::runtime
