// A failure in each stage of a collective operation, on each rank in turn
// (injection points, runtime/core/injection_point.h, armed through
// io/fault_injection.h), for a collective write and read: every rank's
// call completes with the same error class and a message naming the rank
// and the stage where the failure began, in bounded time; then the file
// is still usable (a collective write and read of new bytes succeed and
// give them back). Nonblocking calls are waited for up to a deadline that
// fails the job naming the case; a blocking call that hung would be named
// by the watchdog (tests/support/test_progress.h). Each case prints a
// "flowio-outcome:" line for the reliability issue's closing table.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/future_deadline.h"
#include "tests/support/test_progress.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

// A failure must reach every rank well within this (measured: a few
// milliseconds; the margin is for a loaded machine and the sanitizers).
constexpr double kBoundSeconds = 10.0;
// A hang fails the job at this deadline, naming the case.
constexpr std::chrono::seconds kDeadline{30};

// Each rank's bytes interleave with the others' in blocks, and windows
// are small, so that every rank is a client of every aggregator and each
// operation has several windows and client items.
constexpr int kBlock = 256;
constexpr std::int64_t kBlocksPerRank = 16;
constexpr std::int64_t kBytesPerRank = kBlocksPerRank * kBlock;

std::vector<char> my_data(int salt) {
  std::vector<char> data(kBytesPerRank);
  for (std::int64_t i = 0; i < kBytesPerRank; ++i) {
    data[i] = static_cast<char>((i * 131 + world_rank() * 17 + salt * 7 + 1) % 251);
  }
  return data;
}

// How the collective calls run, and the stages their operations pass.
struct Route {
  const char* name;
  flowio::Hints hints;
  std::vector<const char*> stages;
};

std::vector<Route> routes() {
  const std::string ranks = std::to_string(world_size());
  // Plans are compiled for every call (the cache off), so that the realms,
  // metadata and plan stages run each time, except on the route that
  // keeps them (where they run once, and the realms stage finds the plan).
  const flowio::Hints two_phase = {
      {"romio_cb_write", "enable"}, {"romio_cb_read", "enable"},      {"cb_nodes", ranks},
      {"cb_buffer_size", "1024"},   {"flowio_ds_mapping", "disable"}, {"flowio_plan_cache", "0"}};
  flowio::Hints compressed = two_phase;
  compressed["flowio_compress"] = "on";
  compressed["flowio_compress_min_bytes"] = "0";
  flowio::Hints kept = two_phase;
  kept["flowio_plan_cache"] = "4";
  flowio::Hints rounds = two_phase;
  rounds["flowio_exchange"] = "alltoallw";
  rounds["cb_nodes"] = "1";
  const flowio::Hints direct = {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}};
  const std::vector<const char*> point_to_point = {
      "describe", "offsets",    "realms", "metadata",    "plan",         "pack",    "compress",
      "exchange", "decompress", "unpack", "window_read", "window_write", "persist", "agree"};
  return {
      {"point to point", two_phase, point_to_point},
      {"point to point, compressed", compressed, point_to_point},
      {"point to point, plans kept",
       kept,
       {"describe", "realms", "pack", "exchange", "window_write", "agree"}},
      {"alltoallw, one aggregator",
       rounds,
       {"describe", "offsets", "realms", "metadata", "plan", "round_prepare", "round_exchange",
        "round_finish", "persist", "agree"}},
      {"direct",
       direct,
       {"describe", "offsets", "realms", "direct_lock", "direct_io", "persist", "agree"}},
  };
}

// The fault injected, in turn: a typed error, an I/O error, an exception
// that is not flowio's (reported as an I/O error everywhere).
struct Fault {
  const char* name;
  flowio::ErrorCode expected;
};
const Fault kFaults[] = {{"usage", flowio::ErrorCode::invalid_argument},
                         {"eio", flowio::ErrorCode::io},
                         {"bad_alloc", flowio::ErrorCode::io}};

// What one rank saw, gathered to every rank.
struct Seen {
  int code = -1;  // -1: success; -2: not a flowio::Error
  int names_rank = 0;
  int names_stage = 0;
  double seconds = 0;
};

