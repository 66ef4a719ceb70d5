// flatten() and flatten_in_representation(): a datatype's constructor tree,
// read through MPI_Type_get_envelope_c / MPI_Type_get_contents_c, turned
// into a FlatType.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "flowio/error.h"
#include "runtime/core/checked_arithmetic.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/type_arguments.h"

namespace flowio::core {
namespace {

// A flattened datatype with its bounds, as the walk builds it.
struct Built {
  FlatNodePtr node;
  std::int64_t lb = 0;
  std::int64_t extent = 0;
};

// The bounds MPI gives a typemap of `blocks` (each `count` copies of a
// child, `stride` apart) repeated `repeat` times `repeat_stride` apart:
// the lowest lower bound and the highest upper bound of the copies
// (MPI 4.1, 5.1.6). Used for types as they lie in a file, where MPI's own
// answer (native extents) does not apply; no alignment padding is added,
// since a file representation has none.
class BoundsOfBlocks {
 public:
  void add(std::int64_t displacement, std::int64_t count, std::int64_t stride, const Built& child) {
    if (count == 0) return;
    const std::int64_t reach = checked_multiply(count - 1, stride);
    const std::int64_t low =
        checked_add(checked_add(displacement, child.lb), std::min<std::int64_t>(0, reach));
    const std::int64_t high =
        checked_add(checked_add(checked_add(displacement, child.lb), child.extent),
                    std::max<std::int64_t>(0, reach));
    lb_ = any_ ? std::min(lb_, low) : low;
    ub_ = any_ ? std::max(ub_, high) : high;
    any_ = true;
  }
  void repeat(std::int64_t count, std::int64_t stride) {
    if (!any_ || count == 0) return;
    const std::int64_t reach = checked_multiply(count - 1, stride);
    lb_ += std::min<std::int64_t>(0, reach);
    ub_ += std::max<std::int64_t>(0, reach);
  }
  std::int64_t lb() const { return any_ ? lb_ : 0; }
  std::int64_t extent() const { return any_ ? ub_ - lb_ : 0; }

 private:
  bool any_ = false;
  std::int64_t lb_ = 0;
  std::int64_t ub_ = 0;
};

// Walks a datatype's constructor tree. Handles that get_contents returns
// are freed when the walk ends (not earlier: MPI may hand out a freed
// handle's number again, which would confuse the per-walk cache).
//
// Natively (no `file_extent`), bounds are MPI's own. In a file data
// representation, every predefined type takes file_extent(type) bytes,
// displacements that constructors count in elements scale with it, byte
// displacements are taken as they are, and bounds follow from those
// (MPI 4.1, 14.5.1).
class Flattener {
 public:
  explicit Flattener(const FileExtentOf* file_extent) : file_extent_(file_extent) {}
  Flattener(const Flattener&) = delete;
  Flattener& operator=(const Flattener&) = delete;
  ~Flattener() {
    for (MPI_Datatype& type : returned_) MPI_Type_free(&type);
  }

  const Built& built(MPI_Datatype type) {
    auto cached = cache_.find(type);
    if (cached != cache_.end()) return cached->second;
    Built result = build(type);
    return cache_.emplace(type, std::move(result)).first->second;
  }

 private:
  bool in_file() const { return file_extent_ != nullptr; }

  FlatNodePtr node(MPI_Datatype type) { return built(type).node; }
  std::int64_t extent_of(MPI_Datatype type) { return built(type).extent; }

  static Built with_mpi_bounds(FlatNodePtr node, MPI_Datatype type) {
    MPI_Count lb = 0, extent = 0;
    check_mpi(MPI_Type_get_extent_x(type, &lb, &extent), "MPI_Type_get_extent_x");
    return Built{std::move(node), lb, extent};
  }

