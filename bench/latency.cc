// bench/latency: what one small call costs. Per-call microseconds of
// independent write_at / read_at / iwrite_at + wait, collective
// write_at_all / read_at_all (4 KiB per rank by default) and open + close,
// and the time of one independent noncontiguous write / read (the ncio
// c-nc pattern through MPI_File_write / MPI_File_read instead of the _all
// forms), each on three sides in the same run, interleaved:
//
//   flowio  the C++ API (flowio::File);
//   layer   MPI_File_* of flowio's MPI-IO layer, linked into this binary
//           (the path an unmodified MPI-IO program such as HDF5 takes);
//   mpich   PMPI_File_*, MPICH's own MPI-IO (ROMIO) underneath the layer.
//
// Every call is preceded by a barrier (outside the timing) and its time is
// the slowest rank's. Each round runs every side in turn (the order
// rotates), one untimed call first; medians and worst cases are over the
// timed calls of all rounds. MPI-IO calls fill a status, as programs that
// check their counts do (HDF5 does). `slowdown` is a side's median over MPICH's
// (below 1: faster than MPICH); for the noncontiguous calls, MiBps is the
// bandwidth of the median call. Reads are checked against what was
// written.
//
// Usage: mpiexec -n N bazel-bin/bench/latency [--bytes=4096] [--calls=200]
//   [--nc_calls=3] [--reps=5 rounds] [--regions=65536] [--region_size=8]
//   [--spacing=128] [--ops=all|OP,OP,...] [--sides=flowio,layer,mpich]
//   [--dir=$TMPDIR]
// OP is one of write_at, read_at, iwrite_at_wait, write_at_all,
// read_at_all, open_close, nc_write, nc_read.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/mpi_entry_points.h"
#include "bench/regions.h"
#include "flowio/error.h"
#include "flowio/file.h"

namespace {

using flowio::check_mpi;

// The calls measured, on one side.
class Side {
 public:
  virtual ~Side() = default;
  virtual const char* name() const = 0;
  virtual void open(const std::string& path) = 0;
  virtual void close() = 0;
  virtual void write_at(MPI_Offset offset, const void* data, int bytes) = 0;
  virtual void read_at(MPI_Offset offset, void* data, int bytes) = 0;
  virtual void iwrite_at_wait(MPI_Offset offset, const void* data, int bytes) = 0;
  virtual void write_at_all(MPI_Offset offset, const void* data, int bytes) = 0;
  virtual void read_at_all(MPI_Offset offset, void* data, int bytes) = 0;
  virtual void set_view(MPI_Offset displacement, MPI_Datatype filetype) = 0;
  // At the start of the view, through the individual file pointer.
  virtual void write_from_start(const void* data, MPI_Datatype memtype) = 0;
  virtual void read_from_start(void* data, MPI_Datatype memtype) = 0;
};

class FlowioSide final : public Side {
 public:
  const char* name() const override { return "flowio"; }
  void open(const std::string& path) override {
    file_ = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  }
  void close() override { file_.close(); }
  void write_at(MPI_Offset offset, const void* data, int bytes) override {
    file_.write_at(offset, data, bytes, MPI_BYTE);
  }
  void read_at(MPI_Offset offset, void* data, int bytes) override {
    file_.read_at(offset, data, bytes, MPI_BYTE);
  }
  void iwrite_at_wait(MPI_Offset offset, const void* data, int bytes) override {
    file_.iwrite_at(offset, data, bytes, MPI_BYTE).get();
  }
  void write_at_all(MPI_Offset offset, const void* data, int bytes) override {
    file_.write_at_all(offset, data, bytes, MPI_BYTE);
  }
  void read_at_all(MPI_Offset offset, void* data, int bytes) override {
    file_.read_at_all(offset, data, bytes, MPI_BYTE);
  }
  void set_view(MPI_Offset displacement, MPI_Datatype filetype) override {
    file_.set_view(displacement, MPI_BYTE, filetype);
  }
  void write_from_start(const void* data, MPI_Datatype memtype) override {
    file_.seek(0, flowio::Whence::set);
    file_.write(data, 1, memtype);
  }
  void read_from_start(void* data, MPI_Datatype memtype) override {
    file_.seek(0, flowio::Whence::set);
    file_.read(data, 1, memtype);
  }

