// Independent transfers (io/independent_transfer.h) against the naive
// method (io/view_transfer.h, one request per piece) as the oracle: random
// strided views and memory layouts, every method setting, files shorter and
// longer than the access. Writes must leave the same file, including every
// byte between the pieces; reads must fill the same memory, stop at the
// same end of file and leave the memory past it untouched. Over both
// backends.
#include "io/independent_transfer.h"

#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/view_transfer.h"
#include "io_test_support.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"

namespace flowio::io::testing {
namespace {

// A committed MPI datatype freed with the handle.
class Type {
 public:
  explicit Type(MPI_Datatype type) : type_(type) { MPI_Type_commit(&type_); }
  ~Type() { MPI_Type_free(&type_); }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

// `count` blocks of `length` bytes, `stride` apart, resized to count *
// stride so that tiles follow each other.
MPI_Datatype strided(int count, int length, int stride) {
  MPI_Datatype vector, resized;
  MPI_Type_vector(count, length, stride, MPI_BYTE, &vector);
  MPI_Type_create_resized(vector, 0, static_cast<MPI_Aint>(count) * stride, &resized);
  MPI_Type_free(&vector);
  return resized;
}

std::vector<unsigned char> file_bytes(int fd) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)));
  REQUIRE(::pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  return bytes;
}

struct Case {
  int file_blocks, file_length, file_stride;
  std::int64_t displacement, stream_position, file_size;
  int memory_blocks, memory_length, memory_stride;  // memory_stride 0: contiguous
  int memory_count;
  WindowIoSettings settings;
  std::string text;
};

