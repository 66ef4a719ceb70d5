// Write-behind (hint flowio_write_behind, api/write_behind.h): blocking
// collective writes that return once their data is copied, or, durable
// (hint flowio_durable), once their data phase is done, without a copy.
// What a program may rely on: the file ends up as without the hint, this
// process's later accesses see what it wrote, the buffer may be reused at
// once, arguments are checked on every process at the call, and a write
// that fails later reports its error at a later call. Run on 1, 2 and 4
// ranks.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/layer_hooks.h"
#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

constexpr std::int64_t kBlock = 4096;  // bytes of one rank's block in a round
constexpr int kRounds = 12;

flowio::Hints behind(std::int64_t budget) {
  return {{"flowio_write_behind", std::to_string(budget)}};
}

// Write-behind with every write fsync'ed before it ends, plus `more`.
flowio::Hints durable_behind(std::int64_t budget, const flowio::Hints& more = {}) {
  flowio::Hints hints = more;
  hints["flowio_write_behind"] = std::to_string(budget);
  hints["flowio_durable"] = "enable";
  return hints;
}

// The routes a durable write may take, by the hints that choose them.
struct Route {
  const char* name;
  flowio::Hints hints;
};
const std::vector<Route>& routes() {
  static const std::vector<Route> kRoutes = {
      {"chosen by flowio", {}},
      {"two-phase", {{"romio_cb_write", "enable"}, {"cb_buffer_size", "8192"}}},
      {"alltoallw",
       {{"romio_cb_write", "enable"},
        {"cb_buffer_size", "8192"},
        {"flowio_exchange", "alltoallw"}}},
      {"direct", {{"romio_cb_write", "disable"}}},
  };
  return kRoutes;
}

// Where `got` first differs from `want` (its size when one is a prefix
// of the other), or -1 when they are the same: for failure messages.
std::int64_t first_difference(const std::vector<char>& got, const std::vector<char>& want) {
  const auto [at, _] = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
  if (at == got.end() && got.size() == want.size()) return -1;
  return at - got.begin();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Round r's block of `rank`: its bytes, made from both.
char value(int round, int rank, std::int64_t i) {
  return static_cast<char>('a' + (round * 7 + rank * 3 + i) % 26);
}

// Each rank's blocks interleaved, round after round: block r of rank k at
// (r * ranks + k) * kBlock. A view that puts a rank's writes there.
MPI_Datatype interleaved_blocks() {
  MPI_Datatype block = MPI_DATATYPE_NULL, resized = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(kBlock, MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, kBlock * world_size(), &resized);
  MPI_Type_commit(&resized);
  MPI_Type_free(&block);
  return resized;
}

// A memory type with holes: the block's bytes at every other byte of a
// buffer twice its size, so that the copy a write keeps is a packed one.
MPI_Datatype every_other_byte() {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlock, 1, 2, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return type;
}

std::vector<char> expected_file() {
  std::vector<char> bytes(static_cast<std::size_t>(kRounds * world_size() * kBlock));
  for (int round = 0; round < kRounds; ++round) {
    for (int rank = 0; rank < world_size(); ++rank) {
      for (std::int64_t i = 0; i < kBlock; ++i) {
        bytes[static_cast<std::size_t>((round * world_size() + rank) * kBlock + i)] =
            value(round, rank, i);
      }
    }
  }
  return bytes;
}

// Writes the rounds through the interleaving view with write_all, each
// from a holey buffer that is scribbled over as soon as the call returns.
void write_rounds(flowio::File& file) {
  MPI_Datatype view = interleaved_blocks();
  MPI_Datatype holey = every_other_byte();
  file.set_view(world_rank() * kBlock, MPI_BYTE, view);
  std::vector<char> buffer(static_cast<std::size_t>(2 * kBlock));
  for (int round = 0; round < kRounds; ++round) {
    for (std::int64_t i = 0; i < kBlock; ++i) {
      buffer[static_cast<std::size_t>(2 * i)] = value(round, world_rank(), i);
    }
    CHECK(file.write_all(buffer.data(), 1, holey) == static_cast<std::size_t>(kBlock));
    std::fill(buffer.begin(), buffer.end(), '#');
  }
  MPI_Type_free(&holey);
  MPI_Type_free(&view);
}

}  // namespace