// What a case does, for failure reports and the operation's watchdog:
// "ROUTE, [i]write_at_all (or read), WHERE throws FAULT on rank N".
std::string describe_case(const char* route, bool blocking, bool writing, const std::string& where,
                          const Fault& fault, int failing) {
  const std::string call =
      std::string(blocking ? "" : "i") + (writing ? "write_at_all" : "read_at_all");
  return std::string(route) + ", " + call + ", " + where + " throws " + fault.name + " on rank " +
         std::to_string(failing);
}

// The injection spec of a fault of the collective path at `point` (a
// stage or a finer point) on rank `failing`: FaultScope's text.
std::string collective_fault(const std::string& point, int failing, const std::string& fault) {
  return "on=collective." + point + ",rank=" + std::to_string(failing) + ",fault=" + fault;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `call` (which waits for its operation within kDeadline, or fails
// the job naming it) and records what this rank saw.
Seen observe(int failing_rank, const std::string& stage, const std::function<void()>& call) {
  Seen seen;
  const auto begin = std::chrono::steady_clock::now();
  try {
    call();
  } catch (const flowio::Error& error) {
    seen.code = static_cast<int>(error.code());
    const std::string message = error.what();
    seen.names_rank = contains(message, "rank " + std::to_string(failing_rank)) ? 1 : 0;
    seen.names_stage = contains(message, stage) ? 1 : 0;
  } catch (...) {
    seen.code = -2;
  }
  seen.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return seen;
}

std::vector<Seen> gather(const Seen& mine) {
  std::vector<Seen> all(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

std::string describe(const std::vector<Seen>& all) {
  std::string text;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    char line[96];
    const Seen& seen = all[rank];
    const std::string code = seen.code == -1 ? "ok"
                             : seen.code == -2
                                 ? "not a flowio::Error"
                                 : flowio::to_string(static_cast<flowio::ErrorCode>(seen.code));
    std::snprintf(line, sizeof line, "%srank %zu: %s %.3f s", rank == 0 ? "" : "; ", rank,
                  code.c_str(), seen.seconds);
    text += line;
  }
  return text;
}

// A collective write of new bytes, then a read of them: both succeed on
// every rank and give the bytes back.
void check_usable(flowio::File& file, int salt, const std::string& what, MPI_Offset at = 0) {
  const std::vector<char> data = my_data(salt);
  std::size_t wrote = 0;
  flowio::Future<std::size_t> writing =
      file.iwrite_at_all(at, data.data(), kBytesPerRank, MPI_CHAR);
  wrote = flowio::testing::get_within(writing, kDeadline, what + ": write after the fault");
  std::vector<char> back(kBytesPerRank, '#');
  flowio::Future<std::size_t> reading = file.iread_at_all(at, back.data(), kBytesPerRank, MPI_CHAR);
  const std::size_t read = flowio::testing::get_within(reading, kDeadline, what + ": read back");
  CHECK_MESSAGE(all_ranks(wrote == kBytesPerRank && read == kBytesPerRank && back == data),
                what << ": the file is not usable after the fault");
}

// Which ranks fail a stage: each in turn on 2 ranks; on more, one rank per
// case, turning with the case so that every rank fails some stages.
std::vector<int> failing_ranks(std::size_t case_number) {
  if (world_size() <= 2) {
    std::vector<int> all;
    for (int rank = 0; rank < world_size(); ++rank) all.push_back(rank);
    return all;
  }
  return {static_cast<int>(case_number % static_cast<std::size_t>(world_size()))};
}

// Every rank's call failed with `expected`, naming `failing` and `stage`,
// within the bound; rank 0 prints the case's "flowio-outcome:" line.
void check_every_rank_failed(const std::vector<Seen>& all, flowio::ErrorCode expected, int failing,
                             const std::string& stage, const std::string& line) {
  if (world_rank() == 0) {
    std::printf("flowio-outcome: %s | %s\n", line.c_str(), describe(all).c_str());
    std::fflush(stdout);
  }
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    CAPTURE(rank);
    CHECK_MESSAGE(all[rank].code == static_cast<int>(expected), describe(all));
    CHECK_MESSAGE(all[rank].names_rank == 1, "the error does not name rank " << failing);
    CHECK_MESSAGE(all[rank].names_stage == 1, "the error does not name stage " << stage);
    CHECK(all[rank].seconds < kBoundSeconds);
  }
}

}  // namespace

// Each stage of each route throws on one rank (each in turn), in a
// collective write and a collective read, nonblocking (stages on the
// engine's threads) and, on the first route, blocking (stages on the
// caller): every rank fails alike, in bounded time, naming the rank and
// stage; the file stays usable.
TEST_CASE("Api.StageFault.EveryStageFailsEveryRankAlike") {
  if (world_size() < 2) {
    flowio::testing::skip("a failure reaching other ranks needs at least 2 ranks");
    return;
  }
  const InterleavedView view(kBlock);
  std::size_t case_number = 0;
  int salt = 0;
  bool first_route = true;
  for (const Route& route : routes()) {
    const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "stage_fault");
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path,
        flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, route.hints);
    view.apply(file);
    check_usable(file, ++salt, route.name);
    std::vector<bool> blocking_forms = {false};
    if (first_route) blocking_forms.push_back(true);
    first_route = false;
    for (const char* stage : route.stages) {
      for (const bool blocking : blocking_forms) {
        for (const bool writing : {true, false}) {
          for (const int failing : failing_ranks(case_number)) {
            const Fault& fault = kFaults[case_number % std::size(kFaults)];
            ++case_number;
            const std::string what = describe_case(route.name, blocking, writing,
                                                   std::string("stage ") + stage, fault, failing);
            CAPTURE(what);
            const flowio::testing::Operation running(what);
            const std::vector<char> data = my_data(++salt);
            std::vector<char> back(kBytesPerRank, '#');
            Seen mine;
            {
              const FaultScope scope(collective_fault(stage, failing, fault.name));
              mine = observe(failing, stage, [&] {
                if (blocking && writing) {
                  file.write_at_all(0, data.data(), kBytesPerRank, MPI_CHAR);
                } else if (blocking) {
                  file.read_at_all(0, back.data(), kBytesPerRank, MPI_CHAR);
                } else {
                  flowio::Future<std::size_t> pending =
                      writing ? file.iwrite_at_all(0, data.data(), kBytesPerRank, MPI_CHAR)
                              : file.iread_at_all(0, back.data(), kBytesPerRank, MPI_CHAR);
                  flowio::testing::get_within(pending, kDeadline, what);
                }
              });
            }
            check_every_rank_failed(gather(mine), fault.expected, failing, stage, what);
            check_usable(file, ++salt, what);
          }
        }
      }
    }
    file.close();
  }
}

