// Differential test of the collective calls against MPICH's MPI-IO.
//
// A case gives every rank a random monotone filetype (the ranks' tiles
// interleave, each with its own holes), a shared random etype and random
// collective hints, then runs one sequence of collective operations through
// flowio on one file and through MPICH on another, both files opened once
// for the whole sequence (several calls on one open file is what persistent
// file realms are for). The files start with the same background bytes and
// must end byte-identical; every read must return the same byte count and
// the same buffer contents as MPICH's.
//
// The sequence is made of groups: all writes or all reads, at explicit
// offsets (write_at_all) or through the file pointer (write_all), blocking
// or not. A nonblocking group has every operation in flight before any is
// waited for (each rank waits in its own random order), so the operations
// of a group touch disjoint parts of each rank's view. Every operation has
// its own random memory type and count per rank; some ranks contribute no
// bytes (count 0 or an empty memory type), and sometimes none does. MPICH
// runs the same operations one after another with
// MPI_File_write_at_all / write_all / read_at_all / read_all.
//
// ROMIO (MPICH 4.0.2) disagrees with MPI in places; besides the filetype
// constructs random_types.h lists (left out with romio_file_view_safe):
// - MPICH is given the data packed by MPI_Pack, as MPI_BYTE through the
//   same view, because ROMIO places data wrongly for some nested resized
//   memory types; MPI_Pack defines the memory type's order.
// - Both files are filled with background bytes past the end of every
//   access of every rank: ROMIO reports full counts for noncontiguous reads
//   past end of file, and fills holes it never wrote with garbage when
//   sieving extends a file.
// - MPI_Unpack is skipped for zero bytes (MPICH 4.0.2 divides by zero).
// - romio_cb_pfr=enable (persistent file realms) goes to flowio only: with
//   it, MPICH 4.0.2 hangs in MPI_File_write_all, its ranks in different
//   collectives. flowio_aggregators, flowio_buffers_in_flight,
//   flowio_realm_policy and flowio_exchange have no ROMIO counterpart;
//   the other hints go to both.
//
// FLOWIO_DIFF_CASES sets the number of cases (default 100; a fifth under
// FLOWIO_SANITIZER); FLOWIO_DIFF_SEED the base seed (default 20261207).
// Case i uses seed base + i, printed with the hints on failure, so a case
// can be replayed alone with FLOWIO_DIFF_FIRST=i FLOWIO_DIFF_CASES=1 (on
// the same number of ranks). FLOWIO_DIFF_VERBOSE prints every case and
// the seconds each side took.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "flowio/flowio.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/piece_cursor.h"
#include "tests/api/differential_run.h"
#include "tests/api/test_paths.h"
#include "tests/support/random_types.h"

namespace {

using flowio::testing::Constructs;
using flowio::testing::TypeShape;

constexpr long long kMostFileBytes = 4 << 20;

std::vector<char> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int pick(std::mt19937_64& rng, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(rng);
}

bool one_in(std::mt19937_64& rng, int n) { return pick(rng, 1, n) == 1; }

// A datatype owned by the test: derived types are freed with the handle,
// named ones never.
class TypeHandle {
 public:
  TypeHandle() = default;
  explicit TypeHandle(MPI_Datatype type) : type_(type) {}
  TypeHandle(TypeHandle&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  TypeHandle& operator=(TypeHandle&& other) noexcept {
    std::swap(type_, other.type_);
    return *this;
  }
  TypeHandle(const TypeHandle&) = delete;
  TypeHandle& operator=(const TypeHandle&) = delete;
  ~TypeHandle() {
    if (type_ == MPI_DATATYPE_NULL) return;
    int integers, addresses, types, combiner;
    MPI_Type_get_envelope(type_, &integers, &addresses, &types, &combiner);
    if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&type_);
  }

  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

std::int64_t type_size(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  return size;
}

// A buffer for `count` copies of a memory type, addressed from its origin,
// with every byte set to `fill` (so that bytes a read must not touch show).
struct TypedBuffer {
  std::vector<unsigned char> bytes;
  std::int64_t low = 0;  // origin = bytes.data() - low