// Written behind, the file is the one written without; this process's own
// reads, independent and collective, see its writes before any of them is
// waited for.
TEST_CASE("Api.WriteBehind.SameFileAndOwnReadsSeeTheWrites") {
  const std::string path = fresh_path("write_behind_same");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, behind(1 << 20));
  CHECK(file.hints().at("flowio_write_behind") == "1048576");
  const long behind_before = flowio::LayerHooks::write_behind_counts().writes_behind;
  write_rounds(file);
  CHECK(flowio::LayerHooks::write_behind_counts().writes_behind - behind_before == kRounds);

  // The last round's block, read back at once: independently, then
  // collectively, through the same view.
  std::vector<char> back(static_cast<std::size_t>(kBlock), '#');
  CHECK(file.read_at((kRounds - 1) * kBlock, back.data(), kBlock, MPI_BYTE) ==
        static_cast<std::size_t>(kBlock));
  bool right = true;
  for (std::int64_t i = 0; i < kBlock; ++i) {
    right = right && back[static_cast<std::size_t>(i)] == value(kRounds - 1, world_rank(), i);
  }
  CHECK(right);
  std::fill(back.begin(), back.end(), '#');
  CHECK(file.read_at_all(0, back.data(), kBlock, MPI_BYTE) == static_cast<std::size_t>(kBlock));
  right = true;
  for (std::int64_t i = 0; i < kBlock; ++i) {
    right = right && back[static_cast<std::size_t>(i)] == value(0, world_rank(), i);
  }
  CHECK(right);
  CHECK(file.size() == kRounds * world_size() * kBlock);
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(read_whole_file(path) == expected_file());
}

// A budget of one and a half blocks: each write waits for the one before
// it; a write larger than the budget does not go behind. The file is
// still the same.
TEST_CASE("Api.WriteBehind.SmallBudget") {
  const std::string path = fresh_path("write_behind_budget");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, behind(kBlock * 3 / 2));
  const flowio::LayerHooks::WriteBehindCounts before = flowio::LayerHooks::write_behind_counts();
  write_rounds(file);
  const flowio::LayerHooks::WriteBehindCounts after = flowio::LayerHooks::write_behind_counts();
  CHECK(after.writes_behind - before.writes_behind == kRounds);
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(read_whole_file(path) == expected_file());

  const std::string whole = fresh_path("write_behind_over_budget");
  flowio::File big = flowio::File::open(MPI_COMM_WORLD, whole,
                                        flowio::Mode::create | flowio::Mode::rdwr, behind(100));
  std::vector<char> data(static_cast<std::size_t>(kBlock), static_cast<char>('A' + world_rank()));
  const long behind_before = flowio::LayerHooks::write_behind_counts().writes_behind;
  CHECK(big.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE) ==
        static_cast<std::size_t>(kBlock));
  CHECK(flowio::LayerHooks::write_behind_counts().writes_behind == behind_before);
  big.close();
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<char> file_bytes = read_whole_file(whole);
  REQUIRE(file_bytes.size() == static_cast<std::size_t>(world_size() * kBlock));
  for (int rank = 0; rank < world_size(); ++rank) {
    CHECK(file_bytes[static_cast<std::size_t>(rank * kBlock)] == static_cast<char>('A' + rank));
  }
}

// The call returns once its data is copied: with the first write of rank
// 0 held up for 1.5 s on its way to the file, every rank's call returns
// well before that, and a read of the bytes on rank 0 waits for them.
// (Not durable: a durable write waits for its own data phase.)
TEST_CASE("Api.WriteBehind.ReturnsBeforeTheDataIsWritten") {
  const std::string path = fresh_path("write_behind_stall");
  std::optional<FaultScope> faults;
  if (world_rank() == 0) faults.emplace("on=write,nth=1,fault=stall,ms=1500");
  flowio::Hints hints = behind(1 << 20);
  hints["flowio_durable"] = "disable";
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  faults.reset();
  std::vector<char> data(static_cast<std::size_t>(4 * kBlock),
                         static_cast<char>('k' + world_rank()));
  const auto start = std::chrono::steady_clock::now();
  file.write_at_all(world_rank() * 4 * kBlock, data.data(), 4 * kBlock, MPI_BYTE);
  const double call_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(call_seconds);
  CHECK(call_seconds < 0.75);
  std::vector<char> back(data.size(), '#');
  file.read_at(world_rank() * 4 * kBlock, back.data(), 4 * kBlock, MPI_BYTE);
  CHECK(back == data);
  if (world_rank() == 0) {
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 1.0);
  }
  file.close();
}

