// bench/flatten: what the runtime core's data model costs. For regular
// types (vector, subarray) of 10^6 and 10^8 pieces and an enumerated,
// irregular hindexed type of 10^6 pieces it measures the time to flatten,
// the memory of the flattened form, the rate of walking every piece with a
// PieceCursor, and the time to seek a cursor to a random stream position.
//
// MPICH has no operation that is "flatten"; for context the same run times
// MPICH's MPI_Type_commit of the same types and, for the 10^6 cases,
// MPI_Pack against flowio gathering the same bytes with memcpy over the
// pieces (checked byte for byte against MPI_Pack's output).
//
// Usage: flatten [--quick]   (--quick: the 10^6 cases only)
// Runs in one process; under mpiexec, ranks other than 0 do nothing.
// Prints one key=value line per case, then human-readable tables. Any
// wrong result (a byte sum or piece count that disagrees with MPI) aborts
// with a message on stderr.
#include <mpi.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/piece_cursor.h"

namespace {

using flowio::check_mpi;
using namespace flowio::core;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kBatchPieces = 4096;
constexpr int kFlattenRepetitions = 11;
constexpr int kCommitRepetitions = 7;
constexpr int kSmallRepetitions = 5;  // iteration, seek, pack, gather
constexpr int kSeeks = 1000;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "bench/flatten: FAILED: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// An MPI datatype, freed when the handle goes. Move-only; every handle must
// be gone before MPI_Finalize.
class TypeHandle {
 public:
  explicit TypeHandle(MPI_Datatype type = MPI_DATATYPE_NULL) : type_(type) {}
  TypeHandle(TypeHandle&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  TypeHandle& operator=(TypeHandle&& other) noexcept {
    if (this != &other) {
      reset();
      type_ = std::exchange(other.type_, MPI_DATATYPE_NULL);
    }
    return *this;
  }
  TypeHandle(const TypeHandle&) = delete;
  TypeHandle& operator=(const TypeHandle&) = delete;
  ~TypeHandle() { reset(); }

  MPI_Datatype get() const { return type_; }
  void commit() { check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit"); }

 private:
  void reset() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    type_ = MPI_DATATYPE_NULL;
  }

  MPI_Datatype type_;
};

// One type to measure. `make` builds a fresh, uncommitted type each call,
// so that MPI_Type_commit can be timed on a type MPICH has not seen.
struct Case {
  std::string name;
  std::int64_t expected_pieces = 0;
  bool large = false;  // ~10^8 pieces: one iteration run, no pack
  std::function<TypeHandle()> make;
};

struct Result {
  std::int64_t pieces = 0;
  double flatten_ns = 0;
  std::size_t nodes = 0;
  std::size_t blocks = 0;
  std::int64_t flat_bytes = 0;
  long rss_delta_kib = 0;
  double iterate_pieces_per_s = 0;
  double seek_ns = 0;
  double commit_ns = 0;
  double create_commit_ns = 0;
  bool packed = false;
  double pack_bytes_per_s = 0;
  double gather_bytes_per_s = 0;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double elapsed_ns(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Peak resident set of the process so far, in KiB (Linux's unit).
long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

std::int64_t type_size(MPI_Datatype type) {
  MPI_Count size = 0;
  check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
  return size;
}

// Every case below has lb 0 and one copy per buffer, so piece offsets are
// offsets into a buffer of true_lb + true_extent bytes.
std::int64_t buffer_bytes(const FlatType& flat) { return flat.true_lb() + flat.true_extent(); }

struct Walk {
  std::int64_t pieces = 0;
  std::int64_t bytes = 0;
};

Walk walk_all(const FlatType& flat, std::span<Piece> batch) {
  PieceCursor cursor(flat, 1);
  Walk walk;
  while (std::size_t filled = cursor.next(batch, INT64_MAX)) {
    walk.pieces += static_cast<std::int64_t>(filled);
    for (std::size_t i = 0; i < filled; ++i) walk.bytes += batch[i].length;
  }
  return walk;
}

void check_walk(const Case& c, const Walk& walk, std::int64_t expected_bytes) {
  if (walk.bytes != expected_bytes) {
    fail(c.name + ": pieces sum to " + std::to_string(walk.bytes) +
         " bytes, MPI_Type_size * count is " + std::to_string(expected_bytes));
  }
  if (walk.pieces != c.expected_pieces) {
    fail(c.name + ": cursor returned " + std::to_string(walk.pieces) + " pieces, expected " +
         std::to_string(c.expected_pieces));
  }
}

// Nanoseconds per (construct a cursor at a random stream byte, take one
// piece), median over kSmallRepetitions rounds of kSeeks seeks.
double measure_seek(const Case& c, const FlatType& flat, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> position(0, flat.size() - 1);
  std::vector<std::int64_t> positions(kSeeks);
  std::vector<double> rounds;
  for (int round = 0; round < kSmallRepetitions; ++round) {
    for (std::int64_t& p : positions) p = position(rng);
    std::int64_t outside = 0;
    const Clock::time_point start = Clock::now();
    for (std::int64_t p : positions) {
      PieceCursor cursor(flat, 1, 0, p);
      Piece piece;
      if (!cursor.next_piece(piece, INT64_MAX)) ++outside;
      // Using the piece keeps the compiler from dropping the work.
      if (piece.offset < flat.true_lb() || piece.offset + piece.length > buffer_bytes(flat)) {
        ++outside;
      }
    }
    rounds.push_back(elapsed_ns(start) / kSeeks);
    if (outside != 0) fail(c.name + ": a seek returned no piece or one outside the type");
  }
  return median(rounds);
}

// MPICH 4 does most of its work on a type when the type is created, so
// MPI_Type_commit alone costs next to nothing: time both the commit and the
// creation plus commit (what MPICH pays to make a type usable).
void measure_commit(const Case& c, Result& result) {
  std::vector<double> commits;
  std::vector<double> totals;
  for (int r = 0; r < kCommitRepetitions; ++r) {
    const Clock::time_point created = Clock::now();
    TypeHandle type = c.make();
    const Clock::time_point start = Clock::now();
    type.commit();
    commits.push_back(elapsed_ns(start));
    totals.push_back(elapsed_ns(created));
  }
  result.commit_ns = median(commits);
  result.create_commit_ns = median(totals);
}

// MPI_Pack of one copy of the type against memcpy over the flattened
// pieces into the same layout; both outputs must be identical.
void measure_pack(const Case& c, const FlatType& flat, std::span<Piece> batch, Result& result) {
  TypeHandle type = c.make();
  type.commit();
  const std::int64_t size = flat.size();
  std::vector<unsigned char> source(static_cast<std::size_t>(buffer_bytes(flat)));
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 131);
  std::vector<unsigned char> packed(static_cast<std::size_t>(size));
  std::vector<unsigned char> gathered(static_cast<std::size_t>(size));

  std::vector<double> pack_times;
  std::vector<double> gather_times;
  // One untimed round of each first, so that page faults on the output
  // buffers count for neither.
  for (int r = 0; r <= kSmallRepetitions; ++r) {
    int position = 0;
    Clock::time_point start = Clock::now();
    check_mpi(MPI_Pack(source.data(), 1, type.get(), packed.data(), static_cast<int>(size),
                       &position, MPI_COMM_SELF),
              "MPI_Pack");
    const double pack_ns = elapsed_ns(start);
    if (position != size) fail(c.name + ": MPI_Pack wrote " + std::to_string(position) + " bytes");

    start = Clock::now();
    PieceCursor cursor(flat, 1);
    unsigned char* out = gathered.data();
    while (std::size_t filled = cursor.next(batch, INT64_MAX)) {
      for (std::size_t i = 0; i < filled; ++i) {
        std::memcpy(out, source.data() + batch[i].offset,
                    static_cast<std::size_t>(batch[i].length));
        out += batch[i].length;
      }
    }
    const double gather_ns = elapsed_ns(start);
    if (out != gathered.data() + size) fail(c.name + ": gather did not fill the stream");
    if (r == 0) continue;
    pack_times.push_back(pack_ns);
    gather_times.push_back(gather_ns);
  }
  if (std::memcmp(packed.data(), gathered.data(), packed.size()) != 0) {
    fail(c.name + ": bytes gathered over the pieces differ from MPI_Pack's");
  }
  result.packed = true;
  result.pack_bytes_per_s = static_cast<double>(size) / (median(pack_times) * 1e-9);
  result.gather_bytes_per_s = static_cast<double>(size) / (median(gather_times) * 1e-9);
}

std::vector<Case> make_cases(bool quick, std::mt19937_64& rng) {
  std::vector<Case> cases;
  auto vector_case = [](std::string name, int blocks, bool large) {
    return Case{std::move(name), blocks, large, [blocks] {
                  MPI_Datatype type;
                  check_mpi(MPI_Type_vector(blocks, 1, 2, MPI_INT, &type), "MPI_Type_vector");
                  return TypeHandle(type);
                }};
  };
  // C order {outer, middle, inner}: the inner dimension has 2 ints of which
  // one is taken, so no two pieces touch; the middle dimension is only
  // partly taken, so the outer rows do not merge either.
  // Pieces: outer * middle.
  auto subarray_case = [](std::string name, int outer, int middle, bool large) {
    return Case{std::move(name), static_cast<std::int64_t>(outer) * middle, large, [outer, middle] {
                  const int sizes[3] = {outer, middle + middle / 5, 2};
                  const int subsizes[3] = {outer, middle, 1};
                  const int starts[3] = {0, middle / 10, 1};
                  MPI_Datatype type;
                  check_mpi(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C,
                                                     MPI_INT, &type),
                            "MPI_Type_create_subarray");
                  return TypeHandle(type);
                }};
  };

  cases.push_back(vector_case("vector_1e6", 1'000'000, false));
  if (!quick) cases.push_back(vector_case("vector_1e8", 100'000'000, true));
  cases.push_back(subarray_case("subarray_1e6", 1'000, 1'000, false));
  if (!quick) cases.push_back(subarray_case("subarray_1e8", 10'000, 10'000, true));

  // One int per block, gaps of 8, 12 or 16 bytes drawn at random: the
  // displacements are no arithmetic progression, so nothing folds and the
  // flattened form is one block per MPI block.
  constexpr int kIndexedBlocks = 1'000'000;
  auto displacements = std::make_shared<std::vector<MPI_Aint>>(kIndexedBlocks);
  std::uniform_int_distribution<int> gap(2, 4);
  for (int i = 1; i < kIndexedBlocks; ++i) {
    (*displacements)[i] = (*displacements)[i - 1] + 4 * gap(rng);
  }
  auto lengths = std::make_shared<std::vector<int>>(kIndexedBlocks, 1);
  cases.push_back(Case{"hindexed_1e6", kIndexedBlocks, false, [displacements, lengths] {
                         MPI_Datatype type;
                         check_mpi(MPI_Type_create_hindexed(kIndexedBlocks, lengths->data(),
                                                            displacements->data(), MPI_INT, &type),
                                   "MPI_Type_create_hindexed");
                         return TypeHandle(type);
                       }});
  return cases;
}

std::string human_time(double ns) {
  char text[32];
  if (ns < 1e3) {
    std::snprintf(text, sizeof text, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(text, sizeof text, "%.1f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(text, sizeof text, "%.1f ms", ns / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.2f s", ns / 1e9);
  }
  return text;
}

std::string human_bytes(double bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  } else if (bytes < 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024);
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
  }
  return text;
}

void print_results(const std::vector<Case>& cases, const std::vector<Result>& results) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Result& r = results[i];
    std::printf("bench=flatten case=%s pieces=%" PRId64
                " flatten_ns=%.0f nodes=%zu blocks=%zu flat_bytes=%" PRId64
                " rss_delta_kib=%ld iterate_pieces_per_s=%.4g seek_ns=%.1f"
                " mpich_commit_ns=%.0f mpich_create_commit_ns=%.0f",
                cases[i].name.c_str(), r.pieces, r.flatten_ns, r.nodes, r.blocks, r.flat_bytes,
                r.rss_delta_kib, r.iterate_pieces_per_s, r.seek_ns, r.commit_ns,
                r.create_commit_ns);
    if (r.packed) {
      std::printf(
          " mpich_pack_bytes_per_s=%.4g flowio_gather_bytes_per_s=%.4g "
          "gather_over_pack=%.3f",
          r.pack_bytes_per_s, r.gather_bytes_per_s, r.gather_bytes_per_s / r.pack_bytes_per_s);
    }
    std::printf("\n");
  }