 private:
  flowio::File file_;
};

class MpiSide final : public Side {
 public:
  explicit MpiSide(const bench::MpiEntryPoints& calls) : calls_(calls) {}
  const char* name() const override { return calls_.name; }
  void open(const std::string& path) override {
    check_mpi(calls_.open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &file_),
              "MPI_File_open");
  }
  void close() override { check_mpi(calls_.close(&file_), "MPI_File_close"); }
  void write_at(MPI_Offset offset, const void* data, int bytes) override {
    check_mpi(calls_.write_at(file_, offset, data, bytes, MPI_BYTE, &status_), "MPI_File_write_at");
  }
  void read_at(MPI_Offset offset, void* data, int bytes) override {
    check_mpi(calls_.read_at(file_, offset, data, bytes, MPI_BYTE, &status_), "MPI_File_read_at");
  }
  void iwrite_at_wait(MPI_Offset offset, const void* data, int bytes) override {
    MPI_Request request;
    check_mpi(calls_.iwrite_at(file_, offset, data, bytes, MPI_BYTE, &request),
              "MPI_File_iwrite_at");
    check_mpi(MPI_Wait(&request, &status_), "MPI_Wait");
  }
  void write_at_all(MPI_Offset offset, const void* data, int bytes) override {
    check_mpi(calls_.write_at_all(file_, offset, data, bytes, MPI_BYTE, &status_),
              "MPI_File_write_at_all");
  }
  void read_at_all(MPI_Offset offset, void* data, int bytes) override {
    check_mpi(calls_.read_at_all(file_, offset, data, bytes, MPI_BYTE, &status_),
              "MPI_File_read_at_all");
  }
  void set_view(MPI_Offset displacement, MPI_Datatype filetype) override {
    check_mpi(calls_.set_view(file_, displacement, MPI_BYTE, filetype, "native", MPI_INFO_NULL),
              "MPI_File_set_view");
  }
  void write_from_start(const void* data, MPI_Datatype memtype) override {
    check_mpi(calls_.seek(file_, 0, MPI_SEEK_SET), "MPI_File_seek");
    check_mpi(calls_.write(file_, data, 1, memtype, &status_), "MPI_File_write");
  }
  void read_from_start(void* data, MPI_Datatype memtype) override {
    check_mpi(calls_.seek(file_, 0, MPI_SEEK_SET), "MPI_File_seek");
    check_mpi(calls_.read(file_, data, 1, memtype, &status_), "MPI_File_read");
  }

 private:
  const bench::MpiEntryPoints& calls_;
  MPI_File file_ = MPI_FILE_NULL;
  // Filled by every call, as programs that check their counts (HDF5) ask.
  MPI_Status status_;
};

struct Settings {
  int bytes = 4096;
  int calls = 200;
  int nc_calls = 3;
  int rounds = 5;
  std::string dir;
  bench::RegionPattern pattern;
  std::vector<std::string> ops;
};

const std::vector<std::string> kAllOps = {"write_at",     "read_at",     "iwrite_at_wait",
                                          "write_at_all", "read_at_all", "open_close",
                                          "nc_write",     "nc_read"};

// One side's state for one op: its open file (or, for open_close, its path)
// and the microseconds of its timed calls.
struct Runner {
  std::unique_ptr<Side> side;
  std::unique_ptr<bench::ScratchFile> path;
  std::vector<double> microseconds;
};

// Runs `call` once per sample: a barrier, the call, and the slowest rank's
// time in microseconds appended to `samples` (on rank 0).
void time_calls(int count, const std::function<void()>& call, std::vector<double>* samples) {
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double begin = MPI_Wtime();
    call();
    mine.push_back((MPI_Wtime() - begin) * 1e6);
  }
  std::vector<double> slowest(mine.size());
  check_mpi(MPI_Reduce(mine.data(), slowest.data(), count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
            "MPI_Reduce");
  if (samples != nullptr) samples->insert(samples->end(), slowest.begin(), slowest.end());
}

std::unique_ptr<Side> make_side(const std::string& name) {
  if (name == "flowio") return std::make_unique<FlowioSide>();
  if (name == "layer") return std::make_unique<MpiSide>(bench::kLayer);
  if (name == "mpich") return std::make_unique<MpiSide>(bench::kMpich);
  throw std::invalid_argument("--sides takes flowio, layer and mpich");
}