// Bad arguments on the last rank fail the call on every rank, at the call,
// and nothing starts; the next call goes on as usual.
TEST_CASE("Api.WriteBehind.BadArgumentsFailEveryRankAtTheCall") {
  const std::string path = fresh_path("write_behind_refused");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, behind(1 << 20));
  std::vector<char> data(static_cast<std::size_t>(kBlock), 'r');
  const bool last = world_rank() == world_size() - 1;
  bool refused = false;
  try {
    file.write_at_all(world_rank() * kBlock, last ? nullptr : data.data(), kBlock, MPI_BYTE);
  } catch (const flowio::UsageError& error) {
    refused = error.code() == flowio::ErrorCode::invalid_buffer;
    CAPTURE(std::string(error.what()));
    CHECK(refused);
  }
  CHECK(all_ranks(refused));
  CHECK(file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE) ==
        static_cast<std::size_t>(kBlock));
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(read_whole_file(path) ==
        std::vector<char>(static_cast<std::size_t>(world_size() * kBlock), 'r'));
}

// A write behind that fails on the last rank (ENOSPC) reports its error
// on every rank alike, naming the write, and only once: at the next call
// that waits for every write (sync; close when nothing asked before), or
// at the next write behind once every rank knows of it (size() waited for
// the writes here), which then does not start.
TEST_CASE("Api.WriteBehind.FailureReachesEveryRankLater") {
  const int last = world_size() - 1;
  for (const char* where : {"sync", "close", "next write"}) {
    CAPTURE(where);
    const std::string path = fresh_path("write_behind_fail");
    std::optional<FaultScope> faults;
    if (world_rank() == last) faults.emplace("on=write,nth=1,fault=enospc");
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, behind(1 << 20));
    faults.reset();
    std::vector<char> data(static_cast<std::size_t>(kBlock), 'f');
    // Returns: its data is copied, and its failure is not known yet.
    CHECK(file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE) ==
          static_cast<std::size_t>(kBlock));
    bool reported = false;
    try {
      if (std::string(where) == "sync") file.sync();
      if (std::string(where) == "close") file.close();
      if (std::string(where) == "next write") {
        file.size();
        file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE);
      }
    } catch (const flowio::IoError& error) {
      CAPTURE(std::string(error.what()));
      CHECK(error.system_errno() == ENOSPC);
      CHECK(error.message().find("write behind (write_at_all at offset") != std::string::npos);
      reported = error.system_errno() == ENOSPC;
    }
    CHECK(all_ranks(reported));
    if (std::string(where) != "close") {
      file.sync();  // reported once
      file.close();
    }
  }
}

// On for some processes and off for others, write-behind would have some
// check their arguments with the others and some not: open refuses it on
// every process.
TEST_CASE("Api.WriteBehind.OnForSomeProcessesOnlyFailsOpen") {
  const std::string path = fresh_path("write_behind_some");
  const flowio::Hints hints = behind(world_rank() % 2 == 0 ? 1 << 20 : 0);
  bool refused = false;
  try {
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
    file.close();
  } catch (const flowio::UsageError& error) {
    refused = error.code() == flowio::ErrorCode::not_same;
    CAPTURE(std::string(error.what()));
    CHECK(refused);
  }
  CHECK(refused == (world_size() > 1));
  CHECK(all_ranks(refused == (world_size() > 1)));
}

// Durable, each route: the writes go behind without a copy, from a holey
// buffer scribbled over as soon as each call returns, and the file is
// byte for byte the one written without write-behind.
TEST_CASE("Api.WriteBehind.DurableWithoutACopySameFile") {
  for (const Route& route : routes()) {
    const std::string route_name = route.name;
    CAPTURE(route_name);
    const std::string path = fresh_path("write_behind_durable");
    const std::string plain_path = fresh_path("write_behind_durable_plain");
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                           durable_behind(1 << 20, route.hints));
    const flowio::LayerHooks::WriteBehindCounts before = flowio::LayerHooks::write_behind_counts();
    write_rounds(file);
    const flowio::LayerHooks::WriteBehindCounts after = flowio::LayerHooks::write_behind_counts();
    CHECK(after.writes_behind - before.writes_behind == kRounds);
    CHECK(after.without_copy - before.without_copy == kRounds);
    file.close();

    // The same writes without write-behind (off here even where the
    // environment turns it on).
    flowio::File plain =
        flowio::File::open(MPI_COMM_WORLD, plain_path, flowio::Mode::create | flowio::Mode::rdwr,
                           durable_behind(0, route.hints));
    write_rounds(plain);
    CHECK(flowio::LayerHooks::write_behind_counts().writes_behind == after.writes_behind);
    plain.close();
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<char> written = read_whole_file(path);
    const std::vector<char> plain_written = read_whole_file(plain_path);
    CHECK(first_difference(written, plain_written) == -1);
    CHECK(first_difference(written, expected_file()) == -1);
    CHECK(first_difference(plain_written, expected_file()) == -1);
    MPI_Barrier(MPI_COMM_WORLD);  // read everywhere before the next route's files
  }
}

