// Atomic mode with object sets (File::set_atomicity, sync/atomic_mode.h):
// an access that touches only bytes no other process's view holds takes
// no lock, collective or independent, and one that touches shared bytes
// does; and concurrent overlapping atomic writes through strided views
// stay whole, whether a write may read-modify-write its extent (the bytes
// between its pieces belong to no one) or not (they are another process's
// private bytes, written without a lock).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flowio/flowio.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "runtime/core/lock_regions.h"
#include "sync/atomic_mode.h"
#include "sync/object_set.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

// An fcntl write lock over the whole file, held by the test through a
// descriptor of its own (an open file description lock: it conflicts with
// the ones flowio's fcntl lock takes, even in the same process). While it
// is held, any access that takes flowio's fcntl lock waits.
class OutsideLock {
 public:
  explicit OutsideLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR)) {
    REQUIRE(fd_ >= 0);
  }
  ~OutsideLock() {
    release();
    ::close(fd_);
  }
  void hold() {
    struct flock region {};
    region.l_type = F_WRLCK;
    region.l_whence = SEEK_SET;
    // Every byte of the file: up to the sieve locks, which guard flowio's
    // read-modify-writes, not accesses (runtime/core/lock_regions.h).
    region.l_len = flowio::core::kSieveLockBase;
    REQUIRE(::fcntl(fd_, F_OFD_SETLKW, &region) == 0);
  }
  void release() {
    struct flock region {};
    region.l_type = F_UNLCK;
    region.l_whence = SEEK_SET;
    ::fcntl(fd_, F_OFD_SETLK, &region);
  }

 private:
  int fd_;
};

constexpr std::int64_t kTile = 4096;

// Rank r's view: tile r of every row of P tiles, widened by `halo` bytes
// into the next rank's tile (the last rank's into the next row's first):
// stream bytes [0, halo) and [kTile, kTile + halo) of each tile are shared
// with a neighbour, [halo, kTile) are private.
MPI_Datatype halo_tiles(std::int64_t halo) {
  MPI_Datatype tile, row;
  MPI_Type_contiguous(static_cast<int>(kTile + halo), MPI_BYTE, &tile);
  MPI_Type_create_resized(tile, 0, kTile * world_size(), &row);
  MPI_Type_commit(&row);
  MPI_Type_free(&tile);
  return row;
}

}  // namespace

