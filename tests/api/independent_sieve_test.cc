// Independent noncontiguous writes sieve (read their extent, fill in their
// pieces, write it back) only under the sieve lock, which every writer of
// the file takes while some process's view has holes, so that concurrent
// writes of other bytes are never lost (MPI: concurrent writes of
// different bytes both land):
//   - a write of another process into the holes of a sieving write, made
//     between the sieving write's read and its write back (stalled there
//     by fault injection), lands;
//   - 2-4 processes writing interleaved blocks through their views, many
//     calls each, all at once, leave every block of every process;
//   - the choice: a read fault on the sieving process shows whether the
//     write read its extent (sieved) or not: with romio_ds_write=enable or
//     automatic and dense pieces it does; with romio_ds_write=disable, or
//     pieces far apart, it does not.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_image.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

// Blocks of `block` bytes every `stride` bytes, the filetype's extent
// `stride` (so that the view repeats the pattern).
MPI_Datatype strided_type(std::int64_t block, std::int64_t stride, std::int64_t blocks) {
  MPI_Datatype vector = MPI_DATATYPE_NULL, filetype = MPI_DATATYPE_NULL;
  MPI_Type_vector(static_cast<int>(blocks), static_cast<int>(block), static_cast<int>(stride),
                  MPI_BYTE, &vector);
  MPI_Type_create_resized(vector, 0, blocks * stride, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_free(&vector);
  return filetype;
}

constexpr std::int64_t kBlock = 1024;

}  // namespace

TEST_CASE("Api.IndependentSieve.AWriteIntoTheHolesWaitsForTheSievingWrite") {
  if (world_size() != 2) return;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "ind-sieve-hole");
  const std::int64_t data = 64 * kBlock;  // rank 0's: 64 blocks, 64 holes
  // Rank 0's first write is its sieved extent's write back: it waits
  // 800 ms after the read, holding the sieve lock.
  FaultScope stall("on=write,rank=0,nth=1,fault=stall,ms=800");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_ds_write", "enable"}});
  MPI_Datatype filetype = strided_type(kBlock, 2 * kBlock, data / kBlock);
  // Rank 1 keeps the default view: its contiguous writes take the lock
  // too, because rank 0's view has holes.
  if (world_rank() == 0) {
    file.set_view(0, MPI_BYTE, filetype);
  } else {
    file.set_view(0, MPI_BYTE, MPI_BYTE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    const std::vector<char> blocks(static_cast<std::size_t>(data), 'a');
    CHECK(file.write_at(0, blocks.data(), data, MPI_BYTE) == static_cast<std::size_t>(data));
  } else {
    // By now rank 0 has read its extent and waits to write it back.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::vector<char> hole(kBlock, 'h');
    for (const std::int64_t at : {kBlock, 9 * kBlock, 2 * data - kBlock}) {
      CHECK(file.write_at(at, hole.data(), kBlock, MPI_BYTE) == static_cast<std::size_t>(kBlock));
    }
  }
  file.close();
  MPI_Type_free(&filetype);
  const std::vector<char> image = flowio::testing::file_image_on_rank0(path);
  if (world_rank() != 0) return;
  REQUIRE(static_cast<std::int64_t>(image.size()) == 2 * data);
  std::int64_t lost = 0;
  for (const std::int64_t at : {kBlock, 9 * kBlock, 2 * data - kBlock}) {
    for (std::int64_t i = at; i < at + kBlock; ++i) lost += image[i] != 'h' ? 1 : 0;
  }
  CHECK_MESSAGE(lost == 0, lost << " bytes of rank 1's writes into the holes were lost");
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < 2 * data; i += 2 * kBlock) {
    for (std::int64_t j = i; j < i + kBlock; ++j) wrong += image[j] != 'a' ? 1 : 0;
  }
  CHECK(wrong == 0);
  ::unlink(path.c_str());
}

