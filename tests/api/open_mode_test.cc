// Open modes on 1, 2 and 4 ranks: collective and independent writes to
// files opened write-only (with create, exclusive create, append and
// delete on close; by every I/O method the hints select), a file whose
// permissions grant writing only, and read-only files, which refuse every
// write at the call on every rank.
#include <doctest/doctest.h>
#include <linux/capability.h>
#include <mpi.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

constexpr int kDoubles = 4096;

void write_whole_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The checkpoint: every rank's kDoubles doubles, one every
// `stride` doubles from displacement rank * 8, so that the ranks interleave
// (stride = ranks: no holes between them; more: holes).
struct Interleaved {
  int stride;
  MPI_Datatype filetype = MPI_DATATYPE_NULL;
  std::vector<double> data;

  explicit Interleaved(int stride_doubles) : stride(stride_doubles), data(kDoubles) {
    MPI_Type_vector(kDoubles, 1, stride, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);
    for (int i = 0; i < kDoubles; ++i) data[i] = world_rank() * 1e6 + i + 0.25;
  }
  ~Interleaved() { MPI_Type_free(&filetype); }
  Interleaved(const Interleaved&) = delete;
  Interleaved& operator=(const Interleaved&) = delete;

  MPI_Offset displacement() const { return world_rank() * 8; }

  // The file every rank's write leaves over `before` (the file's bytes
  // before the write; holes of a new file read as zeros).
  std::vector<char> expected(std::vector<char> before) const {
    const std::size_t end =
        static_cast<std::size_t>((world_size() - 1) * 8 + ((kDoubles - 1) * stride + 1) * 8);
    if (before.size() < end) before.resize(end, 0);
    for (int rank = 0; rank < world_size(); ++rank) {
      for (int i = 0; i < kDoubles; ++i) {
        const double value = rank * 1e6 + i + 0.25;
        std::memcpy(before.data() + rank * 8 + static_cast<std::size_t>(i) * stride * 8, &value, 8);
      }
    }
    return before;
  }
};

std::vector<char> background(std::size_t bytes) {
  std::mt19937_64 rng(20261126);
  std::vector<char> out(bytes);
  for (char& byte : out) byte = static_cast<char>(rng());
  return out;
}

