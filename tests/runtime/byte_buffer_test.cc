// ByteBuffer: large buffers come back from the process's two-phase pool
// with their pages still mapped, small ones are plain allocations.
#include "runtime/stages/byte_buffer.h"

#include <doctest/doctest.h>

#include <cstring>
#include <utility>

using flowio::runtime::ByteBuffer;
using flowio::runtime::two_phase_buffers;

// A window-sized buffer released goes to the pool, and the next one of a
// size it fits is the same memory.
TEST_CASE("Runtime.ByteBuffer.LargeBuffersAreRecycled") {
  const std::size_t window = 4 * 1024 * 1024;
  const std::size_t kept_before = two_phase_buffers().kept_bytes();
  char* first = nullptr;
  {
    ByteBuffer buffer;
    buffer.allocate(window);
    REQUIRE(buffer.data() != nullptr);
    CHECK(buffer.size() == window);
    std::memset(buffer.data(), 1, window);
    first = buffer.data();
    buffer.release();
    CHECK(buffer.data() == nullptr);
    CHECK(buffer.empty());
    CHECK(two_phase_buffers().kept_bytes() == kept_before + window);
  }
  ByteBuffer again;
  again.allocate(window - 4096);
  CHECK(again.data() == first);
  CHECK(again.size() == window - 4096);
  CHECK(two_phase_buffers().kept_bytes() == kept_before);
  // Moved, the memory goes with it; destroyed, it goes back.
  {
    ByteBuffer moved = std::move(again);
    CHECK(moved.data() == first);
  }
  CHECK(two_phase_buffers().kept_bytes() == kept_before + window);
}

// Below the threshold nothing is kept: a small call's buffers cost no
// lock and hold no memory after it.
TEST_CASE("Runtime.ByteBuffer.SmallBuffersAreNotKept") {
  const std::size_t kept_before = two_phase_buffers().kept_bytes();
  ByteBuffer buffer;
  buffer.allocate(ByteBuffer::kRecycledFromBytes - 1);
  REQUIRE(buffer.data() != nullptr);
  std::memset(buffer.data(), 2, buffer.size());
  buffer.release();
  CHECK(two_phase_buffers().kept_bytes() == kept_before);
  // Allocating again replaces the room: the large one goes back at once.
  buffer.allocate(ByteBuffer::kRecycledFromBytes);
  const std::size_t kept_while_leased = two_phase_buffers().kept_bytes();
  buffer.allocate(16);
  CHECK(two_phase_buffers().kept_bytes() > kept_while_leased);
  CHECK(buffer.size() == 16);
}