// A checkpoint loop's one buffer, refilled with the next step's values the
// moment a durable write returns: contiguous memory, sent from in place
// in many messages (two-phase, small windows), or written directly. Each
// step's bytes reach the file.
TEST_CASE("Api.WriteBehind.DurableBufferReusedAtOnce") {
  constexpr std::int64_t kStepBytes = 256 * 1024;  // a rank's, per step
  constexpr int kSteps = 4;
  auto step_value = [](int step, int rank, std::int64_t i) {
    return static_cast<char>((step * 31 + rank * 7 + i * 13) % 251);
  };
  for (const Route& route : routes()) {
    const std::string route_name = route.name;
    CAPTURE(route_name);
    const std::string path = fresh_path("write_behind_reused");
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                           durable_behind(64 << 20, route.hints));
    std::vector<char> buffer(static_cast<std::size_t>(kStepBytes));
    for (std::int64_t i = 0; i < kStepBytes; ++i) {
      buffer[static_cast<std::size_t>(i)] = step_value(0, world_rank(), i);
    }
    for (int step = 0; step < kSteps; ++step) {
      const MPI_Offset at =
          (static_cast<MPI_Offset>(step) * world_size() + world_rank()) * kStepBytes;
      CHECK(file.write_at_all(at, buffer.data(), kStepBytes, MPI_BYTE) ==
            static_cast<std::size_t>(kStepBytes));
      for (std::int64_t i = 0; i < kStepBytes; ++i) {
        buffer[static_cast<std::size_t>(i)] = step_value(step + 1, world_rank(), i);
      }
    }
    file.close();
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<char> written = read_whole_file(path);
    REQUIRE(written.size() == static_cast<std::size_t>(kSteps * world_size() * kStepBytes));
    bool right = true;
    for (int step = 0; step < kSteps; ++step) {
      for (int rank = 0; rank < world_size(); ++rank) {
        const std::int64_t at =
            (static_cast<std::int64_t>(step) * world_size() + rank) * kStepBytes;
        for (std::int64_t i = 0; i < kStepBytes; ++i) {
          right = right && written[static_cast<std::size_t>(at + i)] == step_value(step, rank, i);
        }
      }
    }
    CHECK(right);
    MPI_Barrier(MPI_COMM_WORLD);  // read everywhere before the next route's file
  }
}

// A durable write returns before its sync: with rank 0's sync held up for
// 1.5 s, every rank's call returns well before that, and the sync that
// follows on every rank waits for it.
TEST_CASE("Api.WriteBehind.DurableReturnsBeforeASlowSync") {
  const std::string path = fresh_path("write_behind_slow_sync");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, durable_behind(1 << 20));
  const FaultScope slow_sync("on=collective.persist,rank=0,fault=stall,ms=1500");
  std::vector<char> data(static_cast<std::size_t>(4 * kBlock),
                         static_cast<char>('s' + world_rank()));
  const auto start = std::chrono::steady_clock::now();
  file.write_at_all(world_rank() * 4 * kBlock, data.data(), 4 * kBlock, MPI_BYTE);
  const double call_seconds = seconds_since(start);
  CAPTURE(call_seconds);
  CHECK(call_seconds < 0.75);
  file.sync();
  const double synced_seconds = seconds_since(start);
  CAPTURE(synced_seconds);
  CHECK(synced_seconds > 1.0);
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<char> written = read_whole_file(path);
  REQUIRE(written.size() == static_cast<std::size_t>(world_size() * 4 * kBlock));
  for (int rank = 0; rank < world_size(); ++rank) {
    CHECK(written[static_cast<std::size_t>(rank * 4 * kBlock)] == static_cast<char>('s' + rank));
  }
}

