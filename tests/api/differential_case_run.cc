// Running a differential case (differential_case.h) through flowio and
// through MPICH's MPI-IO, and comparing what each returned and left.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "tests/api/differential_case.h"
#include "tests/api/file_contents.h"
#include "tests/support/sparse_file.h"
#include "tests/support/world.h"

namespace flowio::testing {
namespace {

using flowio::testing::read_whole_file;

bool file_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// `bytes` random bytes from `case_seed`: what every file of a case starts from.
std::vector<char> background(std::uint64_t case_seed, long long bytes) {
  std::mt19937_64 background_rng(case_seed);
  std::vector<char> out(static_cast<std::size_t>(bytes));
  for (char& byte : out) byte = static_cast<char>(background_rng());
  return out;
}

void write_file(const std::string& path, const char* data, long long bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(bytes));
}

// How far a pointer-form call moves the pointer past the previous one.
MPI_Offset pointer_gap(const Group& group, std::size_t k, std::int64_t etype_size) {
  const CaseCall& previous = group.operations[k - 1];
  return group.operations[k].offset - (previous.offset + previous.bytes / etype_size);
}

// The mode the file is in when the case ends.
OpenMode last_mode(const Case& c) {
  OpenMode mode = c.first_mode;
  for (const Step& step : c.steps) {
    if (step.kind == Step::Kind::reopen) mode = step.mode;
  }
  return mode;
}

// Rank 0 keeps the file's bytes (a sparse case's file: its path, compared
// where it holds data); every rank learns nothing. Called between a
// barrier (every rank's writes done) and the close.
void capture_image(const Case& c, const std::string& path, CaseOutcome& out) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  if (c.sparse) {
    out.kept_file = path;
  } else {
    out.image = read_whole_file(path);
  }
}

void check_removed(const std::string& path, CaseOutcome& out) {
  MPI_Barrier(MPI_COMM_WORLD);
  out.removed_at_close = !file_exists(path);
}

// --- flowio ---

Future<std::size_t> start_flowio(File& file, const Group& group, const CaseCall& op,
                                 const void* buffer) {
  const MPI_Datatype type = op.memory_type.get();
  void* target = const_cast<void*>(buffer);
  if (op.collective) {
    if (group.writing) {
      return group.through_pointer ? file.iwrite_all(buffer, op.count, type)
                                   : file.iwrite_at_all(op.offset, buffer, op.count, type);
    }
    return group.through_pointer ? file.iread_all(target, op.count, type)
                                 : file.iread_at_all(op.offset, target, op.count, type);
  }
  if (group.writing) {
    return group.through_pointer ? file.iwrite(buffer, op.count, type)
                                 : file.iwrite_at(op.offset, buffer, op.count, type);
  }
  return group.through_pointer ? file.iread(target, op.count, type)
                               : file.iread_at(op.offset, target, op.count, type);
}

std::size_t call_flowio(File& file, const Group& group, const CaseCall& op, const void* buffer) {
  const MPI_Datatype type = op.memory_type.get();
  void* target = const_cast<void*>(buffer);
  if (op.collective) {
    if (group.writing) {
      return group.through_pointer ? file.write_all(buffer, op.count, type)
                                   : file.write_at_all(op.offset, buffer, op.count, type);
    }
    return group.through_pointer ? file.read_all(target, op.count, type)
                                 : file.read_at_all(op.offset, target, op.count, type);
  }
  if (group.writing) {
    return group.through_pointer ? file.write(buffer, op.count, type)
                                 : file.write_at(op.offset, buffer, op.count, type);
  }
  return group.through_pointer ? file.read(target, op.count, type)
                               : file.read_at(op.offset, target, op.count, type);
}