  TypedBuffer(MPI_Datatype type, std::int64_t count, unsigned char fill) {
    MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_get_extent_x(type, &lb, &extent);
    MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    const std::int64_t reach = (count > 0 ? count - 1 : 0) * extent;
    low = true_lb + std::min<std::int64_t>(0, reach);
    const std::int64_t high = true_lb + true_extent + std::max<std::int64_t>(0, reach);
    bytes.assign(static_cast<std::size_t>(std::max<std::int64_t>(high - low, 0)) + 1, fill);
  }
  unsigned char* origin() { return bytes.data() - low; }
};

// The hints of a case: all go to flowio; those ROMIO also knows go to MPICH.
struct CaseHints {
  flowio::Hints flowio;
  std::map<std::string, std::string> romio;
  // Where cb_buffer_size lies between its least and greatest value, on a
  // log scale; none: not given.
  std::optional<double> buffer_position;

  std::string text() const {
    std::string out = "flowio hints {";
    for (const auto& [key, value] : flowio) out += " " + key + "=" + value;
    out += " } romio hints {";
    for (const auto& [key, value] : romio) out += " " + key + "=" + value;
    return out + " }";
  }
};

// Drawn from the shared generator, so the same on every rank.
CaseHints random_hints(std::mt19937_64& shared, int ranks) {
  CaseHints hints;
  const auto both = [&](const std::string& key, const std::string& value) {
    hints.flowio[key] = value;
    hints.romio[key] = value;
  };
  if (!one_in(shared, 5)) both("cb_nodes", std::to_string(pick(shared, 1, ranks)));
  if (one_in(shared, 3)) {
    std::vector<int> members(static_cast<std::size_t>(ranks));
    std::iota(members.begin(), members.end(), 0);
    std::shuffle(members.begin(), members.end(), shared);
    members.resize(static_cast<std::size_t>(pick(shared, 1, ranks)));
    std::sort(members.begin(), members.end());
    std::string list;
    for (int member : members) list += (list.empty() ? "" : ",") + std::to_string(member);
    hints.flowio["flowio_aggregators"] = list;
  }
  // cb_buffer_size is set once the file's size is known (set_buffer_size).
  if (!one_in(shared, 8)) hints.buffer_position = std::uniform_real_distribution<>(0, 1)(shared);
  if (!one_in(shared, 5)) {
    hints.flowio["flowio_buffers_in_flight"] = std::to_string(pick(shared, 1, 4));
  }
  switch (pick(shared, 0, 4)) {
    case 0:
      hints.flowio["flowio_realm_policy"] = "even";
      break;
    case 1:
      hints.flowio["flowio_realm_policy"] = "aligned";
      both(one_in(shared, 4) ? "striping_unit" : "romio_cb_fr_alignment",
           std::to_string(64 << pick(shared, 0, 6)));
      break;
    case 2:
      // Persistent realms, said either way flowio understands.
      if (!one_in(shared, 3)) hints.flowio["flowio_realm_policy"] = "persistent";
      if (hints.flowio.count("flowio_realm_policy") == 0 || one_in(shared, 2)) {
        hints.flowio["romio_cb_pfr"] = "enable";
      }
      // Not given to ROMIO: with romio_cb_pfr=enable, MPICH 4.0.2 hangs in
      // MPI_File_write_all (the ranks end up in different collectives).
      break;
    case 3:
      hints.flowio["flowio_realm_policy"] = "load_balanced";
      break;
    default:
      break;  // the default policy
  }
  static const char* const kSwitches[] = {"enable", "disable", "automatic"};
  for (const char* key : {"romio_ds_write", "romio_ds_read"}) {
    if (!one_in(shared, 4)) both(key, kSwitches[pick(shared, 0, 2)]);
  }
  for (const char* key : {"romio_cb_write", "romio_cb_read"}) {
    if (one_in(shared, 3)) both(key, kSwitches[pick(shared, 0, 2)]);
  }
  if (!one_in(shared, 4)) {
    hints.flowio["flowio_exchange"] = one_in(shared, 2) ? "point_to_point" : "alltoallw";
  }
  // "enable" maps even the small windows of these cases.
  if (!one_in(shared, 3)) hints.flowio["flowio_ds_mapping"] = kSwitches[pick(shared, 0, 2)];
  return hints;
}

// Sets cb_buffer_size for a file of `file_bytes`: from 64 B to 64 KiB,
// evenly on a log scale and not only powers of two, small enough to force
// many buffer iterations. Each iteration costs ROMIO a few collective
// steps, which on 4 ranks sharing 2 cores take milliseconds; the least
// size keeps an aggregator that handles the whole file to about 128
// iterations per call.
void set_buffer_size(CaseHints& hints, long long file_bytes) {
  if (!hints.buffer_position) return;
  const double least = std::max(64.0, static_cast<double>(file_bytes) / 128);
  const double greatest = std::max(least, 65536.0);
  const auto bytes = std::llround(least * std::pow(greatest / least, *hints.buffer_position));
  for (auto* map : {&hints.flowio, &hints.romio}) (*map)["cb_buffer_size"] = std::to_string(bytes);
}

bool persistent(const CaseHints& hints) {
  const auto policy = hints.flowio.find("flowio_realm_policy");
  return (policy != hints.flowio.end() && policy->second == "persistent") ||
         hints.flowio.count("romio_cb_pfr") != 0;
}

// One collective call of this rank.
struct Operation {
  TypeHandle memory_type;
  MPI_Count count = 0;
  std::int64_t bytes = 0;           // data bytes, a whole number of etypes
  MPI_Offset offset = 0;            // where the access starts in the view, in etypes
  std::optional<TypedBuffer> data;  // what a write writes
  int sequence = 0;                 // index among all the case's operations
  std::string text;
};

struct Group {
  bool writing = true;
  bool through_pointer = false;  // write_all/iwrite_all rather than the _at forms
  bool nonblocking = false;
  std::vector<Operation> operations;  // in call order
  std::vector<int> wait_order;        // nonblocking: the order of get(), per rank
};

struct Case {
  std::int64_t etype_size = 1;
  TypeHandle etype;
  TypeHandle filetype;
  std::int64_t displacement = 0;
  CaseHints hints;
  std::vector<Group> groups;
  int operation_count = 0;
  long long file_end = 0;  // background bytes: past every rank's accesses
  std::string description;
};

// The shared etype: 1 to 8 bytes, named or contiguous bytes.
TypeHandle random_etype(std::mt19937_64& shared, std::int64_t& size, std::string& text) {
  static const int kSizes[] = {1, 1, 1, 2, 3, 4, 8};
  size = kSizes[pick(shared, 0, 6)];
  if (size == 4 && one_in(shared, 2)) {
    text = "INT";
    return TypeHandle(MPI_INT);
  }
  if (size == 8 && one_in(shared, 2)) {
    text = "DOUBLE";
    return TypeHandle(MPI_DOUBLE);
  }
  if (size == 1) {
    text = "BYTE";
    return TypeHandle(MPI_BYTE);
  }
  MPI_Datatype type;
  MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  text = "contiguous(" + std::to_string(size) + ",BYTE)";
  return TypeHandle(type);
}

// This rank's tile of the filetype: a random monotone type safe for ROMIO
// whose size is a nonzero multiple of the etype's.
TypeHandle random_tile(std::mt19937_64& rng, std::int64_t etype_size, std::string& text) {
  for (int attempt = 0;; ++attempt) {
    MPI_Datatype base = flowio::testing::random_datatype(rng, TypeShape::monotone, 2048, &text,
                                                         Constructs::romio_file_view_safe);
    const std::int64_t size = type_size(base);
    if (size > 0 && size % etype_size == 0) return TypeHandle(base);
    if (size > 0 && attempt >= 200) {
      const int copies = static_cast<int>(etype_size / std::gcd(size, etype_size));
      MPI_Datatype whole;
      MPI_Type_contiguous(copies, base, &whole);
      MPI_Type_commit(&whole);
      MPI_Type_free(&base);
      text = "contiguous(" + std::to_string(copies) + "," + text + ")";
      return TypeHandle(whole);
    }
    MPI_Type_free(&base);
  }
}

// Whether `count` copies of `type` put two data bytes at one address. Reading
// into such a buffer is erroneous in MPI (the result depends on the order
// pieces arrive in: flowio unpacks windows in parallel), so such memory
// types are drawn again.
bool copies_overlap(MPI_Datatype type, MPI_Count count) {
  const flowio::core::FlatType flat = flowio::core::flatten(type);
  flowio::core::PieceCursor cursor(flat, count);
  std::vector<flowio::core::Piece> pieces(1024);
  std::vector<flowio::core::Piece> all;
  while (const std::size_t n = cursor.next(pieces, flat.size() * count)) {
    all.insert(all.end(), pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.offset < b.offset; });
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].offset < all[i - 1].offset + all[i - 1].length) return true;
  }
  return false;
}

