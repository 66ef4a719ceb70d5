// Fuzz target: the datatype flattener (runtime/core/flat_type.h) against
// MPI's own typemap. The fuzzer's bytes build an MPI datatype tree (every
// constructor flowio flattens, nested, with zero-length blocks, negative
// strides, resized children); then
//   - as a memory type, flowio's pack and unpack of 1 or 2 copies (whole and
//     from a seek position) must give MPI_Pack's and MPI_Unpack's bytes,
//     and unpack must touch no byte outside the typemap;
//   - as a filetype, a view flowio accepts must place the stream's bytes
//     where MPI_Unpack places them, and count the data below any offset as
//     MPI does.
// A rejected type (UsageError) is fine; a crash, a sanitizer report or a
// mismatch is a finding.
#include <mpi.h>
#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exchange/stream_pack.h"
#include "flowio/error.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "tests/fuzz/fuzz_input.h"

namespace flowio::fuzz {
namespace {

// Types larger than this are not built: the oracle copies every byte.
constexpr MPI_Count kMostBytes = 1 << 16;
constexpr MPI_Count kMostSpan = 1 << 20;

// Builds a type tree from the input; every type it creates is freed when
// it is destroyed. A constructor MPI refuses, or a type past the bounds,
// ends the build (the input is not interesting).
class TypeBuilder {
 public:
  explicit TypeBuilder(FuzzInput& in) : in_(in) {}
  TypeBuilder(const TypeBuilder&) = delete;
  TypeBuilder& operator=(const TypeBuilder&) = delete;
  ~TypeBuilder() {
    for (MPI_Datatype& type : made_) MPI_Type_free(&type);
  }

  // A committed type, or MPI_DATATYPE_NULL.
  MPI_Datatype build() {
    MPI_Datatype type = node(0);
    if (type == MPI_DATATYPE_NULL || MPI_Type_commit(&type) != MPI_SUCCESS) {
      return MPI_DATATYPE_NULL;
    }
    return type;
  }

 private:
  // `type` is taken by reference and read here, after the constructor that
  // wrote it (argument evaluation order is unspecified).
  MPI_Datatype keep(int code, const MPI_Datatype& type) {
    if (code != MPI_SUCCESS) return MPI_DATATYPE_NULL;
    made_.push_back(type);
    MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent_x(type, &lb, &extent);
    MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    if (size < 0 || size > kMostBytes || extent < 0 || extent > kMostSpan ||
        true_extent > kMostSpan || std::abs(lb) > kMostSpan || std::abs(true_lb) > kMostSpan) {
      return MPI_DATATYPE_NULL;
    }
    return type;
  }

  MPI_Datatype named() {
    static const MPI_Datatype kinds[] = {MPI_BYTE,   MPI_CHAR,       MPI_SHORT,    MPI_INT,
                                         MPI_DOUBLE, MPI_DOUBLE_INT, MPI_SHORT_INT};
    return kinds[in_.in_range(0, sizeof kinds / sizeof kinds[0] - 1)];
  }

