// bench/ior: IOR's access shapes, IO500's ior-easy and ior-hard, on one
// shared file through MPI-IO, with flowio's MPI-IO layer (MPI_File_*,
// linked into this binary: the path of an unmodified MPI-IO program) and
// MPICH's own MPI-IO (PMPI_File_*, ROMIO) in the same run:
//
//   easy  each rank writes a contiguous block of --block bytes per segment,
//         in transfers of --transfer bytes: transfer t of rank r in segment
//         s is at s*ranks*block + r*block + t*transfer (IOR's -b, -t, -s).
//   hard  IO500's ior-hard: transfers of 47,008 bytes, one per block, the
//         ranks' blocks interleaved: segment s of rank r is at
//         (s*ranks + r)*47008. --block and --transfer do not apply.
//
// Each shape runs in two modes: independent (MPI_File_write_at /
// MPI_File_read_at, one call per transfer) and collective
// (MPI_File_write_at_all / MPI_File_read_at_all, IOR's -c). A phase is timed
// as IOR times it: from a barrier, open, every transfer, close, to the end
// of the slowest rank. The write phase creates the file (with --fsync=1 it
// calls MPI_File_sync before closing, IOR's -e); the read phase reads the
// data of rank (r+1) % ranks (IOR's -C, so that no rank reads what it
// wrote; on one node it still comes from the page cache), and every byte
// is checked after the timing: a wrong byte ends the job with exit code 2.
// The file is removed after its read phase and made anew the next round,
// as IOR does between repetitions. --hints go to both sides' opens through
// an MPI_Info (ROMIO ignores keys it does not know, flowio_* ones say).
//
// Each round runs every side in turn, its write phase then its read phase,
// the order of the sides rotating from round to round; before the first
// round each side writes and reads one small file untimed. In the first
// round each side's file is read again, untimed and checked, by the other.
//
// Printed per shape, mode and op (write or read): one line per side, MiBps
// (all ranks' bytes over the median phase time), MiBps_min and MiBps_max
// (the slowest and the fastest round) and seconds (the median); with both
// sides, then, ratio = the layer's MiBps over MPICH's (MPICH's median time
// over the layer's: above 1, the layer is faster), with ratio_min and
// ratio_max, the extremes of the rounds' own ratios.
//
// Usage: mpiexec -n N bazel-bin/bench/ior [--shapes=easy,hard]
//   [--modes=independent,collective] [--block=67108864] [--transfer=1048576]
//   [--segments=0 (easy 1, hard 2000)] [--fsync=0|1] [--hints=KEY=VALUE,...]
//   [--sides=layer,mpich] [--reps=3 rounds] [--dir=$TMPDIR]
// For example:
//   mpiexec -n 4 bazel-bin/bench/ior --block=4194304 --segments=50 --reps=1
//   mpiexec -n 2 bazel-bin/bench/ior --shapes=easy --fsync=1
//   mpiexec -n 2 bazel-bin/bench/ior --hints=flowio_write_behind=268435456
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/mpi_entry_points.h"
#include "flowio/error.h"
#include "flowio/hints.h"
#include "tests/support/world.h"

namespace {

using flowio::check_mpi;
using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr double kMiB = 1024.0 * 1024.0;

// IO500's ior-hard transfer: not a multiple of any file-system block, so
// that neighbouring ranks' transfers share blocks.
constexpr std::int64_t kHardTransfer = 47008;

// IOR's layout of a shared file: each rank's data is `segments` blocks of
// `block` bytes, each moved in transfers of `transfer` bytes, and block s of
// rank r lies at (s*ranks + r)*block, the ranks' blocks interleaved segment
// by segment. The rank's transfers are numbered in the order of its data:
// transfer i holds bytes [i*transfer, (i+1)*transfer) of it.
struct Shape {
  std::string name;
  std::int64_t transfer = 0;
  std::int64_t block = 0;  // a whole number of transfers
  std::int64_t segments = 0;

  std::int64_t transfers() const { return segments * (block / transfer); }
  std::int64_t rank_bytes() const { return segments * block; }
  MPI_Offset offset(int rank, int ranks, std::int64_t index) const {
    const std::int64_t per_block = block / transfer;
    return (index / per_block * ranks + rank) * block + index % per_block * transfer;
  }
};

// What the phases of one shape and mode share.
struct Case {
  Shape shape;
  bool collective = false;
  bool fsync = false;
  MPI_Info info = MPI_INFO_NULL;  // the hints, borrowed

