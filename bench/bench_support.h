// What the flowio-against-MPICH benchmarks share: the program frame,
// options, collective timing, key=value output with a closing
// table, data patterns that reveal misplaced bytes, RAII handles for the
// MPI objects the MPICH side needs, and one routine that writes and reads
// an access with both implementations and checks the results.
//
// Everything here is called by every rank of MPI_COMM_WORLD in the same
// order (the benchmarks are single-threaded apart from flowio's own
// threads). A failed check ends the job through MPI_Abort with a nonzero
// exit code and leaves the scratch files in place for inspection.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "flowio/file.h"
#include "flowio/hints.h"

namespace bench {

// The benchmark's options, read with CLI11 (`--key=value` or `--key value`).
// Each benchmark asks for its options where it uses them: every accessor
// declares its key (with the fallback as the default, a check of the
// value's form and a description for --help: what the option controls, in
// which unit, what its special values mean) and answers from the arguments
// read with the keys declared so far. finish(), once every key is declared,
// rejects any argument none declared, so that a misspelt flag is an error
// rather than a silently ignored setting, and answers --help with the list
// of options. A key may be asked for again (the same value is answered)
// only with the same fallback: otherwise --help would list a default that
// is not the one applied, and the accessor throws std::logic_error.
class Options {
 public:
  Options(int argc, char** argv);
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  ~Options();
  std::string text(const std::string& key, const std::string& fallback,
                   const std::string& description);
  std::int64_t integer(const std::string& key, std::int64_t fallback,
                       const std::string& description);
  // A comma-separated list; empty items are dropped, so "" gives none.
  std::vector<std::string> list(const std::string& key, const std::string& fallback,
                                const std::string& description);
  // A comma-separated list of integers, not empty.
  std::vector<std::int64_t> integers(const std::string& key, const std::string& fallback,
                                     const std::string& description);
  // One of `allowed`.
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& allowed, const std::string& description);
  // Throws (a CLI::ParseError) for an argument no accessor declared, and
  // HelpRequested (after printing the options on rank 0) for --help.
  void finish();

  struct HelpRequested : std::exception {
    const char* what() const noexcept override { return "--help"; }
  };

 private:
  struct Parser;  // CLI11's, in bench_support.cc (its header is heavy to compile)

  // What a value must be, checked by a CLI11 validator and named in --help.
  enum class Form { text, list, integer, integers, choice };

  // Declares --key (at its first use) with `description` and the check of
  // its `form` (a choice: one of `allowed`), reads the arguments, and
  // returns the value given, or `fallback` when none was.
  std::string value_of(const std::string& key, const std::string& fallback,
                       const std::string& description, Form form,
                       const std::vector<std::string>& allowed = {});

  std::unique_ptr<Parser> parser_;
};

// Settings every benchmark that repeats its measurements takes: --reps
// (default `default_reps`) and --dir (scratch_dir).
struct Common {
  explicit Common(Options& options, int default_reps = 5);
  int reps;
  std::string dir;
};

// The directory of the scratch files: --dir (default $TMPDIR, else /tmp),
// for a benchmark that does not repeat its measurements (no --reps).
std::string scratch_dir(Options& options);

// Ends the job with exit code 2 after `why` on stderr, unless every rank
// passes `ok` (collective).
void verify(bool ok, const std::string& why);

// Key=value pairs of one output line, in insertion order.
class Fields {
 public:
  template <typename T>
  Fields& add(const std::string& key, const T& value) {
    if constexpr (std::is_floating_point_v<T>) {
      pairs_.emplace_back(key, format_double(value));
    } else if constexpr (std::is_arithmetic_v<T>) {
      pairs_.emplace_back(key, std::to_string(value));
    } else {
      pairs_.emplace_back(key, std::string(value));
    }
    return *this;
  }
  Fields& append(const Fields& other);
  std::string text() const;  // "key=value key=value"
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

 private:
  static std::string format_double(double value);
  std::vector<std::pair<std::string, std::string>> pairs_;
};