// A memory type and count for one operation of this rank, with a whole
// number of etypes of data; no data when `empty`.
void random_memory(std::mt19937_64& rng, std::int64_t etype_size, bool empty, Operation& op) {
  std::string text;
  const int kind = empty ? pick(rng, 0, 1) : pick(rng, 0, 14);
  if (kind == 1) {
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    op.memory_type = TypeHandle(none);
    op.count = pick(rng, 1, 3);
    text = "contiguous(0,INT)";
  } else {
    do {
      text.clear();
      op.memory_type =
          TypeHandle(flowio::testing::random_datatype(rng, TypeShape::any_order, 1024, &text));
      op.count = kind == 0 ? 0 : pick(rng, 1, 3);
    } while (copies_overlap(op.memory_type.get(), op.count * 8));
  }
  const std::int64_t size = type_size(op.memory_type.get());
  op.count *= etype_size / std::gcd(std::max<std::int64_t>(size, 1), etype_size);
  if (size == 0) op.count = std::min<MPI_Count>(op.count, 3);
  op.bytes = size * op.count;
  op.text = text + " x" + std::to_string(op.count);
}

// Plans the whole case. Decisions every rank must share (hints, etype,
// groups, call forms) come from `shared`; this rank's types, counts,
// offsets and data from `rng`.
void make_case(std::mt19937_64& shared, std::mt19937_64& rng, std::uint64_t case_seed, int rank,
               int ranks, Case& c) {
  std::string etype_text;
  c.etype = random_etype(shared, c.etype_size, etype_text);
  c.hints = random_hints(shared, ranks);

  std::string tile_text;
  TypeHandle tile = random_tile(rng, c.etype_size, tile_text);
  MPI_Count tile_true_lb = 0, tile_true_extent = 0;
  MPI_Type_get_true_extent_x(tile.get(), &tile_true_lb, &tile_true_extent);
  long long span = std::max<long long>(tile_true_lb + tile_true_extent, 1);
  MPI_Allreduce(MPI_IN_PLACE, &span, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  // Rank r's k-th tile sits at base + (k * ranks + r) * span: the ranks
  // interleave and never overlap.
  MPI_Datatype filetype;
  MPI_Type_create_resized(tile.get(), 0, span * ranks, &filetype);
  MPI_Type_commit(&filetype);
  c.filetype = TypeHandle(filetype);
  c.displacement = static_cast<std::int64_t>(case_seed % 64) + rank * span;
  const std::int64_t tile_size = type_size(filetype);
  const MPI_Offset tile_etypes = tile_size / c.etype_size;

  // Persistent realms are for many calls on one open file: longer sequences.
  const bool many = persistent(c.hints);
  const int group_count = many ? pick(shared, 4, 7) : pick(shared, 2, 4);
  MPI_Offset written_reach = tile_etypes;  // etypes of this rank's view that writes reach
  long long file_end = 0;
  std::string groups_text;
  for (int g = 0; g < group_count; ++g) {
    Group group;
    // The first group writes and the last reads; between, either.
    group.writing = g == 0 || (g != group_count - 1 && !one_in(shared, 3));
    group.through_pointer = one_in(shared, 3);
    group.nonblocking = !one_in(shared, 3);
    const int operations = group.nonblocking ? pick(shared, 1, 3) : pick(shared, 1, 2);
    // Lay the operations out one after another in the view, with gaps, from
    // a random start; in a nonblocking group at explicit offsets they are
    // then called in a random order.
    MPI_Offset cursor = static_cast<MPI_Offset>(
        rng() % static_cast<std::uint64_t>((group.writing ? 3 * tile_etypes : written_reach) + 1));
    for (int k = 0; k < operations; ++k) {
      Operation op;
      const bool nobody = one_in(shared, 15);
      random_memory(rng, c.etype_size, nobody || one_in(rng, 6), op);
      if (k > 0 && one_in(rng, 2)) cursor += pick(rng, 1, 4);
      op.offset = cursor;
      cursor += op.bytes / c.etype_size;
      if (group.writing) {
        op.data.emplace(op.memory_type.get(), op.count, 0);
        for (auto& byte : op.data->bytes) byte = static_cast<unsigned char>(rng());
        written_reach = std::max(written_reach, cursor);
      }
      // The file offset past this access, generously: whole tiles past it.
      const std::int64_t stream_end = op.offset * c.etype_size + op.bytes + 64;
      file_end = std::max<long long>(file_end,
                                     c.displacement + (stream_end / tile_size + 1) * span * ranks);
      group.operations.push_back(std::move(op));
    }
    if (group.nonblocking && !group.through_pointer) {
      std::shuffle(group.operations.begin(), group.operations.end(), rng);
    }
    group.wait_order.resize(group.operations.size());
    std::iota(group.wait_order.begin(), group.wait_order.end(), 0);
    std::shuffle(group.wait_order.begin(), group.wait_order.end(), rng);
    groups_text += std::string(" [") + (group.writing ? "write" : "read") +
                   (group.through_pointer ? "_all" : "_at_all") +
                   (group.nonblocking ? " nonblocking" : " blocking");
    for (Operation& op : group.operations) {
      op.sequence = c.operation_count++;
      groups_text += " #" + std::to_string(op.sequence) + "@" + std::to_string(op.offset) + ": " +
                     op.text + ";";
    }
    groups_text += "]";
    c.groups.push_back(std::move(group));
  }
  MPI_Allreduce(&file_end, &c.file_end, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  set_buffer_size(c.hints, c.file_end);
  c.description = "seed " + std::to_string(case_seed) + " | " + c.hints.text() + " | etype " +
                  etype_text + " | rank " + std::to_string(rank) + ": tile " + tile_text +
                  " span " + std::to_string(span) + " disp " + std::to_string(c.displacement) +
                  " |" + groups_text;
}

// What one implementation returned, per operation (by sequence number).
struct Outcome {
  std::vector<std::int64_t> bytes;
  std::vector<MPI_Offset> positions;  // file pointer after a pointer-form call, else -1
  std::vector<std::optional<TypedBuffer>> reads;
  std::string failure;  // an exception flowio threw, if any

  explicit Outcome(int operations)
      : bytes(static_cast<std::size_t>(operations), -1),
        positions(static_cast<std::size_t>(operations), -1),
        reads(static_cast<std::size_t>(operations)) {}
};

// How far a pointer-form call moves the pointer past the previous one.
MPI_Offset pointer_gap(const Group& group, std::size_t k, std::int64_t etype_size) {
  const Operation& previous = group.operations[k - 1];
  return group.operations[k].offset - (previous.offset + previous.bytes / etype_size);
}

void run_flowio(Case& c, const std::string& path, Outcome& out) {
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr, c.hints.flowio);
  file.set_view(c.displacement, c.etype.get(), c.filetype.get());
  for (Group& group : c.groups) {
    std::vector<flowio::Future<std::size_t>> pending;
    for (std::size_t k = 0; k < group.operations.size(); ++k) {
      Operation& op = group.operations[k];
      const auto index = static_cast<std::size_t>(op.sequence);
      void* buffer = nullptr;
      if (group.writing) {
        buffer = op.data->origin();
      } else {
        out.reads[index].emplace(op.memory_type.get(), op.count, 0xA5);
        buffer = out.reads[index]->origin();
      }
      if (group.through_pointer) {
        if (k == 0) {
          file.seek(op.offset, flowio::Whence::set);
        } else if (const MPI_Offset gap = pointer_gap(group, k, c.etype_size); gap != 0) {
          file.seek(gap, flowio::Whence::current);
        }
      }
      const MPI_Datatype type = op.memory_type.get();
      if (group.nonblocking) {
        pending.push_back(
            group.writing
                ? (group.through_pointer ? file.iwrite_all(buffer, op.count, type)
                                         : file.iwrite_at_all(op.offset, buffer, op.count, type))
                : (group.through_pointer ? file.iread_all(buffer, op.count, type)
                                         : file.iread_at_all(op.offset, buffer, op.count, type)));
      } else {
        out.bytes[index] = static_cast<std::int64_t>(
            group.writing
                ? (group.through_pointer ? file.write_all(buffer, op.count, type)
                                         : file.write_at_all(op.offset, buffer, op.count, type))
                : (group.through_pointer ? file.read_all(buffer, op.count, type)
                                         : file.read_at_all(op.offset, buffer, op.count, type)));
      }
      // Pointer forms move the pointer at the call, before completion.
      if (group.through_pointer) out.positions[index] = file.position();
    }
    for (int k : group.nonblocking ? group.wait_order : std::vector<int>{}) {
      const Operation& op = group.operations[static_cast<std::size_t>(k)];
      out.bytes[static_cast<std::size_t>(op.sequence)] =
          static_cast<std::int64_t>(pending[static_cast<std::size_t>(k)].get());
    }
  }
  file.close();
}

void run_mpich(Case& c, const std::string& path, Outcome& out) {
  MPI_Info info;
  MPI_Info_create(&info);
  for (const auto& [key, value] : c.hints.romio) MPI_Info_set(info, key.c_str(), value.c_str());
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDWR, info, &file) == MPI_SUCCESS);
  MPI_Info_free(&info);
  REQUIRE(MPI_File_set_view(file, c.displacement, c.etype.get(), c.filetype.get(), "native",
                            MPI_INFO_NULL) == MPI_SUCCESS);
  for (Group& group : c.groups) {
    for (std::size_t k = 0; k < group.operations.size(); ++k) {
      Operation& op = group.operations[k];
      const auto index = static_cast<std::size_t>(op.sequence);
      // Every pointer-form call is preceded by an absolute seek, although
      // the pointer is already there when the gap is 0: in MPICH 4.0.2, with
      // romio_ds_read=disable on 2 ranks and a filetype that begins with a
      // hole, a read_all through the pointer left by a previous read_all
      // starts inside that hole (checked: 4 data bytes at 4 of a 16-byte
      // extent, the second read_all reads from 4 bytes early and the pointer
      // ends one etype short). After a seek it reads the right bytes.
      if (group.through_pointer) MPI_File_seek(file, op.offset, MPI_SEEK_SET);
      std::vector<unsigned char> packed(static_cast<std::size_t>(op.bytes) + 1, 0);
      const int bytes = static_cast<int>(op.bytes);
      MPI_Status status;
      int result = MPI_SUCCESS;
      if (group.writing) {
        int position = 0;
        if (op.bytes > 0) {
          MPI_Pack(op.data->origin(), static_cast<int>(op.count), op.memory_type.get(),
                   packed.data(), static_cast<int>(packed.size()), &position, MPI_COMM_SELF);
        }
        result =
            group.through_pointer
                ? MPI_File_write_all(file, packed.data(), bytes, MPI_BYTE, &status)
                : MPI_File_write_at_all(file, op.offset, packed.data(), bytes, MPI_BYTE, &status);
      } else {
        result =
            group.through_pointer
                ? MPI_File_read_all(file, packed.data(), bytes, MPI_BYTE, &status)
                : MPI_File_read_at_all(file, op.offset, packed.data(), bytes, MPI_BYTE, &status);
        out.reads[index].emplace(op.memory_type.get(), op.count, 0xA5);
        int position = 0;
        if (op.bytes > 0) {
          MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position,
                     out.reads[index]->origin(), static_cast<int>(op.count), op.memory_type.get(),
                     MPI_COMM_SELF);
        }
      }
      REQUIRE(result == MPI_SUCCESS);
      int moved = 0;
      MPI_Get_count(&status, MPI_BYTE, &moved);
      out.bytes[index] = moved;
      if (group.through_pointer) MPI_File_get_position(file, &out.positions[index]);
    }
  }
  MPI_File_close(&file);
}