// A stage that stalls on one rank (200 ms) delays the collective write on
// every rank, with no false error and no rank giving up early, and the
// bytes arrive.
TEST_CASE("Api.StageFault.StalledStageDelaysEveryRank") {
  if (world_size() < 2) {
    flowio::testing::skip("a stall reaching other ranks needs at least 2 ranks");
    return;
  }
  constexpr double kStallSeconds = 0.2;
  const int last = world_size() - 1;
  const InterleavedView view(kBlock);
  const Route route = routes().front();
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "stage_stall");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path,
      flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, route.hints);
  view.apply(file);
  // The file's first collective call starts its machinery: not timed.
  check_usable(file, 99, "stall test: first calls");
  int salt = 100;
  for (const char* stage : {"realms", "metadata", "exchange", "window_write", "agree"}) {
    const std::string what =
        std::string("iwrite_at_all, stage ") + stage + " stalls on rank " + std::to_string(last);
    CAPTURE(what);
    const flowio::testing::Operation running(what);
    const std::vector<char> data = my_data(++salt);
    Seen mine;
    {
      const FaultScope scope(collective_fault(stage, last, "stall,ms=200"));
      mine = observe(last, stage, [&] {
        flowio::Future<std::size_t> pending =
            file.iwrite_at_all(0, data.data(), kBytesPerRank, MPI_CHAR);
        flowio::testing::get_within(pending, kDeadline, what);
      });
    }
    const std::vector<Seen> all = gather(mine);
    if (world_rank() == 0) {
      std::printf("flowio-outcome: %s %s | stage %s stalls 200 ms on rank %d | %s\n", route.name,
                  "iwrite_at_all", stage, last, describe(all).c_str());
      std::fflush(stdout);
    }
    for (const Seen& seen : all) {
      CHECK_MESSAGE(seen.code == -1, describe(all));
      CHECK(seen.seconds >= kStallSeconds);
      CHECK(seen.seconds < kStallSeconds + kBoundSeconds);
    }
    std::vector<char> back(kBytesPerRank, '#');
    flowio::Future<std::size_t> reading =
        file.iread_at_all(0, back.data(), kBytesPerRank, MPI_CHAR);
    flowio::testing::get_within(reading, kDeadline, what + ": read back");
    CHECK(all_ranks(back == data));
  }
  file.close();
}

