#include "io/iovec_cursor.h"

#include <doctest/doctest.h>

#include <array>
#include <vector>

namespace flowio::io {
namespace {

iovec piece(char* base, std::size_t length) { return {base, length}; }

}  // namespace

// An untouched cursor hands out the caller's own iovecs, without copying.
TEST_CASE("Io.IovecCursor.WholeArrayIsBorrowed") {
  std::array<char, 30> memory{};
  const std::array<iovec, 3> pieces{piece(&memory[0], 10), piece(&memory[10], 5),
                                    piece(&memory[20], 10)};
  IovecCursor cursor(pieces);
  std::vector<iovec> scratch;
  CHECK(cursor.remaining() == 25);
  const auto window = cursor.window(scratch);
  CHECK(window.data() == pieces.data());
  CHECK(window.size() == 3);
  CHECK(scratch.empty());
}

// After a short transfer the window starts at the first byte not moved.
TEST_CASE("Io.IovecCursor.PartialAdvance") {
  std::array<char, 30> memory{};
  const std::array<iovec, 3> pieces{piece(&memory[0], 10), piece(&memory[10], 5),
                                    piece(&memory[20], 10)};
  IovecCursor cursor(pieces);
  std::vector<iovec> scratch;
  cursor.advance(12);
  CHECK(cursor.remaining() == 13);
  auto window = cursor.window(scratch);
  REQUIRE(window.size() == 2);
  CHECK(window[0].iov_base == &memory[12]);
  CHECK(window[0].iov_len == 3);
  CHECK(window[1].iov_base == &memory[20]);
  CHECK(window[1].iov_len == 10);
  cursor.advance(3);  // exactly to a piece boundary: borrowed again
  window = cursor.window(scratch);
  CHECK(window.data() == &pieces[2]);
  cursor.advance(10);
  CHECK(cursor.remaining() == 0);
  CHECK(cursor.window(scratch).empty());
}

// A window never exceeds its byte limit; the last iovec is cut to fit.
TEST_CASE("Io.IovecCursor.ByteLimit") {
  std::array<char, 30> memory{};
  const std::array<iovec, 2> pieces{piece(&memory[0], 10), piece(&memory[10], 20)};
  IovecCursor cursor(pieces);
  std::vector<iovec> scratch;
  auto window = cursor.window(scratch, 16, 14);
  REQUIRE(window.size() == 2);
  CHECK(window[1].iov_len == 4);
  cursor.advance(14);
  window = cursor.window(scratch, 16, 14);
  REQUIRE(window.size() == 1);
  CHECK(window[0].iov_base == &memory[14]);
  CHECK(window[0].iov_len == 14);
  cursor.advance(14);
  window = cursor.window(scratch, 16, 14);
  REQUIRE(window.size() == 1);
  CHECK(window[0].iov_base == &memory[28]);
  CHECK(window[0].iov_len == 2);
}

// More iovecs than one call accepts are handed out in windows of the limit.
TEST_CASE("Io.IovecCursor.IovecLimit") {
  std::vector<char> memory(3000);
  std::vector<iovec> pieces;
  for (std::size_t i = 0; i < memory.size(); ++i) pieces.push_back(piece(&memory[i], 1));
  IovecCursor cursor(pieces);
  std::vector<iovec> scratch;
  std::size_t windows = 0;
  while (cursor.remaining() > 0) {
    const auto window = cursor.window(scratch);
    CHECK(window.size() <= max_iovecs_per_call);
    cursor.advance(window.size());
    ++windows;
  }
  CHECK(windows == 3);
}

// Empty pieces are skipped, so no window starts with one.
TEST_CASE("Io.IovecCursor.EmptyPieces") {
  std::array<char, 8> memory{};
  const std::array<iovec, 5> pieces{piece(&memory[0], 0), piece(&memory[0], 4),
                                    piece(&memory[4], 0), piece(&memory[4], 4),
                                    piece(&memory[8], 0)};
  IovecCursor cursor(pieces);
  std::vector<iovec> scratch;
  CHECK(cursor.remaining() == 8);
  CHECK(cursor.window(scratch).data() == &pieces[1]);
  cursor.advance(4);
  CHECK(cursor.window(scratch).data() == &pieces[3]);
  cursor.advance(4);
  CHECK(cursor.remaining() == 0);
  CHECK(cursor.window(scratch).empty());

  const std::array<iovec, 2> nothing{piece(&memory[0], 0), piece(&memory[0], 0)};
  IovecCursor empty(nothing);
  CHECK(empty.remaining() == 0);
  CHECK(empty.window(scratch).empty());
}

// Pages before the file's end are written whole; new ones 512 KiB at a
// time, and a write that only starts before the end counts as new past it.
TEST_CASE("Io.IovecCursor.WriteLimitAt") {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  CHECK(max_write_bytes_at(0, 0) == max_write_bytes_per_call);
  CHECK(max_write_bytes_at(4 * kMiB, 2 * kMiB) == max_write_bytes_per_call);
  CHECK(max_write_bytes_at(0, 2 * kMiB) == std::size_t{2} << 20);
  CHECK(max_write_bytes_at(kMiB, 3 * kMiB) == std::size_t{2} << 20);
  CHECK(max_write_bytes_at(2 * kMiB - 4096, 2 * kMiB) == max_write_bytes_per_call);
  CHECK(max_write_bytes_at(0, std::int64_t{8} << 30) == max_bytes_per_call);
}

}  // namespace flowio::io
