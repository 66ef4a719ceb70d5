// A user-defined data representation (MPI_Register_datarep's model):
// doubles stored in the file as 32-bit integers scaled by 1000, every other
// type natively. Written and read collectively (windows small enough to
// split the 4-byte items) and independently; the file checked integer by
// integer; failures of the user's functions reach every rank.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

// Where item `item` of `type` tiled from address 0 lies: the conversion
// functions below handle MPI_DOUBLE and vectors of it (and duplicates of
// those, which MPI may pass: an equivalent type), as a user's functions
// for the types their program uses would.
std::int64_t item_offset(MPI_Datatype type, std::int64_t item) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return item * 8;
  if (combiner == MPI_COMBINER_DUP) {
    MPI_Datatype original;
    MPI_Type_get_contents(type, 0, 0, 1, nullptr, nullptr, &original);
    const std::int64_t offset = item_offset(original, item);
    if (!(original == MPI_DOUBLE)) MPI_Type_free(&original);
    return offset;
  }
  REQUIRE(combiner == MPI_COMBINER_VECTOR);
  int ints[3];
  MPI_Datatype old;
  MPI_Type_get_contents(type, 3, 0, 1, ints, nullptr, &old);
  const std::int64_t per_copy = std::int64_t{ints[0]} * ints[1];
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  const std::int64_t copy = item / per_copy, within = item % per_copy;
  return copy * extent + (within / ints[1]) * ints[2] * 8 + (within % ints[1]) * 8;
}

int scaled_write(void* user, MPI_Datatype type, MPI_Count count, void* file, MPI_Offset position) {
  for (MPI_Count i = 0; i < count; ++i) {
    double value = 0;
    std::memcpy(&value, static_cast<char*>(user) + item_offset(type, position + i), 8);
    const auto scaled = static_cast<std::int32_t>(std::lround(value * 1000));
    std::memcpy(static_cast<char*>(file) + 4 * i, &scaled, 4);
  }
  return MPI_SUCCESS;
}

int scaled_read(void* user, MPI_Datatype type, MPI_Count count, void* file, MPI_Offset position) {
  for (MPI_Count i = 0; i < count; ++i) {
    std::int32_t scaled = 0;
    std::memcpy(&scaled, static_cast<char*>(file) + 4 * i, 4);
    const double value = scaled / 1000.0;
    std::memcpy(static_cast<char*>(user) + item_offset(type, position + i), &value, 8);
  }
  return MPI_SUCCESS;
}

int scaled_extent(MPI_Datatype type, MPI_Aint* extent) {
  if (type == MPI_DOUBLE) {
    *extent = 4;
    return MPI_SUCCESS;
  }
  int size = 0;
  MPI_Type_size(type, &size);
  *extent = size;
  return MPI_SUCCESS;
}

// Items per rank in the large transfers: 12 MiB of doubles in memory, 6 MiB
// of the file's stream, so several chunks of converted_transfer.h.
constexpr MPI_Count kLargeCount = 1536 * 1024;
constexpr MPI_Offset kLateFailure = kLargeCount / 2;

// Registered once per process (registrations last until exit).
void register_once() {
  static const bool done = [] {
    flowio::UserRepresentation scaled;
    scaled.read = scaled_read;
    scaled.write = scaled_write;
    scaled.file_extent = scaled_extent;
    flowio::register_data_representation("scaled_doubles", std::move(scaled));
    flowio::UserRepresentation failing;
    failing.read = scaled_read;
    failing.write = [](void*, MPI_Datatype, MPI_Count, void*, MPI_Offset) { return MPI_ERR_OTHER; };
    failing.file_extent = scaled_extent;
    flowio::register_data_representation("failing_writes", std::move(failing));
    // Fails only from item kLateFailure on: past the first chunks a
    // large transfer converts while it moves earlier ones.
    flowio::UserRepresentation late;
    late.read = [](void* user, MPI_Datatype type, MPI_Count count, void* file,
                   MPI_Offset position) {
      return position + count > kLateFailure ? MPI_ERR_OTHER
                                             : scaled_read(user, type, count, file, position);
    };
    late.write = [](void* user, MPI_Datatype type, MPI_Count count, void* file,
                    MPI_Offset position) {
      return position + count > kLateFailure ? MPI_ERR_OTHER
                                             : scaled_write(user, type, count, file, position);
    };
    late.file_extent = scaled_extent;
    flowio::register_data_representation("late_failures", std::move(late));
    return true;
  }();
  CHECK(done);
}

std::vector<std::int32_t> file_integers(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  std::vector<std::int32_t> values(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)) / 4);
  REQUIRE(::pread(fd, values.data(), values.size() * 4, 0) ==
          static_cast<ssize_t>(values.size() * 4));
  ::close(fd);
  return values;
}

double value_of(int rank, int index) { return rank * 100.0 + index * 0.0625 - 3.3335; }

}  // namespace