void run_op(const std::string& op, const Settings& settings,
            const std::vector<std::string>& side_names, bench::Report& report) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const bool noncontiguous = op.starts_with("nc_");
  bench::RegionPattern pattern = settings.pattern;
  pattern.name = "c-nc";
  const bench::RegionAccess access =
      bench::make_region_access(pattern, bench::Description::compact);
  const std::int64_t bytes = noncontiguous ? pattern.regions * pattern.region_size : settings.bytes;
  const std::vector<std::byte> expected = bench::pattern(rank, bytes);
  std::vector<std::byte> buffer = expected;
  const MPI_Offset offset = static_cast<MPI_Offset>(rank) * settings.bytes;

  std::vector<Runner> runners;
  for (const std::string& name : side_names) {
    Runner runner;
    runner.side = make_side(name);
    runner.path = std::make_unique<bench::ScratchFile>(settings.dir, "latency_" + name);
    if (op != "open_close") {
      runner.side->open(runner.path->path());
      if (noncontiguous) runner.side->set_view(access.access.displacement, access.access.filetype);
      // Reads need data there: each side writes what it will read.
      if (op == "nc_read") runner.side->write_from_start(expected.data(), access.access.memtype);
      if (op == "read_at" || op == "read_at_all") {
        runner.side->write_at(offset, expected.data(), settings.bytes);
      }
    }
    runners.push_back(std::move(runner));
  }

  bool reads_correct = true;
  for (int round = 0; round < settings.rounds; ++round) {
    for (std::size_t k = 0; k < runners.size(); ++k) {
      Runner& runner = runners[(k + static_cast<std::size_t>(round)) % runners.size()];
      Side& side = *runner.side;
      const int count = noncontiguous ? settings.nc_calls : settings.calls;
      std::function<void()> call;
      if (op == "write_at") {
        call = [&] { side.write_at(offset, expected.data(), settings.bytes); };
      } else if (op == "read_at") {
        call = [&] { side.read_at(offset, buffer.data(), settings.bytes); };
      } else if (op == "iwrite_at_wait") {
        call = [&] { side.iwrite_at_wait(offset, expected.data(), settings.bytes); };
      } else if (op == "write_at_all") {
        call = [&] { side.write_at_all(offset, expected.data(), settings.bytes); };
      } else if (op == "read_at_all") {
        call = [&] { side.read_at_all(offset, buffer.data(), settings.bytes); };
      } else if (op == "open_close") {
        call = [&] {
          side.open(runner.path->path());
          side.close();
        };
      } else if (op == "nc_write") {
        call = [&] { side.write_from_start(expected.data(), access.access.memtype); };
      } else {
        call = [&] { side.read_from_start(buffer.data(), access.access.memtype); };
      }
      std::fill(buffer.begin(), buffer.end(), bench::kGapByte);
      time_calls(1, call, nullptr);
      time_calls(count, call, &runner.microseconds);
      if (op.find("read") != std::string::npos) reads_correct = reads_correct && buffer == expected;
    }
  }
  bench::verify(reads_correct, op + ": a read returned other bytes than were written");
  for (Runner& runner : runners) {
    if (op != "open_close") runner.side->close();
  }

  if (rank != 0) return;
  const auto mpich = std::find_if(runners.begin(), runners.end(), [](const Runner& runner) {
    return std::strcmp(runner.side->name(), "mpich") == 0;
  });
  const double mpich_median = mpich == runners.end() ? 0.0 : bench::median(mpich->microseconds);
  for (const Runner& runner : runners) {
    const double median = bench::median(runner.microseconds);
    bench::Fields fields;
    fields.add("op", op)
        .add("side", runner.side->name())
        .add("bytes", bytes)
        .add("calls", runner.microseconds.size())
        .add("median_us", median)
        .add("worst_us", *std::max_element(runner.microseconds.begin(), runner.microseconds.end()));
    if (noncontiguous) {
      fields.add("MiBps", static_cast<double>(bytes * ranks) / (median * 1e-6) / (1 << 20));
    }
    if (mpich_median > 0) fields.add("slowdown", median / mpich_median);
    report.line(fields);
  }
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  Settings settings;
  const bench::Common common(options);
  settings.dir = common.dir;
  settings.bytes = static_cast<int>(options.integer(
      "bytes", settings.bytes, "bytes each rank moves in one contiguous write or read"));
  settings.calls = static_cast<int>(
      options.integer("calls", settings.calls,
                      "timed calls per side and round of each contiguous op and of open_close"));
  settings.nc_calls = static_cast<int>(options.integer(
      "nc_calls", settings.nc_calls, "timed calls per side and round of nc_write and nc_read"));
  settings.rounds = common.reps;
  bench::RegionPattern pattern_defaults;
  pattern_defaults.regions = 65536;
  settings.pattern = bench::region_options(options, pattern_defaults);
  const std::vector<std::string> ops = options.list(
      "ops", "all",
      "calls measured: write_at, read_at, iwrite_at_wait, write_at_all, read_at_all, "
      "open_close, nc_write, nc_read (the ncio c-nc pattern: --regions, --region_size, "
      "--spacing); all: every one");
  settings.ops = ops == std::vector<std::string>{"all"} ? kAllOps : ops;
  const std::vector<std::string> sides = options.list(
      "sides", "flowio,layer,mpich",
      "sides compared: flowio (the C++ API), layer (flowio's MPI-IO layer), mpich (MPICH's "
      "MPI-IO; without it no slowdown)");
  options.finish();
  if (settings.bytes < 1 || settings.calls < 1 || settings.nc_calls < 1) {
    throw std::invalid_argument("--bytes, --calls and --nc_calls must be positive");
  }
  for (const std::string& op : settings.ops) {
    if (std::find(kAllOps.begin(), kAllOps.end(), op) == kAllOps.end()) {
      throw std::invalid_argument("unknown op " + op);
    }
  }
  report.note(
      "per-call microseconds, slowest rank, barrier before each call; slowdown = "
      "median / MPICH's median");
  for (const std::string& op : settings.ops) run_op(op, settings, sides, report);
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "latency", benchmark); }