  MPI_Datatype node(int depth) {
    if (depth >= 4 || in_.empty()) return named();
    const int kind = static_cast<int>(in_.in_range(0, 12));
    MPI_Datatype out = MPI_DATATYPE_NULL;
    switch (kind) {
      case 0:
        return named();
      case 1: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        return keep(MPI_Type_contiguous(static_cast<int>(in_.in_range(0, 4)), child, &out), out);
      }
      case 2: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int count = static_cast<int>(in_.in_range(0, 4));
        const int length = static_cast<int>(in_.in_range(0, 3));
        const int stride = static_cast<int>(in_.in_range(-4, 6));
        return keep(MPI_Type_vector(count, length, stride, child, &out), out);
      }
      case 3: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int count = static_cast<int>(in_.in_range(0, 4));
        const int length = static_cast<int>(in_.in_range(0, 3));
        const MPI_Aint stride = in_.in_range(-64, 64);
        return keep(MPI_Type_create_hvector(count, length, stride, child, &out), out);
      }
      case 4:
      case 5: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int count = static_cast<int>(in_.in_range(0, 4));
        std::vector<int> lengths(count), displacements(count);
        std::vector<MPI_Aint> byte_displacements(count);
        for (int i = 0; i < count; ++i) {
          lengths[i] = static_cast<int>(in_.in_range(0, 3));
          displacements[i] = static_cast<int>(in_.in_range(-4, 8));
          byte_displacements[i] = in_.in_range(-64, 64);
        }
        return kind == 4 ? keep(MPI_Type_indexed(count, lengths.data(), displacements.data(), child,
                                                 &out),
                                out)
                         : keep(MPI_Type_create_hindexed(count, lengths.data(),
                                                         byte_displacements.data(), child, &out),
                                out);
      }
      case 6:
      case 7: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int count = static_cast<int>(in_.in_range(0, 4));
        const int length = static_cast<int>(in_.in_range(0, 3));
        std::vector<int> displacements(count);
        std::vector<MPI_Aint> byte_displacements(count);
        for (int i = 0; i < count; ++i) {
          displacements[i] = static_cast<int>(in_.in_range(-4, 8));
          byte_displacements[i] = in_.in_range(-64, 64);
        }
        return kind == 6 ? keep(MPI_Type_create_indexed_block(count, length, displacements.data(),
                                                              child, &out),
                                out)
                         : keep(MPI_Type_create_hindexed_block(
                                    count, length, byte_displacements.data(), child, &out),
                                out);
      }
      case 8: {
        const int count = static_cast<int>(in_.in_range(1, 3));
        std::vector<int> lengths(count);
        std::vector<MPI_Aint> displacements(count);
        std::vector<MPI_Datatype> children(count);
        for (int i = 0; i < count; ++i) {
          children[i] = node(depth + 1);
          if (children[i] == MPI_DATATYPE_NULL) return MPI_DATATYPE_NULL;
          lengths[i] = static_cast<int>(in_.in_range(0, 3));
          displacements[i] = in_.in_range(-64, 64);
        }
        return keep(MPI_Type_create_struct(count, lengths.data(), displacements.data(),
                                           children.data(), &out),
                    out);
      }
      case 9: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const MPI_Aint lb = in_.in_range(-32, 32), extent = in_.in_range(0, 64);
        return keep(MPI_Type_create_resized(child, lb, extent, &out), out);
      }
      case 10: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int dimensions = static_cast<int>(in_.in_range(1, 3));
        int sizes[3], subsizes[3], starts[3];
        for (int d = 0; d < dimensions; ++d) {
          sizes[d] = static_cast<int>(in_.in_range(1, 4));
          subsizes[d] = static_cast<int>(in_.in_range(1, sizes[d]));
          starts[d] = static_cast<int>(in_.in_range(0, sizes[d] - subsizes[d]));
        }
        const int order = in_.byte() % 2 == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        return keep(
            MPI_Type_create_subarray(dimensions, sizes, subsizes, starts, order, child, &out), out);
      }
      case 11: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        const int dimensions = static_cast<int>(in_.in_range(1, 2));
        int gsizes[2], distribs[2], dargs[2], psizes[2];
        int processes = 1;
        for (int d = 0; d < dimensions; ++d) {
          gsizes[d] = static_cast<int>(in_.in_range(1, 6));
          psizes[d] = static_cast<int>(in_.in_range(1, 3));
          processes *= psizes[d];
          const int choice = static_cast<int>(in_.in_range(0, 2));
          distribs[d] = choice == 0   ? MPI_DISTRIBUTE_BLOCK
                        : choice == 1 ? MPI_DISTRIBUTE_CYCLIC
                                      : MPI_DISTRIBUTE_NONE;
          if (distribs[d] == MPI_DISTRIBUTE_NONE) psizes[d] = 1;
          dargs[d] =
              in_.byte() % 2 == 0 ? MPI_DISTRIBUTE_DFLT_DARG : static_cast<int>(in_.in_range(1, 3));
          if (distribs[d] == MPI_DISTRIBUTE_BLOCK && dargs[d] != MPI_DISTRIBUTE_DFLT_DARG &&
              dargs[d] * psizes[d] < gsizes[d]) {
            dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
          }
        }
        processes = 1;
        for (int d = 0; d < dimensions; ++d) processes *= psizes[d];
        const int rank = static_cast<int>(in_.in_range(0, processes - 1));
        const int order = in_.byte() % 2 == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        return keep(MPI_Type_create_darray(processes, rank, dimensions, gsizes, distribs, dargs,
                                           psizes, order, child, &out),
                    out);
      }
      default: {
        MPI_Datatype child = node(depth + 1);
        if (child == MPI_DATATYPE_NULL) return child;
        return keep(MPI_Type_dup(child, &out), out);
      }
    }
  }

  FuzzInput& in_;
  std::vector<MPI_Datatype> made_;
};

