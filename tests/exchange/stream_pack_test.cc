// Stream packing: pack_stream and unpack_stream of any range of a typed
// buffer's stream agree with MPI_Pack and MPI_Unpack of the whole buffer,
// and touch nothing outside the range; pack_stream_reversing and
// unpack_stream_reversing do the same with every unit reversed.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "exchange/stream_pack.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "tests/support/random_types.h"

namespace {

using flowio::core::FlatType;
using flowio::core::MemoryLayout;

// A buffer holding `count` copies of `type`, with a margin on each side,
// filled with random bytes.
class TypedBuffer {
 public:
  TypedBuffer(MPI_Datatype type, int count, std::mt19937_64& rng) {
    MPI_Count lb, extent, true_lb, true_extent;
    MPI_Type_get_extent_x(type, &lb, &extent);
    MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    const std::int64_t last = static_cast<std::int64_t>(count - 1) * extent;
    const std::int64_t low = true_lb + std::min<std::int64_t>(0, last);
    const std::int64_t high = true_lb + true_extent + std::max<std::int64_t>(0, last);
    bytes_.resize(static_cast<std::size_t>(high - low + 2 * kMargin));
    for (char& byte : bytes_) byte = static_cast<char>(rng());
    origin_ = reinterpret_cast<std::intptr_t>(bytes_.data()) + kMargin - low;
  }

  void* origin() const { return reinterpret_cast<void*>(origin_); }
  std::int64_t address() const { return static_cast<std::int64_t>(origin_); }
  const std::vector<char>& bytes() const { return bytes_; }

  // A copy with the same contents; its origin moves with it.
  TypedBuffer(const TypedBuffer& other)
      : bytes_(other.bytes_),
        origin_(reinterpret_cast<std::intptr_t>(bytes_.data()) +
                (other.origin_ - reinterpret_cast<std::intptr_t>(other.bytes_.data()))) {}
  TypedBuffer& operator=(const TypedBuffer&) = delete;