  std::string name() const { return shape.name + "_" + mode(); }
  std::string mode() const { return collective ? "collective" : "independent"; }
};

// The rank whose data `rank` reads (IOR's -C, a shift of one).
int neighbor_of(int rank) { return (rank + 1) % world_size(); }

// The phases hold their MPI_File in a plain handle, not an RAII one: an
// error throws to bench::run_benchmark, which ends the job, and a
// collective close run by a destructor on the way would wait for ranks that
// never come.

// IOR's write phase on `path`: open (create, write-only), every transfer of
// this rank's `data`, MPI_File_sync with fsync, close.
void write_phase(const bench::MpiEntryPoints& calls, const std::string& path, const Case& run,
                 const std::vector<std::byte>& data) {
  const int rank = world_rank(), ranks = world_size();
  MPI_File file = MPI_FILE_NULL;
  check_mpi(
      calls.open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, run.info, &file),
      "MPI_File_open");
  const auto write = run.collective ? calls.write_at_all : calls.write_at;
  const char* what = run.collective ? "MPI_File_write_at_all" : "MPI_File_write_at";
  const Shape& shape = run.shape;
  MPI_Status status;
  for (std::int64_t index = 0; index < shape.transfers(); ++index) {
    check_mpi(write(file, shape.offset(rank, ranks, index), data.data() + index * shape.transfer,
                    static_cast<int>(shape.transfer), MPI_BYTE, &status),
              what);
  }
  if (run.fsync) check_mpi(calls.sync(file), "MPI_File_sync");
  check_mpi(calls.close(&file), "MPI_File_close");
}

// IOR's read phase on `path`: open (read-only), every transfer of the
// neighbour's data into `data`, at the same places as its own, close.
void read_phase(const bench::MpiEntryPoints& calls, const std::string& path, const Case& run,
                std::vector<std::byte>& data) {
  const int neighbor = neighbor_of(world_rank()), ranks = world_size();
  MPI_File file = MPI_FILE_NULL;
  check_mpi(calls.open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY, run.info, &file),
            "MPI_File_open");
  const auto read = run.collective ? calls.read_at_all : calls.read_at;
  const char* what = run.collective ? "MPI_File_read_at_all" : "MPI_File_read_at";
  const Shape& shape = run.shape;
  MPI_Status status;
  for (std::int64_t index = 0; index < shape.transfers(); ++index) {
    check_mpi(read(file, shape.offset(neighbor, ranks, index), data.data() + index * shape.transfer,
                   static_cast<int>(shape.transfer), MPI_BYTE, &status),
              what);
  }
  check_mpi(calls.close(&file), "MPI_File_close");
}

// Ends the job (exit code 2, naming the first wrong byte's place in the
// file) unless every rank's `read` is `expected`, its neighbour's data
// (collective).
void check_read(const std::vector<std::byte>& read, const std::vector<std::byte>& expected,
                const Shape& shape, const std::string& what) {
  const auto wrong = std::mismatch(read.begin(), read.end(), expected.begin()).first;
  std::string why;
  if (wrong != read.end()) {
    const int neighbor = neighbor_of(world_rank());
    const std::int64_t at = wrong - read.begin();
    why = what + ": rank " + std::to_string(world_rank()) + " read other bytes than rank " +
          std::to_string(neighbor) + " wrote, first at file offset " +
          std::to_string(shape.offset(neighbor, world_size(), at / shape.transfer) +
                         at % shape.transfer) +
          " (byte " + std::to_string(at) + " of its data)";
  }
  bench::verify(wrong == read.end(), why);
}

// The seconds of one side's phases, round by round.
struct Timings {
  const bench::MpiEntryPoints* side;
  std::vector<double> write, read;
};

