// Small rewrites and re-reads through the kept mapping of the file
// (io/mapped_backend.h), on 1, 2 and 4 ranks: blocks of several ranks
// sharing pages, rewritten independently and collectively at the same
// time, keep every rank's last bytes (and the rewrites make no write
// system calls); reads after another rank's rewrites see them; a file
// shrunk by set_size or by another handle under the mapping is written
// again and read back as a pwrite would leave it.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

// Blocks of an odd size, so that each page holds bytes of several ranks.
constexpr std::int64_t kBlock = 300;
constexpr int kBlocksPerRank = 40;
constexpr int kRounds = 30;

using flowio::testing::world_rank;
using flowio::testing::world_size;

// Block k of rank r lies at (k * ranks + r) * kBlock: ranks interleaved.
std::int64_t block_offset(int rank, int k) {
  return (static_cast<std::int64_t>(k) * world_size() + rank) * kBlock;
}

unsigned char written(int rank, int round, int k) {
  return static_cast<unsigned char>(rank * 53 + round * 7 + k * 3 + 1);
}

// Write system calls this process made so far (/proc/self/io), or -1
// where the kernel does not say.
std::int64_t write_calls() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::int64_t value = 0;
  while (io >> key >> value) {
    if (key == "syscw:") return value;
  }
  return -1;
}

std::vector<unsigned char> whole_file(flowio::File& file) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(file.size()));
  const std::size_t got =
      file.read_at(0, bytes.data(), static_cast<MPI_Count>(bytes.size()), MPI_BYTE);
  REQUIRE(got == bytes.size());
  return bytes;
}

// Every rank's blocks hold `round`'s bytes.
void check_blocks(const std::vector<unsigned char>& bytes, int round) {
  for (int rank = 0; rank < world_size(); ++rank) {
    for (int k = 0; k < kBlocksPerRank; ++k) {
      const auto at = static_cast<std::size_t>(block_offset(rank, k));
      REQUIRE(at + kBlock <= bytes.size());
      int wrong = 0;
      for (std::int64_t i = 0; i < kBlock; ++i) wrong += bytes[at + i] != written(rank, round, k);
      INFO("rank " << rank << " block " << k);
      CHECK(wrong == 0);
    }
  }
}

// Each rank rewrites its blocks kRounds times, the ranks unsynchronized
// within a round (stores into shared pages at the same time); returns
// the write system calls made by the rewrites after the first round.
std::int64_t rewrite_interleaved(const std::string& mapped) {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "mapped_rewrites");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"flowio_mapped_io", mapped}});
  std::vector<unsigned char> block(kBlock);
  std::int64_t calls_before = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (round == 1) calls_before = write_calls();
    for (int k = 0; k < kBlocksPerRank; ++k) {
      block.assign(kBlock, written(world_rank(), round, k));
      file.write_at(block_offset(world_rank(), k), block.data(), kBlock, MPI_BYTE);
    }
    // A barrier only every few rounds: most rounds overlap the others'.
    if (round % 10 == 0) MPI_Barrier(MPI_COMM_WORLD);
  }
  const std::int64_t calls = write_calls() - calls_before;
  MPI_Barrier(MPI_COMM_WORLD);
  check_blocks(whole_file(file), kRounds - 1);
  file.close();
  return calls;
}

}  // namespace

// Interleaved blocks sharing pages, rewritten by every rank at once: no
// rank's bytes are lost, and the rewrites through the mapping make far
// fewer write system calls than rewrites without it (one per call).
TEST_CASE("Api.MappedIo.InterleavedRewritesKeepEveryRanksBytes") {
  const std::int64_t without = rewrite_interleaved("disable");
  const std::int64_t with = rewrite_interleaved("enable");
  if (without >= 0) {
    CHECK(without >= (kRounds - 1) * kBlocksPerRank);
    CHECK(with < (kRounds - 1) * kBlocksPerRank / 4);
  }
}

