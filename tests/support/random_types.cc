#include "tests/support/random_types.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace flowio::testing {
namespace {

struct Bounds {
  std::int64_t lb, extent, true_lb, true_extent, size;
};

Bounds bounds_of(MPI_Datatype type) {
  MPI_Count lb, extent, true_lb, true_extent, size;
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  MPI_Type_size_x(type, &size);
  return {lb, extent, true_lb, true_extent, size};
}

constexpr int kTopDepth = 4;

class Generator {
 public:
  Generator(std::mt19937_64& rng, TypeShape shape, Constructs constructs)
      : rng_(rng), shape_(shape), constructs_(constructs) {}

  MPI_Datatype generate(int depth, std::int64_t budget, std::string& text) {
    if (depth == 0 || budget < 16 || pick(0, 5) == 0) return named(text);
    const int kind = pick(0, 11);
    switch (kind) {
      case 0:
        return contiguous(depth, budget, text);
      case 1:
        return vector(depth, budget, text, false);
      case 2:
        return vector(depth, budget, text, true);
      case 3:
        return indexed(depth, budget, text, 0);
      case 4:
        return indexed(depth, budget, text, 1);
      case 5:
        return indexed(depth, budget, text, 2);
      case 6:
        return indexed(depth, budget, text, 3);
      case 7:
        return structure(depth, budget, text);
      case 8:
        return subarray(depth, budget, text);
      case 9:
        // ROMIO places darrays nested in other constructors differently
        // from their typemap (seen with MPICH 4.0.2); at the top it agrees.
        if (romio_safe() && depth != kTopDepth) return subarray(depth, budget, text);
        return darray(depth, budget, text);
      case 10:
        return resized(depth, budget, text);
      default:
        return dup(depth, budget, text);
    }
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool any_order() const { return shape_ == TypeShape::any_order; }
  bool romio_safe() const { return constructs_ == Constructs::romio_file_view_safe; }

  static void release(MPI_Datatype& type) {
    int ni, na, nt, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
    if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&type);
  }

  MPI_Datatype named(std::string& text) {
    static const MPI_Datatype kinds[] = {
        MPI_BYTE,       MPI_CHAR,      MPI_SHORT,           MPI_INT, MPI_DOUBLE, MPI_FLOAT,
        MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2INT};
    static const char* names[] = {
        "BYTE",       "CHAR",      "SHORT",           "INT", "DOUBLE", "FLOAT",
        "DOUBLE_INT", "SHORT_INT", "LONG_DOUBLE_INT", "2INT"};
    int index = pick(0, 9);
    if (romio_safe() && (index == 6 || index == 7 || index == 8)) index = 4;
    text = names[index];
    return kinds[index];
  }

  MPI_Datatype child(int depth, std::int64_t budget, std::string& text, Bounds& bounds) {
    MPI_Datatype type = generate(depth - 1, budget, text);
    bounds = bounds_of(type);
    return type;
  }

  // Copies of a child laid side by side never overlap when the child's
  // extent covers its data; a child that fails that (rare, from resized)
  // is replaced by a named type.
  MPI_Datatype tileable_child(int depth, std::int64_t budget, std::string& text, Bounds& bounds) {
    MPI_Datatype type = child(depth, budget, text, bounds);
    if (bounds.extent < bounds.true_extent || bounds.size == 0) {
      release(type);
      type = named(text);
      bounds = bounds_of(type);
    }
    return type;
  }

  std::int64_t copies(std::int64_t budget, const Bounds& bounds, int most) {
    const std::int64_t affordable =
        std::max<std::int64_t>(1, budget / std::max<std::int64_t>(1, bounds.size));
    const bool empty = !romio_safe() && pick(0, 9) == 0;
    return empty ? 0 : std::min<std::int64_t>(pick(1, most), affordable);
  }

  MPI_Datatype contiguous(int depth, std::int64_t budget, std::string& text) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = tileable_child(depth, budget / 2, inner, bounds);
    const int count = static_cast<int>(copies(budget, bounds, 5));
    MPI_Datatype type;
    MPI_Type_contiguous(count, old, &type);
    release(old);
    text = "contiguous(" + std::to_string(count) + "," + inner + ")";
    return type;
  }

