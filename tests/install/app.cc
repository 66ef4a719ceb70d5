// Install check, C++ API: built outside Bazel against an installed flowio
// (tests/install/check_install.sh), it writes an interleaved file
// collectively, reads it back and checks every value, and checks that the
// ranks' disjoint views share no object. Prints one line on
// rank 0; exits nonzero on any failure.
//
// Each rank owns blocks of kBlock ints, dealt round-robin (block b of rank r
// sits at file block b * ranks + r): a view with holes, so the two-phase
// path with its exchange between ranks runs, not just one write per rank.
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <flowio/flowio.h>
#include <flowio/object_set.h>

namespace {

constexpr int kBlock = 256, kBlocksPerRank = 64;

int value_at(int rank, int index) { return rank * 1000003 + index; }

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string path = argc > 1 ? argv[1] : "flowio_install_check.dat";

  long wrong = 0;
  try {
    MPI_Datatype block, filetype;
    MPI_Type_contiguous(kBlock, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, static_cast<MPI_Aint>(kBlock) * ranks * sizeof(int),
                            &filetype);
    MPI_Type_commit(&filetype);
    const MPI_Offset displacement = static_cast<MPI_Offset>(rank) * kBlock * sizeof(int);
    const int count = kBlock * kBlocksPerRank;

    std::vector<int> mine(count);
    for (int i = 0; i < count; ++i) mine[i] = value_at(rank, i);
    flowio::File out =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
    out.set_size(0);  // create keeps a longer file of an earlier run
    out.set_view(displacement, MPI_INT, filetype);
    // `mine` is borrowed until the future is ready.
    flowio::Future<std::size_t> written = out.iwrite_at_all(0, mine.data(), count, MPI_INT);
    if (written.get() != count * sizeof(int)) ++wrong;
    out.close();

    std::vector<int> back(count, -1);
    flowio::File in = flowio::File::open(MPI_COMM_WORLD, path,
                                         flowio::Mode::rdonly | flowio::Mode::delete_on_close);
    in.set_view(displacement, MPI_INT, filetype);
    if (in.read_at_all(0, back.data(), count, MPI_INT) != count * sizeof(int)) ++wrong;
    if (in.size() != static_cast<MPI_Offset>(count * ranks * sizeof(int))) ++wrong;
    in.close();
    for (int i = 0; i < count; ++i) wrong += back[i] != mine[i] ? 1 : 0;
    // The views are disjoint: their object set shares nothing, whatever
    // the offset (the installed library holds object sets too).
    const flowio::ObjectSet objects =
        flowio::ObjectSet::gather(MPI_COMM_WORLD, displacement, MPI_INT, filetype);
    if (objects.shared_count() != 0 || objects.touches_shared(1 << 30, (1 << 30) + 4096)) ++wrong;
    MPI_Type_free(&filetype);
    MPI_Type_free(&block);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  long total_wrong = 0;
  MPI_Allreduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("install check (C++ API): %d ranks, %ld wrong values: %s\n", ranks, total_wrong,
                total_wrong == 0 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