void run_group_flowio(File& file, const Group& group, std::int64_t etype_size, CaseOutcome& out) {
  std::vector<Future<std::size_t>> pending;
  for (std::size_t k = 0; k < group.operations.size(); ++k) {
    const CaseCall& op = group.operations[k];
    const auto index = static_cast<std::size_t>(op.sequence);
    const void* buffer = nullptr;
    if (group.writing) {
      buffer = op.data->origin();
    } else {
      out.reads[index].emplace(op.memory_type.get(), op.count, 0xA5);
      buffer = out.reads[index]->origin();
    }
    if (group.through_pointer) {
      if (k == 0) {
        file.seek(op.offset, Whence::set);
      } else if (const MPI_Offset gap = pointer_gap(group, k, etype_size); gap != 0) {
        file.seek(gap, Whence::current);
      }
    }
    if (group.nonblocking) {
      pending.push_back(start_flowio(file, group, op, buffer));
    } else {
      out.bytes[index] = static_cast<std::int64_t>(call_flowio(file, group, op, buffer));
    }
    // Pointer forms move the pointer at the call, before completion.
    if (group.through_pointer) out.positions[index] = file.position();
  }
  for (int k : group.nonblocking ? group.wait_order : std::vector<int>{}) {
    const CaseCall& op = group.operations[static_cast<std::size_t>(k)];
    out.bytes[static_cast<std::size_t>(op.sequence)] =
        static_cast<std::int64_t>(pending[static_cast<std::size_t>(k)].get());
  }
}

// Exclusive creation and append leave the background to rank 0, after open.
bool background_after_open(const Case& c) {
  return c.first_mode == OpenMode::excl_wronly || c.first_mode == OpenMode::excl_rdwr ||
         c.first_mode == OpenMode::append_wronly;
}

void complete_background_flowio(const Case& c, std::uint64_t case_seed, File& file) {
  if (world_rank() == 0 && background_after_open(c)) {
    const std::vector<char> bytes = background(case_seed, c.file_end);
    if (c.first_mode == OpenMode::excl_wronly || c.first_mode == OpenMode::excl_rdwr) {
      file.write_at(0, bytes.data(), c.file_end, MPI_BYTE);
    } else if (c.first_mode == OpenMode::append_wronly) {
      file.write(bytes.data() + c.appended_from, c.file_end - c.appended_from, MPI_BYTE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// --- MPICH ---

MPI_File open_mpich(const Case& c, const std::string& path, OpenMode mode) {
  MPI_Info hints;
  MPI_Info_create(&hints);
  for (const auto& [key, value] : c.hints.romio) MPI_Info_set(hints, key.c_str(), value.c_str());
  if (c.sparse) {
    // At scale ROMIO's two-phase write steps through the gigabytes between
    // the ranks' accesses a collective buffer at a time (minutes for a few
    // KiB); each rank writes alone instead (the files are still compared).
    MPI_Info_set(hints, "romio_cb_write", "disable");
  }
  if (c.shrinks) {
    // ROMIO fills the holes of an extent it sieves past end of file with
    // garbage; after a shrink it writes piece by piece instead.
    MPI_Info_set(hints, "romio_ds_write", "disable");
    MPI_Info_set(hints, "romio_cb_write", "disable");
  }
  MPI_File file = MPI_FILE_NULL;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), info(mode).mpi_mode, hints, &file) ==
          MPI_SUCCESS);
  MPI_Info_free(&hints);
  return file;
}

void set_view_mpich(const Case& c, MPI_File file, std::int64_t shift) {
  REQUIRE(MPI_File_set_view(file, c.displacement + shift, c.etype.get(), c.filetype.get(), "native",
                            MPI_INFO_NULL) == MPI_SUCCESS);
}

int call_mpich(MPI_File file, const Group& group, const CaseCall& op, void* packed,
               MPI_Status& status) {
  const int bytes = static_cast<int>(op.bytes);
  if (op.collective) {
    if (group.writing) {
      return group.through_pointer
                 ? MPI_File_write_all(file, packed, bytes, MPI_BYTE, &status)
                 : MPI_File_write_at_all(file, op.offset, packed, bytes, MPI_BYTE, &status);
    }
    return group.through_pointer
               ? MPI_File_read_all(file, packed, bytes, MPI_BYTE, &status)
               : MPI_File_read_at_all(file, op.offset, packed, bytes, MPI_BYTE, &status);
  }
  if (group.writing) {
    return group.through_pointer
               ? MPI_File_write(file, packed, bytes, MPI_BYTE, &status)
               : MPI_File_write_at(file, op.offset, packed, bytes, MPI_BYTE, &status);
  }
  return group.through_pointer
             ? MPI_File_read(file, packed, bytes, MPI_BYTE, &status)
             : MPI_File_read_at(file, op.offset, packed, bytes, MPI_BYTE, &status);
}

// A sparse case's reads by the oracle in place of MPICH (view_layout.h):
// the bytes the file holds at the view's offsets, the whole count, and the
// pointer moved past them.
void read_group_through_layout(const Case& c, const std::string& path, std::int64_t shift,
                               MPI_File file, const Group& group, CaseOutcome& out) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  for (const CaseCall& op : group.operations) {
    const auto index = static_cast<std::size_t>(op.sequence);
    std::vector<unsigned char> packed = read_through_layout(fd, c.layout, c.displacement + shift,
                                                            op.offset * c.etype_size, op.bytes);
    out.reads[index].emplace(op.memory_type.get(), op.count, 0xA5);
    if (op.bytes > 0) {
      int position = 0;
      MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position,
                 out.reads[index]->origin(), static_cast<int>(op.count), op.memory_type.get(),
                 MPI_COMM_SELF);
    }
    out.bytes[index] = op.bytes;
    if (group.through_pointer) {
      MPI_File_seek(file, op.offset + op.bytes / c.etype_size, MPI_SEEK_SET);
      MPI_File_get_position(file, &out.positions[index]);
    }
  }
  ::close(fd);
}