TEST_CASE("Api.IndependentSieve.InterleavedWritersLoseNothing") {
  const int ranks = world_size();
  const int rank = world_rank();
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "ind-sieve-interleaved");
  // Each rank's blocks of 512 bytes every ranks * 512: every rank's extent
  // is everyone's holes. 200 calls of 8 blocks each, each call's data a
  // byte of its own, all ranks at once through the same part of the file,
  // in three rounds (the last one's bytes must be what the file keeps).
  constexpr std::int64_t kSmall = 512;
  constexpr std::int64_t kBlocksPerCall = 8;
  constexpr int kCalls = 200;
  constexpr int kRounds = 3;
  constexpr int kCallsInStep = 4;
  const std::int64_t per_call = kBlocksPerCall * kSmall;
  auto byte_of = [](int writer, int call, int round) {
    return static_cast<char>(1 + (writer * 61 + call * 7 + round * 13) % 251);
  };
  // Sieved whatever the density rule says, through the backend.
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_ds_write", "enable"}, {"flowio_ds_mapping", "disable"}});
  MPI_Datatype filetype = strided_type(kSmall, ranks * kSmall, 1);
  file.set_view(rank * kSmall, MPI_BYTE, filetype);
  std::vector<char> data(static_cast<std::size_t>(per_call));
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int call = 0; call < kCalls; ++call) {
      data.assign(data.size(), byte_of(rank, call, round));
      // Kept in step, so that the ranks' extents of the same call, which
      // hold each other's blocks, are written at the same time.
      if (call % kCallsInStep == 0) MPI_Barrier(MPI_COMM_WORLD);
      REQUIRE(file.write_at(call * per_call, data.data(), per_call, MPI_BYTE) ==
              static_cast<std::size_t>(per_call));
    }
  }
  file.close();
  MPI_Type_free(&filetype);
  const std::vector<char> image = flowio::testing::file_image_on_rank0(path);
  if (rank != 0) return;
  REQUIRE(static_cast<std::int64_t>(image.size()) == kCalls * per_call * ranks);
  std::int64_t wrong = 0;
  for (std::int64_t byte = 0; byte < static_cast<std::int64_t>(image.size()); ++byte) {
    const std::int64_t block = byte / kSmall;
    const int writer = static_cast<int>(block % ranks);
    const int call = static_cast<int>(block / ranks / kBlocksPerCall);
    wrong += image[static_cast<std::size_t>(byte)] != byte_of(writer, call, kRounds - 1) ? 1 : 0;
  }
  CHECK_MESSAGE(wrong == 0, wrong << " bytes differ from the last round's");
  ::unlink(path.c_str());
}

namespace {

// Whether rank 0's independent write of 32 blocks of kBlock bytes every
// `stride` bytes reads the file (sieves), given the hints: its first read
// fails with EIO, so a write that reads throws.
bool sieving_write_reads(const flowio::Hints& hints, std::int64_t stride) {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "ind-sieve-choice");
  FaultScope fail_read("on=read,rank=0,nth=1,fault=eio");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  MPI_Datatype filetype = strided_type(kBlock, stride, 32);
  file.set_view(0, MPI_BYTE, filetype);
  bool read = false;
  if (world_rank() == 0) {
    const std::vector<char> blocks(32 * kBlock, 'a');
    try {
      file.write_at(0, blocks.data(), 32 * kBlock, MPI_BYTE);
    } catch (const flowio::IoError&) {
      read = true;
    }
  }
  file.close();
  MPI_Type_free(&filetype);
  if (world_rank() == 0) ::unlink(path.c_str());
  return read;
}

}  // namespace

TEST_CASE("Api.IndependentSieve.TheHintsAndTheDensityChooseSieving") {
  const bool rank0 = world_rank() == 0;
  // Dense pieces (1 KiB blocks, 1 KiB holes): sieved unless disabled.
  CHECK(sieving_write_reads({{"romio_ds_write", "enable"}}, 2 * kBlock) == rank0);
  CHECK(sieving_write_reads({{"flowio_ds_mapping", "disable"}}, 2 * kBlock) == rank0);
  CHECK_FALSE(sieving_write_reads({{"romio_ds_write", "disable"}}, 2 * kBlock));
  // Pieces 64 KiB apart (mostly holes): automatic does not sieve them.
  CHECK_FALSE(sieving_write_reads({{"flowio_ds_mapping", "disable"}}, 64 * kBlock));
  CHECK(sieving_write_reads({{"romio_ds_write", "enable"}}, 64 * kBlock) == rank0);
}
