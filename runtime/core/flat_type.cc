#include "runtime/core/flat_type.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "flowio/error.h"
#include "runtime/core/checked_arithmetic.h"

namespace flowio::core {
namespace {

bool same_child(const FlatNodePtr& a, const FlatNodePtr& b) {
  return a == b || (a->is_run() && b->is_run() && a->size == b->size);
}

// Checked: a type (or a peer's description of one) may reach from near
// the lowest 64-bit address to near the highest, past what a difference
// holds: such a type is invalid.
std::int64_t span(const FlatNode& node) { return checked_subtract(node.true_ub, node.true_lb); }

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
      std::int64_t last_end = 0;  // where the last run ends, when it ends in 64 bits
      if (last != nullptr && last->count == 1 && last->child->is_run() &&
          !__builtin_add_overflow(last->displacement, last->child->size, &last_end) &&
          last_end == block.displacement) {
        last->child = make_run(checked_add(last->child->size, bytes));
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
  // Steps that do not fit in 64 bits make no progression.
  std::int64_t step = 0;
  if (__builtin_sub_overflow(blocks[1].displacement, first.displacement, &step)) return false;
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    const FlatBlock& block = blocks[i];
    std::int64_t this_step = 0;
    if (block.count != first.count || block.stride != first.stride ||
        !same_child(block.child, first.child) ||
        __builtin_sub_overflow(block.displacement, blocks[i - 1].displacement, &this_step) ||
        this_step != step) {
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
  bool ordered = true;
  std::int64_t first_start = 0;  // of one repeat, once ordered
  std::int64_t last_start = 0;
  for (std::size_t i = 0; i < node.blocks.size(); ++i) {
    const FlatBlock& block = node.blocks[i];
    const FlatNode& child = *block.child;
    stream = checked_add(stream, checked_multiply(block.count, child.size));
    node.block_stream_end[i] = stream;
    const std::int64_t reach = checked_multiply(block.count - 1, block.stride);
    // Checked: a type (or a peer's description of one) can place its
    // blocks anywhere in 64 bits; a sum past them is an invalid type.
    const std::int64_t block_low = checked_add(checked_add(block.displacement, child.true_lb),
                                               std::min<std::int64_t>(0, reach));
    const std::int64_t block_high = checked_add(checked_add(block.displacement, child.true_ub),
                                                std::max<std::int64_t>(0, reach));
    monotone = monotone && child.monotone && (block.count == 1 || block.stride >= span(child));
    // Copy k + 1 starts no lower than where copy k's last piece starts.
    ordered =
        ordered && child.ordered &&
        (block.count == 1 || block.stride >= checked_subtract(child.last_start, child.true_lb));
    const std::int64_t block_first_start = checked_add(block.displacement, child.true_lb);
    if (i > 0) {
      const FlatBlock& previous = node.blocks[i - 1];
      const std::int64_t previous_end =
          checked_add(checked_add(previous.displacement, previous.child->true_ub),
                      checked_multiply(previous.count - 1, previous.stride));
      monotone = monotone && block_first_start >= previous_end;
      ordered = ordered && block_first_start >= last_start;
    } else {
      first_start = block_first_start;
    }
    last_start = checked_add(checked_add(block.displacement, reach), child.last_start);
    low = std::min(low, block_low);
    high = std::max(high, block_high);
  }
  const std::int64_t reach = checked_multiply(node.repeat - 1, node.repeat_stride);
  node.size = checked_multiply(stream, node.repeat);
  if (node.size == 0) {
    node.true_lb = node.true_ub = 0;
    node.monotone = node.ordered = true;
    node.last_start = 0;
    return;
  }
  node.true_lb = checked_add(low, std::min<std::int64_t>(0, reach));
  node.true_ub = checked_add(high, std::max<std::int64_t>(0, reach));
  // Its extent must fit in 64 bits, so that the difference of any two
  // addresses within it does (bytes_before, FlatType's checks).
  span(node);
  node.monotone =
      monotone && (node.repeat == 1 || node.repeat_stride >= checked_subtract(high, low));
  node.ordered = ordered && (node.repeat == 1 ||
                             node.repeat_stride >= checked_subtract(last_start, first_start));
  node.last_start = checked_add(last_start, reach);
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

bool FlatType::is_single_run() const { return root_->monotone && true_extent() == root_->size; }

bool FlatType::is_contiguous() const { return is_single_run() && root_->size == extent_; }

bool FlatType::tiles_monotonically() const {
  if (root_->size == 0) return true;
  return root_->monotone && extent_ >= root_->true_ub - root_->true_lb;
}

bool FlatType::tiles_in_order() const {
  if (root_->size == 0) return true;
  return root_->ordered && extent_ >= root_->last_start - root_->true_lb;
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

}  // namespace flowio::core