  // The node of `blocks` (and, in a file, their bounds; natively MPI's).
  Built from_blocks(MPI_Datatype type, std::vector<FlatBlock> blocks,
                    const std::vector<const Built*>& children, std::int64_t repeat = 1,
                    std::int64_t repeat_stride = 0) {
    if (!in_file())
      return with_mpi_bounds(make_blocks(std::move(blocks), repeat, repeat_stride), type);
    BoundsOfBlocks bounds;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      bounds.add(blocks[i].displacement, blocks[i].count, blocks[i].stride, *children[i]);
    }
    bounds.repeat(repeat, repeat_stride);
    return Built{make_blocks(std::move(blocks), repeat, repeat_stride), bounds.lb(),
                 bounds.extent()};
  }

  Built build(MPI_Datatype type) {
    TypeArguments arguments = read_type_arguments(type);
    returned_.insert(returned_.end(), arguments.to_free.begin(), arguments.to_free.end());
    const std::vector<std::int64_t>& ints = arguments.integers;
    const std::vector<std::int64_t>& addresses = arguments.addresses;
    const std::vector<MPI_Datatype>& types = arguments.types;
    switch (arguments.combiner) {
      case MPI_COMBINER_NAMED:
      case MPI_COMBINER_F90_REAL:
      case MPI_COMBINER_F90_COMPLEX:
      case MPI_COMBINER_F90_INTEGER:
        return in_file() ? named_in_file(type) : with_mpi_bounds(named(type), type);
      case MPI_COMBINER_DUP:
        return built(types[0]);
      case MPI_COMBINER_RESIZED: {
        const Built& child = built(types[0]);
        if (!in_file()) return with_mpi_bounds(child.node, type);
        return Built{child.node, addresses[0], addresses[1]};
      }
      case MPI_COMBINER_CONTIGUOUS: {
        const Built& child = built(types[0]);
        return from_blocks(type, {{0, ints[0], child.extent, child.node}}, {&child});
      }
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_HVECTOR:
      case MPI_COMBINER_HVECTOR_INTEGER: {
        const Built& child = built(types[0]);
        const std::int64_t stride = arguments.combiner == MPI_COMBINER_VECTOR
                                        ? checked_multiply(ints[2], child.extent)
                                    : arguments.combiner == MPI_COMBINER_HVECTOR ? addresses[0]
                                                                                 : ints[2];
        if (ints[0] < 0) bad_type("vector with a negative count");
        return from_blocks(type, {{0, ints[1], child.extent, child.node}}, {&child}, ints[0],
                           stride);
      }
      case MPI_COMBINER_INDEXED:
      case MPI_COMBINER_HINDEXED:
      case MPI_COMBINER_HINDEXED_INTEGER: {
        const auto count = static_cast<std::size_t>(ints[0]);
        const Built& child = built(types[0]);
        std::vector<FlatBlock> blocks(count);
        for (std::size_t i = 0; i < count; ++i) {
          std::int64_t displacement = 0;
          if (arguments.combiner == MPI_COMBINER_INDEXED) {
            displacement = checked_multiply(ints[1 + count + i], child.extent);
          } else if (arguments.combiner == MPI_COMBINER_HINDEXED) {
            displacement = addresses[i];
          } else {
            displacement = ints[1 + count + i];
          }
          blocks[i] = {displacement, ints[1 + i], child.extent, child.node};
        }
        return from_blocks(type, std::move(blocks), std::vector<const Built*>(count, &child));
      }
      case MPI_COMBINER_INDEXED_BLOCK:
      case MPI_COMBINER_HINDEXED_BLOCK: {
        const auto count = static_cast<std::size_t>(ints[0]);
        const Built& child = built(types[0]);
        std::vector<FlatBlock> blocks(count);
        for (std::size_t i = 0; i < count; ++i) {
          const std::int64_t displacement = arguments.combiner == MPI_COMBINER_INDEXED_BLOCK
                                                ? checked_multiply(ints[2 + i], child.extent)
                                                : addresses[i];
          blocks[i] = {displacement, ints[1], child.extent, child.node};
        }
        return from_blocks(type, std::move(blocks), std::vector<const Built*>(count, &child));
      }
      case MPI_COMBINER_STRUCT:
      case MPI_COMBINER_STRUCT_INTEGER: {
        const auto count = static_cast<std::size_t>(ints[0]);
        std::vector<FlatBlock> blocks(count);
        std::vector<const Built*> children(count);
        for (std::size_t i = 0; i < count; ++i) {
          const std::int64_t displacement =
              arguments.combiner == MPI_COMBINER_STRUCT ? addresses[i] : ints[1 + count + i];
          children[i] = &built(types[i]);
          blocks[i] = {displacement, ints[1 + i], children[i]->extent, children[i]->node};
        }
        return from_blocks(type, std::move(blocks), children);
      }
      case MPI_COMBINER_SUBARRAY:
        return whole_array(type, subarray(ints, types[0]), &ints[1], ints[0], types[0]);
      case MPI_COMBINER_DARRAY:
        return whole_array(type, darray(ints, types[0]), &ints[3], ints[2], types[0]);
      default:
        bad_type("unsupported combiner " + std::to_string(arguments.combiner));
    }
  }