// With another holder of the fcntl lock outside flowio, accesses of
// private bytes (independent and collective, blocking and not) complete,
// and accesses of shared bytes wait until it lets go; then the file holds
// every rank's bytes. Row k of tiles is stream [k * row, (k + 1) * row)
// of every rank (row = kTile + halo); rank 0's first halo is private (no
// row before it), the others shared.
TEST_CASE("Sync.AtomicMode.PrivateAccessesTakeNoLock") {
  const int ranks = world_size();
  const std::int64_t halo = ranks > 1 ? 512 : 0;
  const std::int64_t row = kTile + halo;
  const std::int64_t private_bytes = kTile - halo;
  MPI_Datatype view = halo_tiles(halo);
  const std::string path = lock_file("atomic_private");
  File file = File::open(MPI_COMM_WORLD, path, Mode::rdwr,
                         {{"flowio_lock", "fcntl"}, {"romio_cb_write", "enable"}});
  file.set_view(kTile * world_rank(), MPI_BYTE, view);
  file.set_atomicity(true);
  const std::vector<char> data(kTile, static_cast<char>('a' + world_rank()));
  OutsideLock outside(path);
  if (world_rank() == 0) outside.hold();
  MPI_Barrier(MPI_COMM_WORLD);

  // Private: the middle of row 0 independently, of row 1 collectively
  // and then independently again.
  Future<std::size_t> independent = file.iwrite_at(halo, data.data(), private_bytes, MPI_BYTE);
  CHECK(independent.wait_for(std::chrono::seconds(30)));
  Future<std::size_t> collective =
      file.iwrite_at_all(row + halo, data.data(), private_bytes, MPI_BYTE);
  CHECK(collective.wait_for(std::chrono::seconds(30)));
  const bool private_done = all_ranks(independent.ready() && collective.ready());
  CHECK(private_done);
  if (!private_done && world_rank() == 0) outside.release();  // let the test end
  CHECK(independent.get() == static_cast<std::size_t>(private_bytes));
  CHECK(collective.get() == static_cast<std::size_t>(private_bytes));
  CHECK(file.write_at(row + halo, data.data(), private_bytes, MPI_BYTE) ==
        static_cast<std::size_t>(private_bytes));

  if (ranks > 1 && private_done) {
    // Shared: the first halo of row 1 independently, of row 2
    // collectively; neither runs while the lock is held.
    Future<std::size_t> shared = file.iwrite_at(row, data.data(), halo, MPI_BYTE);
    CHECK_FALSE(shared.wait_for(std::chrono::milliseconds(300)));
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) outside.release();
    CHECK(shared.get() == static_cast<std::size_t>(halo));
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) outside.hold();
    MPI_Barrier(MPI_COMM_WORLD);
    shared = file.iwrite_at_all(2 * row, data.data(), halo, MPI_BYTE);
    CHECK_FALSE(shared.wait_for(std::chrono::milliseconds(300)));
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) outside.release();
    CHECK(shared.get() == static_cast<std::size_t>(halo));
  }
  if (world_rank() == 0) outside.release();
  file.close();

  // Rows 0 to 2 of the file: what each rank wrote where (bytes written by
  // no one are zeros).
  if (world_rank() == 0 && private_done) {
    const std::int64_t file_row = kTile * ranks;
    std::vector<char> contents(static_cast<std::size_t>(3 * file_row));
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    CHECK(::pread(fd, contents.data(), contents.size(), 0) >= 2 * file_row);
    ::close(fd);
    int wrong = 0;
    for (std::int64_t at = 0; at < 3 * file_row; ++at) {
      const std::int64_t in_tile = at % kTile;
      const auto owner = static_cast<char>('a' + (at % file_row) / kTile);
      const std::int64_t file_row_index = at / file_row;
      const bool written = file_row_index == 1 || (file_row_index == 0 && in_tile >= halo) ||
                           (file_row_index == 2 && in_tile < halo && ranks > 1);
      if (contents[static_cast<std::size_t>(at)] != (written ? owner : 0)) ++wrong;
    }
    CHECK(wrong == 0);
  }
  MPI_Type_free(&view);
}

