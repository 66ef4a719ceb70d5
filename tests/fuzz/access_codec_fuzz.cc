// Fuzz target: the metadata decoder (exchange/access_codec.h), which reads
// words as if from a peer. Whatever the words, decode_access must either
// refuse them with a flowio::Error or return an Access that keeps the
// promises the rest of flowio relies on: non-negative offsets, pieces in
// increasing order that do not overlap, counts that add up, and queries
// that answer without reading outside what was decoded. Sanitizers catch
// any read past the words.
#include <cstdint>
#include <exception>
#include <vector>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/core/access.h"
#include "tests/fuzz/fuzz_input.h"

namespace flowio::fuzz {
namespace {

// Thrown by a visitor to stop walking a large access early.
struct EnoughPieces {};

// Walks at most `most` pieces of the access's range [begin, end) and
// checks their order; returns the bytes they hold.
std::int64_t walk(const core::Access& access, std::int64_t begin, std::int64_t end,
                  std::int64_t most, bool& complete) {
  std::int64_t seen = 0, bytes = 0, last_end = -1;
  complete = true;
  try {
    access.for_each_piece(begin, end, [&](core::Piece piece) {
      if (piece.length <= 0) finding("an empty or negative piece");
      if (piece.offset < 0) finding("a piece at a negative offset");
      if (piece.offset < last_end) finding("pieces out of order or overlapping");
      if (piece.offset < begin || piece.offset + piece.length > end) {
        finding("a piece outside the range asked for");
      }
      last_end = piece.offset + piece.length;
      bytes += piece.length;
      if (++seen >= most) throw EnoughPieces{};
    });
  } catch (const EnoughPieces&) {
    complete = false;
  }
  return bytes;
}

void check(const core::Access& access, FuzzInput& in) {
  const std::int64_t bytes = access.bytes();
  if (bytes < 0) finding("negative bytes");
  if (access.empty()) return;
  const std::int64_t begin = access.file_begin(), end = access.file_end();
  if (begin < 0 || end < begin) finding("file range reversed or negative");
  if (access.bytes_before(begin) != 0) finding("data before file_begin");
  if (access.bytes_before(end) != bytes) finding("bytes_before(file_end) is not bytes()");
  bool complete = false;
  const std::int64_t walked = walk(access, begin, end, 4096, complete);
  if (complete && walked != bytes) finding("the pieces do not add up to bytes()");
  // A few point queries anywhere in the range.
  for (int i = 0; i < 4; ++i) {
    const std::int64_t offset = begin + in.in_range(0, 1 << 16) % (end - begin + 1);
    const std::int64_t below = access.bytes_before(offset);
    if (below < 0 || below > bytes) finding("bytes_before out of range");
    const std::int64_t next = access.next_data_at_or_after(offset);
    if (next < offset && next != end) finding("next_data_at_or_after went backwards");
    const std::int64_t n = in.in_range(0, 1 << 16) % bytes;
    const std::int64_t at = access.offset_of(n);
    if (at < begin || at >= end) finding("offset_of outside the range");
    if (access.bytes_before(at) != n) finding("offset_of and bytes_before disagree");
  }
}

}  // namespace
}  // namespace flowio::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowio::fuzz;
  FuzzInput in(data, size);
  // The first bytes are the words, the rest drive the queries.
  std::vector<std::int64_t> words(static_cast<std::size_t>(in.in_range(0, 64)));
  for (std::int64_t& word : words) word = in.word();
  flowio::core::Access access;
  try {
    access = flowio::exchange::decode_access(words);
  } catch (const flowio::Error&) {
    return 0;  // refused: fine
  }
  try {
    check(access, in);
  } catch (const flowio::Error&) {
    finding("a decoded access threw on a query (the decoder accepted what it cannot serve)");
  }
  return 0;
}