Case random_case(std::mt19937_64& rng, int index) {
  auto pick = [&rng](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  Case c{};
  c.file_length = static_cast<int>(pick(1, 40));
  // Mostly close pieces (mapped, sieved), sometimes far apart (vectored):
  // then few of them, to keep the files small.
  const bool far = pick(0, 9) == 0;
  const int gap = static_cast<int>(far ? pick(300000, 400000) : pick(0, 300));
  c.file_stride = c.file_length + gap;
  c.file_blocks = static_cast<int>(far ? pick(1, 2) : pick(1, 64));
  c.displacement = pick(0, 5000);
  const std::int64_t tile = static_cast<std::int64_t>(c.file_blocks) * c.file_length;
  c.stream_position = pick(0, 2) * tile + pick(0, tile - 1);
  const std::int64_t pieces = far ? pick(1, 6) : pick(1, 3000);
  c.memory_length = static_cast<int>(pick(1, 30));
  c.memory_blocks =
      static_cast<int>((pieces * c.file_length + c.memory_length - 1) / c.memory_length);
  c.memory_count = static_cast<int>(pick(1, 3));
  c.memory_stride = pick(0, 1) == 0 ? 0 : c.memory_length + static_cast<int>(pick(1, 20));
  const std::int64_t access_bytes =
      static_cast<std::int64_t>(c.memory_count) * c.memory_blocks * c.memory_length;
  const std::int64_t tiles_spanned = (c.stream_position + access_bytes) / tile + 1;
  const std::int64_t reach =
      c.displacement + tiles_spanned * static_cast<std::int64_t>(c.file_blocks) * c.file_stride;
  // Files ending before, inside and after the access.
  c.file_size = pick(0, reach + 1000);
  const int setting = static_cast<int>(pick(0, 3));
  if (setting == 1) c.settings.sieve = SieveMode::disable;
  if (setting == 2) c.settings.mapping = SieveMode::disable;
  if (setting == 3) c.settings.sieve = SieveMode::enable;
  c.settings.sieve_threshold = pick(0, 1) == 0 ? 4096 : 16384;
  c.text = "case " + std::to_string(index) + ": file blocks " + std::to_string(c.file_blocks) +
           " x " + std::to_string(c.file_length) + " stride " + std::to_string(c.file_stride) +
           " displacement " + std::to_string(c.displacement) + " stream position " +
           std::to_string(c.stream_position) + " file size " + std::to_string(c.file_size) +
           " memory " + std::to_string(c.memory_count) + " x " + std::to_string(c.memory_blocks) +
           " x " + std::to_string(c.memory_length) + " stride " + std::to_string(c.memory_stride) +
           " setting " + std::to_string(setting);
  return c;
}

void fill_file(int fd, std::int64_t size) {
  REQUIRE(::ftruncate(fd, 0) == 0);
  if (size > 0) write_pattern_file(fd, size);
}

void run_case(StorageBackend& backend, const Case& c) {
  INFO(c.text);
  const Type filetype(strided(c.file_blocks, c.file_length, c.file_stride));
  const Type memtype(c.memory_stride == 0
                         ? [&] {
                             MPI_Datatype type;
                             MPI_Type_contiguous(c.memory_blocks * c.memory_length, MPI_BYTE,
                                                 &type);
                             return type;
                           }()
                         : strided(c.memory_blocks, c.memory_length, c.memory_stride));
  const core::FileView view(c.displacement, MPI_BYTE, filetype.get());
  const core::FlatType flat = core::flatten(memtype.get());
  const std::size_t buffer_bytes = static_cast<std::size_t>(flat.extent() * c.memory_count);
  std::vector<unsigned char> data(buffer_bytes);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<unsigned char>(i * 29 + 7);
  }
  const core::MemoryLayout source{&flat, c.memory_count,
                                  reinterpret_cast<std::int64_t>(data.data())};

  ScratchFile tested("independent_tested"), oracle("independent_oracle");
  fill_file(tested.fd(), c.file_size);
  fill_file(oracle.fd(), c.file_size);
  {
    FileMapping mapping(tested.fd());
    CHECK(write_independent(backend, tested.fd(), mapping, view, c.stream_position, source,
                            c.settings) == source.bytes());
  }
  write_to_view(backend, oracle.fd(), view, c.stream_position, source);
  const std::vector<unsigned char> tested_bytes = file_bytes(tested.fd());
  const std::vector<unsigned char> oracle_bytes = file_bytes(oracle.fd());
  REQUIRE(tested_bytes.size() == oracle_bytes.size());
  const auto differ = std::mismatch(tested_bytes.begin(), tested_bytes.end(), oracle_bytes.begin());
  CHECK_MESSAGE(differ.first == tested_bytes.end(),
                "the files differ at byte " << (differ.first - tested_bytes.begin()));

  // Read back from a file cut somewhere in the access (or not).
  std::mt19937_64 rng(static_cast<std::uint64_t>(c.file_size));
  const auto cut = std::uniform_int_distribution<std::int64_t>(
      0, static_cast<std::int64_t>(oracle_bytes.size()))(rng);
  REQUIRE(::ftruncate(tested.fd(), cut) == 0);
  std::vector<unsigned char> tested_memory(buffer_bytes, untouched);
  std::vector<unsigned char> oracle_memory(buffer_bytes, untouched);
  const core::MemoryLayout tested_target{&flat, c.memory_count,
                                         reinterpret_cast<std::int64_t>(tested_memory.data())};
  const core::MemoryLayout oracle_target{&flat, c.memory_count,
                                         reinterpret_cast<std::int64_t>(oracle_memory.data())};
  std::int64_t tested_read = 0;
  {
    FileMapping mapping(tested.fd());
    tested_read = read_independent(backend, tested.fd(), mapping, view, c.stream_position,
                                   tested_target, c.settings);
  }
  const std::int64_t oracle_read =
      read_from_view(backend, tested.fd(), view, c.stream_position, oracle_target);
  CHECK(tested_read == oracle_read);
  const auto memory_differ =
      std::mismatch(tested_memory.begin(), tested_memory.end(), oracle_memory.begin());
  CHECK_MESSAGE(memory_differ.first == tested_memory.end(),
                "the memory differs at byte " << (memory_differ.first - tested_memory.begin())
                                              << " (file cut at " << cut << ")");
}

}  // namespace

// 50 random cases per backend against the naive method.
TEST_CASE("Io.IndependentTransfer.MatchesTheNaiveMethod") {
  for_each_backend([](StorageBackend& backend) {
    std::mt19937_64 rng(20261126);
    for (int i = 0; i < 50; ++i) run_case(backend, random_case(rng, i));
  });
}

}  // namespace flowio::io::testing