namespace {

constexpr std::int64_t kBlock = 1024;
constexpr int kPeriods = 48;  // of the views below, per write
constexpr int kRounds = 24;

// The value rank r writes in round k: rank and round both recoverable.
char value_of(int rank, int round) { return static_cast<char>(1 + rank + 8 * (round % 30)); }

// Every rank writes all its stream, kRounds times, while the others do
// the same; each call is one atomic write. After each, the stream ranges
// in `private_pass` (this process's private bytes) are written again one
// by one, with the value of round kRounds + round. Returns the file
// afterwards on rank 0, nothing elsewhere.
std::vector<char> write_concurrently(
    const std::string& name, MPI_Offset displacement, MPI_Datatype filetype,
    std::int64_t stream_bytes, const Hints& hints, std::int64_t file_bytes,
    const std::vector<std::pair<std::int64_t, std::int64_t>>& private_pass = {}) {
  const std::string path = scratch_path(name);
  if (world_rank() == 0) ::unlink(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  File file = File::open(MPI_COMM_WORLD, path, Mode::create | Mode::rdwr, hints);
  file.set_size(file_bytes);  // holes read as zeros: what no one writes stays 0
  file.set_view(displacement, MPI_BYTE, filetype);
  file.set_atomicity(true);
  std::vector<char> data(static_cast<std::size_t>(stream_bytes));
  for (int round = 0; round < kRounds; ++round) {
    std::fill(data.begin(), data.end(), value_of(world_rank(), round));
    if (round % 2 == 0) {
      CHECK(file.write_at(0, data.data(), stream_bytes, MPI_BYTE) ==
            static_cast<std::size_t>(stream_bytes));
    } else {
      CHECK(file.iwrite_at(0, data.data(), stream_bytes, MPI_BYTE).get() ==
            static_cast<std::size_t>(stream_bytes));
    }
    std::fill(data.begin(), data.end(), value_of(world_rank(), kRounds + round));
    for (const auto& [begin, end] : private_pass) {
      CHECK(file.write_at(begin, data.data(), end - begin, MPI_BYTE) ==
            static_cast<std::size_t>(end - begin));
    }
  }
  file.close();
  if (world_rank() != 0) return {};  // rank 0 checks (and removes the file before the next use)
  std::vector<char> contents(static_cast<std::size_t>(file_bytes));
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  CHECK(::pread(fd, contents.data(), contents.size(), 0) == static_cast<ssize_t>(file_bytes));
  ::close(fd);
  return contents;
}

// The distinct values in [begin, end) of `contents`.
std::set<char> values_in(const std::vector<char>& contents, std::int64_t begin, std::int64_t end) {
  std::set<char> values;
  for (std::int64_t at = begin; at < end; ++at) values.insert(contents[static_cast<size_t>(at)]);
  return values;
}

}  // namespace

// Every rank writes the same strided view (1 KiB blocks, 1 KiB holes no
// view holds), displaced by half its extent from the previous rank: each
// write overlaps its neighbours'. Its lease covers its extent and the
// holes belong to no one, so writes may be sieved. Afterwards each
// overlap of two writes holds one writer's bytes from one round, the last
// of that writer; the holes are still zeros.
TEST_CASE("Sync.AtomicMode.OverlappingStridedWritesStayWhole") {
  MPI_Datatype block, strided;
  MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, 2 * kBlock, &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&block);
  const std::int64_t extent = 2 * kBlock * kPeriods;
  const std::int64_t half = extent / 2;
  const std::int64_t file_bytes = half * (world_size() + 1);
  for (const sync::LockSettings& settings : each_algorithm()) {
    CAPTURE(describe(settings));
    Hints hints;
    settings.describe(hints);
    const std::vector<char> contents =
        write_concurrently("atomic_overlapping_strided", half * world_rank(), strided,
                           kBlock * kPeriods, hints, file_bytes);
    if (world_rank() != 0) continue;
    int torn = 0, holes = 0;
    for (int piece = 0; piece <= world_size(); ++piece) {
      // [piece * half, (piece + 1) * half): written by ranks piece - 1 and
      // piece (those that exist).
      std::set<char> values;
      for (std::int64_t at = piece * half; at < (piece + 1) * half; at += 2 * kBlock) {
        const std::set<char> in_block = values_in(contents, at, at + kBlock);
        values.insert(in_block.begin(), in_block.end());
        for (const char hole : values_in(contents, at + kBlock, at + 2 * kBlock)) {
          if (hole != 0) ++holes;
        }
      }
      std::set<char> allowed;
      if (piece > 0) allowed.insert(value_of(piece - 1, kRounds - 1));
      if (piece < world_size()) allowed.insert(value_of(piece, kRounds - 1));
      if (values.size() != 1 || allowed.count(*values.begin()) == 0) ++torn;
    }
    CHECK(torn == 0);
    CHECK(holes == 0);
  }
  MPI_Type_free(&strided);
}

