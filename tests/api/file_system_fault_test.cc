// Real faults of the file system (a full tmpfs, a file cut or made immutable
// under an open file, its directory removed; injected ones: fault_test.cc),
// through the C++ API on 1, 2 and 4 ranks: an independent operation fails
// on its own rank only; a collective one fails on every rank with the same
// error class within a bounded time; the file stays usable and keeps every
// byte reported written. Each case prints a
// "flowio-outcome:" line for the closing table (tests/support/rank_outcomes.h).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <mpi.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/fault_data.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/rank_outcomes.h"
#include "tests/support/test_progress.h"
#include "tests/support/world.h"

using namespace flowio::testing::faults;

namespace {

// A 1 MiB tmpfs mounted by rank 0 for one test, unmounted at the end; or
// nothing, where this process may not mount (then the test is skipped).
class SmallTmpfs {
 public:
  SmallTmpfs() : directory_(flowio::testing::scratch_path(MPI_COMM_WORLD, "tmpfs")) {
    int error = 0;
    if (world_rank() == 0) {
      ::mkdir(directory_.c_str(), 0755);
      if (::mount("tmpfs", directory_.c_str(), "tmpfs", 0, "size=1m") != 0) error = errno;
    }
    MPI_Bcast(&error, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mounted_ = error == 0;
    if (!mounted_) why_not_ = std::strerror(error);
  }
  ~SmallTmpfs() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0 && mounted_) ::umount2(directory_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  std::string path(const std::string& name) const { return directory_ + "/" + name; }

 private:
  std::string directory_;
  bool mounted_ = false;
  std::string why_not_;
};

}  // namespace

// A file system that fills up (a 1 MiB tmpfs): a collective write of more
// than fits fails with no_space on every rank, an independent one on its
// rank; what was written before stays intact, and writes that fit still
// work.
TEST_CASE("Api.Fault.FullFileSystem") {
  const SmallTmpfs tmpfs;
  if (!tmpfs.mounted()) {
    flowio::testing::skip("mounting a 1 MiB tmpfs is not permitted here (" + tmpfs.why_not() + ")");
    return;
  }
  const InterleavedView view(kBlock);
  const std::vector<char> data = my_data();
  for (const Route& route : routes()) {
    const std::string label = std::string("collective iwrite_at_all past 1 MiB, ") + route.name;
    CAPTURE(label);
    const std::string path = tmpfs.path("full.dat");
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                           flowio::Mode::create | flowio::Mode::rdwr, route.hints);
    view.apply(file);
    // Written and reported complete before the failure.
    CHECK(file.write_at_all(0, data.data(), kBytesPerRank, MPI_CHAR) ==
          static_cast<std::size_t>(kBytesPerRank));
    // Every rank writes 1 MiB further on: more than the tmpfs holds.
    const std::int64_t big = std::int64_t{1} << 20;
    std::vector<char> filler(static_cast<std::size_t>(big), 'f');
    const Outcome mine = observe_future(
        label, [&] { return file.iwrite_at_all(kBytesPerRank, filler.data(), big, MPI_CHAR); });
    const std::vector<Outcome> all = gather_outcomes(mine);
    print_outcomes(label, "1 MiB tmpfs", all);
    for (const Outcome& outcome : all) CHECK(outcome.failed_with(ErrorCode::no_space));
    CHECK(slowest(all) < kBoundSeconds);
    std::vector<char> back(kBytesPerRank, '#');
    CHECK(file.read_at_all(0, back.data(), kBytesPerRank, MPI_CHAR) ==
          static_cast<std::size_t>(kBytesPerRank));
    CHECK_MESSAGE(back == data, "bytes reported written before the failure were lost");
    // Space back, and the file works again.
    file.set_size(0);
    write_and_verify(file, data, label);

    // Independent: only the last rank writes past the end of the space.
    file.set_view(0, MPI_BYTE, MPI_BYTE);
    const int last = world_size() - 1;
    const Outcome independent = observe([&] {
      return world_rank() == last ? file.write_at(0, filler.data(), big * 2, MPI_CHAR) : 0;
    });
    const std::vector<Outcome> each = gather_outcomes(independent);
    print_outcomes("independent write_at past 1 MiB (last rank)", "1 MiB tmpfs", each);
    CHECK(each[last].failed_with(ErrorCode::no_space));
    file.close();
    if (world_rank() == 0) ::unlink(path.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// A file cut short by another process while open: reads return the bytes
// that are left (a short count, not an error) and leave the rest of the
// buffer alone; writes afterwards work.
TEST_CASE("Api.Fault.FileTruncatedUnderAnOpenFile") {
  const InterleavedView view(kBlock);
  const std::vector<char> data = my_data();
  for (const Route& route : routes()) {
    const std::string label =
        std::string("collective iread_at_all after an outside truncate, ") + route.name;
    CAPTURE(label);
    const std::string path = fresh_path("fault_truncated");
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                           flowio::Mode::create | flowio::Mode::rdwr, route.hints);
    view.apply(file);
    CHECK(file.write_at_all(0, data.data(), kBytesPerRank, MPI_CHAR) ==
          static_cast<std::size_t>(kBytesPerRank));
    file.sync();
    // Cut in the middle of the second round of blocks.
    const std::int64_t cut = static_cast<std::int64_t>(world_size()) * kBlock + kBlock / 2;
    if (world_rank() == 0) CHECK(::truncate(path.c_str(), cut) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<char> back(kBytesPerRank, '#');
    const Outcome mine = observe_future(
        label, [&] { return file.iread_at_all(0, back.data(), kBytesPerRank, MPI_CHAR); });
    print_outcomes(label, "truncate(2) to " + std::to_string(cut) + " B by rank 0",
                   gather_outcomes(mine));
    REQUIRE(mine.ok());
    // This rank's bytes before the cut: a whole first block, and of the
    // second only rank 0's first half.
    const std::int64_t expected = kBlock + (world_rank() == 0 ? kBlock / 2 : 0);
    CHECK(mine.moved == expected);
    CHECK(std::equal(back.begin(), back.begin() + expected, data.begin()));
    CHECK(std::count(back.begin() + expected, back.end(), '#') == kBytesPerRank - expected);
    write_and_verify(file, data, label);
    file.close();
  }
}

// The directory of an open file removed by another process: the open file
// keeps working (reads, writes, sync, close), as POSIX keeps the inode;
// opening the path again fails with no_such_file on every rank.
TEST_CASE("Api.Fault.DirectoryRemovedUnderAnOpenFile") {
  const std::string directory = flowio::testing::scratch_path(MPI_COMM_WORLD, "fault_dir");
  const std::string path = directory + "/file.dat";
  if (world_rank() == 0) ::mkdir(directory.c_str(), 0755);
  MPI_Barrier(MPI_COMM_WORLD);
  const InterleavedView view(kBlock);
  const std::vector<char> data = my_data();
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, routes()[0].hints);
  view.apply(file);
  CHECK(file.write_at_all(0, data.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  if (world_rank() == 0) {
    CHECK(::unlink(path.c_str()) == 0);
    CHECK(::rmdir(directory.c_str()) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<char> second = my_data(1);
  const Outcome after = observe_future("iwrite_at_all after rmdir", [&] {
    return file.iwrite_at_all(0, second.data(), kBytesPerRank, MPI_CHAR);
  });
  print_outcomes("collective iwrite_at_all after its directory was removed",
                 "unlink + rmdir by rank 0", gather_outcomes(after));
  CHECK(after.ok());
  std::vector<char> back(kBytesPerRank, '#');
  CHECK(file.read_at_all(0, back.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  CHECK(back == second);
  CHECK_NOTHROW(file.sync());
  CHECK_NOTHROW(file.close());
  const Outcome reopen = observe([&] {
    flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr).close();
    return std::size_t{0};
  });
  const std::vector<Outcome> all = gather_outcomes(reopen);
  print_outcomes("open of the removed path", "unlink + rmdir by rank 0", all);
  for (const Outcome& outcome : all) CHECK(outcome.failed_with(ErrorCode::no_such_file));
}

// A file made immutable (chattr +i) while open: writes through the open
// file fail with access_denied (EPERM) on the rank that writes, as does a
// new open for writing on every rank; reads go on, and once the flag is
// gone the same open file writes again.
TEST_CASE("Api.Fault.FileMadeImmutableUnderAnOpenFile") {
  const std::string path = fresh_path("fault_immutable");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const std::vector<char> data = my_data();
  const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * kBytesPerRank;
  CHECK(file.write_at(at, data.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  // Rank 0 sets the flag once every rank has written (a rank still
  // writing would see the flag early); where the file system or this
  // process may not, the test is skipped.
  MPI_Barrier(MPI_COMM_WORLD);
  int error = 0;
  int flags = 0;
  int descriptor = -1;
  if (world_rank() == 0) {
    descriptor = ::open(path.c_str(), O_RDONLY);
    if (::ioctl(descriptor, FS_IOC_GETFLAGS, &flags) != 0) {
      error = errno;
    } else {
      const int immutable = flags | FS_IMMUTABLE_FL;
      if (::ioctl(descriptor, FS_IOC_SETFLAGS, &immutable) != 0) error = errno;
    }
  }
  MPI_Bcast(&error, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (error != 0) {
    if (descriptor >= 0) ::close(descriptor);
    file.close();
    flowio::testing::skip(std::string("chattr +i is not possible here (") + std::strerror(error) +
                          ")");
    return;
  }
  const std::vector<char> second = my_data(2);
  const Outcome write =
      observe([&] { return file.write_at(at, second.data(), kBytesPerRank, MPI_CHAR); });
  print_outcomes("independent write_at on the open file", "chattr +i by rank 0",
                 gather_outcomes(write));
  CHECK(write.failed_with(ErrorCode::access_denied));
  std::vector<char> back(kBytesPerRank, '#');
  CHECK(file.read_at(at, back.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  CHECK(back == data);
  const Outcome reopen = observe([&] {
    flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::wronly).close();
    return std::size_t{0};
  });
  const std::vector<Outcome> all = gather_outcomes(reopen);
  print_outcomes("open for writing", "chattr +i by rank 0", all);
  for (const Outcome& outcome : all) CHECK(outcome.failed_with(ErrorCode::access_denied));
  if (world_rank() == 0) {
    ::ioctl(descriptor, FS_IOC_SETFLAGS, &flags);
    ::close(descriptor);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(file.write_at(at, second.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  CHECK(file.read_at(at, back.data(), kBytesPerRank, MPI_CHAR) ==
        static_cast<std::size_t>(kBytesPerRank));
  CHECK(back == second);
  file.close();
}
