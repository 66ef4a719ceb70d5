#include "runtime/core/type_arguments.h"

#include <algorithm>

#include "flowio/error.h"

namespace flowio::core {
namespace {

bool named_combiner(int combiner) {
  return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
         combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

std::vector<std::int64_t> widen(const std::vector<int>& values, std::size_t from, std::size_t n) {
  return {values.begin() + static_cast<std::ptrdiff_t>(from),
          values.begin() + static_cast<std::ptrdiff_t>(from + n)};
}

void append(std::vector<std::int64_t>& to, const std::vector<MPI_Count>& values, std::size_t from,
            std::size_t n) {
  to.insert(to.end(), values.begin() + static_cast<std::ptrdiff_t>(from),
            values.begin() + static_cast<std::ptrdiff_t>(from + n));
}

void append(std::vector<std::int64_t>& to, const std::vector<int>& values, std::size_t from,
            std::size_t n) {
  to.insert(to.end(), values.begin() + static_cast<std::ptrdiff_t>(from),
            values.begin() + static_cast<std::ptrdiff_t>(from + n));
}

// Rearranges the arguments of a type made by a large-count constructor
// into the classic layout. The large-count layout (MPI 4.1, Table 5.2's
// MPI_Count column) keeps in `ints` only what stays an int (dimensions,
// order, distributions) and lists every count and displacement in
// `counts`, in the order the constructor takes them.
void from_large_count(TypeArguments& out, const std::vector<int>& ints,
                      const std::vector<MPI_Count>& counts) {
  auto count_at = [&](std::size_t i) { return static_cast<std::int64_t>(counts.at(i)); };
  switch (out.combiner) {
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
      append(out.integers, counts, 0, counts.size());
      return;
    case MPI_COMBINER_HVECTOR:  // count, blocklength | stride
      out.integers = {count_at(0), count_at(1)};
      out.addresses = {count_at(2)};
      return;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
      append(out.integers, counts, 0, counts.size());
      return;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT: {  // count, blocklengths | displacements
      const auto n = static_cast<std::size_t>(count_at(0));
      append(out.integers, counts, 0, 1 + n);
      append(out.addresses, counts, 1 + n, n);
      return;
    }
    case MPI_COMBINER_HINDEXED_BLOCK: {  // count, blocklength | displacements
      const auto n = static_cast<std::size_t>(count_at(0));
      append(out.integers, counts, 0, 2);
      append(out.addresses, counts, 2, n);
      return;
    }
    case MPI_COMBINER_SUBARRAY: {  // ints: ndims, order; counts: sizes, subsizes, starts
      const auto dimensions = static_cast<std::size_t>(ints.at(0));
      out.integers = {ints.at(0)};
      append(out.integers, counts, 0, 3 * dimensions);
      out.integers.push_back(ints.at(1));
      return;
    }
    case MPI_COMBINER_DARRAY: {
      // ints: size, rank, ndims, distribs, dargs, psizes, order; counts: gsizes.
      const auto dimensions = static_cast<std::size_t>(ints.at(2));
      append(out.integers, ints, 0, 3);
      append(out.integers, counts, 0, dimensions);
      append(out.integers, ints, 3, 3 * dimensions + 1);
      return;
    }
    case MPI_COMBINER_RESIZED:  // lb, extent
      append(out.addresses, counts, 0, 2);
      return;
    default:
      out.integers = widen(ints, 0, ints.size());
      append(out.integers, counts, 0, counts.size());
      return;
  }
}

}  // namespace

bool is_named(MPI_Datatype type) {
  MPI_Count integers = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  check_mpi(MPI_Type_get_envelope_c(type, &integers, &addresses, &counts, &types, &combiner),
            "MPI_Type_get_envelope_c");
  return named_combiner(combiner);
}

TypeArguments read_type_arguments(MPI_Datatype type) {
  TypeArguments out;
  MPI_Count integer_count = 0, address_count = 0, count_count = 0, type_count = 0;
  check_mpi(MPI_Type_get_envelope_c(type, &integer_count, &address_count, &count_count, &type_count,
                                    &out.combiner),
            "MPI_Type_get_envelope_c");
  if (named_combiner(out.combiner)) return out;
  std::vector<int> ints(static_cast<std::size_t>(integer_count));
  std::vector<MPI_Aint> addresses(static_cast<std::size_t>(address_count));
  std::vector<MPI_Count> counts(static_cast<std::size_t>(count_count));
  out.types.resize(static_cast<std::size_t>(type_count));
  check_mpi(MPI_Type_get_contents_c(type, integer_count, address_count, count_count, type_count,
                                    ints.data(), addresses.data(), counts.data(), out.types.data()),
            "MPI_Type_get_contents_c");
  for (MPI_Datatype returned : out.types) {
    if (!is_named(returned)) out.to_free.push_back(returned);
  }
  if (counts.empty()) {
    out.integers = widen(ints, 0, ints.size());
    out.addresses.assign(addresses.begin(), addresses.end());
  } else {
    from_large_count(out, ints, counts);
  }
  return out;
}

bool split_pair_type(MPI_Datatype type, MPI_Datatype& value, MPI_Datatype& index) {
  struct Pair {
    MPI_Datatype pair, value, index;
  };
  static const Pair pairs[] = {
      {MPI_FLOAT_INT, MPI_FLOAT, MPI_INT},
      {MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT},
      {MPI_LONG_INT, MPI_LONG, MPI_INT},
      {MPI_2INT, MPI_INT, MPI_INT},
      {MPI_SHORT_INT, MPI_SHORT, MPI_INT},
      {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT},
      {MPI_2REAL, MPI_REAL, MPI_REAL},
      {MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION},
      {MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER},
  };
  const auto found = std::find_if(std::begin(pairs), std::end(pairs),
                                  [type](const Pair& p) { return p.pair == type; });
  if (found == std::end(pairs)) return false;
  value = found->value;
  index = found->index;
  return true;
}

}  // namespace flowio::core