  MPI_Datatype vector(int depth, std::int64_t budget, std::string& text, bool in_bytes) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = tileable_child(depth, budget / 4, inner, bounds);
    const int count = static_cast<int>(copies(budget / 2, bounds, 4));
    const int blocklength = static_cast<int>(copies(budget / 2 / std::max(1, count), bounds, 3));
    int stride = blocklength + pick(0, 3);
    if (any_order() && pick(0, 2) == 0) stride = -stride;
    MPI_Datatype type;
    if (in_bytes) {
      const MPI_Aint byte_stride =
          static_cast<MPI_Aint>(stride) * bounds.extent + (stride >= 0 ? 1 : -1) * pick(0, 5);
      MPI_Type_create_hvector(count, blocklength, byte_stride, old, &type);
      text = "hvector(" + std::to_string(count) + "," + std::to_string(blocklength) + "," +
             std::to_string(byte_stride) + "," + inner + ")";
    } else {
      MPI_Type_vector(count, blocklength, stride, old, &type);
      text = "vector(" + std::to_string(count) + "," + std::to_string(blocklength) + "," +
             std::to_string(stride) + "," + inner + ")";
    }
    release(old);
    return type;
  }

  // variant: 0 indexed, 1 hindexed, 2 indexed_block, 3 hindexed_block.
  MPI_Datatype indexed(int depth, std::int64_t budget, std::string& text, int variant) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = tileable_child(depth, budget / 4, inner, bounds);
    const int count = pick(romio_safe() ? 1 : 0, 5);
    const bool same_length = variant >= 2;
    const int shared_length = static_cast<int>(copies(budget / 2 / std::max(1, count), bounds, 3));
    std::vector<int> lengths(count);
    std::vector<std::int64_t> starts(count);  // in elements (indexed) or bytes
    std::int64_t cursor = pick(0, 3);
    const bool bytes = variant == 1 || variant == 3;
    for (int i = 0; i < count; ++i) {
      lengths[i] = same_length
                       ? shared_length
                       : static_cast<int>(copies(budget / 2 / std::max(1, count), bounds, 3));
      if (bytes) {
        starts[i] = cursor;
        cursor += lengths[i] * bounds.extent + pick(0, 5);
      } else {
        starts[i] = cursor;
        cursor += lengths[i] + pick(0, 2);
      }
    }
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    if (any_order()) std::shuffle(order.begin(), order.end(), rng_);
    std::vector<int> block_lengths, int_displacements;
    std::vector<MPI_Aint> byte_displacements;
    const std::int64_t shift = any_order() ? -pick(0, 8) : 0;
    for (int i : order) {
      block_lengths.push_back(lengths[i]);
      int_displacements.push_back(static_cast<int>(starts[i] + shift));
      byte_displacements.push_back(static_cast<MPI_Aint>(starts[i] + shift * bounds.extent));
    }
    MPI_Datatype type;
    static const char* names[] = {"indexed", "hindexed", "indexed_block", "hindexed_block"};
    text = std::string(names[variant]) + "([";
    for (int i = 0; i < count; ++i) {
      text += "(" + std::to_string(block_lengths[i]) + "@" +
              std::to_string(bytes ? byte_displacements[i] : int_displacements[i]) + ")";
    }
    text += "]," + inner + ")";
    switch (variant) {
      case 0:
        MPI_Type_indexed(count, block_lengths.data(), int_displacements.data(), old, &type);
        break;
      case 1:
        MPI_Type_create_hindexed(count, block_lengths.data(), byte_displacements.data(), old,
                                 &type);
        break;
      case 2:
        MPI_Type_create_indexed_block(count, shared_length, int_displacements.data(), old, &type);
        break;
      default:
        MPI_Type_create_hindexed_block(count, shared_length, byte_displacements.data(), old, &type);
        break;
    }
    release(old);
    return type;
  }

  MPI_Datatype structure(int depth, std::int64_t budget, std::string& text) {
    const int count = pick(1, 4);
    std::vector<MPI_Datatype> types(count);
    std::vector<int> lengths(count);
    std::vector<MPI_Aint> displacements(count);
    std::int64_t next_free = pick(0, 4);
    text = "struct([";
    for (int i = 0; i < count; ++i) {
      Bounds bounds;
      std::string inner;
      types[i] = tileable_child(depth, budget / (2 * count), inner, bounds);
      lengths[i] = static_cast<int>(copies(budget / (2 * count), bounds, 3));
      // Place the block so that its data starts at or after next_free.
      displacements[i] = next_free - bounds.true_lb + pick(0, 3);
      next_free = displacements[i] + bounds.true_lb +
                  (lengths[i] > 0 ? (lengths[i] - 1) * bounds.extent + bounds.true_extent : 0);
      text += "(" + std::to_string(lengths[i]) + "@" + std::to_string(displacements[i]) + ":" +
              inner + ")";
    }
    text += "])";
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    if (any_order()) std::shuffle(order.begin(), order.end(), rng_);
    std::vector<MPI_Datatype> ordered_types;
    std::vector<int> ordered_lengths;
    std::vector<MPI_Aint> ordered_displacements;
    for (int i : order) {
      ordered_types.push_back(types[i]);
      ordered_lengths.push_back(lengths[i]);
      ordered_displacements.push_back(displacements[i]);
    }
    MPI_Datatype type;
    MPI_Type_create_struct(count, ordered_lengths.data(), ordered_displacements.data(),
                           ordered_types.data(), &type);
    for (MPI_Datatype& t : types) release(t);
    return type;
  }

  MPI_Datatype subarray(int depth, std::int64_t budget, std::string& text) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = tileable_child(depth, budget / 8, inner, bounds);
    const int dimensions = pick(1, 3);
    std::vector<int> sizes(dimensions), subsizes(dimensions), starts(dimensions);
    text = "subarray(";
    for (int d = 0; d < dimensions; ++d) {
      sizes[d] = pick(1, 5);
      subsizes[d] = pick(1, sizes[d]);
      starts[d] = pick(0, sizes[d] - subsizes[d]);
      text += std::to_string(sizes[d]) + "/" + std::to_string(subsizes[d]) + "@" +
              std::to_string(starts[d]) + " ";
    }
    const int order = pick(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    text += (order == MPI_ORDER_C ? "C," : "F,") + inner + ")";
    MPI_Datatype type;
    MPI_Type_create_subarray(dimensions, sizes.data(), subsizes.data(), starts.data(), order, old,
                             &type);
    release(old);
    return type;
  }

  MPI_Datatype darray(int depth, std::int64_t budget, std::string& text) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = tileable_child(depth, budget / 16, inner, bounds);
    const int dimensions = pick(1, 3);
    std::vector<int> global_sizes(dimensions), distributions(dimensions), arguments(dimensions),
        process_sizes(dimensions);
    int processes = 1;
    text = "darray(";
    for (int d = 0; d < dimensions; ++d) {
      global_sizes[d] = pick(1, 7);
      const int kind = pick(0, 2);
      process_sizes[d] = kind == 2 ? 1 : pick(1, 3);
      processes *= process_sizes[d];
      if (kind == 0) {
        distributions[d] = MPI_DISTRIBUTE_BLOCK;
        const int minimum = (global_sizes[d] + process_sizes[d] - 1) / process_sizes[d];
        arguments[d] = pick(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG : minimum + pick(0, 2);
      } else if (kind == 1) {
        distributions[d] = MPI_DISTRIBUTE_CYCLIC;
        arguments[d] = pick(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG : pick(1, 3);
      } else {
        distributions[d] = MPI_DISTRIBUTE_NONE;
        arguments[d] = MPI_DISTRIBUTE_DFLT_DARG;
      }
      text += std::to_string(global_sizes[d]) + ":" + std::to_string(distributions[d]) + "/" +
              std::to_string(arguments[d]) + "/" + std::to_string(process_sizes[d]) + " ";
    }
    const int rank = pick(0, processes - 1);
    const int order = pick(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    text += "rank " + std::to_string(rank) + "/" + std::to_string(processes) +
            (order == MPI_ORDER_C ? " C," : " F,") + inner + ")";
    MPI_Datatype type;
    MPI_Type_create_darray(processes, rank, dimensions, global_sizes.data(), distributions.data(),
                           arguments.data(), process_sizes.data(), order, old, &type);
    release(old);
    return type;
  }

  MPI_Datatype resized(int depth, std::int64_t budget, std::string& text) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = child(depth, budget, inner, bounds);
    // Bounds that still cover the data keep copies from overlapping.
    const std::int64_t lb =
        romio_safe() ? std::min<std::int64_t>(0, bounds.true_lb) : bounds.true_lb - pick(0, 4);
    const std::int64_t extent = bounds.true_lb + bounds.true_extent + pick(0, 6) - lb;
    MPI_Datatype type;
    MPI_Type_create_resized(old, lb, extent, &type);
    release(old);
    text = "resized(" + std::to_string(lb) + "," + std::to_string(extent) + "," + inner + ")";
    return type;
  }

  MPI_Datatype dup(int depth, std::int64_t budget, std::string& text) {
    Bounds bounds;
    std::string inner;
    MPI_Datatype old = child(depth, budget, inner, bounds);
    MPI_Datatype type;
    MPI_Type_dup(old, &type);
    release(old);
    text = "dup(" + inner + ")";
    return type;
  }

  std::mt19937_64& rng_;
  TypeShape shape_;
  Constructs constructs_;
};

}  // namespace

MPI_Datatype random_datatype(std::mt19937_64& rng, TypeShape shape, std::int64_t max_bytes,
                             std::string* description, Constructs constructs) {
  Generator generator(rng, shape, constructs);
  std::string text;
  MPI_Datatype type = generator.generate(kTopDepth, max_bytes, text);
  int ni, na, nt, combiner;
  MPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    MPI_Datatype copy;
    MPI_Type_dup(type, &copy);
    type = copy;
  }
  MPI_Type_commit(&type);
  if (description != nullptr) *description = text;
  return type;
}

}  // namespace flowio::testing