// Views interleaved block by block: in every period of P + 1 blocks,
// block r is rank r's alone and the last block everyone's. Each whole
// write touches the shared blocks, so it takes a lease; the blocks between
// its own are the others' private ones, which their owners write again
// one by one without a lock, so it must not rewrite them. Afterwards every
// private block holds its owner's last private write, and all the shared
// blocks one writer's last round.
TEST_CASE("Sync.AtomicMode.SharedWritesLeaveOthersPrivateBytes") {
  const int ranks = world_size();
  const std::int64_t period = kBlock * (ranks + 1);
  MPI_Datatype blocks;
  const int lengths[2] = {static_cast<int>(kBlock), static_cast<int>(kBlock)};
  const MPI_Aint offsets[2] = {static_cast<MPI_Aint>(kBlock * world_rank()),
                               static_cast<MPI_Aint>(kBlock * ranks)};
  MPI_Datatype with_extent;
  MPI_Type_create_hindexed(2, lengths, offsets, MPI_BYTE, &blocks);
  MPI_Type_create_resized(blocks, 0, period, &with_extent);
  MPI_Type_commit(&with_extent);
  MPI_Type_free(&blocks);
  for (const sync::LockSettings& settings : each_algorithm()) {
    CAPTURE(describe(settings));
    Hints hints;
    settings.describe(hints);
    std::vector<std::pair<std::int64_t, std::int64_t>> private_blocks;
    for (int p = 0; p < kPeriods; ++p)
      private_blocks.emplace_back(2 * kBlock * p, 2 * kBlock * p + kBlock);
    const std::vector<char> contents =
        write_concurrently("atomic_private_between", 0, with_extent, 2 * kBlock * kPeriods, hints,
                           period * kPeriods, private_blocks);
    if (world_rank() != 0) continue;
    int wrong_private = 0;
    std::set<char> shared;
    for (int p = 0; p < kPeriods; ++p) {
      for (int rank = 0; rank < ranks; ++rank) {
        const std::int64_t at = p * period + rank * kBlock;
        const std::set<char> values = values_in(contents, at, at + kBlock);
        if (values != std::set<char>{value_of(rank, 2 * kRounds - 1)}) ++wrong_private;
      }
      const std::set<char> values =
          values_in(contents, p * period + ranks * kBlock, (p + 1) * period);
      shared.insert(values.begin(), values.end());
    }
    CHECK(wrong_private == 0);
    CHECK(shared.size() == 1);
    bool some_last_round = false;
    for (int rank = 0; rank < ranks; ++rank) {
      if (shared == std::set<char>{value_of(rank, kRounds - 1)}) some_last_round = true;
    }
    CHECK(some_last_round);
  }
  MPI_Type_free(&with_extent);
}

namespace {

std::shared_ptr<const core::FileView> view_of(std::int64_t displacement, MPI_Datatype filetype) {
  return std::make_shared<const core::FileView>(displacement, MPI_BYTE, filetype);
}

}  // namespace