// MPICH runs a group's operations one after another, blocking. Its reads
// also check the oracle of the cases at scale (read_group_through_layout)
// where MPICH is right.
void run_group_mpich(const Case& c, const std::string& path, std::int64_t shift, MPI_File file,
                     const Group& group, CaseOutcome& out) {
  const int fd = group.writing ? -1 : ::open(path.c_str(), O_RDONLY);
  for (const CaseCall& op : group.operations) {
    const auto index = static_cast<std::size_t>(op.sequence);
    if (group.through_pointer) MPI_File_seek(file, op.offset, MPI_SEEK_SET);
    std::vector<unsigned char> packed(static_cast<std::size_t>(op.bytes) + 1, 0);
    if (group.writing && op.bytes > 0) {
      int position = 0;
      MPI_Pack(op.data->origin(), static_cast<int>(op.count), op.memory_type.get(), packed.data(),
               static_cast<int>(packed.size()), &position, MPI_COMM_SELF);
    }
    MPI_Status status;
    REQUIRE(call_mpich(file, group, op, packed.data(), status) == MPI_SUCCESS);
    if (!group.writing) {
      out.reads[index].emplace(op.memory_type.get(), op.count, 0xA5);
      int position = 0;
      // (MPICH 4.0.2 divides by zero unpacking zero bytes.)
      if (op.bytes > 0) {
        MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position,
                   out.reads[index]->origin(), static_cast<int>(op.count), op.memory_type.get(),
                   MPI_COMM_SELF);
      }
      REQUIRE(fd >= 0);
      const std::vector<unsigned char> oracle = read_through_layout(
          fd, c.layout, c.displacement + shift, op.offset * c.etype_size, op.bytes);
      const bool agreed = std::equal(oracle.begin(), oracle.end(), packed.begin());
      CHECK_MESSAGE(
          agreed, "the view layout's read differs from MPICH's (operation " << op.sequence << ")");
      out.layout_disagreed = out.layout_disagreed || !agreed;
    }
    int moved = 0;
    MPI_Get_count(&status, MPI_BYTE, &moved);
    out.bytes[index] = moved;
    if (group.through_pointer) MPI_File_get_position(file, &out.positions[index]);
  }
  if (fd >= 0) ::close(fd);
}