// The plan itself cannot be made on one rank: its realm calc, the decode
// of its clients' descriptions or its items step throws part way (a failed
// allocation, or a description that does not decode), with part of the
// plan built. Every rank fails alike in bounded time, naming the rank and
// the stage (realms for the realm calc, plan for the others); with plans
// kept, the failed plan is not: the same call again compiles anew and
// succeeds, and so does a read back.
TEST_CASE("Api.StageFault.PlanThatCannotBeMadeFailsEveryRank") {
  if (world_size() < 2) {
    flowio::testing::skip("a failure reaching other ranks needs at least 2 ranks");
    return;
  }
  struct Point {
    const char* name;
    const char* stage;  // in the error
  };
  const Point points[] = {
      {"plan_realms", "realms"}, {"metadata_decode", "plan"}, {"plan_items", "plan"}};
  const Fault faults[] = {{"bad_alloc", flowio::ErrorCode::io},
                          {"malformed", flowio::ErrorCode::mpi}};
  const InterleavedView view(kBlock);
  std::size_t case_number = 0;
  int salt = 1000;
  bool first_route = true;
  std::vector<Route> tried = routes();
  tried.pop_back();  // direct: no plan
  for (const Route& route : tried) {
    const bool one_aggregator = route.hints.at("cb_nodes") == "1";
    const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "plan_fault");
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path,
        flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, route.hints);
    view.apply(file);
    std::vector<bool> blocking_forms = {false};
    if (first_route) blocking_forms.push_back(true);
    first_route = false;
    for (const Point& point : points) {
      for (const bool blocking : blocking_forms) {
        for (const bool writing : {true, false}) {
          std::vector<int> failing_list = failing_ranks(case_number);
          // Only an aggregator decodes descriptions.
          if (one_aggregator && std::string(point.name) == "metadata_decode") failing_list = {0};
          for (const int failing : failing_list) {
            const Fault& fault = faults[case_number % std::size(faults)];
            ++case_number;
            // A place of its own in each rank's stream, so that no plan
            // kept from an earlier case applies and the call compiles.
            const auto at = static_cast<MPI_Offset>(case_number * kBytesPerRank);
            const std::string what =
                describe_case(route.name, blocking, writing, point.name, fault, failing);
            CAPTURE(what);
            const flowio::testing::Operation running(what);
            const std::vector<char> data = my_data(++salt);
            std::vector<char> back(kBytesPerRank, '#');
            Seen mine;
            {
              const FaultScope scope(collective_fault(point.name, failing, fault.name));
              mine = observe(failing, point.stage, [&] {
                if (blocking && writing) {
                  file.write_at_all(at, data.data(), kBytesPerRank, MPI_CHAR);
                } else if (blocking) {
                  file.read_at_all(at, back.data(), kBytesPerRank, MPI_CHAR);
                } else {
                  flowio::Future<std::size_t> pending =
                      writing ? file.iwrite_at_all(at, data.data(), kBytesPerRank, MPI_CHAR)
                              : file.iread_at_all(at, back.data(), kBytesPerRank, MPI_CHAR);
                  flowio::testing::get_within(pending, kDeadline, what);
                }
              });
            }
            check_every_rank_failed(gather(mine), fault.expected, failing, point.stage, what);
            // The same call again (the write, or the read after a write):
            // it compiles anew, kept plans or not.
            check_usable(file, ++salt, what, at);
          }
        }
      }
    }
    file.close();
  }
}