// A durable write still waits for its own data phase: with rank 0's write
// of its part held up for 1.5 s, rank 0's call takes that long; the other
// ranks, whose parts go direct, do not wait for it.
TEST_CASE("Api.WriteBehind.DurableWaitsForAStalledWrite") {
  const std::string path = fresh_path("write_behind_durable_stall");
  std::optional<FaultScope> faults;
  if (world_rank() == 0) faults.emplace("on=write,nth=1,fault=stall,ms=1500");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         durable_behind(1 << 20, {{"romio_cb_write", "disable"}}));
  faults.reset();
  std::vector<char> data(static_cast<std::size_t>(4 * kBlock),
                         static_cast<char>('w' + world_rank()));
  const auto start = std::chrono::steady_clock::now();
  file.write_at_all(world_rank() * 4 * kBlock, data.data(), 4 * kBlock, MPI_BYTE);
  const double call_seconds = seconds_since(start);
  CAPTURE(call_seconds);
  if (world_rank() == 0) {
    CHECK(call_seconds > 1.0);
  } else {
    CHECK(call_seconds < 0.75);
  }
  file.close();
}

// A durable write's data counts against the budget though it is not
// copied: with a budget of one and a half blocks and every sync held up
// 0.8 s, the second write of a block waits for the first to end.
TEST_CASE("Api.WriteBehind.DurableWritesCountAgainstTheBudget") {
  const std::string path = fresh_path("write_behind_durable_budget");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         durable_behind(kBlock * 3 / 2));
  const FaultScope slow_syncs("on=collective.persist,times=0,fault=stall,ms=800");
  std::vector<char> data(static_cast<std::size_t>(kBlock), static_cast<char>('b' + world_rank()));
  const flowio::LayerHooks::WriteBehindCounts before = flowio::LayerHooks::write_behind_counts();
  file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE);
  const auto start = std::chrono::steady_clock::now();
  file.write_at_all((world_size() + world_rank()) * kBlock, data.data(), kBlock, MPI_BYTE);
  const double second_seconds = seconds_since(start);
  CAPTURE(second_seconds);
  CHECK(second_seconds > 0.5);
  const flowio::LayerHooks::WriteBehindCounts after = flowio::LayerHooks::write_behind_counts();
  CHECK(after.without_copy - before.without_copy == 2);
  CHECK(after.waits_for_room - before.waits_for_room == 1);
  file.close();
}

// A durable write whose sync fails on the last rank (ENOSPC, EIO) returns
// as usual; the failure reaches every rank alike, naming the write, once:
// at the next sync, at close, or at the next write behind once every rank
// knows of it.
TEST_CASE("Api.WriteBehind.DurableSyncFailureReachesEveryRankLater") {
  const int last = world_size() - 1;
  for (const int code : {ENOSPC, EIO}) {
    for (const char* where : {"sync", "close", "next write"}) {
      CAPTURE(code);
      CAPTURE(where);
      const std::string path = fresh_path("write_behind_sync_fail");
      flowio::File file = flowio::File::open(
          MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, durable_behind(1 << 20));
      const FaultScope failing_sync("on=collective.persist,rank=" + std::to_string(last) +
                                    ",fault=" + (code == ENOSPC ? "enospc" : "eio"));
      std::vector<char> data(static_cast<std::size_t>(kBlock), 'd');
      CHECK(file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE) ==
            static_cast<std::size_t>(kBlock));
      int reported = 0;
      try {
        if (std::string(where) == "sync") file.sync();
        if (std::string(where) == "close") file.close();
        if (std::string(where) == "next write") {
          file.size();
          file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE);
        }
      } catch (const flowio::IoError& error) {
        CAPTURE(std::string(error.what()));
        CHECK(error.system_errno() == code);
        CHECK(error.message().find("write behind (write_at_all at offset") != std::string::npos);
        reported += error.system_errno() == code ? 1 : 0;
      }
      if (std::string(where) != "close") {
        try {
          file.sync();
          file.close();
        } catch (const flowio::Error& error) {
          CAPTURE(std::string(error.what()));
          ++reported;  // reported twice
        }
      }
      CHECK(reported == 1);
      CHECK(all_ranks(reported == 1));
    }
  }
}