// Output on rank 0: each line as "bench=NAME ranks=N key=value ..." at once
// (so a long run shows progress and a killed one keeps its results), and at
// the end the same lines as a table whose columns are the keys.
class Report {
 public:
  Report(std::string bench, int ranks);
  void line(const Fields& fields);
  // A comment for the reader, printed as "# text"; parsers skip it.
  void note(const std::string& text) const;
  void print_table() const;

 private:
  Fields prefix_;
  std::vector<Fields> lines_;
};

// Initializes MPI with MPI_THREAD_MULTIPLE (flowio requires it) and runs
// `body`, which reads its options, calls options.finish(), then measures.
// Then prints the report's table, finalizes and returns 0 for main. An
// exception (a bad option, an MPI or flowio error) is printed and aborts
// the job with exit code 1.
int run_benchmark(int argc, char** argv, const std::string& name,
                  const std::function<void(Options&, Report&)>& body);

// Prints the flowio line and the MPICH line for `bytes` moved in each
// repetition (MiBps and seconds of the median time, seconds_min and
// seconds_max), then "ratio=" (MPICH's median time over flowio's) with
// ratio_min and ratio_max, the extremes of the repetitions' own ratios:
// the two vectors hold the times in the order they were taken, flowio's
// repetition k next to MPICH's k, so that a pair shares the machine's
// state of the moment. Both vectors are of the same, nonzero size.
void report_pair(Report& report, const Fields& fields, const std::string& op, double bytes,
                 const std::vector<double>& flowio_seconds,
                 const std::vector<double>& mpich_seconds);

// Prints report_pair's last line alone: "ratio=" (MPICH's median time over
// `side_seconds`' median: above 1, that side is faster) with ratio_min and
// ratio_max over the pairs of repetitions. `side_seconds` may be any side
// measured against MPICH (flowio's MPI-IO layer, say), paired with
// `mpich_seconds` as report_pair pairs flowio's.
void report_ratio(Report& report, const Fields& fields, const std::string& op,
                  const std::vector<double>& side_seconds,
                  const std::vector<double>& mpich_seconds);

// Prints flowio's line in native ("impl=flowio_native") and "vs_native="
// (native seconds over `flowio_seconds`: 1 when the datarep costs nothing).
void report_native(Report& report, const Fields& fields, const std::string& op, double bytes,
                   double flowio_seconds, double native_seconds);

double median(std::vector<double> values);

// Seconds of `operation` on the slowest rank: a barrier first, then the
// maximum of every rank's elapsed MPI_Wtime. The barrier and the maximum
// wait yielding the core (bench_support.cc), so that on a node with more
// ranks than cores they do not take it from a rank still timed.
double time_collective(const std::function<void()>& operation);

// The data stream `rank` writes: `bytes` bytes of 8-byte words, each a hash
// of (rank, word index), so that no other rank's data and no other position
// of this rank's matches it.
std::vector<std::byte> pattern(int rank, std::int64_t bytes);

// A buffer for `count` copies of `memtype` (lower bound 0) holding
// `stream` where the type has data, kGapByte in its gaps: what a write
// sends and what a read must produce.
inline constexpr std::byte kGapByte{0xEE};
std::vector<std::byte> typed_buffer(MPI_Datatype memtype, MPI_Count count,
                                    const std::vector<std::byte>& stream);