  // Subarrays and darrays span the whole array: lower bound 0, extent the
  // product of the array's `dimensions` sizes times the old type's extent.
  Built whole_array(MPI_Datatype type, FlatNodePtr node, const std::int64_t* sizes,
                    std::int64_t dimensions, MPI_Datatype old_type) {
    if (!in_file()) return with_mpi_bounds(std::move(node), type);
    std::int64_t extent = extent_of(old_type);
    for (std::int64_t d = 0; d < dimensions; ++d) extent = checked_multiply(extent, sizes[d]);
    return Built{std::move(node), 0, extent};
  }

  // Named types are contiguous, except the value-index pairs of
  // MPI_MINLOC/MAXLOC (MPI_DOUBLE_INT, ...): a value, then an int at the
  // next int-aligned offset, as the C struct {T value; int index;} lays
  // them out.
  static FlatNodePtr named(MPI_Datatype type) {
    MPI_Count size = 0, lb = 0, extent = 0;
    check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
    check_mpi(MPI_Type_get_extent_x(type, &lb, &extent), "MPI_Type_get_extent_x");
    if (size == extent) return make_run(size);
    const std::int64_t index_bytes = sizeof(int);
    const std::int64_t value_bytes = size - index_bytes;
    const std::int64_t index_offset = (value_bytes + index_bytes - 1) / index_bytes * index_bytes;
    if (value_bytes <= 0 || index_offset + index_bytes > extent) {
      bad_type("named type with an unknown layout");
    }
    return make_blocks(
        {{0, 1, 0, make_run(value_bytes)}, {index_offset, 1, 0, make_run(index_bytes)}});
  }

  // In a file, a predefined type is its file extent of contiguous bytes;
  // a value-index pair is its two parts packed one after the other.
  Built named_in_file(MPI_Datatype type) {
    MPI_Datatype value = MPI_DATATYPE_NULL, index = MPI_DATATYPE_NULL;
    const std::int64_t bytes = split_pair_type(type, value, index)
                                   ? checked_add((*file_extent_)(value), (*file_extent_)(index))
                                   : (*file_extent_)(type);
    if (bytes < 0) bad_type("a negative extent in the file's data representation");
    return Built{make_run(bytes), 0, bytes};
  }

  // A subarray: for each dimension, from the slowest varying to the
  // fastest, `subsizes[d]` copies of the next dimension starting at
  // starts[d], spaced by the bytes of one row of that dimension.
  FlatNodePtr subarray(const std::vector<std::int64_t>& ints, MPI_Datatype old_type) {
    const auto dimensions = static_cast<int>(ints[0]);
    const std::int64_t* sizes = &ints[1];
    const std::int64_t* subsizes = &ints[1 + dimensions];
    const std::int64_t* starts = &ints[1 + 2 * dimensions];
    const bool c_order = ints[1 + 3 * dimensions] == MPI_ORDER_C;
    FlatNodePtr inner = node(old_type);
    std::int64_t row_bytes = extent_of(old_type);
    for (int step = 0; step < dimensions; ++step) {
      const int d = c_order ? dimensions - 1 - step : step;
      inner =
          make_blocks({{checked_multiply(starts[d], row_bytes), subsizes[d], row_bytes, inner}});
      row_bytes = checked_multiply(row_bytes, sizes[d]);
    }
    return inner;
  }