// Prints the lines of one op (see the top of the file).
void report_op(bench::Report& report, const bench::Fields& fields, const std::string& op,
               double bytes, const std::vector<Timings>& timings) {
  const std::vector<double>* layer = nullptr;
  const std::vector<double>* mpich = nullptr;
  for (const Timings& side : timings) {
    const std::vector<double>& seconds = op == "write" ? side.write : side.read;
    if (side.side == &bench::kLayer) {
      layer = &seconds;
    } else {
      mpich = &seconds;
    }
    const double typical = bench::median(seconds);
    const auto [fastest, slowest] = std::minmax_element(seconds.begin(), seconds.end());
    report.line(bench::Fields(fields)
                    .add("side", side.side->name)
                    .add("op", op)
                    .add("MiBps", bytes / kMiB / typical)
                    .add("MiBps_min", bytes / kMiB / *slowest)
                    .add("MiBps_max", bytes / kMiB / *fastest)
                    .add("seconds", typical));
  }
  if (layer != nullptr && mpich != nullptr) bench::report_ratio(report, fields, op, *layer, *mpich);
}

// Runs `run` for `rounds` rounds on every side, the order rotating, and
// reports it. In the first round each side's file is also read, untimed, by
// the other side.
void measure(const Case& run, const std::vector<const bench::MpiEntryPoints*>& sides, int rounds,
             const std::string& dir, const bench::Fields& fields, bench::Report& report) {
  const std::vector<std::byte> mine = bench::pattern(world_rank(), run.shape.rank_bytes());
  const std::vector<std::byte> expected =
      bench::pattern(neighbor_of(world_rank()), run.shape.rank_bytes());
  std::vector<std::byte> read(mine.size());
  std::vector<Timings> timings;
  for (const bench::MpiEntryPoints* side : sides) timings.push_back({side, {}, {}});
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < timings.size(); ++k) {
      Timings& side = timings[(k + static_cast<std::size_t>(round)) % timings.size()];
      const bench::MpiEntryPoints& calls = *side.side;
      const bench::ScratchFile file(dir, "ior_" + run.name() + "_" + calls.name);
      side.write.push_back(
          bench::time_collective([&] { write_phase(calls, file.path(), run, mine); }));
      std::fill(read.begin(), read.end(), bench::kGapByte);
      side.read.push_back(
          bench::time_collective([&] { read_phase(calls, file.path(), run, read); }));
      check_read(read, expected, run.shape,
                 std::string(calls.name) + " " + fields.text() + " round " + std::to_string(round));
      // Once, untimed, the other side reads the file too: a writer and a
      // reader of one implementation could agree on a wrong place.
      for (const Timings& other : timings) {
        if (round > 0 || other.side == side.side) continue;
        std::fill(read.begin(), read.end(), bench::kGapByte);
        read_phase(*other.side, file.path(), run, read);
        check_read(
            read, expected, run.shape,
            std::string(other.side->name) + " reading " + calls.name + "'s file " + fields.text());
      }
    }
  }
  const double bytes = static_cast<double>(run.shape.rank_bytes()) * world_size();
  report_op(report, fields, "write", bytes, timings);
  report_op(report, fields, "read", bytes, timings);
}

// The first open of a process pays one-time costs (the layer's starts
// flowio's threads) that would land on whichever side runs first: each side
// writes and reads one small file, checked, before the timed rounds.
void warm_up(const bench::MpiEntryPoints& calls, const Case& run, const std::string& dir) {
  const bench::ScratchFile file(dir, std::string("ior_warm_up_") + calls.name);
  const std::vector<std::byte> mine = bench::pattern(world_rank(), run.shape.rank_bytes());
  std::vector<std::byte> read(mine.size(), bench::kGapByte);
  write_phase(calls, file.path(), run, mine);
  read_phase(calls, file.path(), run, read);
  check_read(read, bench::pattern(neighbor_of(world_rank()), run.shape.rank_bytes()), run.shape,
             std::string(calls.name) + " warm-up");
}