// Interleaved doubles, from every other element of memory, through windows
// of 6 bytes; the file holds each value * 1000 as an int32 in its place,
// and reading gives back the values at that precision.
TEST_CASE("Api.UserRepresentation.ScaledDoublesRoundTrip") {
  register_once();
  const int rank = world_rank(), ranks = world_size();
  constexpr int kCount = 40;
  std::vector<double> strided(2 * kCount, -1.0);
  for (int i = 0; i < kCount; ++i) strided[2 * static_cast<std::size_t>(i)] = value_of(rank, i);
  MPI_Datatype every_other, interleave;
  MPI_Type_vector(kCount, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_vector(kCount, 1, ranks, MPI_DOUBLE, &interleave);
  MPI_Type_commit(&interleave);
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "user_scaled");
  for (const char* buffering : {"enable", "disable"}) {
    const std::string variant = buffering;
    CAPTURE(variant);
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
        {{"cb_buffer_size", "6"}, {"romio_cb_write", buffering}, {"romio_cb_read", buffering}});
    file.set_view(0, MPI_DOUBLE, MPI_DOUBLE, {}, "scaled_doubles");
    CHECK(file.representation() == "scaled_doubles");
    const MPI_Count extent = file.type_extent(MPI_DOUBLE);
    CHECK(extent == 4);
    file.set_view(rank * extent, MPI_DOUBLE, interleave, {}, "scaled_doubles");
    CHECK(file.write_all(strided.data(), 1, every_other) == kCount * sizeof(double));
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      const std::vector<std::int32_t> stored = file_integers(path);
      REQUIRE(stored.size() == static_cast<std::size_t>(kCount * ranks));
      for (int i = 0; i < kCount; ++i) {
        for (int r = 0; r < ranks; ++r) {
          CHECK(stored[static_cast<std::size_t>(i * ranks + r)] ==
                std::lround(value_of(r, i) * 1000));
        }
      }
    }
    std::vector<double> back(2 * kCount, -1.0);
    CHECK(file.read_at_all(0, back.data(), 1, every_other) == kCount * sizeof(double));
    std::vector<double> independent(kCount, 0.0);
    CHECK(file.read_at(0, independent.data(), kCount, MPI_DOUBLE) == kCount * sizeof(double));
    for (int i = 0; i < kCount; ++i) {
      const double expected = std::lround(value_of(rank, i) * 1000) / 1000.0;
      CHECK(back[2 * static_cast<std::size_t>(i)] == expected);
      CHECK(back[2 * static_cast<std::size_t>(i) + 1] == -1.0);
      CHECK(independent[static_cast<std::size_t>(i)] == expected);
    }
    file.close();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Type_free(&every_other);
  MPI_Type_free(&interleave);
}

// Names are registered once, the predefined ones are taken, and a failing
// conversion function fails the collective write on every rank.
TEST_CASE("Api.UserRepresentation.DuplicatesAndFailures") {
  register_once();
  flowio::UserRepresentation again;
  again.file_extent = scaled_extent;
  for (const char* taken : {"scaled_doubles", "external32", "native", "internal"}) {
    try {
      flowio::register_data_representation(taken, again);
      FAIL("registered a taken name");
    } catch (const flowio::UsageError& error) {
      CHECK(error.code() == flowio::ErrorCode::duplicate_representation);
    }
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "user_failing");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_write", "enable"}});
  file.set_view(world_rank() * 4, MPI_DOUBLE, MPI_DOUBLE, {}, "failing_writes");
  std::vector<double> values(world_rank() == 0 ? 8 : 0, 1.5);  // only rank 0's function fails
  try {
    file.write_all(values.data(), static_cast<MPI_Count>(values.size()), MPI_DOUBLE);
    FAIL("a failing conversion function went unnoticed");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::conversion);
  }
  file.close();
}

// Large independent and direct collective transfers (several conversion
// chunks, converted by the workers while the caller moves earlier ones):
// every value arrives, and a conversion function failing half-way fails
// the call, on every rank for the collective one, without leaving a task
// behind.
TEST_CASE("Api.UserRepresentation.LargeTransfersConvertWhileMoving") {
  register_once();
  const int rank = world_rank();
  std::vector<double> values(static_cast<std::size_t>(kLargeCount));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = value_of(rank, static_cast<int>(i));
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "user_large");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}});
  const MPI_Offset mine = rank * kLargeCount;
  for (const bool collective : {false, true}) {
    CAPTURE(collective);
    file.set_view(0, MPI_DOUBLE, MPI_DOUBLE, {}, "scaled_doubles");
    const std::size_t wrote = collective
                                  ? file.write_at_all(mine, values.data(), kLargeCount, MPI_DOUBLE)
                                  : file.write_at(mine, values.data(), kLargeCount, MPI_DOUBLE);
    CHECK(wrote == kLargeCount * sizeof(double));
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    file.sync();
    std::vector<double> back(values.size(), -1.0);
    const std::size_t read = collective
                                 ? file.read_at_all(mine, back.data(), kLargeCount, MPI_DOUBLE)
                                 : file.read_at(mine, back.data(), kLargeCount, MPI_DOUBLE);
    CHECK(read == kLargeCount * sizeof(double));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (back[i] != std::lround(values[i] * 1000) / 1000.0) ++wrong;
    }
    CHECK(wrong == 0);

    file.set_view(0, MPI_DOUBLE, MPI_DOUBLE, {}, "late_failures");
    for (const bool writing : {true, false}) {
      CAPTURE(writing);
      try {
        if (collective) {
          writing ? file.write_at_all(mine, values.data(), kLargeCount, MPI_DOUBLE)
                  : file.read_at_all(mine, back.data(), kLargeCount, MPI_DOUBLE);
        } else {
          writing ? file.write_at(mine, values.data(), kLargeCount, MPI_DOUBLE)
                  : file.read_at(mine, back.data(), kLargeCount, MPI_DOUBLE);
        }
        FAIL("a conversion function failing half-way went unnoticed");
      } catch (const flowio::UsageError& error) {
        CHECK(error.code() == flowio::ErrorCode::conversion);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  file.close();
}