  std::printf(
      "\nflowio core data model (one process; flatten median of %d, "
      "iterate median of %d"
      " for 10^6 and one run for 10^8, seek median of %d x %d)\n",
      kFlattenRepetitions, kSmallRepetitions, kSmallRepetitions, kSeeks);
  std::printf("%-14s %11s %10s %6s %8s %11s %9s %12s %8s\n", "case", "pieces", "flatten", "nodes",
              "blocks", "flat size", "peak RSS+", "iterate", "seek");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Result& r = results[i];
    std::printf("%-14s %11" PRId64 " %10s %6zu %8zu %11s %6ld KiB %6.0f Mp/s %5.0f ns\n",
                cases[i].name.c_str(), r.pieces, human_time(r.flatten_ns).c_str(), r.nodes,
                r.blocks, human_bytes(static_cast<double>(r.flat_bytes)).c_str(), r.rss_delta_kib,
                r.iterate_pieces_per_s / 1e6, r.seek_ns);
  }

  auto find = [&](std::string_view name) -> const Result* {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].name == name) return &results[i];
    }
    return nullptr;
  };
  const Result* small = find("vector_1e6");
  const Result* large = find("vector_1e8");
  if (small != nullptr && large != nullptr) {
    std::printf("\nflatten is O(1) in the block count of a regular type\n");
    std::printf("%-12s %12s %12s\n", "", "vector 10^6", "vector 10^8");
    std::printf("%-12s %12s %12s   (10^8 / 10^6 = %.2f)\n", "flatten",
                human_time(small->flatten_ns).c_str(), human_time(large->flatten_ns).c_str(),
                large->flatten_ns / small->flatten_ns);
    std::printf("%-12s %12zu %12zu\n", "nodes", small->nodes, large->nodes);
    std::printf("%-12s %12zu %12zu\n", "blocks", small->blocks, large->blocks);
    std::printf("%-12s %12s %12s\n", "flat size",
                human_bytes(static_cast<double>(small->flat_bytes)).c_str(),
                human_bytes(static_cast<double>(large->flat_bytes)).c_str());
  }

  std::printf(
      "\nflowio vs MPICH, same run (MPICH has no flatten: its type creation "
      "and commit, and"
      " MPI_Pack against a memcpy gather over the pieces, for context)\n");
  std::printf("%-14s %11s %11s %11s %14s %14s %7s\n", "case", "flowio", "MPICH", "MPICH", "MPICH",
              "flowio", "gather/");
  std::printf("%-14s %11s %11s %11s %14s %14s %7s\n", "", "flatten", "commit", "create+com",
              "MPI_Pack", "gather", "pack");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Result& r = results[i];
    std::printf("%-14s %11s %11s %11s", cases[i].name.c_str(), human_time(r.flatten_ns).c_str(),
                human_time(r.commit_ns).c_str(), human_time(r.create_commit_ns).c_str());
    if (r.packed) {
      std::printf(" %9.0f MB/s %9.0f MB/s %7.2f\n", r.pack_bytes_per_s / 1e6,
                  r.gather_bytes_per_s / 1e6, r.gather_bytes_per_s / r.pack_bytes_per_s);
    } else {
      std::printf(" %14s %14s %7s\n", "-", "-", "-");
    }
  }
}

