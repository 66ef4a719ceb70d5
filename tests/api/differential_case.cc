#include "tests/api/differential_case.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/core/flat_type.h"
#include "runtime/core/piece_cursor.h"
#include "tests/support/random_types.h"
#include "tests/support/world.h"

namespace flowio::testing {
namespace {

// Operations in a crowd: more than the 256 operations whose message tags a
// file tells apart (runtime/engine/message_tags.h), all in flight at once.
constexpr int kCrowd = 300;

std::int64_t type_size(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  return size;
}

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
  switch (pick(shared, 0, 5)) {
    case 0:
      hints.flowio["flowio_realm_policy"] = "even";
      break;
    case 1:
      hints.flowio["flowio_realm_policy"] = "aligned";
      both(one_in(shared, 4) ? "striping_unit" : "romio_cb_fr_alignment",
           std::to_string(64 << pick(shared, 0, 6)));
      break;
    case 2:
      // Persistent realms, said either way flowio understands; not given to
      // ROMIO, which hangs in MPI_File_write_all with romio_cb_pfr=enable.
      if (!one_in(shared, 3)) hints.flowio["flowio_realm_policy"] = "persistent";
      if (hints.flowio.count("flowio_realm_policy") == 0 || one_in(shared, 2)) {
        hints.flowio["romio_cb_pfr"] = "enable";
      }
      break;
    case 3:
      hints.flowio["flowio_realm_policy"] = "load_balanced";
      break;
    case 4:
      // Realms described by datatypes, fixed for the file: stripes by
      // flowio's hint or ROMIO's (under romio_cb_pfr, flowio only), or
      // types given through File::set_file_realms.
      switch (pick(shared, 0, 3)) {
        case 0:
          hints.flowio["flowio_realm_stripe"] = std::to_string(16 << pick(shared, 0, 8));
          break;
        case 1:
          hints.flowio["romio_cb_pfr"] = "enable";
          hints.flowio["romio_cb_fr_type"] = std::to_string(pick(shared, 16, 3000));
          break;
        default:
          hints.realms = CaseHints::RealmDraw{one_in(shared, 2), shared()};
          break;
      }
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
  // Compression frames every point-to-point message unless off; small
  // thresholds make "on" compress these cases' short messages too.
  if (!one_in(shared, 3)) {
    static const char* const kCompression[] = {"off", "on", "auto"};
    hints.flowio["flowio_compress"] = kCompression[pick(shared, 0, 2)];
    if (!one_in(shared, 3)) {
      hints.flowio["flowio_compress_min_bytes"] = std::to_string(pick(shared, 0, 4096));
    }
  }
  if (one_in(shared, 4)) hints.flowio["flowio_durable"] = "enable";
  if (one_in(shared, 4)) hints.flowio["flowio_plan_cache"] = std::to_string(pick(shared, 0, 2));
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

// Realms fixed for the whole file (persistent or described by datatypes),
// which cases run over more calls.
bool fixed_realms(const CaseHints& hints) {
  const auto policy = hints.flowio.find("flowio_realm_policy");
  return (policy != hints.flowio.end() && policy->second == "persistent") ||
         hints.flowio.count("romio_cb_pfr") != 0 ||
         hints.flowio.count("flowio_realm_stripe") != 0 || hints.realms.has_value();
}

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
TypeHandle random_tile(std::mt19937_64& rng, std::int64_t etype_size, std::int64_t max_bytes,
                       std::string& text) {
  for (int attempt = 0;; ++attempt) {
    MPI_Datatype base = random_datatype(rng, TypeShape::monotone, max_bytes, &text,
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
  const core::FlatType flat = core::flatten(type);
  core::PieceCursor cursor(flat, count);
  std::vector<core::Piece> pieces(1024);
  std::vector<core::Piece> all;
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
void random_memory(std::mt19937_64& rng, std::int64_t etype_size, bool empty, CaseCall& op) {
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
      op.memory_type = TypeHandle(random_datatype(rng, TypeShape::any_order, 1024, &text));
      op.count = kind == 0 ? 0 : pick(rng, 1, 3);
    } while (copies_overlap(op.memory_type.get(), op.count * 8));
  }
  const std::int64_t size = type_size(op.memory_type.get());
  op.count *= etype_size / std::gcd(std::max<std::int64_t>(size, 1), etype_size);
  if (size == 0) op.count = std::min<MPI_Count>(op.count, 3);
  op.bytes = size * op.count;
  op.text = text + " x" + std::to_string(op.count);
}

// A crowd's operation: one to four etypes of contiguous memory.
void small_memory(std::mt19937_64& rng, std::int64_t etype_size, CaseCall& op) {
  MPI_Datatype etype_bytes;
  MPI_Type_contiguous(static_cast<int>(etype_size), MPI_BYTE, &etype_bytes);
  MPI_Type_commit(&etype_bytes);
  op.memory_type = TypeHandle(etype_bytes);
  op.count = pick(rng, 1, 4);
  op.bytes = etype_size * op.count;
  op.text = "contiguous(" + std::to_string(etype_size) + ",BYTE) x" + std::to_string(op.count);
}

// How a case's view reaches scale (differential_case.h): not at all (most
// cases), by its extent or by its size, past 2^31 or 2^32 bytes.
enum class ScaleKind { none, extent, size };
constexpr std::int64_t kScaleTargets[] = {std::int64_t{1} << 31, std::int64_t{1} << 32};
// Data of a random tile whose copies lie a scale gap apart: large enough
// that a call fits in one copy (a call across the gap would make MPICH
// step through gigabytes in buffer-sized iterations).
constexpr std::int64_t kScaleTileBytes = 64 << 10;

// A case's filetype and how its tiles lie: rank r's tile in copy k of the
// filetype at base + k * period + r * span (base: the case's displacement
// less r * span).
struct ViewPlan {
  TypeHandle filetype;
  ViewLayout layout;
  std::int64_t span = 0;
  std::int64_t period = 0;
  std::string text;
};

// A random monotone tile of at most `tile_bytes` bytes of data on every
// rank, the ranks' tiles side by side, then `gap` bytes to the next copy.
ViewPlan tiled_view(std::mt19937_64& rng, std::int64_t etype_size, std::int64_t tile_bytes,
                    std::int64_t gap) {
  ViewPlan view;
  TypeHandle tile = random_tile(rng, etype_size, tile_bytes, view.text);
  MPI_Count tile_true_lb = 0, tile_true_extent = 0;
  MPI_Type_get_true_extent_x(tile.get(), &tile_true_lb, &tile_true_extent);
  long long span = std::max<long long>(tile_true_lb + tile_true_extent, 1);
  MPI_Allreduce(MPI_IN_PLACE, &span, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  view.span = span;
  view.period = span * world_size() + gap;
  MPI_Datatype filetype;
  MPI_Type_create_resized(tile.get(), 0, view.period, &filetype);
  MPI_Type_commit(&filetype);
  view.filetype = TypeHandle(filetype);
  view.layout = layout_by_packing(tile.get(), view.period);
  return view;
}

// Blocks of 1,024 to 4,096 etypes, every rank's in turn, as many as take
// this rank's data past `target` bytes: a vector of whole etypes.
ViewPlan vector_view(std::mt19937_64& shared, std::int64_t etype_size, std::int64_t target) {
  ViewPlan view;
  const int ranks = world_size();
  const int block = pick(shared, 1024, 4096);
  const auto blocks = static_cast<int>(target / (block * etype_size) + pick(shared, 1, 8));
  MPI_Datatype element, vector, filetype;
  MPI_Type_contiguous(static_cast<int>(etype_size), MPI_BYTE, &element);
  MPI_Type_vector(blocks, block, block * ranks, element, &vector);
  MPI_Type_free(&element);
  view.span = block * etype_size;
  view.period = std::int64_t{blocks} * view.span * ranks;
  MPI_Type_create_resized(vector, 0, view.period, &filetype);
  MPI_Type_free(&vector);
  MPI_Type_commit(&filetype);
  view.filetype = TypeHandle(filetype);
  view.layout = vector_layout(blocks, view.span, view.span * ranks, view.period);
  view.text = "vector(" + std::to_string(blocks) + "," + std::to_string(block) + "," +
              std::to_string(block * ranks) + ",contiguous(" + std::to_string(etype_size) +
              ",BYTE))";
  return view;
}

// The mode a sparse case opens its file in first: one that needs no
// background written (its background is holes).
OpenMode random_sparse_first_mode(std::mt19937_64& shared) {
  static const OpenMode kModes[] = {OpenMode::rdwr, OpenMode::create_rdwr, OpenMode::wronly,
                                    OpenMode::create_wronly};
  return kModes[pick(shared, 0, 3)];
}

// The mode a case opens its file in first. Exclusive creation and append
// need a file in a given state (prepare_file makes it).
OpenMode random_first_mode(std::mt19937_64& shared) {
  static const OpenMode kModes[] = {
      OpenMode::rdwr,          OpenMode::rdwr,
      OpenMode::create_rdwr,   OpenMode::wronly,
      OpenMode::create_wronly, OpenMode::create_wronly,
      OpenMode::append_wronly, OpenMode::excl_wronly,
      OpenMode::excl_rdwr,     OpenMode::rdwr_delete_on_close,
  };
  return kModes[pick(shared, 0, static_cast<int>(std::size(kModes)) - 1)];
}

// A mode to reopen an existing file in for a group of the given direction.
OpenMode random_reopen_mode(std::mt19937_64& shared, bool writing) {
  if (!writing) return one_in(shared, 2) ? OpenMode::rdonly : OpenMode::rdwr;
  static const OpenMode kWriting[] = {OpenMode::rdwr, OpenMode::wronly, OpenMode::create_wronly,
                                      OpenMode::append_wronly};
  return kWriting[pick(shared, 0, 3)];
}

std::string step_text(const Step& step) {
  switch (step.kind) {
    case Step::Kind::set_view:
      return " [set_view +" + std::to_string(step.view_shift) + "]";
    case Step::Kind::set_size:
      return " [set_size " + std::to_string(step.size) + "]";
    case Step::Kind::sync:
      return " [sync]";
    case Step::Kind::reopen:
      return std::string(" [reopen ") + info(step.mode).name + "]";
    case Step::Kind::group:
      break;
  }
  const Group& group = step.group;
  std::string text = std::string(" [") + (group.writing ? "write" : "read") +
                     (group.through_pointer ? " pointer" : " at") +
                     (group.nonblocking ? " nonblocking" : " blocking");
  for (const CaseCall& op : group.operations) {
    text += std::string(op.collective ? " all" : " indep") + " #" + std::to_string(op.sequence) +
            "@" + std::to_string(op.offset) + ": " + op.text + ";";
  }
  return text + "]";
}

}  // namespace

int pick(std::mt19937_64& rng, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(rng);
}

bool one_in(std::mt19937_64& rng, int n) { return pick(rng, 1, n) == 1; }

TypeHandle::~TypeHandle() {
  if (type_ == MPI_DATATYPE_NULL) return;
  int integers, addresses, types, combiner;
  MPI_Type_get_envelope(type_, &integers, &addresses, &types, &combiner);
  if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&type_);
}

TypedBuffer::TypedBuffer(MPI_Datatype type, std::int64_t count, unsigned char fill) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  const std::int64_t reach = (count > 0 ? count - 1 : 0) * extent;
  low = true_lb + std::min<std::int64_t>(0, reach);
  const std::int64_t high = true_lb + true_extent + std::max<std::int64_t>(0, reach);
  bytes.assign(static_cast<std::size_t>(std::max<std::int64_t>(high - low, 0)) + 1, fill);
}

const OpenModeInfo& info(OpenMode mode) {
  using M = flowio::Mode;
  static const OpenModeInfo kInfo[] = {
      {M::rdwr, MPI_MODE_RDWR, "rdwr", true, true},
      {M::create | M::rdwr, MPI_MODE_CREATE | MPI_MODE_RDWR, "create|rdwr", true, true},
      {M::wronly, MPI_MODE_WRONLY, "wronly", false, true},
      {M::create | M::wronly, MPI_MODE_CREATE | MPI_MODE_WRONLY, "create|wronly", false, true},
      {M::append | M::wronly, MPI_MODE_APPEND | MPI_MODE_WRONLY, "append|wronly", false, true},
      {M::create | M::excl | M::wronly, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
       "create|excl|wronly", false, true},
      {M::create | M::excl | M::rdwr, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
       "create|excl|rdwr", true, true},
      {M::rdwr | M::delete_on_close, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
       "rdwr|delete_on_close", true, true},
      {M::rdonly, MPI_MODE_RDONLY, "rdonly", true, false},
  };
  return kInfo[static_cast<int>(mode)];
}

std::string CaseHints::text() const {
  std::string out = "flowio hints {";
  for (const auto& [key, value] : flowio) out += " " + key + "=" + value;
  out += " } romio hints {";
  for (const auto& [key, value] : romio) out += " " + key + "=" + value;
  out += " }";
  if (realms) {
    out += std::string(" realms described ") +
           (realms->one_for_all ? "one for all" : "per aggregator") + " seed " +
           std::to_string(realms->seed);
  }
  return out;
}

void make_case(std::mt19937_64& shared, std::mt19937_64& rng, std::uint64_t case_seed,
               const CaseShape& shape, Case& c) {
  const int rank = world_rank(), ranks = world_size();
  std::string etype_text;
  c.etype = random_etype(shared, c.etype_size, etype_text);
  c.hints = random_hints(shared, ranks);

  ScaleKind scale = ScaleKind::none;
  std::int64_t target = 0;
  if (shape.scale_one_in > 0 && one_in(shared, shape.scale_one_in)) {
    scale = one_in(shared, 2) ? ScaleKind::extent : ScaleKind::size;
    target = kScaleTargets[pick(shared, 0, 1)];
  }
  c.sparse = scale != ScaleKind::none;
  // The ranks' tiles interleave and never overlap, also after a set_view
  // that shifts every rank's displacement by whole periods.
  ViewPlan view = scale == ScaleKind::size     ? vector_view(shared, c.etype_size, target)
                  : scale == ScaleKind::extent ? tiled_view(rng, c.etype_size, kScaleTileBytes,
                                                            target + pick(shared, 0, 4095))
                                               : tiled_view(rng, c.etype_size, shape.tile_bytes, 0);
  const std::int64_t span = view.span, period = view.period;
  const std::string& tile_text = view.text;
  c.filetype = std::move(view.filetype);
  c.layout = std::move(view.layout);
  c.displacement = static_cast<std::int64_t>(case_seed % 64) + rank * span;
  const std::int64_t tile_size = type_size(c.filetype.get());
  const MPI_Offset tile_etypes = tile_size / c.etype_size;
  // Where the calls of a group of a sparse case start in the stream, in
  // etypes: across 2^31 or 2^32 bytes (where the view reaches), or across
  // into the filetype's second copy.
  const MPI_Offset scale_points[] = {
      0, ((std::int64_t{1} << 31) - 2048) / c.etype_size,
      std::min<MPI_Offset>(((std::int64_t{1} << 32) - 2048) / c.etype_size, tile_etypes / 2),
      tile_etypes - 64};

  c.first_mode = c.sparse ? random_sparse_first_mode(shared) : random_first_mode(shared);
  OpenMode mode = c.first_mode;
  // Persistent realms are for many calls on one open file: longer sequences.
  const int group_count = fixed_realms(c.hints) ? pick(shared, 4, 7) : pick(shared, 2, 4);
  MPI_Offset written_reach = tile_etypes;  // etypes of this rank's view that writes reach
  long long file_end = 0;
  std::int64_t shift = 0;
  bool shrunk = false;
  // set_size steps whose size is known once file_end is: (step, fraction of
  // file_end), the fraction 1 for growing back.
  std::vector<std::pair<std::size_t, double>> sizes;
  for (int g = 0; g < group_count; ++g) {
    Group group;
    // The first group writes and the last reads; between, either.
    group.writing = g == 0 || (g != group_count - 1 && !one_in(shared, 3));
    if (shrunk && !group.writing) {
      // Grown back while the file is still open for writing (the groups
      // since the shrink wrote).
      Step grow;
      grow.kind = Step::Kind::set_size;
      sizes.emplace_back(c.steps.size(), 1.0);
      c.steps.push_back(std::move(grow));
      shrunk = false;
    }
    const bool deletes = mode == OpenMode::rdwr_delete_on_close;
    const bool allowed = group.writing ? info(mode).writable : info(mode).readable;
    if (g > 0 && (!allowed || (!deletes && one_in(shared, 5)))) {
      Step reopen;
      reopen.kind = Step::Kind::reopen;
      reopen.mode = mode = random_reopen_mode(shared, group.writing);
      c.steps.push_back(std::move(reopen));
    }
    if (g > 0 && one_in(shared, 6)) {
      Step view;
      view.kind = Step::Kind::set_view;
      view.view_shift = shift = pick(shared, 0, 2) * period;
      c.steps.push_back(std::move(view));
    }
    if (g > 0 && one_in(shared, 8)) {
      Step sync;
      sync.kind = Step::Kind::sync;
      c.steps.push_back(std::move(sync));
    }
    if (g > 0 && group.writing && one_in(shared, 5)) {
      Step shrink;
      shrink.kind = Step::Kind::set_size;
      sizes.emplace_back(c.steps.size(), std::uniform_real_distribution<>(0, 1)(shared));
      c.steps.push_back(std::move(shrink));
      shrunk = c.shrinks = true;
    }
    group.through_pointer = one_in(shared, 3);
    group.nonblocking = !one_in(shared, 3);
    // Now and then a crowd: more small operations in flight at once than
    // message tags tell apart (runtime/engine/message_tags.h). Not where
    // each call takes a copy of a filetype gigabytes wide: a crowd would
    // reach hundreds of them.
    const bool crowd = group.nonblocking && !group.through_pointer && one_in(shared, 60) &&
                       scale != ScaleKind::extent;
    const int operations = crowd               ? kCrowd
                           : group.nonblocking ? pick(shared, 1, 3)
                                               : pick(shared, 1, 2);
    // Lay the operations out one after another in the view, with gaps, from
    // a random start; in a nonblocking group at explicit offsets they are
    // then called in a random order.
    MPI_Offset cursor = static_cast<MPI_Offset>(
        rng() % static_cast<std::uint64_t>((group.writing ? 3 * tile_etypes : written_reach) + 1));
    // At scale, every rank's calls start at one place (a point of the
    // stream, a copy of the filetype per call), so that each call spans a
    // few KiB of the file.
    if (scale == ScaleKind::size) cursor = scale_points[pick(shared, 0, 3)] + pick(rng, 0, 63);
    const int first_copy = scale == ScaleKind::extent ? pick(shared, 0, 2) : 0;
    for (int k = 0; k < operations; ++k) {
      CaseCall op;
      op.collective = pick(shared, 1, 100) <= shape.collective_percent;
      const bool nobody = one_in(shared, 15);
      if (crowd) {
        small_memory(rng, c.etype_size, op);
      } else {
        random_memory(rng, c.etype_size, nobody || one_in(rng, 6), op);
      }
      if (scale == ScaleKind::extent) {
        // Within one copy of the filetype, a gigabyte gap from the others.
        if (op.bytes > tile_size) random_memory(rng, c.etype_size, true, op);
        const MPI_Offset room = tile_etypes - op.bytes / c.etype_size;
        cursor = (first_copy + k) * tile_etypes +
                 static_cast<MPI_Offset>(rng() % static_cast<std::uint64_t>(room + 1));
      } else if (k > 0 && one_in(rng, 2)) {
        cursor += pick(rng, 1, 4);
      }
      op.offset = cursor;
      cursor += op.bytes / c.etype_size;
      if (group.writing) {
        op.data.emplace(op.memory_type.get(), op.count, 0);
        for (auto& byte : op.data->bytes) byte = static_cast<unsigned char>(rng());
        written_reach = std::max(written_reach, cursor);
      }
      // The file offset past this access, generously: whole tiles past it.
      const std::int64_t stream_end = op.offset * c.etype_size + op.bytes + 64;
      file_end = std::max<long long>(
          file_end, c.displacement + shift + (stream_end / tile_size + 1) * period);
      group.operations.push_back(std::move(op));
    }
    if (group.nonblocking && !group.through_pointer) {
      std::shuffle(group.operations.begin(), group.operations.end(), rng);
    }
    group.wait_order.resize(group.operations.size());
    std::iota(group.wait_order.begin(), group.wait_order.end(), 0);
    std::shuffle(group.wait_order.begin(), group.wait_order.end(), rng);
    for (CaseCall& op : group.operations) op.sequence = c.operation_count++;
    Step step;
    step.group = std::move(group);
    c.steps.push_back(std::move(step));
  }
  MPI_Allreduce(&file_end, &c.file_end, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  for (const auto& [index, fraction] : sizes) {
    c.steps[index].size = std::llround(fraction * static_cast<double>(c.file_end));
  }
  if (c.first_mode == OpenMode::append_wronly) {
    c.appended_from = std::llround(std::uniform_real_distribution<>(0, 1)(shared) *
                                   static_cast<double>(c.file_end));
  }
  // A sparse case's calls each span a few KiB of its file: sized as for a
  // file of 1 MiB.
  set_buffer_size(c.hints, c.sparse ? 1 << 20 : c.file_end);
  std::string steps_text;
  for (const Step& step : c.steps) steps_text += step_text(step);
  const std::string scale_text = scale == ScaleKind::none
                                     ? ""
                                     : std::string(" | at scale: ") +
                                           (scale == ScaleKind::extent ? "extent" : "size") +
                                           " past " + std::to_string(target);
  c.description = "seed " + std::to_string(case_seed) + scale_text + " | open " +
                  info(c.first_mode).name + " | " + c.hints.text() + " | etype " + etype_text +
                  " | rank " + std::to_string(rank) + ": tile " + tile_text + " span " +
                  std::to_string(span) + " disp " + std::to_string(c.displacement) + " |" +
                  steps_text;
}

}  // namespace flowio::testing