void complete_background_mpich(const Case& c, std::uint64_t case_seed, MPI_File file) {
  if (world_rank() == 0 && background_after_open(c)) {
    const std::vector<char> bytes = background(case_seed, c.file_end);
    MPI_Status status;
    if (c.first_mode == OpenMode::excl_wronly || c.first_mode == OpenMode::excl_rdwr) {
      REQUIRE(MPI_File_write_at(file, 0, bytes.data(), static_cast<int>(c.file_end), MPI_BYTE,
                                &status) == MPI_SUCCESS);
    } else if (c.first_mode == OpenMode::append_wronly) {
      REQUIRE(MPI_File_write(file, bytes.data() + c.appended_from,
                             static_cast<int>(c.file_end - c.appended_from), MPI_BYTE,
                             &status) == MPI_SUCCESS);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A third witness for when the two files differ: the writes done again,
// each rank alone with MPICH's independent MPI_File_write_at (no collective
// algorithm, no sieving), into a copy of the background, with the case's
// views and size changes.
void write_reference(const Case& c, std::uint64_t case_seed, const std::string& path) {
  if (world_rank() == 0) {
    const std::vector<char> bytes = background(case_seed, c.file_end);
    write_file(path, bytes.data(), c.file_end);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "romio_ds_write", "disable");
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDWR, hints, &file) == MPI_SUCCESS);
  MPI_Info_free(&hints);
  set_view_mpich(c, file, 0);
  for (const Step& step : c.steps) {
    if (step.kind == Step::Kind::set_view) set_view_mpich(c, file, step.view_shift);
    if (step.kind == Step::Kind::set_size) MPI_File_set_size(file, step.size);
    if (step.kind != Step::Kind::group || !step.group.writing) continue;
    for (const CaseCall& op : step.group.operations) {
      if (op.bytes == 0) continue;
      std::vector<unsigned char> packed(static_cast<std::size_t>(op.bytes));
      int position = 0;
      MPI_Pack(op.data->origin(), static_cast<int>(op.count), op.memory_type.get(), packed.data(),
               static_cast<int>(packed.size()), &position, MPI_COMM_SELF);
      REQUIRE(MPI_File_write_at(file, op.offset, packed.data(), static_cast<int>(op.bytes),
                                MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_File_close(&file);
}

// The first byte at which two images differ, or -1; rank 0 decides, every
// rank learns it.
long long first_difference(const std::vector<char>& left, const std::vector<char>& right) {
  long long at = -1;
  if (world_rank() == 0) {
    const auto [l, r] = std::mismatch(left.begin(), left.end(), right.begin(), right.end());
    if (l != left.end() || r != right.end()) at = l - left.begin();
  }
  MPI_Bcast(&at, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return at;
}

// Where two images differ, for whoever reads a failed case: both sizes,
// how many bytes differ, the first runs of differing bytes (offset,
// length) and the first bytes of the first run on each side, in hex, so
// that a lost write (the other side's old bytes or zeros) shows apart
// from bytes that landed elsewhere. Rank 0 only (it holds the images).
std::string describe_difference(const std::vector<char>& left, const std::vector<char>& right) {
  constexpr int kRunsShown = 4;
  constexpr std::size_t kBytesShown = 16;
  const std::size_t common = std::min(left.size(), right.size());
  std::ostringstream out;
  out << "sizes " << left.size() << " and " << right.size();
  long long differing = 0;
  int runs = 0;
  std::size_t first_run = common;
  for (std::size_t at = 0; at < common;) {
    if (left[at] == right[at]) {
      ++at;
      continue;
    }
    const std::size_t begin = at;
    while (at < common && left[at] != right[at]) ++at;
    differing += static_cast<long long>(at - begin);
    if (runs == 0) first_run = begin;
    if (runs++ < kRunsShown) out << (runs == 1 ? "; runs at " : ", ") << begin << "+" << at - begin;
  }
  out << (runs > kRunsShown ? ", ..." : "") << "; " << differing << " bytes differ in " << runs
      << " runs";
  if (first_run < common) {
    auto hex = [&](const std::vector<char>& image) {
      std::ostringstream bytes;
      for (std::size_t i = first_run; i < std::min(common, first_run + kBytesShown); ++i) {
        bytes << std::hex << std::setw(2) << std::setfill('0')
              << (static_cast<unsigned>(image[i]) & 0xffu) << ' ';
      }
      return bytes.str();
    };
    out << "; from " << first_run << ": " << hex(left) << "against " << hex(right);
  }
  return out.str();
}

// Whether the two kept files of a sparse case differ (rank 0 compares
// them, every rank learns it); `why` says where, on rank 0.
bool sparse_files_differ(const CaseOutcome& left, const CaseOutcome& right, std::string& why) {
  int differ = 0;
  if (world_rank() == 0) differ = same_sparse_files(left.kept_file, right.kept_file, why) ? 0 : 1;
  MPI_Bcast(&differ, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return differ != 0;
}

std::string self_path() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<std::size_t>(length)) : "TEST_BINARY";
}

}  // namespace

void prepare_file(const Case& c, std::uint64_t case_seed, const std::string& path) {
  if (world_rank() == 0) {
    std::remove(path.c_str());
    if (c.sparse) {
      // Holes all through: tens of GiB long, nothing on storage.
      write_file(path, nullptr, 0);
      REQUIRE(::truncate(path.c_str(), c.file_end) == 0);
    } else if (c.first_mode == OpenMode::append_wronly) {
      const std::vector<char> bytes = background(case_seed, c.appended_from);
      write_file(path, bytes.data(), c.appended_from);
    } else if (c.first_mode != OpenMode::excl_wronly && c.first_mode != OpenMode::excl_rdwr) {
      const std::vector<char> bytes = background(case_seed, c.file_end);
      write_file(path, bytes.data(), c.file_end);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void run_flowio(const Case& c, std::uint64_t case_seed, const std::string& path, CaseOutcome& out) {
  try {
    File file = File::open(MPI_COMM_WORLD, path, info(c.first_mode).flowio_mode, c.hints.flowio);
    describe_realms(c.hints, file);
    complete_background_flowio(c, case_seed, file);
    std::int64_t shift = 0;
    file.set_view(c.displacement, c.etype.get(), c.filetype.get());
    for (const Step& step : c.steps) {
      switch (step.kind) {
        case Step::Kind::group:
          run_group_flowio(file, step.group, c.etype_size, out);
          // Other ranks' next calls may touch what this group wrote: a
          // barrier orders them (the file system here is coherent, which
          // is what MPI's sync-barrier-sync stands for).
          MPI_Barrier(MPI_COMM_WORLD);
          break;
        case Step::Kind::set_view:
          shift = step.view_shift;
          file.set_view(c.displacement + shift, c.etype.get(), c.filetype.get());
          break;
        case Step::Kind::set_size:
          file.set_size(step.size);
          break;
        case Step::Kind::sync:
          file.sync();
          break;
        case Step::Kind::reopen:
          file.close();
          file = File::open(MPI_COMM_WORLD, path, info(step.mode).flowio_mode, c.hints.flowio);
          describe_realms(c.hints, file);
          file.set_view(c.displacement + shift, c.etype.get(), c.filetype.get());
          break;
      }
    }
    // Writes behind (FLOWIO_WRITE_BEHIND) reach other processes, rank 0's
    // reading of the whole file among them, through MPI's recipe:
    // sync-barrier-sync (the capture's barrier); with every write done at
    // its call, the file is captured as it is.
    if (file.hints().at("flowio_write_behind") != "0") file.sync();
    capture_image(c, path, out);
    file.close();
    check_removed(path, out);
  } catch (const std::exception& error) {
    // Said at once: where only some ranks throw, they skip the case's
    // remaining barriers and collective calls, the others may wait for
    // them forever, and compare_outcomes, which would report the failure,
    // is never reached.
    std::fprintf(stderr, "rank %d: flowio threw in the case of seed %llu: %s\n", world_rank(),
                 static_cast<unsigned long long>(case_seed), error.what());
    out.failure = error.what();
  }
}

void run_mpich(const Case& c, std::uint64_t case_seed, const std::string& path, CaseOutcome& out) {
  MPI_File file = open_mpich(c, path, c.first_mode);
  complete_background_mpich(c, case_seed, file);
  OpenMode mode = c.first_mode;
  std::int64_t shift = 0;
  set_view_mpich(c, file, 0);
  for (const Step& step : c.steps) {
    switch (step.kind) {
      case Step::Kind::group:
        if (c.sparse && !step.group.writing) {
          read_group_through_layout(c, path, shift, file, step.group, out);
        } else {
          run_group_mpich(c, path, shift, file, step.group, out);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      case Step::Kind::set_view:
        shift = step.view_shift;
        set_view_mpich(c, file, shift);
        break;
      case Step::Kind::set_size:
        REQUIRE(MPI_File_set_size(file, step.size) == MPI_SUCCESS);
        break;
      case Step::Kind::sync:
        // MPICH 4.0.2 refuses to sync a read-only file (MPI_ERR_READ_ONLY),
        // although MPI's consistency recipe (sync-barrier-sync) has readers
        // sync too; flowio syncs it.
        if (mode != OpenMode::rdonly) REQUIRE(MPI_File_sync(file) == MPI_SUCCESS);
        break;
      case Step::Kind::reopen:
        MPI_File_close(&file);
        mode = step.mode;
        file = open_mpich(c, path, step.mode);
        set_view_mpich(c, file, shift);
        break;
    }
  }
  capture_image(c, path, out);
  MPI_File_close(&file);
  check_removed(path, out);
}

bool compare_outcomes(const Case& c, std::uint64_t case_seed, long index,
                      const std::string& scratch, CaseOutcome& by_flowio, CaseOutcome& by_mpich) {
  CAPTURE(index);
  CAPTURE(c.description);
  bool same = by_flowio.failure.empty() && !by_mpich.layout_disagreed;
  CHECK_MESSAGE(by_flowio.failure.empty(), "flowio threw: " << by_flowio.failure);
  if (c.sparse) {
    std::string why;
    const bool differ = sparse_files_differ(by_flowio, by_mpich, why);
    CHECK_MESSAGE(!differ, "files differ: " << why);
    same = same && !differ;
  }
  const long long difference = first_difference(by_flowio.image, by_mpich.image);
  if (difference != -1) {
    const std::string reference_path = scratch + ".reference";
    write_reference(c, case_seed, reference_path);
    std::vector<char> reference;
    if (world_rank() == 0) reference = read_whole_file(reference_path);
    const long long flowio_strays = first_difference(by_flowio.image, reference);
    const long long mpich_strays = first_difference(by_mpich.image, reference);
    MESSAGE("against independent writes: flowio differs from byte "
            << flowio_strays << ", MPICH from byte " << mpich_strays);
    if (world_rank() == 0) {
      MESSAGE("flowio's file against MPICH's: " << describe_difference(by_flowio.image,
                                                                       by_mpich.image));
      std::remove(reference_path.c_str());
    }
  }
  CHECK_MESSAGE(difference == -1, "files differ from byte " << difference);
  same = same && difference == -1;
  const bool deletes = info(last_mode(c)).mpi_mode & MPI_MODE_DELETE_ON_CLOSE;
  CHECK(by_flowio.removed_at_close == deletes);
  CHECK(by_mpich.removed_at_close == deletes);
  same = same && by_flowio.removed_at_close == deletes;
  for (const Step& step : c.steps) {
    if (step.kind != Step::Kind::group) continue;
    for (const CaseCall& op : step.group.operations) {
      const auto at = static_cast<std::size_t>(op.sequence);
      CAPTURE(op.sequence);
      CHECK(by_flowio.bytes[at] == by_mpich.bytes[at]);
      CHECK(by_flowio.bytes[at] == op.bytes);
      CHECK(by_flowio.positions[at] == by_mpich.positions[at]);
      same = same && by_flowio.bytes[at] == by_mpich.bytes[at] && by_flowio.bytes[at] == op.bytes &&
             by_flowio.positions[at] == by_mpich.positions[at];
      if (step.group.writing || !by_flowio.reads[at] || !by_mpich.reads[at]) continue;
      const TypedBuffer &mine = *by_flowio.reads[at], &reference = *by_mpich.reads[at];
      std::int64_t differing = 0, first = 0;
      for (std::size_t i = 0; i < mine.bytes.size(); ++i) {
        if (mine.bytes[i] != reference.bytes[i] && differing++ == 0) {
          first = static_cast<std::int64_t>(i) + mine.low;
        }
      }
      CHECK_MESSAGE(differing == 0, "read buffers differ in " << differing << " bytes, from "
                                                              << first << " (address from origin)");
      same = same && differing == 0;
    }
  }
  int failed = same ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed != 0 && world_rank() == 0) {
    MESSAGE("replay: FLOWIO_DIFF_SEED=" << case_seed
                                        << " FLOWIO_DIFF_FIRST=0 FLOWIO_DIFF_CASES=1 mpiexec -n "
                                        << world_size() << " " << self_path());
  }
  return failed == 0;
}

}  // namespace flowio::testing