// Collective rewrites of blocks sharing pages, while each rank also
// rewrites independently a block next to another rank's; then every rank
// reads everything collectively and checks it.
TEST_CASE("Api.MappedIo.CollectiveAndIndependentRewrites") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "mapped_collective");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const int rank = world_rank();
  std::vector<unsigned char> block(kBlock);
  for (int round = 0; round < kRounds; ++round) {
    block.assign(kBlock, written(rank, round, 0));
    file.write_at_all(block_offset(rank, 0), block.data(), kBlock, MPI_BYTE);
    block.assign(kBlock, written(rank, round, 1));
    file.write_at(block_offset(rank, 1), block.data(), kBlock, MPI_BYTE);
    std::vector<unsigned char> all(static_cast<std::size_t>(2 * world_size() * kBlock));
    MPI_Barrier(MPI_COMM_WORLD);
    const std::size_t got =
        file.read_at_all(0, all.data(), static_cast<MPI_Count>(all.size()), MPI_BYTE);
    REQUIRE(got == all.size());
    for (int r = 0; r < world_size(); ++r) {
      for (int k = 0; k < 2; ++k) {
        const auto at = static_cast<std::size_t>(block_offset(r, k));
        int wrong = 0;
        for (std::int64_t i = 0; i < kBlock; ++i) wrong += all[at + i] != written(r, round, k);
        INFO("round " << round << " rank " << r << " block " << k);
        CHECK(wrong == 0);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  file.close();
}

// A rank re-reads (through the mapping, after its first read) a block
// another rank rewrites between the reads: it sees every rewrite.
TEST_CASE("Api.MappedIo.ReadsAfterAnotherRanksWrites") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "mapped_reads");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const int rank = world_rank();
  const int writer = (rank + 1) % world_size();  // whose block this rank reads
  std::vector<unsigned char> block(kBlock), seen(kBlock);
  for (int round = 0; round < kRounds; ++round) {
    block.assign(kBlock, written(rank, round, 0));
    file.write_at(block_offset(rank, 0), block.data(), kBlock, MPI_BYTE);
    MPI_Barrier(MPI_COMM_WORLD);
    REQUIRE(file.read_at(block_offset(writer, 0), seen.data(), kBlock, MPI_BYTE) ==
            static_cast<std::size_t>(kBlock));
    int wrong = 0;
    for (std::int64_t i = 0; i < kBlock; ++i) wrong += seen[i] != written(writer, round, 0);
    INFO("round " << round);
    CHECK(wrong == 0);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  file.close();
}

// set_size shrinks the file (to inside a page) after rewrites went
// through the mapping: reads past the new end are short, rewrites past it
// extend the file again with zeros in between, as pwrite does. Then
// another handle of the same file shrinks it to nothing: after a sync,
// rewrites through the first handle land as pwrites would.
TEST_CASE("Api.MappedIo.FileShrinkingUnderTheMapping") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "mapped_shrink");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const int rank = world_rank();
  std::vector<unsigned char> block(kBlock);
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < kBlocksPerRank; ++k) {
      block.assign(kBlock, written(rank, round, k));
      file.write_at(block_offset(rank, k), block.data(), kBlock, MPI_BYTE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::int64_t cut = 17;
  file.set_size(cut);
  // The last block of this rank: past the cut, now read short.
  const std::int64_t last = block_offset(rank, kBlocksPerRank - 1);
  CHECK(file.read_at(last, block.data(), kBlock, MPI_BYTE) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  block.assign(kBlock, written(rank, 9, 1));
  file.write_at(block_offset(rank, 1), block.data(), kBlock, MPI_BYTE);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<unsigned char> bytes = whole_file(file);
  REQUIRE(bytes.size() == static_cast<std::size_t>(block_offset(world_size() - 1, 1) + kBlock));
  for (int r = 0; r < world_size(); ++r) {
    const auto at = static_cast<std::size_t>(block_offset(r, 1));
    int wrong = 0;
    for (std::int64_t i = 0; i < kBlock; ++i) wrong += bytes[at + i] != written(r, 9, 1);
    CHECK(wrong == 0);
  }
  // Between the cut and the blocks written again: zeros, not the old data.
  int stale = 0;
  for (std::int64_t i = cut; i < block_offset(0, 1); ++i) stale += bytes[i] != 0;
  CHECK(stale == 0);

  // Another handle's size change reaches this one at a sync (MPI's
  // sync-barrier-sync).
  flowio::File other = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr);
  other.set_size(0);
  other.sync();
  file.sync();
  block.assign(kBlock, written(rank, 10, 1));
  file.write_at(block_offset(rank, 1), block.data(), kBlock, MPI_BYTE);
  MPI_Barrier(MPI_COMM_WORLD);
  bytes = whole_file(other);
  REQUIRE(bytes.size() == static_cast<std::size_t>(block_offset(world_size() - 1, 1) + kBlock));
  for (int r = 0; r < world_size(); ++r) {
    const auto at = static_cast<std::size_t>(block_offset(r, 1));
    int wrong = 0;
    for (std::int64_t i = 0; i < kBlock; ++i) wrong += bytes[at + i] != written(r, 10, 1);
    CHECK(wrong == 0);
  }
  other.close();
  file.close();
}
