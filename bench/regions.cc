#include "bench/regions.h"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "flowio/error.h"

namespace bench {
namespace {

using flowio::check_mpi;

int narrow(std::int64_t value) {
  if (value < 0 || value > INT32_MAX) throw std::invalid_argument("pattern too large for an int");
  return static_cast<int>(value);
}

// Elements of `element` bytes of `type`; sizes and strides below are in
// bytes, whole multiples of it.
struct Element {
  MPI_Datatype type;
  std::int64_t bytes;
};

Element element_of(const std::string& name) {
  return name == "double" ? Element{MPI_DOUBLE, 8} : Element{MPI_BYTE, 1};
}

int elements(std::int64_t bytes, const Element& element) {
  if (bytes % element.bytes != 0) {
    throw std::invalid_argument("sizes and spacing must be whole numbers of elements");
  }
  return narrow(bytes / element.bytes);
}

Datatype contiguous(std::int64_t bytes, const Element& element) {
  MPI_Datatype type;
  check_mpi(MPI_Type_contiguous(elements(bytes, element), element.type, &type),
            "MPI_Type_contiguous");
  return Datatype(type);
}

// `regions` blocks of `size` bytes, `stride` bytes apart, with extent
// `extent`.
Datatype strided(std::int64_t regions, std::int64_t size, std::int64_t stride, std::int64_t extent,
                 Description description, const Element& element) {
  MPI_Datatype blocks;
  if (description == Description::compact) {
    check_mpi(MPI_Type_vector(narrow(regions), elements(size, element), elements(stride, element),
                              element.type, &blocks),
              "MPI_Type_vector");
  } else {
    const std::vector<int> lengths(static_cast<std::size_t>(regions), elements(size, element));
    std::vector<MPI_Aint> displacements(lengths.size());
    for (std::size_t k = 0; k < displacements.size(); ++k) {
      displacements[k] = static_cast<MPI_Aint>(k) * stride;
    }
    check_mpi(MPI_Type_create_hindexed(narrow(regions), lengths.data(), displacements.data(),
                                       element.type, &blocks),
              "MPI_Type_create_hindexed");
  }
  MPI_Datatype resized;
  check_mpi(MPI_Type_create_resized(blocks, 0, extent, &resized), "MPI_Type_create_resized");
  MPI_Type_free(&blocks);
  return Datatype(resized);
}

}  // namespace

const std::vector<std::string>& region_cases() {
  static const std::vector<std::string> cases = {"c-c", "nc-c", "c-nc", "nc-nc"};
  return cases;
}

RegionPattern region_options(Options& options, const RegionPattern& defaults) {
  RegionPattern pattern = defaults;
  pattern.regions = options.integer("regions", defaults.regions, "regions each rank moves");
  pattern.region_size = options.integer("region_size", defaults.region_size, "bytes of one region");
  pattern.spacing = options.integer(
      "spacing", defaults.spacing,
      "bytes of gap after each region in noncontiguous memory, and after each round of the "
      "ranks' regions in a noncontiguous file");
  pattern.element = options.choice(
      "element", defaults.element, {"byte", "double"},
      "element type of the regions: MPI_BYTE, or MPI_DOUBLE (--region_size and --spacing then "
      "multiples of 8)");
  return pattern;
}

RegionAccess make_region_access(const RegionPattern& pattern, Description description) {
  if (pattern.regions < 1 || pattern.region_size < 1 || pattern.spacing < 0) {
    throw std::invalid_argument("regions and region_size must be positive, spacing not negative");
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const bool memory_contiguous = pattern.name.starts_with("c-");
  const bool file_contiguous = pattern.name.ends_with("-c");
  const std::int64_t bytes = pattern.regions * pattern.region_size;
  const Element element = element_of(pattern.element);

  const std::int64_t memory_stride = pattern.region_size + pattern.spacing;
  Datatype memtype = memory_contiguous
                         ? contiguous(bytes, element)
                         : strided(pattern.regions, pattern.region_size, memory_stride,
                                   (pattern.regions - 1) * memory_stride + pattern.region_size,
                                   description, element);
  const std::int64_t file_stride = ranks * pattern.region_size + pattern.spacing;
  Datatype filetype = file_contiguous
                          ? contiguous(bytes, element)
                          : strided(pattern.regions, pattern.region_size, file_stride,
                                    pattern.regions * file_stride, description, element);
  const MPI_Offset displacement = file_contiguous ? rank * bytes : rank * pattern.region_size;
  const Access access{displacement, filetype.get(), memtype.get(), 1};
  return RegionAccess{std::move(memtype), std::move(filetype), access};
}

RegionPattern sized_region_pattern(const std::string& name, std::int64_t bytes_per_rank) {
  RegionPattern pattern;
  pattern.name = name;
  pattern.regions = bytes_per_rank / pattern.region_size;
  return pattern;
}

Fields region_fields(const RegionPattern& pattern) {
  return Fields()
      .add("case", pattern.name)
      .add("regions", pattern.regions)
      .add("region_size", pattern.region_size)
      .add("spacing", pattern.spacing)
      .add("element", pattern.element);
}

}  // namespace bench