// --hints' items, each KEY=VALUE.
flowio::Hints hints_of(const std::vector<std::string>& items) {
  flowio::Hints hints;
  for (const std::string& item : items) {
    const std::size_t equals = item.find('=');
    if (equals == 0 || equals == std::string::npos) {
      throw std::invalid_argument("--hints takes KEY=VALUE items, not " + item);
    }
    hints[item.substr(0, equals)] = item.substr(equals + 1);
  }
  return hints;
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options, 3);
  const std::vector<std::string> shapes =
      options.list("shapes", "easy,hard",
                   "access shapes: easy (a contiguous block per rank and segment, --block in "
                   "transfers of --transfer bytes), hard (IO500's: 47008-byte transfers, one per "
                   "block, interleaved by rank)");
  const std::vector<std::string> modes = options.list(
      "modes", "independent,collective",
      "independent (MPI_File_write_at / read_at) and collective (MPI_File_write_at_all / "
      "read_at_all, IOR's -c)");
  const std::int64_t block =
      options.integer("block", 64 << 20, "easy: bytes of one rank's block per segment (IOR's -b)");
  const std::int64_t transfer = options.integer(
      "transfer", 1 << 20, "easy: bytes of one call, a divisor of --block (IOR's -t)");
  const std::int64_t segments = options.integer(
      "segments", 0, "segments, each a block per rank (IOR's -s); 0: 1 for easy, 2000 for hard");
  const bool fsync = options.choice("fsync", "0", {"0", "1"},
                                    "1: MPI_File_sync before the write phase's close, timed "
                                    "(IOR's -e); 0: no sync") == "1";
  const flowio::Hints hints = hints_of(
      options.list("hints", "",
                   "KEY=VALUE,... given to both sides' MPI_File_open through an MPI_Info (values "
                   "without commas), e.g. flowio_write_behind=268435456"));
  const std::vector<std::string> side_names =
      options.list("sides", "layer,mpich",
                   "sides measured, in the first round's order: layer (flowio's MPI-IO layer, "
                   "MPI_File_*), mpich (MPICH's MPI-IO, PMPI_File_*; without both, no ratio)");
  options.finish();

  if (transfer < 1 || transfer > INT_MAX || block < transfer || block % transfer != 0) {
    throw std::invalid_argument(
        "--transfer must be 1 to 2^31-1 bytes and divide --block, which must be as large");
  }
  if (segments < 0) throw std::invalid_argument("--segments must not be negative");
  std::vector<Shape> shape_list;
  for (const std::string& shape : shapes) {
    if (shape == "easy") {
      shape_list.push_back({"easy", transfer, block, segments > 0 ? segments : 1});
    } else if (shape == "hard") {
      shape_list.push_back({"hard", kHardTransfer, kHardTransfer, segments > 0 ? segments : 2000});
    } else {
      throw std::invalid_argument("--shapes takes easy and hard, not " + shape);
    }
  }
  for (const std::string& mode : modes) {
    if (mode != "independent" && mode != "collective") {
      throw std::invalid_argument("--modes takes independent and collective, not " + mode);
    }
  }
  std::vector<const bench::MpiEntryPoints*> sides;
  for (const std::string& name : side_names) {
    const bench::MpiEntryPoints* side = name == "layer"   ? &bench::kLayer
                                        : name == "mpich" ? &bench::kMpich
                                                          : nullptr;
    if (side == nullptr) throw std::invalid_argument("--sides takes layer and mpich, not " + name);
    if (std::find(sides.begin(), sides.end(), side) != sides.end()) {
      throw std::invalid_argument("--sides names " + name + " twice");
    }
    sides.push_back(side);
  }
  if (shape_list.empty() || modes.empty() || sides.empty()) {
    throw std::invalid_argument("--shapes, --modes and --sides must name one at least");
  }

  const bench::Info info(hints);
  std::string hint_text;
  for (const auto& [key, value] : hints) {
    hint_text += (hint_text.empty() ? "" : ",") + key + "=" + value;
  }
  report.note(
      "a phase: barrier, open, every transfer, close, to the slowest rank; MiBps: all ranks' "
      "bytes over the median phase; ratio: layer MiBps / MPICH MiBps (above 1: the layer "
      "faster)");
  report.note("reads: rank r reads rank (r+1)%ranks's data, every byte checked");
  for (const bench::MpiEntryPoints* side : sides) {
    warm_up(*side, Case{{"warm_up", 4096, 4096, 1}, true, false, info.get()}, common.dir);
  }
  for (const Shape& shape : shape_list) {
    for (const std::string& mode : modes) {
      const Case run{shape, mode == "collective", fsync, info.get()};
      bench::Fields fields;
      fields.add("shape", shape.name)
          .add("mode", mode)
          .add("transfer", shape.transfer)
          .add("block", shape.block)
          .add("segments", shape.segments)
          .add("fsync", fsync ? 1 : 0);
      if (!hints.empty()) fields.add("hints", hint_text);
      measure(run, sides, common.reps, common.dir, fields, report);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "ior", benchmark); }