// The file every case starts from: `bytes` random bytes from `case_seed`.
void write_background(const std::string& path, std::uint64_t case_seed, long long bytes) {
  std::mt19937_64 background_rng(case_seed);
  std::vector<char> background(static_cast<std::size_t>(bytes));
  for (char& byte : background) byte = static_cast<char>(background_rng());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(background.data(), static_cast<std::streamsize>(background.size()));
}

// A third witness for when the two files differ: the writes done again,
// each rank alone with MPICH's independent MPI_File_write_at (no
// collective algorithm involved), one after another, into a copy of the
// background. The failure message then says which side strayed.
void write_reference(Case& c, const std::string& path) {
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDWR, MPI_INFO_NULL, &file) ==
          MPI_SUCCESS);
  REQUIRE(MPI_File_set_view(file, c.displacement, c.etype.get(), c.filetype.get(), "native",
                            MPI_INFO_NULL) == MPI_SUCCESS);
  for (Group& group : c.groups) {
    if (!group.writing) continue;
    for (Operation& op : group.operations) {
      if (op.bytes == 0) continue;
      std::vector<unsigned char> packed(static_cast<std::size_t>(op.bytes));
      int position = 0;
      MPI_Pack(op.data->origin(), static_cast<int>(op.count), op.memory_type.get(), packed.data(),
               static_cast<int>(packed.size()), &position, MPI_COMM_SELF);
      REQUIRE(MPI_File_write_at(file, op.offset, packed.data(), static_cast<int>(op.bytes),
                                MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
  }
  MPI_File_close(&file);
}

// Rank 0 compares the files; every rank learns the first differing byte,
// or -1.
long long first_difference(const std::string& a, const std::string& b, int rank) {
  long long at = -1;
  if (rank == 0) {
    const std::vector<char> left = read_whole_file(a), right = read_whole_file(b);
    const auto [l, r] = std::mismatch(left.begin(), left.end(), right.begin(), right.end());
    if (l != left.end() || r != right.end()) at = l - left.begin();
  }
  MPI_Bcast(&at, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return at;
}

}  // namespace

// Random views, hints, memory types and call forms, several collective calls
// on one open file, some in flight together: files byte-identical to
// MPICH's, read counts and buffers identical to MPICH's.
TEST_CASE("Api.CollectiveDifferential.RandomCollectiveAccess") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const flowio::testing::DifferentialRun run = flowio::testing::differential_run(100, 20261207);
  const long cases = run.cases, first = run.first, seed = run.seed;
  const std::string flowio_path = flowio::testing::scratch_path(MPI_COMM_WORLD, "cdiff_flowio");
  const std::string mpich_path = flowio::testing::scratch_path(MPI_COMM_WORLD, "cdiff_mpich");
  const bool verbose = run.verbose;
  long failed_cases = 0;
  for (long index = first; index < first + cases; ++index) {
    const auto case_seed = static_cast<std::uint64_t>(seed + index);
    std::mt19937_64 shared(case_seed * 104729);
    std::mt19937_64 rng(case_seed * 7919 + static_cast<std::uint64_t>(rank));
    // Sparse tiles with little data each can spread a case over tens of
    // megabytes of file; such cases are drawn again, so that a case costs
    // about the same everywhere (the background is written and compared
    // whole).
    auto planned = std::make_unique<Case>();
    make_case(shared, rng, case_seed, rank, ranks, *planned);
    while (planned->file_end > kMostFileBytes) {
      planned = std::make_unique<Case>();
      make_case(shared, rng, case_seed, rank, ranks, *planned);
    }
    Case& c = *planned;
    CAPTURE(index);
    CAPTURE(c.description);
    if (verbose) MESSAGE(c.description);

    if (rank == 0) {
      for (const std::string& path : {flowio_path, mpich_path}) {
        write_background(path, case_seed, c.file_end);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    Outcome by_flowio(c.operation_count), by_mpich(c.operation_count);
    const auto started = std::chrono::steady_clock::now();
    try {
      run_flowio(c, flowio_path, by_flowio);
    } catch (const std::exception& error) {
      by_flowio.failure = error.what();
    }
    CHECK_MESSAGE(by_flowio.failure.empty(), "flowio threw: " << by_flowio.failure);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto flowio_done = std::chrono::steady_clock::now();
    run_mpich(c, mpich_path, by_mpich);
    MPI_Barrier(MPI_COMM_WORLD);
    if (verbose && rank == 0) {
      const std::chrono::duration<double> flowio_seconds = flowio_done - started,
                                          mpich_seconds =
                                              std::chrono::steady_clock::now() - flowio_done;
      MESSAGE("case " << index << ": flowio " << flowio_seconds.count() << " s, MPICH "
                      << mpich_seconds.count() << " s, file " << c.file_end << " bytes");
    }

    bool same = true;
    const long long difference = first_difference(flowio_path, mpich_path, rank);
    if (difference != -1) {
      const std::string reference_path = mpich_path + ".reference";
      if (rank == 0) write_background(reference_path, case_seed, c.file_end);
      MPI_Barrier(MPI_COMM_WORLD);
      write_reference(c, reference_path);
      const long long flowio_strays = first_difference(flowio_path, reference_path, rank);
      const long long mpich_strays = first_difference(mpich_path, reference_path, rank);
      MESSAGE("against independent writes: flowio differs from byte "
              << flowio_strays << ", MPICH from byte " << mpich_strays);
      if (rank == 0) std::remove(reference_path.c_str());
    }
    CHECK_MESSAGE(difference == -1, "files differ from byte " << difference);
    same = same && difference == -1;
    for (const Group& group : c.groups) {
      for (const Operation& op : group.operations) {
        const auto index = static_cast<std::size_t>(op.sequence);
        CAPTURE(op.sequence);
        CHECK(by_flowio.bytes[index] == by_mpich.bytes[index]);
        CHECK(by_flowio.bytes[index] == op.bytes);
        CHECK(by_flowio.positions[index] == by_mpich.positions[index]);
        same = same && by_flowio.bytes[index] == by_mpich.bytes[index] &&
               by_flowio.bytes[index] == op.bytes &&
               by_flowio.positions[index] == by_mpich.positions[index];
        if (!group.writing && by_flowio.reads[index] && by_mpich.reads[index]) {
          const TypedBuffer &mine = *by_flowio.reads[index], &reference = *by_mpich.reads[index];
          std::int64_t differing = 0, first = 0;
          for (std::size_t i = 0; i < mine.bytes.size(); ++i) {
            if (mine.bytes[i] != reference.bytes[i] && differing++ == 0) {
              first = static_cast<std::int64_t>(i) + mine.low;
            }
          }
          CHECK_MESSAGE(differing == 0, "read buffers differ in " << differing << " bytes, from "
                                                                  << first
                                                                  << " (address from origin)");
          same = same && differing == 0;
        }
      }
    }
    int failed = same && by_flowio.failure.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failed_cases += failed;
  }
  if (rank == 0) {
    MESSAGE("collective differential cases: " << cases << " from seed " << seed << " (first "
                                              << first << "), failed: " << failed_cases);
  }
}
