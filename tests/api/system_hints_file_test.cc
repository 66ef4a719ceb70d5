// The system hints file through File::open, on every rank: its hints are
// applied and reported by File::hints, the program's hints override it, its
// malformed lines are reported, a value flowio refuses in it fails open
// naming the file, and ind_rd_buffer_size (49 bytes here) still reads a
// strided view right.
//
// The file is read once per process, at the first open: every test case
// first writes it (rank 0) and points FLOWIO_HINTS at it, so whichever
// case runs first sees the same file.
#include <doctest/doctest.h>
#include <mpi.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "api/system_hints.h"
#include "flowio/flowio.h"
#include "tests/api/test_paths.h"

namespace {

// Line 6 repeats a key, lines 7 and 8 are malformed; line 9's value is
// one flowio refuses, so an open must override flowio_ds_threshold.
constexpr const char* kHintsFile =
    "# site hints\n"
    "cb_buffer_size 1048576\n"
    "ind_rd_buffer_size 49\n"
    "romio_no_indep_rw true\n"
    "flowio_plan_cache 2\n"
    "ind_rd_buffer_size 60\n"
    "lonely\n"
    "this line has five words\n"
    "flowio_ds_threshold not_a_number\n";

const flowio::Hints kValidThreshold = {{"flowio_ds_threshold", "100"}};

void use_hints_file() {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "system_hints.txt");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream out(path);
    out << kHintsFile;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("FLOWIO_HINTS", path.c_str(), 1);
}

std::string data_path(const char* name) {
  return flowio::testing::scratch_path(MPI_COMM_WORLD, name);
}

}  // namespace

// The file's hints are in force and reported; the first of a repeated key
// stays; the file's problems are listed.
TEST_CASE("Api.SystemHintsFile.AppliedAndReported") {
  use_hints_file();
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_applied"),
                         flowio::Mode::create | flowio::Mode::rdwr, kValidThreshold);
  const flowio::Hints hints = file.hints();
  CHECK(hints.at("cb_buffer_size") == "1048576");
  CHECK(hints.at("ind_rd_buffer_size") == "49");
  CHECK(hints.at("romio_no_indep_rw") == "true");
  CHECK(hints.at("flowio_plan_cache") == "2");
  CHECK(hints.at("flowio_ds_threshold") == "100");
  CHECK(hints.at("ind_wr_buffer_size") == "16777216");
  file.close();

  const flowio::SystemHints& found = flowio::system_hints();
  CHECK(found.source == data_path("system_hints.txt"));
  REQUIRE(found.problems.size() == 3);
  CHECK(found.problems[0].find("line 6") != std::string::npos);
  CHECK(found.problems[1].find("line 7") != std::string::npos);
  CHECK(found.problems[2].find("line 8") != std::string::npos);
}

// A hint the program passes keeps the program's value.
TEST_CASE("Api.SystemHintsFile.ProgramOverridesFile") {
  use_hints_file();
  flowio::Hints mine = kValidThreshold;
  mine["cb_buffer_size"] = "65536";
  mine["romio_no_indep_rw"] = "false";
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_override"),
                                         flowio::Mode::create | flowio::Mode::rdwr, mine);
  const flowio::Hints hints = file.hints();
  CHECK(hints.at("cb_buffer_size") == "65536");
  CHECK(hints.at("romio_no_indep_rw") == "false");
  CHECK(hints.at("ind_rd_buffer_size") == "49");
  file.close();

  // A value of romio_no_indep_rw ROMIO ignores (MPICH's i_aggregation1
  // passes "1") does not fail open; it is ignored likewise.
  mine["romio_no_indep_rw"] = "1";
  file = flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_override"), flowio::Mode::rdwr,
                            mine);
  CHECK(file.hints().at("romio_no_indep_rw") == "false");
  file.close();
}

// A value flowio refuses fails open on every rank: attributed to the
// hints file when only the file sets it, to the program when it is the
// program's.
TEST_CASE("Api.SystemHintsFile.RefusedValueNamesItsSource") {
  use_hints_file();
  std::string message;
  try {
    flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_refused"),
                       flowio::Mode::create | flowio::Mode::rdwr);
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::invalid_hint);
    message = error.what();
  }
  CHECK(message.find("flowio_ds_threshold") != std::string::npos);
  CHECK(message.find("system hints file") != std::string::npos);

  message.clear();
  flowio::Hints mine = kValidThreshold;
  mine["cb_buffer_size"] = "lots";
  try {
    flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_refused"),
                       flowio::Mode::create | flowio::Mode::rdwr, mine);
  } catch (const flowio::UsageError& error) {
    message = error.what();
  }
  CHECK(message.find("cb_buffer_size") != std::string::npos);
  CHECK(message.find("system hints file") == std::string::npos);
}

// Independent reads in batches of at most 49 bytes of file (the file's
// ind_rd_buffer_size) and writes in batches of at most 24 bytes (the
// program's ind_wr_buffer_size) move a strided view's data right.
TEST_CASE("Api.SystemHintsFile.SmallIndependentBuffersStillRight") {
  use_hints_file();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  flowio::Hints mine = kValidThreshold;
  mine["ind_wr_buffer_size"] = "24";
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, data_path("system_hints_small"),
                                         flowio::Mode::create | flowio::Mode::rdwr, mine);
  // Each rank's view: 3 ints out of every 3 * ranks, interleaved.
  MPI_Datatype block = MPI_DATATYPE_NULL, tile = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(3, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, static_cast<MPI_Aint>(3 * sizeof(int)) * ranks, &tile);
  MPI_Type_commit(&tile);
  file.set_view(static_cast<MPI_Offset>(3 * sizeof(int)) * rank, MPI_INT, tile);
  constexpr int kInts = 3000;
  std::vector<int> mine_data(kInts), back(kInts, -1);
  for (int i = 0; i < kInts; ++i) mine_data[static_cast<std::size_t>(i)] = rank * 100000 + i;
  CHECK(file.write_at(0, mine_data.data(), kInts, MPI_INT) == kInts * sizeof(int));
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  file.sync();
  CHECK(file.read_at(0, back.data(), kInts, MPI_INT) == kInts * sizeof(int));
  CHECK(back == mine_data);
  file.close();
  MPI_Type_free(&tile);
  MPI_Type_free(&block);
}