// An MPI datatype, committed at construction and freed with the handle.
// Move-only.
class Datatype {
 public:
  explicit Datatype(MPI_Datatype uncommitted);
  Datatype(Datatype&& other) noexcept;
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  ~Datatype();
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

// MPI_Info holding `hints`, freed with the handle.
class Info {
 public:
  explicit Info(const flowio::Hints& hints);
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;
  ~Info();
  MPI_Info get() const { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

// An MPICH MPI-IO file opened create|rdwr on MPI_COMM_WORLD; the destructor
// closes it (collectively).
class MpiFile {
 public:
  MpiFile(const std::string& path, const flowio::Hints& hints);
  MpiFile(const MpiFile&) = delete;
  MpiFile& operator=(const MpiFile&) = delete;
  ~MpiFile();
  MPI_File get() const { return file_; }
  void close();

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

// A job-unique path under `dir` (rank 0's pid is in it), removed when made
// and when the handle goes. Declare it before the file handles that use it,
// so that they are closed first.
class ScratchFile {
 public:
  ScratchFile(const std::string& dir, const std::string& name);
  ScratchFile(ScratchFile&& other) noexcept;
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A collective read of one implementation into the buffer it is given
// (sized like the expected data).
using Read = std::function<void(void*)>;
// `count` copies of `memtype` at view offset 0 with read_at_all (flowio) or
// MPI_File_read_at_all_c (MPICH). The file is borrowed for the Read's life.
Read flowio_read(flowio::File& file, MPI_Count count, MPI_Datatype memtype);
Read mpich_read(MPI_File file, MPI_Count count, MPI_Datatype memtype);

// Runs `read` collectively into a buffer of kGapByte and checks that it
// produced `expected` (gaps untouched); `what` names the data in the
// failure message. Returns the read's time_collective seconds.
double checked_read(const Read& read, const std::vector<std::byte>& expected,
                    const std::string& what);

// Ends the job unless the two closed files have the same size (collective).
// Bytes no process wrote may differ: MPICH's two-phase write can fill holes
// past the end of file with whatever its collective buffer held.
void verify_same_size(const std::string& a, const std::string& b, const std::string& what);

// One collective access: `count` copies of `memtype` through the view
// (`displacement`, etype MPI_BYTE, `filetype`), at view offset 0. Types are
// borrowed and committed.
struct Access {
  MPI_Offset displacement = 0;
  MPI_Datatype filetype = MPI_BYTE;
  MPI_Datatype memtype = MPI_BYTE;
  MPI_Count count = 0;
};

// The bytes of data (gaps excluded) in `access.count` copies of
// `access.memtype`.
std::int64_t data_bytes(const Access& access);

// This rank's data for `access` as it lies in memory: typed_buffer of
// pattern(world rank, data_bytes(access)). What a write of the access sends
// and what its read must produce.
std::vector<std::byte> rank_data(const Access& access);

struct AccessSettings {
  int reps = 5;
  std::string dir;
  bool write = true;
  bool read = true;
  bool sync = false;  // sync after each timed write, inside the timing
  // The views' data representation, on both sides.
  std::string datarep = "native";
};

// The Common options plus --op=both|write|read (default both),
// --sync=0|1 (default 0) and --datarep=native|external32 (default native).
AccessSettings access_settings(Options& options);

// Opens the closed file `path` with `reader` ("flowio" or "mpich"), sets
// the access's view (in `datarep`) and checks that reading the access gives
// `expected`. Reading one implementation's file with the other checks where
// the data landed, not only that a write and a read agree.
void verify_file(const std::string& reader, const std::string& path, const Access& access,
                 const std::string& datarep, const std::vector<std::byte>& expected,
                 const std::string& what);
// The same in native.
void verify_file(const std::string& reader, const std::string& path, const Access& access,
                 const std::vector<std::byte>& expected, const std::string& what);

// Runs `access` with flowio (write_at_all / read_at_all) and with MPICH
// (MPI_File_write_at_all / MPI_File_read_at_all) on two scratch files,
// repetitions alternating (flowio, MPICH, flowio, ...), and reports them
// with report_pair (medians, extremes and the ratio). Every read is
// checked (without timed reads, one untimed read each checks the writes);
// at the end the sizes are compared and each file is read with the other
// implementation. With write off, the files are written once untimed.
// With a datarep other than native, flowio's writes and reads in native
// are timed too, interleaved with the others, on a third file, and a line
// op=write|read with "vs_native" (flowio native seconds over flowio in the
// datarep: 1 means conversion costs nothing) follows.
void compare_access(Report& report, const Fields& fields, const Access& access,
                    const AccessSettings& settings);

}  // namespace bench