void run(bool quick) {
  std::mt19937_64 rng(20240611);
  const std::vector<Case> cases = make_cases(quick, rng);
  std::vector<Result> results(cases.size());
  std::vector<Piece> batch(kBatchPieces);

  // Peak RSS is a high-water mark: measure each case's first flatten before
  // anything else in the run (buffers, other flattened forms still alive)
  // raises it.
  for (std::size_t i = 0; i < cases.size(); ++i) {
    TypeHandle type = cases[i].make();
    const long before = peak_rss_kib();
    FlatType flat = flowio::core::flatten(type.get());
    results[i].rss_delta_kib = peak_rss_kib() - before;
  }

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Result& result = results[i];
    TypeHandle type = c.make();

    std::vector<double> times;
    FlatType flat;
    for (int r = 0; r < kFlattenRepetitions; ++r) {
      const Clock::time_point start = Clock::now();
      flat = flowio::core::flatten(type.get());
      times.push_back(elapsed_ns(start));
    }
    result.flatten_ns = median(times);
    result.nodes = flat.node_count();
    result.blocks = flat.block_count();
    // Each block also has one block_stream_end entry in its node.
    result.flat_bytes =
        static_cast<std::int64_t>(result.blocks * (sizeof(FlatBlock) + sizeof(std::int64_t)) +
                                  result.nodes * sizeof(FlatNode));

    const std::int64_t expected_bytes = type_size(type.get());
    times.clear();
    const int walks = c.large ? 1 : kSmallRepetitions;
    for (int r = 0; r < walks; ++r) {
      const Clock::time_point start = Clock::now();
      const Walk walk = walk_all(flat, batch);
      times.push_back(elapsed_ns(start));
      check_walk(c, walk, expected_bytes);
      result.pieces = walk.pieces;
    }
    result.iterate_pieces_per_s = static_cast<double>(result.pieces) / (median(times) * 1e-9);
    result.seek_ns = measure_seek(c, flat, rng);
    measure_commit(c, result);
    if (!c.large) measure_pack(c, flat, batch, result);
  }
  print_results(cases, results);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  CLI::App app("The runtime core's flattened datatypes against MPICH's.", "flatten");
  app.add_flag("--quick", quick, "fewer and smaller cases");
  CLI11_PARSE(app, argc, argv);
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "bench/flatten: MPI_Init_thread failed\n");
    return 1;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    // The benchmark itself uses one thread; flowio proper would refuse.
    std::fprintf(stderr, "bench/flatten: note: MPI provides thread level %d, not MULTIPLE\n",
                 provided);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    try {
      run(quick);
    } catch (const std::exception& error) {
      fail(error.what());
    }
  }
  MPI_Finalize();
  return 0;
}