// A scratch path with, on request, a file of background bytes there.
std::string prepare(const std::string& name, bool exists, std::vector<char>& before) {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, name);
  before = exists ? background(static_cast<std::size_t>(kDoubles) * 8 * world_size() * 2)
                  : std::vector<char>();
  if (world_rank() == 0) {
    std::remove(path.c_str());
    if (exists) write_whole_file(path, before);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// While alive, the calling thread lacks the capabilities that let root
// ignore file permissions, so that a test run as root meets them as a user
// would. Capabilities belong to threads: flowio opens files on the
// caller's thread.
class WithoutPermissionOverride {
 public:
  WithoutPermissionOverride() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    ::syscall(SYS_capget, &header_, saved_);
    __user_cap_data_struct reduced[2];
    std::memcpy(reduced, saved_, sizeof reduced);
    reduced[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    ::syscall(SYS_capset, &header_, reduced);
  }
  ~WithoutPermissionOverride() { ::syscall(SYS_capset, &header_, saved_); }
  WithoutPermissionOverride(const WithoutPermissionOverride&) = delete;
  WithoutPermissionOverride& operator=(const WithoutPermissionOverride&) = delete;

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
};

struct ModeCase {
  flowio::Mode flowio_mode;
  int mpi_mode;
  bool exists;  // the file is there before open
  const char* name;
};

const ModeCase kWriteOnlyModes[] = {
    {flowio::Mode::create | flowio::Mode::wronly, MPI_MODE_CREATE | MPI_MODE_WRONLY, false,
     "create|wronly, new file"},
    {flowio::Mode::create | flowio::Mode::wronly, MPI_MODE_CREATE | MPI_MODE_WRONLY, true,
     "create|wronly, existing file"},
    {flowio::Mode::wronly, MPI_MODE_WRONLY, true, "wronly"},
    {flowio::Mode::create | flowio::Mode::excl | flowio::Mode::wronly,
     MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, false, "create|excl|wronly"},
    {flowio::Mode::append | flowio::Mode::wronly, MPI_MODE_APPEND | MPI_MODE_WRONLY, true,
     "append|wronly"},
    {flowio::Mode::create | flowio::Mode::wronly | flowio::Mode::delete_on_close,
     MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, false,
     "create|wronly|delete_on_close"},
};

// The hint sets that select each I/O method an aggregator has, and direct
// access (every rank writes its own pieces).
const flowio::Hints kMethodHints[] = {
    {},
    {{"romio_ds_write", "enable"}},
    {{"romio_ds_write", "disable"}},
    {{"romio_ds_write", "enable"}, {"flowio_ds_mapping", "enable"}},
    {{"romio_cb_write", "disable"}},
    {{"cb_nodes", "1"}, {"cb_buffer_size", "4096"}},
};

std::string describe(const flowio::Hints& hints) {
  std::string text;
  for (const auto& [key, value] : hints) text += key + "=" + value + " ";
  return text.empty() ? "defaults" : text;
}

// The file's bytes as one implementation left them before close, on rank 0.
std::vector<char> image_before_close(const std::string& path) {
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<char> image;
  if (world_rank() == 0) image = read_whole_file(path);
  MPI_Barrier(MPI_COMM_WORLD);
  return image;
}

std::vector<char> mpich_write_all(const ModeCase& mode, const Interleaved& view,
                                  const flowio::Hints& hints, const std::string& path) {
  MPI_Info info;
  MPI_Info_create(&info);
  for (const auto& [key, value] : hints) {
    if (key.rfind("flowio_", 0) != 0) MPI_Info_set(info, key.c_str(), value.c_str());
  }
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), mode.mpi_mode, info, &file) == MPI_SUCCESS);
  MPI_Info_free(&info);
  REQUIRE(MPI_File_set_view(file, view.displacement(), MPI_DOUBLE, view.filetype, "native",
                            MPI_INFO_NULL) == MPI_SUCCESS);
  REQUIRE(MPI_File_write_all(file, view.data.data(), kDoubles, MPI_DOUBLE, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
  std::vector<char> image = image_before_close(path);
  MPI_File_close(&file);
  return image;
}

// Writes the interleaved checkpoint with write_all through flowio and
// through MPICH, and checks the file: exactly the data over what was there
// (zeros in a new file's holes), the same as MPICH's where MPICH is right
// (it fills holes of a new file with garbage when it sieves), and gone
// after close with delete_on_close.
void check_write_all(const ModeCase& mode, int stride, const flowio::Hints& hints) {
  CAPTURE(stride);
  CAPTURE(std::string(mode.name));
  CAPTURE(describe(hints));
  Interleaved view(stride);
  std::vector<char> before;
  const std::string path = prepare("open_mode_flowio", mode.exists, before);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, mode.flowio_mode, hints);
  file.set_view(view.displacement(), MPI_DOUBLE, view.filetype);
  CHECK(file.write_all(view.data.data(), kDoubles, MPI_DOUBLE) == kDoubles * 8u);
  CHECK(file.statistics().back().read_access);
  const std::vector<char> image = image_before_close(path);
  file.close();
  const std::string mpich_path = prepare("open_mode_mpich", mode.exists, before);
  const std::vector<char> mpich_image = mpich_write_all(mode, view, hints, mpich_path);
  if (world_rank() == 0) {
    CHECK(image == view.expected(before));
    if (mode.exists || stride == world_size()) CHECK(image == mpich_image);
    const bool deleted = (mode.mpi_mode & MPI_MODE_DELETE_ON_CLOSE) != 0;
    CHECK(::access(path.c_str(), F_OK) == (deleted ? -1 : 0));
  }
}

}  // namespace

// The checkpoint, interleaved doubles written with write_all to a
// file opened write-only in every mode MPI offers, with and without holes
// between the ranks' doubles.
TEST_CASE("Api.OpenMode.WriteOnlyCollectiveWritesInEveryMode") {
  for (int stride : {world_size(), world_size() + 1}) {
    for (const ModeCase& mode : kWriteOnlyModes) check_write_all(mode, stride, {});
  }
}

// The same to a new and to an existing write-only file by every I/O method
// the hints select.
TEST_CASE("Api.OpenMode.WriteOnlyCollectiveWritesByEveryMethod") {
  for (int stride : {world_size(), world_size() + 1}) {
    for (const flowio::Hints& hints : kMethodHints) {
      check_write_all(kWriteOnlyModes[0], stride, hints);
      check_write_all(kWriteOnlyModes[2], stride, hints);
    }
  }
}

