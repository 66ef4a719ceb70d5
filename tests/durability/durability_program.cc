// The program behind tests/durability/durability_test.sh, one step per
// invocation:
//   durability_program write DIR   (under mpiexec) writes files through every
//       route (independent, two-phase with read-modify-write sieving, sieving
//       through a mapping, direct, O_DIRECT), then writes once more with a
//       fault injected on the last rank after a write that completed, and
//       closes every file without sync (with write-behind on, the failed
//       write may report its failure at close instead);
//   durability_program verify DIR RANKS   (one process, a new one) reads the
//       files with POSIX calls and checks every byte that was reported
//       written, the ones before the failed write included;
//   durability_program sync DIR   (under mpiexec, under strace) writes
//       through every route, calls sync, and marks the moment sync returned
//       with a failing write(-1, "flowio-sync-returned FILE") that strace
//       shows.
// Prints what it checked; exits nonzero on the first mismatch.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "io/fault_injection.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr int kBlock = 4096;  // aligned, so that O_DIRECT can take the blocks
constexpr int kBlocksPerRank = 16;

// The byte file `salt` holds at `offset` once written.
char pattern(std::int64_t offset, int salt) {
  return static_cast<char>(1 + (offset * 131 + salt * 17 + offset / 4093) % 251);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "durability_program: FAILED: %s\n", what.c_str());
  std::fflush(stderr);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

struct Route {
  const char* file;
  flowio::Hints hints;
  bool collective;
  int salt;
};

// Each rank's blocks interleave with the others' (block b of rank r at
// file block b * ranks + r). The routes differ in how the bytes travel.
std::vector<Route> routes() {
  return {
      {"independent.dat", {}, false, 1},
      {"two_phase_sieved.dat",
       {{"romio_cb_write", "enable"},
        {"romio_ds_write", "enable"},
        {"flowio_ds_mapping", "disable"},
        {"cb_buffer_size", "65536"}},
       true,
       2},
      {"two_phase_mapped.dat",
       {{"romio_cb_write", "enable"},
        {"romio_ds_write", "enable"},
        {"flowio_ds_mapping", "enable"},
        {"cb_buffer_size", "65536"}},
       true,
       3},
      {"direct_route.dat", {{"romio_cb_write", "disable"}}, true, 4},
      {"o_direct.dat", {{"flowio_direct_io", "enable"}, {"romio_cb_write", "disable"}}, true, 5},
  };
}

std::int64_t offset_of_block(int block, int rank, int ranks) {
  return (static_cast<std::int64_t>(block) * ranks + rank) * kBlock;
}

// This rank's blocks of `salt`, written as one call through `file`'s view.
void write_blocks(flowio::File& file, const Route& route, int salt) {
  const int rank = world_rank(), ranks = world_size();
  // O_DIRECT needs aligned memory.
  void* memory = nullptr;
  if (posix_memalign(&memory, kBlock, static_cast<std::size_t>(kBlock) * kBlocksPerRank) != 0) {
    fail("posix_memalign");
  }
  char* data = static_cast<char*>(memory);
  for (int b = 0; b < kBlocksPerRank; ++b) {
    for (int i = 0; i < kBlock; ++i) {
      data[b * kBlock + i] = pattern(offset_of_block(b, rank, ranks) + i, salt);
    }
  }
  MPI_Datatype block, tiled;
  MPI_Type_contiguous(kBlock, MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, static_cast<MPI_Aint>(kBlock) * ranks, &tiled);
  MPI_Type_commit(&tiled);
  file.set_view(static_cast<MPI_Offset>(rank) * kBlock, MPI_BYTE, tiled);
  const std::size_t bytes = static_cast<std::size_t>(kBlock) * kBlocksPerRank;
  const std::size_t written =
      route.collective ? file.write_at_all(0, data, static_cast<MPI_Count>(bytes), MPI_BYTE)
                       : file.write_at(0, data, static_cast<MPI_Count>(bytes), MPI_BYTE);
  if (written != bytes) fail(std::string(route.file) + ": short write");
  file.set_view(0, MPI_BYTE, MPI_BYTE);
  MPI_Type_free(&block);
  MPI_Type_free(&tiled);
  std::free(memory);
}

void write_all_routes(const std::string& directory, bool sync) {
  for (const Route& route : routes()) {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, directory + "/" + route.file,
                                           flowio::Mode::create | flowio::Mode::rdwr, route.hints);
    write_blocks(file, route, route.salt);
    if (sync) {
      file.sync();
      // What strace shows right after sync returned (a write that fails).
      const std::string marker = std::string("flowio-sync-returned ") + route.file;
      if (::write(-1, marker.data(), marker.size()) >= 0) fail("write(-1) succeeded");
    }
    file.close();
  }
}

// The second write of after_failure.dat: the first kOverwritten bytes of
// each rank's first kOverwrittenBlocks blocks. Its access has holes, so an
// aggregator sieves: it reads the first write's bytes around it and writes
// them back with it.
constexpr int kOverwritten = 1024;
constexpr int kAfterFailureSalt = 6;
constexpr int kOverwrittenBlocks = 4;

