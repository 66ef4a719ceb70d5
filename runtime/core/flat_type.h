// FlatType: an MPI datatype flattened into a compact tree that keeps its
// repetition. A vector of 10^6 blocks is one node with a repeat count, not
// 10^6 (offset, length) pairs; only explicitly enumerated lists (indexed,
// struct) cost memory in proportion to their length, and even those fold
// into a repeat when their displacements form an arithmetic progression.
//
// The pieces of a type are the contiguous byte runs of its typemap, in
// typemap order (the order MPI_Pack visits them). Addresses are relative to
// the origin of the type (the buffer pointer, or the view displacement).
//
// FlatType needs MPI initialized (it asks MPI about datatypes) but no
// threads; a FlatType is immutable and may be shared across threads.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace flowio::core {

struct FlatNode;
using FlatNodePtr = std::shared_ptr<const FlatNode>;

// `count` copies of `child`, the k-th at displacement + k * stride.
struct FlatBlock {
  std::int64_t displacement = 0;
  std::int64_t count = 0;
  std::int64_t stride = 0;
  FlatNodePtr child;
};

// A node is either a run (`size` contiguous bytes at address 0: blocks is
// empty) or `repeat` copies, the r-th at r * repeat_stride, of the block
// list. Nodes never hold empty blocks (count 0 or size 0).
struct FlatNode {
  std::int64_t size = 0;     // data bytes in one copy of the node
  std::int64_t true_lb = 0;  // lowest data address (0 when size is 0)
  std::int64_t true_ub = 0;  // one past the highest data address
  // True when the pieces never decrease in address and never overlap, which
  // MPI requires of etypes and filetypes of files opened for writing.
  bool monotone = true;
  // True when the pieces' start addresses never decrease (they may
  // overlap), which MPI requires of every etype and filetype.
  bool ordered = true;
  // Start address of the last piece (0 when size is 0): with true_lb, what
  // tells whether copies of the node placed one after another stay ordered.
  std::int64_t last_start = 0;
  std::int64_t repeat = 1;
  std::int64_t repeat_stride = 0;
  std::vector<FlatBlock> blocks;
  // block_stream_end[i]: data bytes of blocks 0..i within one repeat, for
  // seeking by binary search.
  std::vector<std::int64_t> block_stream_end;

  bool is_run() const { return blocks.empty(); }
  // Data bytes of one repeat (all blocks once).
  std::int64_t bytes_per_repeat() const { return blocks.empty() ? size : block_stream_end.back(); }
};

// Builders used by flatten(); they normalize as they go (drop empty blocks,
// merge adjacent runs, fold arithmetic progressions into repeats), so two
// descriptions of the same typemap usually give the same small tree.
FlatNodePtr make_run(std::int64_t bytes);
FlatNodePtr make_blocks(std::vector<FlatBlock> blocks, std::int64_t repeat = 1,
                        std::int64_t repeat_stride = 0);

// Data bytes of `node` that lie below `address`. Requires node.monotone.
// O(depth * log(blocks)).
std::int64_t bytes_before(const FlatNode& node, std::int64_t address);

// A flattened datatype with its MPI bounds.
class FlatType {
 public:
  // The empty type (size 0, extent 0).
  FlatType();
  FlatType(FlatNodePtr root, std::int64_t lb, std::int64_t extent);

  const FlatNode& root() const { return *root_; }
  const FlatNodePtr& root_ptr() const { return root_; }
  std::int64_t size() const { return root_->size; }
  std::int64_t lb() const { return lb_; }
  std::int64_t extent() const { return extent_; }
  std::int64_t true_lb() const { return root_->true_lb; }
  std::int64_t true_extent() const { return root_->true_ub - root_->true_lb; }
  // True when one copy's data is a single run in order, [true_lb(),
  // true_lb() + size()): no hole, no overlap, never going back.
  bool is_single_run() const;
  // True when `count` copies of the type are one contiguous run in order
  // starting at true_lb(): a single run, and size == extent (the lower
  // bound does not matter, only where the data lies).
  bool is_contiguous() const;
  // True when the pieces of any number of consecutive copies never
  // decrease in address and never overlap.
  bool tiles_monotonically() const;
  // True when the start addresses of the pieces of any number of
  // consecutive copies never decrease (pieces may overlap).
  bool tiles_in_order() const;
  // Distinct nodes of the tree and the blocks they hold (a child shared by
  // several blocks counts once): the memory the flattened form costs, for
  // benchmarks and tests of compactness.
  std::size_t node_count() const;
  std::size_t block_count() const;
  // Contiguous runs in one copy of the type, counted without merging runs
  // that touch: an upper bound on its pieces, in O(distinct nodes).
  std::int64_t run_count() const;

 private:
  FlatNodePtr root_;
  std::int64_t lb_ = 0;
  std::int64_t extent_ = 0;
};

// Flattens any MPI datatype (committed or not): named types, contiguous,
// vector, hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
// subarray (both orders), darray, resized, dup, and any nesting, made by the
// classic constructors or by MPI-4's large-count (_c) ones. Throws
// UsageError(invalid_datatype) for MPI_DATATYPE_NULL or a combiner it does
// not know. Cost: proportional to the number of explicitly listed blocks,
// independent of vector counts.
FlatType flatten(MPI_Datatype type);

// The bytes one element of a predefined datatype takes in a file of some
// data representation (for a value-index pair such as MPI_DOUBLE_INT,
// asked for each of its two parts).
using FileExtentOf = std::function<std::int64_t(MPI_Datatype predefined)>;

// Flattens `type` as its data lies in a file whose data representation
// stores each predefined type in file_extent(type) bytes, packed (MPI 4.1,
// 14.5.1): displacements that constructors count in elements (contiguous,
// vector, indexed, indexed_block, subarray, darray) scale with the file
// extents; byte displacements (hvector, hindexed, struct, resized bounds)
// are taken as they are; bounds are the lowest and highest bounds of the
// typemap, without alignment padding. With file extents equal to the
// native sizes this is flatten(type) except for that padding. Throws as
// flatten() does.
FlatType flatten_in_representation(MPI_Datatype type, const FileExtentOf& file_extent);

}  // namespace flowio::core