// MPICH 4.0.2's MPI_Pack and MPI_Unpack divide by zero on some types with
// empty derived children nested in structs and darrays (an MPICH bug this
// fuzzer meets every few thousand inputs). The oracle runs under a SIGFPE
// handler that abandons the input instead of reporting MPICH's crash as
// flowio's; MPI runs with one thread here, so no lock is held when the
// handler jumps out.
sigjmp_buf oracle_crashed;

void on_oracle_fpe(int) { siglongjmp(oracle_crashed, 1); }

// Runs `call` (an MPI_Pack or MPI_Unpack); false when MPICH divided by zero.
template <typename Call>
bool run_oracle(Call&& call) {
  struct sigaction mine = {}, previous = {};
  mine.sa_handler = on_oracle_fpe;
  sigemptyset(&mine.sa_mask);
  sigaction(SIGFPE, &mine, &previous);
  const bool crashed = sigsetjmp(oracle_crashed, 1) != 0;
  if (!crashed) call();
  sigaction(SIGFPE, &previous, nullptr);
  return !crashed;
}

struct Bounds {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};

Bounds bounds_of(MPI_Datatype type) {
  Bounds b;
  MPI_Type_size_x(type, &b.size);
  MPI_Type_get_extent_x(type, &b.lb, &b.extent);
  MPI_Type_get_true_extent_x(type, &b.true_lb, &b.true_extent);
  return b;
}

// Memory-type semantics of `count` copies against MPI_Pack/MPI_Unpack.
void check_memory(MPI_Datatype type, const core::FlatType& flat, const Bounds& b, int count,
                  FuzzInput& in) {
  const std::int64_t bytes = b.size * count;
  const std::int64_t span = (count - 1) * b.extent + b.true_extent;
  if (bytes == 0 || span <= 0) return;
  // The allocation starts at the lowest address the copies touch.
  std::vector<char> memory(static_cast<std::size_t>(span));
  for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<char>(i * 131 + 7);
  char* buffer = memory.data() - b.true_lb;
  const core::MemoryLayout layout{&flat, count, reinterpret_cast<std::int64_t>(buffer)};

  std::vector<char> expected(static_cast<std::size_t>(bytes)), packed(expected.size());
  int position = 0;
  int packed_code = MPI_ERR_OTHER;
  if (!run_oracle([&] {
        packed_code = MPI_Pack(buffer, count, type, expected.data(), static_cast<int>(bytes),
                               &position, MPI_COMM_SELF);
      }) ||
      packed_code != MPI_SUCCESS) {
    return;
  }
  exchange::pack_stream(layout, 0, bytes, packed.data());
  if (packed != expected) finding("pack_stream differs from MPI_Pack");
  const std::int64_t from = in.in_range(0, bytes - 1);
  const std::int64_t length = in.in_range(0, bytes - from);
  std::vector<char> part(static_cast<std::size_t>(length));
  exchange::pack_stream(layout, from, length, part.data());
  if (!std::equal(part.begin(), part.end(), expected.begin() + from)) {
    finding("pack_stream from a seek position differs from MPI_Pack");
  }

  // Unpacking a fresh stream into memory full of '#': only the typemap's
  // bytes change, as MPI_Unpack changes them.
  std::vector<char> stream(expected.size());
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<char>(i * 29 + 3);
  std::vector<char> oracle(memory.size(), '#'), mine(memory.size(), '#');
  position = 0;
  if (!run_oracle([&] {
        MPI_Unpack(stream.data(), static_cast<int>(bytes), &position, oracle.data() - b.true_lb,
                   count, type, MPI_COMM_SELF);
      })) {
    return;
  }
  const core::MemoryLayout target{&flat, count,
                                  reinterpret_cast<std::int64_t>(mine.data() - b.true_lb)};
  exchange::unpack_stream(target, 0, bytes, stream.data());
  if (mine != oracle) finding("unpack_stream differs from MPI_Unpack");
}

