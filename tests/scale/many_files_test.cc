// 1,000 files open at once in each process, opened, written, read and
// closed by 4 threads at the same time, each thread on its own duplicated
// communicator with 250 files: every byte read back is the one written,
// and every file ends with exactly its ranks' bytes.
#include <doctest/doctest.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <barrier>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr int kThreads = 4;
constexpr int kFilesPerThread = 250;
constexpr int kBlock = 4096;  // each rank's bytes in each file

char byte_of(int thread, int file, int rank, int i) {
  return static_cast<char>(1 + (thread * 131 + file * 17 + rank * 7 + i) % 251);
}

std::string path_of(const std::string& directory, int thread, int file) {
  return directory + "/t" + std::to_string(thread) + "_f" + std::to_string(file);
}

// One thread's part: opens its files (collective on `comm`), waits until
// every thread of the process holds all of its files, writes its rank's
// block of each (the first collectively), reads each back after a barrier,
// and closes them. Returns the number of bad blocks.
int run_thread(MPI_Comm comm, int thread, const std::string& directory, std::barrier<>& all_open) {
  const int rank = world_rank(), ranks = world_size();
  std::vector<flowio::File> files;
  files.reserve(kFilesPerThread);
  for (int f = 0; f < kFilesPerThread; ++f) {
    files.push_back(flowio::File::open(comm, path_of(directory, thread, f),
                                       flowio::Mode::create | flowio::Mode::rdwr));
  }
  all_open.arrive_and_wait();
  std::vector<char> block(kBlock);
  for (int f = 0; f < kFilesPerThread; ++f) {
    for (int i = 0; i < kBlock; ++i)
      block[static_cast<std::size_t>(i)] = byte_of(thread, f, rank, i);
    const MPI_Offset at = std::int64_t{rank} * kBlock;
    if (f == 0) {
      files[0].write_at_all(at, block.data(), kBlock, MPI_BYTE);
    } else {
      files[static_cast<std::size_t>(f)].write_at(at, block.data(), kBlock, MPI_BYTE);
    }
  }
  MPI_Barrier(comm);
  int bad = 0;
  std::vector<char> whole(static_cast<std::size_t>(kBlock) * ranks);
  for (int f = 0; f < kFilesPerThread; ++f) {
    files[static_cast<std::size_t>(f)].read_at(0, whole.data(), kBlock * ranks, MPI_BYTE);
    for (int r = 0; r < ranks; ++r) {
      for (int i = 0; i < kBlock; ++i) {
        if (whole[static_cast<std::size_t>(r * kBlock + i)] != byte_of(thread, f, r, i)) {
          ++bad;
          break;
        }
      }
    }
  }
  all_open.arrive_and_wait();
  for (flowio::File& file : files) file.close();
  return bad;
}

}  // namespace

TEST_CASE("Scale.ManyFiles.AThousandOpenAtOnceFromFourThreads") {
  const std::string directory = flowio::testing::scratch_path(MPI_COMM_WORLD, "many_files");
  if (world_rank() == 0) ::mkdir(directory.c_str(), 0755);
  MPI_Barrier(MPI_COMM_WORLD);
  // The communicators are made in one order on every rank, before any
  // thread uses one.
  std::vector<MPI_Comm> comms(kThreads);
  for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::barrier all_open(kThreads);
  std::vector<int> bad(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        bad[static_cast<std::size_t>(t)] =
            run_thread(comms[static_cast<std::size_t>(t)], t, directory, all_open);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "rank %d thread %d: %s\n", world_rank(), t, error.what());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(bad[static_cast<std::size_t>(t)] == 0);
  }
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    for (int t = 0; t < kThreads; ++t) {
      for (int f = 0; f < kFilesPerThread; ++f) ::unlink(path_of(directory, t, f).c_str());
    }
    ::rmdir(directory.c_str());
  }
}
