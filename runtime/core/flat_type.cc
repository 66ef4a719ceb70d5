#include "runtime/core/flat_type.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "flowio/error.h"

namespace flowio::core {
namespace {

[[noreturn]] void bad_type(const std::string& why) {
  throw UsageError(ErrorCode::invalid_datatype, "datatype: " + why);
}

std::int64_t checked_multiply(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) bad_type("size overflows 64 bits");
  return product;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) bad_type("size overflows 64 bits");
  return sum;
}

bool same_child(const FlatNodePtr& a, const FlatNodePtr& b) {
  return a == b || (a->is_run() && b->is_run() && a->size == b->size);
}

std::int64_t span(const FlatNode& node) { return node.true_ub - node.true_lb; }

// A block whose child is a run becomes a single longer run when its copies
// touch; a count-1 block over a single-repeat node is replaced by that
// node's blocks, shifted.
void simplify_blocks(std::vector<FlatBlock>& blocks) {
  std::vector<FlatBlock> out;
  out.reserve(blocks.size());
  auto append = [&out](FlatBlock block) {
    if (block.count == 0 || block.child->size == 0) return;
    if (block.child->is_run() && (block.count == 1 || block.stride == block.child->size)) {
      const std::int64_t bytes = checked_multiply(block.count, block.child->size);
      if (block.count != 1) block.child = make_run(bytes);
      block.count = 1;
      block.stride = 0;
      FlatBlock* last = out.empty() ? nullptr : &out.back();
      if (last != nullptr && last->count == 1 && last->child->is_run() &&
          last->displacement + last->child->size == block.displacement) {
        last->child = make_run(last->child->size + bytes);
        return;
      }
    }
    out.push_back(std::move(block));
  };
  for (FlatBlock& block : blocks) {
    if (block.count == 1 && !block.child->is_run() && block.child->repeat == 1) {
      for (const FlatBlock& inner : block.child->blocks) {
        FlatBlock shifted = inner;
        shifted.displacement = checked_add(shifted.displacement, block.displacement);
        append(std::move(shifted));
      }
    } else if (block.count == 1 && !block.child->is_run() && block.child->blocks.size() == 1 &&
               block.child->blocks[0].count == 1) {
      const FlatBlock& inner = block.child->blocks[0];
      append(FlatBlock{checked_add(block.displacement, inner.displacement), block.child->repeat,
                       block.child->repeat_stride, inner.child});
    } else {
      append(std::move(block));
    }
  }
  blocks = std::move(out);
}

// Blocks whose displacements form an arithmetic progression over one child
// become one block repeated: what makes enumerated (hindexed) descriptions
// of regular patterns as small as vectors.
bool fold_progression(std::vector<FlatBlock>& blocks, std::int64_t& repeat,
                      std::int64_t& repeat_stride) {
  if (repeat != 1 || blocks.size() < 2) return false;
  const FlatBlock& first = blocks[0];
  const std::int64_t step = blocks[1].displacement - first.displacement;
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    const FlatBlock& block = blocks[i];
    if (block.count != first.count || block.stride != first.stride ||
        !same_child(block.child, first.child) ||
        block.displacement - blocks[i - 1].displacement != step) {
      return false;
    }
  }
  repeat = static_cast<std::int64_t>(blocks.size());
  repeat_stride = step;
  blocks.resize(1);
  return true;
}

void compute_summary(FlatNode& node) {
  node.block_stream_end.resize(node.blocks.size());
  std::int64_t stream = 0;
  std::int64_t low = std::numeric_limits<std::int64_t>::max();
  std::int64_t high = std::numeric_limits<std::int64_t>::min();
  bool monotone = true;
  for (std::size_t i = 0; i < node.blocks.size(); ++i) {
    const FlatBlock& block = node.blocks[i];
    const FlatNode& child = *block.child;
    stream = checked_add(stream, checked_multiply(block.count, child.size));
    node.block_stream_end[i] = stream;
    const std::int64_t reach = checked_multiply(block.count - 1, block.stride);
    const std::int64_t block_low =
        block.displacement + child.true_lb + std::min<std::int64_t>(0, reach);
    const std::int64_t block_high =
        block.displacement + child.true_ub + std::max<std::int64_t>(0, reach);
    monotone = monotone && child.monotone && (block.count == 1 || block.stride >= span(child));
    if (i > 0) {
      const FlatBlock& previous = node.blocks[i - 1];
      const std::int64_t previous_end =
          previous.displacement + previous.child->true_ub + (previous.count - 1) * previous.stride;
      monotone = monotone && block.displacement + child.true_lb >= previous_end;
    }
    low = std::min(low, block_low);
    high = std::max(high, block_high);
  }
  const std::int64_t reach = checked_multiply(node.repeat - 1, node.repeat_stride);
  node.size = checked_multiply(stream, node.repeat);
  if (node.size == 0) {
    node.true_lb = node.true_ub = 0;
    node.monotone = true;
    return;
  }
  node.true_lb = low + std::min<std::int64_t>(0, reach);
  node.true_ub = high + std::max<std::int64_t>(0, reach);
  node.monotone = monotone && (node.repeat == 1 || node.repeat_stride >= high - low);
}

}  // namespace