bool overwritten(std::int64_t offset, int ranks) {
  const std::int64_t block = offset / kBlock;
  return block < static_cast<std::int64_t>(kOverwrittenBlocks) * ranks &&
         offset % kBlock < kOverwritten;
}

// A write reported complete, then a write into the same windows that fails
// on the last rank half way through its window (a short write, then
// ENOSPC): every byte of the first write outside the second write's access
// must survive, on storage and after close (the bytes inside it are
// undefined after the failure, as MPI says).
void write_then_fail(const std::string& directory) {
  const Route route = {"after_failure.dat",
                       {{"romio_cb_write", "enable"},
                        {"romio_ds_write", "enable"},
                        {"flowio_ds_mapping", "disable"},
                        {"cb_buffer_size", "65536"}},
                       true,
                       kAfterFailureSalt};
  const std::string path = directory + "/" + route.file;
  const int ranks = world_size(), rank = world_rank();
  {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                           flowio::Mode::create | flowio::Mode::rdwr, route.hints);
    write_blocks(file, route, route.salt);
    file.close();
  }
  flowio::io::set_fault_plan(
      flowio::io::FaultPlan::parse("on=write,rank=" + std::to_string(ranks - 1) + ",fault=short"));
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr, route.hints);
  flowio::io::set_fault_plan(flowio::io::FaultPlan{});
  MPI_Datatype head, tiled;
  MPI_Type_contiguous(kOverwritten, MPI_BYTE, &head);
  MPI_Type_create_resized(head, 0, static_cast<MPI_Aint>(kBlock) * ranks, &tiled);
  MPI_Type_commit(&tiled);
  file.set_view(static_cast<MPI_Offset>(rank) * kBlock, MPI_BYTE, tiled);
  std::vector<char> heads(static_cast<std::size_t>(kOverwritten) * kOverwrittenBlocks, 'G');
  // With write-behind (hint flowio_write_behind, or FLOWIO_WRITE_BEHIND
  // for every file) the write may return before it fails: its failure then
  // comes at close at the latest. Without it, the write itself fails.
  const flowio::Hints in_force = file.hints();
  const auto behind = in_force.find("flowio_write_behind");
  const bool may_go_behind = behind != in_force.end() && behind->second != "0";
  bool failed = false;
  const char* reported_at = "the write";
  try {
    file.write_at_all(0, heads.data(), static_cast<MPI_Count>(heads.size()), MPI_BYTE);
  } catch (const flowio::IoError&) {
    failed = true;
  }
  if (!failed && !may_go_behind) fail("the write with an injected fault succeeded");
  MPI_Type_free(&head);
  MPI_Type_free(&tiled);
  try {
    file.close();
  } catch (const flowio::IoError&) {
    if (failed) fail("close reported the failed write again");
    failed = true;
    reported_at = "close";
  }
  if (!failed) fail("neither the write behind with an injected fault nor close reported it");
  if (rank == 0) std::printf("write: the failed write reported at %s\n", reported_at);
}

int verify(const std::string& directory, int ranks) {
  std::vector<Route> all = routes();
  all.push_back({"after_failure.dat", {}, true, kAfterFailureSalt});
  for (const Route& route : all) {
    const std::string path = directory + "/" + route.file;
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) fail(path + ": cannot open");
    std::vector<char> block(kBlock);
    for (int rank = 0; rank < ranks; ++rank) {
      for (int b = 0; b < kBlocksPerRank; ++b) {
        const std::int64_t offset = offset_of_block(b, rank, ranks);
        if (::pread(fd, block.data(), kBlock, offset) != kBlock) {
          fail(path + ": short read at " + std::to_string(offset));
        }
        for (int i = 0; i < kBlock; ++i) {
          const bool undefined = route.salt == kAfterFailureSalt && overwritten(offset + i, ranks);
          if (!undefined && block[i] != pattern(offset + i, route.salt)) {
            fail(path + ": byte " + std::to_string(offset + i) + " lost");
          }
        }
      }
    }
    ::close(fd);
    std::printf("verify: %s: all %d ranks' %d blocks intact\n", route.file, ranks, kBlocksPerRank);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("One step of the durability test.", "durability_program");
  std::string directory;
  int ranks = 1;
  CLI::App* write_step = app.add_subcommand("write", "write every route, then fail a write");
  write_step->add_option("DIR", directory)->required();
  CLI::App* sync_step = app.add_subcommand("sync", "write every route and sync");
  sync_step->add_option("DIR", directory)->required();
  CLI::App* verify_step = app.add_subcommand("verify", "check the files (one process)");
  verify_step->add_option("DIR", directory)->required();
  verify_step->add_option("RANKS", ranks, "how many ranks wrote them")->check(CLI::PositiveNumber);
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  if (verify_step->parsed()) return verify(directory, ranks);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  try {
    write_all_routes(directory, sync_step->parsed());
    if (write_step->parsed()) write_then_fail(directory);
  } catch (const flowio::Error& error) {
    fail(error.what());
  }
  if (world_rank() == 0) {
    std::printf("%s: done on %d ranks\n", write_step->parsed() ? "write" : "sync", world_size());
  }
  MPI_Finalize();
  return 0;
}