  // A darray: per dimension, the global indices this process owns under
  // BLOCK, CYCLIC(k) or NONE distribution, laid out as in the global array.
  // The process grid is row-major whatever the array order (MPI 4.0, 5.1.4).
  FlatNodePtr darray(const std::vector<std::int64_t>& ints, MPI_Datatype old_type) {
    const std::int64_t rank = ints[1];
    const auto dimensions = static_cast<int>(ints[2]);
    const std::int64_t* global_sizes = &ints[3];
    const std::int64_t* distributions = &ints[3 + dimensions];
    const std::int64_t* arguments = &ints[3 + 2 * dimensions];
    const std::int64_t* process_sizes = &ints[3 + 3 * dimensions];
    const bool c_order = ints[3 + 4 * dimensions] == MPI_ORDER_C;
    std::vector<std::int64_t> coordinates(static_cast<std::size_t>(dimensions));
    for (std::int64_t d = dimensions - 1, remaining = rank; d >= 0; --d) {
      coordinates[static_cast<std::size_t>(d)] = remaining % process_sizes[d];
      remaining /= process_sizes[d];
    }
    FlatNodePtr inner = node(old_type);
    std::int64_t row_bytes = extent_of(old_type);
    for (int step = 0; step < dimensions; ++step) {
      const int d = c_order ? dimensions - 1 - step : step;
      inner = darray_dimension(global_sizes[d], static_cast<int>(distributions[d]), arguments[d],
                               process_sizes[d], coordinates[static_cast<std::size_t>(d)],
                               row_bytes, inner);
      row_bytes = checked_multiply(row_bytes, global_sizes[d]);
    }
    return inner;
  }

  static FlatNodePtr darray_dimension(std::int64_t global_size, int distribution,
                                      std::int64_t argument, std::int64_t processes,
                                      std::int64_t coordinate, std::int64_t row_bytes,
                                      const FlatNodePtr& inner) {
    if (distribution == MPI_DISTRIBUTE_NONE) {
      return make_blocks({{0, global_size, row_bytes, inner}});
    }
    if (distribution == MPI_DISTRIBUTE_BLOCK) {
      const std::int64_t block = argument == MPI_DISTRIBUTE_DFLT_DARG
                                     ? (global_size + processes - 1) / processes
                                     : argument;
      const std::int64_t first = coordinate * block;
      const std::int64_t length = std::clamp<std::int64_t>(global_size - first, 0, block);
      return make_blocks({{checked_multiply(first, row_bytes), length, row_bytes, inner}});
    }
    const std::int64_t block = argument == MPI_DISTRIBUTE_DFLT_DARG ? 1 : argument;
    const std::int64_t cycle = checked_multiply(block, processes);
    const std::int64_t first = coordinate * block;
    if (first >= global_size) return make_run(0);
    const std::int64_t full_cycles = (global_size - first) / cycle;
    const std::int64_t tail_start = first + full_cycles * cycle;
    const std::int64_t tail_length = std::clamp<std::int64_t>(global_size - tail_start, 0, block);
    FlatNodePtr full = make_blocks({{checked_multiply(first, row_bytes), block, row_bytes, inner}},
                                   full_cycles, checked_multiply(cycle, row_bytes));
    return make_blocks({{0, 1, 0, full},
                        {checked_multiply(tail_start, row_bytes), tail_length, row_bytes, inner}});
  }

  const FileExtentOf* file_extent_;
  std::unordered_map<MPI_Datatype, Built> cache_;
  std::vector<MPI_Datatype> returned_;
};

FlatType flatten_with(MPI_Datatype type, const FileExtentOf* file_extent) {
  if (type == MPI_DATATYPE_NULL) bad_type("MPI_DATATYPE_NULL");
  Flattener flattener(file_extent);
  const Built& built = flattener.built(type);
  return FlatType(built.node, built.lb, built.extent);
}

}  // namespace

FlatType flatten(MPI_Datatype type) { return flatten_with(type, nullptr); }

FlatType flatten_in_representation(MPI_Datatype type, const FileExtentOf& file_extent) {
  return flatten_with(type, &file_extent);
}

}  // namespace flowio::core