FlatNodePtr make_run(std::int64_t bytes) {
  auto node = std::make_shared<FlatNode>();
  node->size = bytes;
  node->true_lb = 0;
  node->true_ub = bytes;
  return node;
}

FlatNodePtr make_blocks(std::vector<FlatBlock> blocks, std::int64_t repeat,
                        std::int64_t repeat_stride) {
  if (repeat < 0) bad_type("negative repeat count");
  for (const FlatBlock& block : blocks) {
    if (block.count < 0) bad_type("negative block length");
  }
  if (repeat == 0) blocks.clear();
  simplify_blocks(blocks);
  if (blocks.empty()) return make_run(0);
  fold_progression(blocks, repeat, repeat_stride);
  // One block of one copy, repeated: the repeat becomes the block's count,
  // which lets a run child merge into one longer run.
  if (repeat > 1 && blocks.size() == 1 && blocks[0].count == 1) {
    blocks[0].count = repeat;
    blocks[0].stride = repeat_stride;
    repeat = 1;
    repeat_stride = 0;
    simplify_blocks(blocks);
  }
  if (repeat == 1 && blocks.size() == 1 && blocks[0].count == 1 && blocks[0].displacement == 0) {
    return blocks[0].child;
  }
  auto node = std::make_shared<FlatNode>();
  node->repeat = repeat;
  node->repeat_stride = repeat == 1 ? 0 : repeat_stride;
  node->blocks = std::move(blocks);
  compute_summary(*node);
  return node;
}

std::int64_t bytes_before(const FlatNode& node, std::int64_t address) {
  if (node.size == 0 || address <= node.true_lb) return 0;
  if (address >= node.true_ub) return node.size;
  if (node.is_run()) return address;
  std::int64_t copy = 0;
  if (node.repeat > 1)
    copy = std::min(node.repeat - 1, (address - node.true_lb) / node.repeat_stride);
  const std::int64_t in_copy = address - copy * node.repeat_stride;
  std::int64_t bytes = copy * node.bytes_per_repeat();
  // Blocks are in address order (the node is monotone): find the last one
  // starting at or before the address.
  auto after = std::upper_bound(node.blocks.begin(), node.blocks.end(), in_copy,
                                [](std::int64_t a, const FlatBlock& block) {
                                  return a < block.displacement + block.child->true_lb;
                                });
  if (after == node.blocks.begin()) return bytes;
  const std::size_t index = static_cast<std::size_t>(after - node.blocks.begin()) - 1;
  if (index > 0) bytes += node.block_stream_end[index - 1];
  const FlatBlock& block = node.blocks[index];
  const std::int64_t in_block = in_copy - block.displacement;
  std::int64_t element = 0;
  if (block.count > 1) {
    element = std::clamp<std::int64_t>((in_block - block.child->true_lb) / block.stride, 0,
                                       block.count - 1);
  }
  return bytes + element * block.child->size +
         bytes_before(*block.child, in_block - element * block.stride);
}

FlatType::FlatType() : root_(make_run(0)) {}

FlatType::FlatType(FlatNodePtr root, std::int64_t lb, std::int64_t extent)
    : root_(std::move(root)), lb_(lb), extent_(extent) {}

bool FlatType::is_single_run() const {
  return root_->monotone && true_extent() == root_->size;
}

bool FlatType::is_contiguous() const { return is_single_run() && root_->size == extent_; }

bool FlatType::tiles_monotonically() const {
  if (root_->size == 0) return true;
  return root_->monotone && extent_ >= root_->true_ub - root_->true_lb;
}

namespace {

// Children are shared (every block of an hindexed type points at the same
// run), so each distinct node is counted once: that is what memory holds.
void count_distinct(const FlatNode& node, std::unordered_set<const FlatNode*>& seen,
                    std::size_t& blocks) {
  if (!seen.insert(&node).second) return;
  blocks += node.blocks.size();
  for (const FlatBlock& block : node.blocks) count_distinct(*block.child, seen, blocks);
}

}  // namespace

