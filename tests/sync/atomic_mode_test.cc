// Atomic mode through flowio::File (set_atomicity): the classic check, in
// which one rank rewrites a noncontiguous region (a vector view) with all
// 0s and all 1s in turn while the others read it; every read must find all
// 0s or all 1s, never a mix. Independent and collective forms, for each
// algorithm atomic mode can use; then the hints and the flag's rules.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

constexpr int kBlocks = 64;
constexpr int kBlockBytes = 512;
constexpr int kStride = 1024;  // bytes from block to block: holes between them
constexpr int kRegionBytes = kBlocks * kBlockBytes;
constexpr int kRounds = 16;

MPI_Datatype vector_view() {
  MPI_Datatype type;
  MPI_Type_vector(kBlocks, kBlockBytes, kStride, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return type;
}

Hints hints_for(const sync::LockSettings& settings) {
  Hints hints;
  settings.describe(hints);
  // Small windows, and two-phase I/O even where each process could go
  // direct: a collective access is then spread over several windows and
  // aggregators, which only a lease over the whole operation keeps whole.
  hints["cb_buffer_size"] = "8192";
  hints["romio_cb_write"] = "enable";
  hints["romio_cb_read"] = "enable";
  return hints;
}

// All 0s, all 1s, or a mix (-1).
int uniform_value(const std::vector<char>& data) {
  const char first = data.front();
  if (first != 0 && first != 1) return -1;
  return std::all_of(data.begin(), data.end(), [&](char c) { return c == first; }) ? first : -1;
}

struct Outcome {
  int reads = 0;
  int mixed = 0;
};

}  // namespace

// Rank 0 writes with write_at, the others read with iread_at meanwhile,
// all through the vector view: no read is torn.
TEST_CASE("Sync.AtomicMode.ZerosOnesIndependent") {
  MPI_Datatype view = vector_view();
  for (const sync::LockSettings& settings : each_algorithm()) {
    CAPTURE(describe(settings));
    const std::string path = scratch_path("zeros_ones_independent");
    File file = File::open(MPI_COMM_WORLD, path, Mode::create | Mode::rdwr, hints_for(settings));
    file.set_view(0, MPI_BYTE, view);
    file.set_atomicity(true);
    CHECK(file.atomicity());
    std::vector<char> data(kRegionBytes, 0);
    if (world_rank() == 0) file.write_at(0, data.data(), kRegionBytes, MPI_BYTE);
    MPI_Barrier(MPI_COMM_WORLD);
    Outcome outcome;
    if (world_rank() == 0) {
      for (int round = 1; round <= kRounds; ++round) {
        std::fill(data.begin(), data.end(), static_cast<char>(round % 2));
        CHECK(file.write_at(0, data.data(), kRegionBytes, MPI_BYTE) == kRegionBytes);
      }
    } else {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<char> back(kRegionBytes, 7);
        CHECK(file.read_at(0, back.data(), kRegionBytes, MPI_BYTE) == kRegionBytes);
        ++outcome.reads;
        if (uniform_value(back) < 0) ++outcome.mixed;
      }
    }
    CHECK(outcome.mixed == 0);
    file.set_atomicity(false);
    CHECK_FALSE(file.atomicity());
    file.close();
  }
  MPI_Type_free(&view);
}

// The collective forms: every rank calls write_at_all (rank 0 with the
// region, the others with nothing) while the others' independent reads are
// in flight; then every rank calls read_at_all (the readers with the
// region) while rank 0's independent write is in flight. Two-phase I/O
// spreads each collective access over several windows; no read is torn.
TEST_CASE("Sync.AtomicMode.ZerosOnesCollective") {
  MPI_Datatype view = vector_view();
  for (const sync::LockSettings& settings : each_algorithm()) {
    CAPTURE(describe(settings));
    const std::string path = scratch_path("zeros_ones_collective");
    File file = File::open(MPI_COMM_WORLD, path, Mode::create | Mode::rdwr, hints_for(settings));
    file.set_view(0, MPI_BYTE, view);
    file.set_atomicity(true);
    const bool writer = world_rank() == 0;
    std::vector<char> data(kRegionBytes, 0);
    file.write_at_all(0, data.data(), writer ? kRegionBytes : 0, MPI_BYTE);
    Outcome outcome;
    for (int round = 1; round <= kRounds; ++round) {
      std::fill(data.begin(), data.end(), static_cast<char>(round % 2));
      std::vector<char> independent(kRegionBytes, 7), collective(kRegionBytes, 7);
      // Collective write against independent reads.
      Future<std::size_t> reading;
      if (!writer) reading = file.iread_at(0, independent.data(), kRegionBytes, MPI_BYTE);
      CHECK(file.write_at_all(0, data.data(), writer ? kRegionBytes : 0, MPI_BYTE) ==
            static_cast<std::size_t>(writer ? kRegionBytes : 0));
      if (reading.valid()) {
        CHECK(reading.get() == kRegionBytes);
        ++outcome.reads;
        if (uniform_value(independent) < 0) ++outcome.mixed;
      }
      // Collective read against an independent write.
      std::fill(data.begin(), data.end(), static_cast<char>((round + 1) % 2));
      Future<std::size_t> writing;
      if (writer) writing = file.iwrite_at(0, data.data(), kRegionBytes, MPI_BYTE);
      CHECK(file.read_at_all(0, collective.data(), writer ? 0 : kRegionBytes, MPI_BYTE) ==
            static_cast<std::size_t>(writer ? 0 : kRegionBytes));
      if (writing.valid()) CHECK(writing.get() == kRegionBytes);
      if (!writer) {
        ++outcome.reads;
        if (uniform_value(collective) < 0) ++outcome.mixed;
      }
    }
    CHECK(outcome.mixed == 0);
    file.close();
  }
  MPI_Type_free(&view);
}

// The hints in force name the lock; a lock flowio does not know is an
// error at open; processes that disagree on the flag all get an error.
TEST_CASE("Sync.AtomicMode.HintsAndFlag") {
  const std::string path = scratch_path("atomic_hints");
  {
    File file = File::open(MPI_COMM_WORLD, path, Mode::create | Mode::rdwr,
                           {{"flowio_lock", "mcs"}, {"flowio_lock_ranges", "disable"}});
    CHECK(file.hints().at("flowio_lock") == "mcs");
    CHECK(file.hints().at("flowio_lock_ranges") == "disable");
    CHECK_FALSE(file.atomicity());
    file.set_atomicity(true);
    CHECK(file.hints().at("flowio_lock") == "mcs");
    if (world_size() > 1) {
      CHECK_THROWS_AS(file.set_atomicity(world_rank() != 0), UsageError);
      CHECK(file.atomicity());
    } else {
      file.set_atomicity(false);  // one process always agrees with itself
      CHECK_FALSE(file.atomicity());
    }
    file.close();
  }
  {
    File file = File::open(MPI_COMM_WORLD, path, Mode::rdwr);
    CHECK(file.hints().at("flowio_lock") == "hybrid");
    CHECK(file.hints().at("flowio_lock_ranges") == "enable");
    file.close();
  }
  CHECK_THROWS_AS(File::open(MPI_COMM_WORLD, path, Mode::rdwr, {{"flowio_lock", "spin"}}),
                  UsageError);
}