// Independent writes to a write-only file through a view with holes: the
// holes keep their bytes.
TEST_CASE("Api.OpenMode.WriteOnlyIndependentWritesKeepTheHoles") {
  Interleaved view(world_size() + 1);
  std::vector<char> before;
  const std::string path = prepare("open_mode_independent", true, before);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::wronly);
  file.set_view(view.displacement(), MPI_DOUBLE, view.filetype);
  const int half = kDoubles / 2;
  flowio::Future<std::size_t> second =
      file.iwrite_at(half, view.data.data() + half, kDoubles - half, MPI_DOUBLE);
  CHECK(file.write_at(0, view.data.data(), half, MPI_DOUBLE) == half * 8u);
  CHECK(second.get() == (kDoubles - half) * 8u);
  const std::vector<char> image = image_before_close(path);
  file.close();
  if (world_rank() == 0) CHECK(image == view.expected(before));
}

// A file whose permissions grant writing only (mode 0200) is written
// through write-only access with methods that never read, even where the
// hints ask for data sieving, and the statistics say so; asking for
// read-write access fails on every rank.
TEST_CASE("Api.OpenMode.WriteOnlyPermissionsUseMethodsThatNeverRead") {
  Interleaved view(world_size() + 1);
  std::vector<char> before;
  const std::string path = prepare("open_mode_0200", true, before);
  if (world_rank() == 0) REQUIRE(::chmod(path.c_str(), 0200) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<char> image;
  {
    WithoutPermissionOverride as_a_user;
    bool refused = false;
    try {
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr);
    } catch (const flowio::IoError& error) {
      refused = error.code() == flowio::ErrorCode::access_denied;
    }
    CHECK(all_ranks(refused));
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::wronly,
                                           {{"romio_ds_write", "enable"}, {"cb_nodes", "1"}});
    file.set_view(view.displacement(), MPI_DOUBLE, view.filetype);
    CHECK(file.write_all(view.data.data(), kDoubles, MPI_DOUBLE) == kDoubles * 8u);
    const flowio::OperationStatistics statistics = file.statistics().back();
    CHECK_FALSE(statistics.read_access);
    if (statistics.aggregator) CHECK(statistics.method == "vectored");
    file.close();
  }
  if (world_rank() == 0) {
    REQUIRE(::chmod(path.c_str(), 0644) == 0);
    CHECK(read_whole_file(path) == view.expected(before));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Every write form on a read-only file fails at the call with read_only,
// on every rank, and leaves the file as it was; reads work.
TEST_CASE("Api.OpenMode.ReadOnlyRefusesWritesOnEveryRank") {
  Interleaved view(world_size() + 1);
  std::vector<char> before;
  const std::string path = prepare("open_mode_rdonly", true, before);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  file.set_view(view.displacement(), MPI_DOUBLE, view.filetype);
  const auto refuses = [](auto&& call) {
    try {
      call();
    } catch (const flowio::UsageError& error) {
      return error.code() == flowio::ErrorCode::read_only;
    }
    return false;
  };
  const double* data = view.data.data();
  CHECK(all_ranks(refuses([&] { file.write_all(data, kDoubles, MPI_DOUBLE); })));
  CHECK(all_ranks(refuses([&] { file.write_at_all(0, data, kDoubles, MPI_DOUBLE); })));
  CHECK(all_ranks(refuses([&] { file.iwrite_at_all(0, data, kDoubles, MPI_DOUBLE).get(); })));
  CHECK(all_ranks(refuses([&] { file.write_at(0, data, kDoubles, MPI_DOUBLE); })));
  CHECK(all_ranks(refuses([&] { file.iwrite(data, kDoubles, MPI_DOUBLE).get(); })));
  CHECK(all_ranks(refuses([&] { file.set_size(0); })));
  CHECK(all_ranks(refuses([&] { file.preallocate(1 << 20); })));
  std::vector<double> read(kDoubles);
  CHECK(file.read_all(read.data(), kDoubles, MPI_DOUBLE) == kDoubles * 8u);
  CHECK(std::memcmp(read.data(), before.data() + view.displacement(), 8) == 0);
  CHECK(file.read_at(1, read.data(), 1, MPI_DOUBLE) == 8u);
  CHECK(std::memcmp(read.data(), before.data() + view.displacement() + view.stride * 8, 8) == 0);
  file.close();
  if (world_rank() == 0) CHECK(read_whole_file(path) == before);
  MPI_Barrier(MPI_COMM_WORLD);
}