// Filetype semantics: where a view flowio accepts puts the stream, tiled
// `count` times from displacement 0.
void check_view(MPI_Datatype type, const Bounds& b, int count, FuzzInput& in) {
  if (b.size == 0 || b.true_lb < 0) return;
  std::shared_ptr<core::FileView> view;
  try {
    view = std::make_shared<core::FileView>(0, MPI_BYTE, type);
  } catch (const UsageError&) {
    return;  // refused as a filetype (decreasing, overlapping, ...)
  }
  const std::int64_t bytes = b.size * count;
  const std::int64_t image_bytes = (count - 1) * b.extent + b.true_lb + b.true_extent;
  std::vector<char> stream(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<char>(i * 131 + 7);
  std::vector<char> image(static_cast<std::size_t>(image_bytes), 0);
  std::vector<char> covered(image.size(), 0), ones(stream.size(), 1);
  int position = 0;
  const bool unpacked = run_oracle([&] {
    MPI_Unpack(stream.data(), static_cast<int>(bytes), &position, image.data(), count, type,
               MPI_COMM_SELF);
    position = 0;
    MPI_Unpack(ones.data(), static_cast<int>(bytes), &position, covered.data(), count, type,
               MPI_COMM_SELF);
  });
  if (!unpacked) return;
  // Walking flowio's pieces through the image must give the stream back.
  core::PieceCursor cursor = view->file_pieces(0);
  std::vector<char> walked;
  core::Piece piece;
  while (walked.size() < stream.size() && cursor.next_piece(piece, bytes)) {
    if (piece.offset < 0 || piece.offset + piece.length > image_bytes) {
      finding("a view piece lies outside the typemap's extent");
    }
    walked.insert(walked.end(), image.begin() + piece.offset,
                  image.begin() + piece.offset + piece.length);
  }
  if (walked != stream) finding("a view places the stream other than MPI_Unpack does");
  // Data bytes below an offset, as the realms count them. The view tiles
  // the filetype without end, the image holds `count` tiles: offsets are
  // drawn below where tile `count` could start (MPI's true lower bound can
  // lie below the first data byte, so this may stop short, never past).
  const std::int64_t offset =
      in.in_range(0, std::clamp<std::int64_t>(count * b.extent + b.true_lb, 0, image_bytes));
  const std::int64_t below = std::count(covered.begin(), covered.begin() + offset, 1);
  if (view->stream_bytes_before(offset) != below) {
    finding("stream_bytes_before differs from the typemap");
  }
}

}  // namespace
}  // namespace flowio::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // One thread: the oracle's SIGFPE escape (run_oracle) must not leave a
  // lock held.
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
  // Constructors MPI refuses return codes here instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowio::fuzz;
  FuzzInput in(data, size);
  TypeBuilder builder(in);
  MPI_Datatype type = builder.build();
  if (type == MPI_DATATYPE_NULL) return 0;
  const Bounds b = bounds_of(type);
  try {
    const flowio::core::FlatType flat = flowio::core::flatten(type);
    if (flat.size() != b.size || flat.lb() != b.lb || flat.extent() != b.extent) {
      finding("flatten's size or bounds differ from MPI's");
    }
    const int count = static_cast<int>(in.in_range(1, 2));
    check_memory(type, flat, b, count, in);
    check_view(type, b, count, in);
  } catch (const flowio::UsageError&) {
    // Refused: fine.
  }
  return 0;
}