std::int64_t runs_of(const FlatNode& node,
                     std::unordered_map<const FlatNode*, std::int64_t>& memo) {
  if (node.is_run()) return node.size > 0 ? 1 : 0;
  if (const auto found = memo.find(&node); found != memo.end()) return found->second;
  std::int64_t runs = 0;
  for (const FlatBlock& block : node.blocks) runs += block.count * runs_of(*block.child, memo);
  runs *= node.repeat;
  memo.emplace(&node, runs);
  return runs;
}

std::int64_t FlatType::run_count() const {
  std::unordered_map<const FlatNode*, std::int64_t> memo;
  return runs_of(*root_, memo);
}

std::size_t FlatType::node_count() const {
  std::unordered_set<const FlatNode*> seen;
  std::size_t blocks = 0;
  count_distinct(*root_, seen, blocks);
  return seen.size();
}

std::size_t FlatType::block_count() const {
  std::unordered_set<const FlatNode*> seen;
  std::size_t blocks = 0;
  count_distinct(*root_, seen, blocks);
  return blocks;
}

namespace {

// Walks a datatype's constructor tree through MPI_Type_get_envelope and
// MPI_Type_get_contents. Handles that get_contents returns are freed when
// the walk ends (not earlier: MPI may hand out a freed handle's number
// again, which would confuse the cache).
class Flattener {
 public:
  Flattener() = default;
  Flattener(const Flattener&) = delete;
  Flattener& operator=(const Flattener&) = delete;
  ~Flattener() {
    for (MPI_Datatype& type : returned_) MPI_Type_free(&type);
  }

  FlatNodePtr node(MPI_Datatype type) {
    auto cached = cache_.find(type);
    if (cached != cache_.end()) return cached->second;
    FlatNodePtr result = build(type);
    cache_.emplace(type, result);
    return result;
  }

  static void bounds(MPI_Datatype type, std::int64_t& lb, std::int64_t& extent) {
    MPI_Count mpi_lb = 0, mpi_extent = 0;
    check_mpi(MPI_Type_get_extent_x(type, &mpi_lb, &mpi_extent), "MPI_Type_get_extent_x");
    lb = mpi_lb;
    extent = mpi_extent;
  }

 private:
  static std::int64_t extent_of(MPI_Datatype type) {
    std::int64_t lb = 0, extent = 0;
    bounds(type, lb, extent);
    return extent;
  }

  FlatNodePtr build(MPI_Datatype type) {
    int integer_count = 0, address_count = 0, type_count = 0, combiner = 0;
    check_mpi(MPI_Type_get_envelope(type, &integer_count, &address_count, &type_count, &combiner),
              "MPI_Type_get_envelope");
    if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
        combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER) {
      return named(type);
    }
    std::vector<int> ints(integer_count);
    std::vector<MPI_Aint> addresses(address_count);
    std::vector<MPI_Datatype> types(type_count);
    check_mpi(MPI_Type_get_contents(type, integer_count, address_count, type_count, ints.data(),
                                    addresses.data(), types.data()),
              "MPI_Type_get_contents");
    for (MPI_Datatype returned : types) {
      int ni = 0, na = 0, nt = 0, inner_combiner = 0;
      check_mpi(MPI_Type_get_envelope(returned, &ni, &na, &nt, &inner_combiner),
                "MPI_Type_get_envelope");
      if (inner_combiner != MPI_COMBINER_NAMED) returned_.push_back(returned);
    }
    switch (combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:
        return node(types[0]);
      case MPI_COMBINER_CONTIGUOUS:
        return make_blocks({{0, ints[0], extent_of(types[0]), node(types[0])}});
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_HVECTOR:
      case MPI_COMBINER_HVECTOR_INTEGER: {
        const std::int64_t element = extent_of(types[0]);
        const std::int64_t stride =
            combiner == MPI_COMBINER_VECTOR
                ? checked_multiply(ints[2], element)
                : static_cast<std::int64_t>(combiner == MPI_COMBINER_HVECTOR ? addresses[0]
                                                                             : ints[2]);
        if (ints[0] < 0) bad_type("vector with a negative count");
        return make_blocks({{0, ints[1], element, node(types[0])}}, ints[0], stride);
      }
      case MPI_COMBINER_INDEXED:
      case MPI_COMBINER_HINDEXED:
      case MPI_COMBINER_HINDEXED_INTEGER: {
        const int count = ints[0];
        const std::int64_t element = extent_of(types[0]);
        const FlatNodePtr child = node(types[0]);
        std::vector<FlatBlock> blocks(count);
        for (int i = 0; i < count; ++i) {
          std::int64_t displacement = 0;
          if (combiner == MPI_COMBINER_INDEXED) {
            displacement = checked_multiply(ints[1 + count + i], element);
          } else if (combiner == MPI_COMBINER_HINDEXED) {
            displacement = addresses[i];
          } else {
            displacement = ints[1 + count + i];
          }
          blocks[i] = {displacement, ints[1 + i], element, child};
        }
        return make_blocks(std::move(blocks));
      }
      case MPI_COMBINER_INDEXED_BLOCK:
      case MPI_COMBINER_HINDEXED_BLOCK: {
        const int count = ints[0];
        const std::int64_t element = extent_of(types[0]);
        const FlatNodePtr child = node(types[0]);
        std::vector<FlatBlock> blocks(count);
        for (int i = 0; i < count; ++i) {
          const std::int64_t displacement = combiner == MPI_COMBINER_INDEXED_BLOCK
                                                ? checked_multiply(ints[2 + i], element)
                                                : static_cast<std::int64_t>(addresses[i]);
          blocks[i] = {displacement, ints[1], element, child};
        }
        return make_blocks(std::move(blocks));
      }
      case MPI_COMBINER_STRUCT:
      case MPI_COMBINER_STRUCT_INTEGER: {
        const int count = ints[0];
        std::vector<FlatBlock> blocks(count);
        for (int i = 0; i < count; ++i) {
          const std::int64_t displacement = combiner == MPI_COMBINER_STRUCT
                                                ? static_cast<std::int64_t>(addresses[i])
                                                : ints[1 + count + i];
          blocks[i] = {displacement, ints[1 + i], extent_of(types[i]), node(types[i])};
        }
        return make_blocks(std::move(blocks));
      }
      case MPI_COMBINER_SUBARRAY:
        return subarray(ints, types[0]);
      case MPI_COMBINER_DARRAY:
        return darray(ints, types[0]);
      default:
        bad_type("unsupported combiner " + std::to_string(combiner));
    }
  }