// What atomic mode decides for each access, given every process's view:
// which accesses need a lease, and which writes may rewrite their extent.
TEST_CASE("Sync.AtomicMode.DecisionsFromObjects") {
  const int ranks = world_size();
  const int me = world_rank();
  LockRuntime runtime;
  const std::string path = lock_file("atomic_decisions");
  sync::LockSettings settings{sync::LockAlgorithm::hybrid, true};
  sync::AtomicMode atomic(MPI_COMM_WORLD, path, settings, runtime.port);
  const auto set_of = [&](auto&& view_of_rank) {
    std::vector<std::shared_ptr<const core::FileView>> views;
    for (int rank = 0; rank < ranks; ++rank) views.push_back(view_of_rank(rank));
    return std::make_shared<const sync::ObjectSet>(sync::ObjectSet::of_views(views));
  };

  // No set: every nonempty access needs a lease, and only a leased one
  // may rewrite its extent.
  const auto contiguous = view_of(0, MPI_BYTE);
  CHECK(atomic.needs_lock(core::Access(contiguous, 0, 10)));
  CHECK_FALSE(atomic.needs_lock(core::Access(contiguous, 5, 5)));
  CHECK(atomic.may_rewrite_extent(core::Access(contiguous, 0, 10), true));
  CHECK_FALSE(atomic.may_rewrite_extent(core::Access(contiguous, 0, 10), false));

  // Tiles with halos: the private middle of a tile needs no lease, even
  // a thousand rows on (the set's period answers there); the halo does.
  const std::int64_t halo = ranks > 1 ? 512 : 0;
  MPI_Datatype tiles = halo_tiles(halo);
  atomic.set_objects(set_of([&](int rank) { return view_of(kTile * rank, tiles); }));
  const auto mine = view_of(kTile * me, tiles);
  const std::int64_t row = kTile + halo;
  CHECK_FALSE(atomic.needs_lock(core::Access(mine, halo, kTile)));
  CHECK_FALSE(atomic.needs_lock(core::Access(mine, 1000 * row + halo, 1000 * row + kTile)));
  if (ranks > 1) {
    CHECK(atomic.needs_lock(core::Access(mine, row, row + halo)));
    CHECK(atomic.needs_lock(core::Access(mine, 1000 * row + kTile - 1, 1000 * row + kTile + 1)));
  }
  MPI_Type_free(&tiles);

  // Tiles of strided blocks (1 KiB of every 2 KiB of the tile): private,
  // and the holes within a tile are no one's, so a write inside one tile
  // may rewrite its extent without a lease; one over several rows of tiles
  // may not (the other processes' tiles lie between).
  MPI_Datatype strided, strided_tiles;
  MPI_Type_vector(static_cast<int>(kTile / (2 * kBlock)), static_cast<int>(kBlock),
                  static_cast<int>(2 * kBlock), MPI_BYTE, &strided);
  MPI_Type_create_resized(strided, 0, kTile * ranks, &strided_tiles);
  MPI_Type_commit(&strided_tiles);
  MPI_Type_free(&strided);
  atomic.set_objects(set_of([&](int rank) { return view_of(kTile * rank, strided_tiles); }));
  const auto strided_view = view_of(kTile * me, strided_tiles);
  const core::Access in_tile(strided_view, 0, kTile / 2);
  const core::Access rows(strided_view, 0, 4 * kTile);
  CHECK_FALSE(atomic.needs_lock(in_tile));
  CHECK_FALSE(atomic.needs_lock(rows));
  CHECK(atomic.may_rewrite_extent(in_tile, false));
  CHECK(atomic.may_rewrite_extent(rows, false) == (ranks == 1));
  MPI_Type_free(&strided_tiles);

  // Interleaved blocks (SharedWritesLeaveOthersPrivateBytes): a write of
  // several periods needs a lease, and may not rewrite its extent when
  // other processes' private blocks lie in it.
  const std::int64_t period = kBlock * (ranks + 1);
  const auto interleaved = [&](int rank) {
    MPI_Datatype blocks, with_extent;
    const int lengths[2] = {static_cast<int>(kBlock), static_cast<int>(kBlock)};
    const MPI_Aint offsets[2] = {static_cast<MPI_Aint>(kBlock * rank),
                                 static_cast<MPI_Aint>(kBlock * ranks)};
    MPI_Type_create_hindexed(2, lengths, offsets, MPI_BYTE, &blocks);
    MPI_Type_create_resized(blocks, 0, period, &with_extent);
    MPI_Type_commit(&with_extent);
    auto view = view_of(0, with_extent);
    MPI_Type_free(&blocks);
    MPI_Type_free(&with_extent);
    return view;
  };
  atomic.set_objects(set_of(interleaved));
  const core::Access periods(interleaved(me), 0, 8 * kBlock);
  CHECK(atomic.needs_lock(periods) == (ranks > 1));
  CHECK(atomic.may_rewrite_extent(periods, true) == (ranks == 1));
  CHECK_FALSE(atomic.needs_lock(core::Access(interleaved(me), 2 * kBlock, 3 * kBlock)));

  // Identical strided views: every block shared, the holes no one's; a
  // leased write may rewrite its extent.
  MPI_Datatype block, same;
  MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, 2 * kBlock, &same);
  MPI_Type_commit(&same);
  MPI_Type_free(&block);
  atomic.set_objects(set_of([&](int) { return view_of(0, same); }));
  const core::Access same_access(view_of(0, same), 0, 8 * kBlock);
  CHECK(atomic.needs_lock(same_access) == (ranks > 1));
  CHECK(atomic.may_rewrite_extent(same_access, true));
  MPI_Type_free(&same);
  atomic.close();
}