 private:
  static constexpr std::int64_t kMargin = 16;
  std::vector<char> bytes_;
  std::intptr_t origin_ = 0;
};

// Packs and unpacks random ranges of the stream of `count` copies of
// `type` and compares with MPI.
void check_type(MPI_Datatype type, int count, std::mt19937_64& rng) {
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  const std::int64_t total = size * count;
  const FlatType flat = flowio::core::flatten(type);
  const TypedBuffer original(type, count, rng);

  std::vector<char> packed(static_cast<std::size_t>(total) + 1);
  int position = 0;
  MPI_Pack(original.origin(), count, type, packed.data(), static_cast<int>(packed.size()),
           &position, MPI_COMM_SELF);
  REQUIRE(position == total);

  for (int range = 0; range < 12; ++range) {
    std::int64_t from = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total + 1));
    std::int64_t bytes =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total - from + 1));
    if (range == 0) from = 0, bytes = total;
    CAPTURE(from);
    CAPTURE(bytes);

    // Pack into a guarded message buffer.
    std::vector<char> message(static_cast<std::size_t>(bytes) + 2, '\x5a');
    const MemoryLayout memory{&flat, count, original.address()};
    flowio::exchange::pack_stream(memory, from, bytes, message.data() + 1);
    CHECK(std::equal(message.begin() + 1, message.end() - 1, packed.begin() + from));
    CHECK(message.front() == '\x5a');
    CHECK(message.back() == '\x5a');

    // Reversing units on the way: the packed bytes, each unit reversed, for
    // the unit-aligned part of the range (units cross memory pieces here).
    for (const std::int64_t unit : {2, 4, 8, 16}) {
      CAPTURE(unit);
      const std::int64_t unit_from = (from + unit - 1) / unit * unit;
      const std::int64_t unit_bytes =
          std::max<std::int64_t>(0, from + bytes - unit_from) / unit * unit;
      std::vector<char> reversed(static_cast<std::size_t>(unit_bytes) + 2, '\x5a');
      flowio::exchange::pack_stream_reversing(memory, unit_from, unit_bytes, unit,
                                              reversed.data() + 1);
      std::vector<char> want(static_cast<std::size_t>(unit_bytes));
      for (std::int64_t i = 0; i < unit_bytes; ++i) {
        const std::int64_t unit_begin = unit_from + i / unit * unit;
        want[static_cast<std::size_t>(i)] =
            packed[static_cast<std::size_t>(unit_begin + unit - 1 - i % unit)];
      }
      CHECK(std::equal(reversed.begin() + 1, reversed.end() - 1, want.begin()));
      CHECK(reversed.front() == '\x5a');
      CHECK(reversed.back() == '\x5a');

      // And back: random units unpacked reversing land as MPI_Unpack puts
      // them reversed.
      std::vector<char> units(static_cast<std::size_t>(unit_bytes));
      for (char& byte : units) byte = static_cast<char>(rng());
      TypedBuffer got = original;
      flowio::exchange::unpack_stream_reversing(MemoryLayout{&flat, count, got.address()},
                                                unit_from, unit_bytes, unit, units.data());
      std::vector<char> stream = packed;
      for (std::int64_t i = 0; i < unit_bytes; ++i) {
        const std::int64_t unit_begin = i / unit * unit;
        stream[static_cast<std::size_t>(unit_from + i)] =
            units[static_cast<std::size_t>(unit_begin + unit - 1 - i % unit)];
      }
      TypedBuffer expected = original;
      position = 0;
      MPI_Unpack(stream.data(), static_cast<int>(total), &position, expected.origin(), count, type,
                 MPI_COMM_SELF);
      CHECK(got.bytes() == expected.bytes());
    }

    // Unpack random bytes into a copy; MPI_Unpack of the whole stream,
    // with those bytes in the range, gives the expected buffer.
    std::vector<char> source(static_cast<std::size_t>(bytes));
    for (char& byte : source) byte = static_cast<char>(rng());
    TypedBuffer got = original;
    flowio::exchange::unpack_stream(MemoryLayout{&flat, count, got.address()}, from, bytes,
                                    source.data());
    std::vector<char> stream = packed;
    std::copy(source.begin(), source.end(), stream.begin() + from);
    TypedBuffer expected = original;
    position = 0;
    MPI_Unpack(stream.data(), static_cast<int>(total), &position, expected.origin(), count, type,
               MPI_COMM_SELF);
    CHECK(got.bytes() == expected.bytes());
  }
}

}  // namespace

// Contiguous layouts (one run, or one copy of a run with gaps around it)
// and strided ones, by hand.
TEST_CASE("Exchange.StreamPack.KnownTypes") {
  std::mt19937_64 rng(51);
  MPI_Datatype ints, shifted, vector;
  MPI_Type_contiguous(7, MPI_INT, &ints);
  MPI_Type_create_resized(MPI_INT, -8, 20, &shifted);
  MPI_Type_vector(5, 3, 4, MPI_SHORT, &vector);
  for (MPI_Datatype* t : {&ints, &shifted, &vector}) MPI_Type_commit(t);
  for (int count : {1, 2, 5}) {
    CAPTURE(count);
    check_type(MPI_BYTE, count * 100, rng);
    check_type(ints, count, rng);
    check_type(shifted, count, rng);
    check_type(vector, count, rng);
  }
  for (MPI_Datatype* t : {&ints, &shifted, &vector}) MPI_Type_free(t);
}

// Random memory types, pieces in any order and at negative displacements,
// one to three copies.
TEST_CASE("Exchange.StreamPack.RandomTypes") {
  std::mt19937_64 rng(52);
  int checked = 0;
  while (checked < 300) {
    std::string description;
    MPI_Datatype type = flowio::testing::random_datatype(rng, flowio::testing::TypeShape::any_order,
                                                         2048, &description);
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if (size > 0) {
      CAPTURE(description);
      check_type(type, static_cast<int>(rng() % 3) + 1, rng);
      ++checked;
    }
    MPI_Type_free(&type);
  }
}