  // Named types are contiguous, except the value-index pairs of
  // MPI_MINLOC/MAXLOC (MPI_DOUBLE_INT, ...): a value, then an int at the
  // next int-aligned offset, as the C struct {T value; int index;} lays
  // them out.
  static FlatNodePtr named(MPI_Datatype type) {
    MPI_Count size = 0;
    check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
    const std::int64_t extent = extent_of(type);
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

  // A subarray: for each dimension, from the slowest varying to the
  // fastest, `subsizes[d]` copies of the next dimension starting at
  // starts[d], spaced by the bytes of one row of that dimension.
  FlatNodePtr subarray(const std::vector<int>& ints, MPI_Datatype old_type) {
    const int dimensions = ints[0];
    const int* sizes = &ints[1];
    const int* subsizes = &ints[1 + dimensions];
    const int* starts = &ints[1 + 2 * dimensions];
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
  FlatNodePtr darray(const std::vector<int>& ints, MPI_Datatype old_type) {
    const int rank = ints[1];
    const int dimensions = ints[2];
    const int* global_sizes = &ints[3];
    const int* distributions = &ints[3 + dimensions];
    const int* arguments = &ints[3 + 2 * dimensions];
    const int* process_sizes = &ints[3 + 3 * dimensions];
    const bool c_order = ints[3 + 4 * dimensions] == MPI_ORDER_C;
    std::vector<int> coordinates(dimensions);
    for (int d = dimensions - 1, remaining = rank; d >= 0; --d) {
      coordinates[d] = remaining % process_sizes[d];
      remaining /= process_sizes[d];
    }
    FlatNodePtr inner = node(old_type);
    std::int64_t row_bytes = extent_of(old_type);
    for (int step = 0; step < dimensions; ++step) {
      const int d = c_order ? dimensions - 1 - step : step;
      inner = darray_dimension(global_sizes[d], distributions[d], arguments[d], process_sizes[d],
                               coordinates[d], row_bytes, inner);
      row_bytes = checked_multiply(row_bytes, global_sizes[d]);
    }
    return inner;
  }

  static FlatNodePtr darray_dimension(std::int64_t global_size, int distribution, int argument,
                                      std::int64_t processes, std::int64_t coordinate,
                                      std::int64_t row_bytes, const FlatNodePtr& inner) {
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

  std::unordered_map<MPI_Datatype, FlatNodePtr> cache_;
  std::vector<MPI_Datatype> returned_;
};

}  // namespace

FlatType flatten(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) bad_type("MPI_DATATYPE_NULL");
  Flattener flattener;
  std::int64_t lb = 0, extent = 0;
  Flattener::bounds(type, lb, extent);
  return FlatType(flattener.node(type), lb, extent);
}

}  // namespace flowio::core
