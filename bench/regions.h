// The access pattern of the NCIO study (Ching et al., "Evaluating I/O
// characteristics and methods for storing structured scientific data"),
// shared by bench/ncio and bench/hpio: each rank moves `regions` regions of
// `region_size` bytes, contiguous or not in memory and in the file.
//
//   memory, contiguous:     the regions back to back.
//   memory, noncontiguous:  the regions `spacing` bytes apart.
//   file, contiguous:       the rank's regions back to back at
//                           rank * regions * region_size.
//   file, noncontiguous:    the ranks' regions interleaved, then a gap:
//                           region k of rank r at
//                           k * (ranks * region_size + spacing) + r * region_size
//                           (displacement r * region_size; a vector filetype
//                           resized to the whole pattern, so views tile).
//
// A contiguous part is one contiguous type. A noncontiguous part is either
// compact (a vector) or enumerated (an hindexed type listing every region:
// the same typemap, as HPIO compares them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_support.h"

namespace bench {

// "c-c", "nc-c", "c-nc", "nc-nc": memory, then file.
const std::vector<std::string>& region_cases();

enum class Description { compact, enumerated };

struct RegionPattern {
  std::string name;  // one of region_cases()
  std::int64_t regions = 4096;
  std::int64_t region_size = 8;
  std::int64_t spacing = 128;
  // The elements the types are made of: "byte" (MPI_BYTE) or "double"
  // (MPI_DOUBLE: region_size and spacing multiples of 8), which matters to
  // a data representation that converts them.
  std::string element = "byte";
};

// This rank's types for `pattern` (owned) and the Access that borrows them;
// moving a RegionAccess keeps the Access valid.
struct RegionAccess {
  Datatype memtype;
  Datatype filetype;
  Access access;
};

// `defaults` with --regions, --region_size, --spacing and --element read
// from the options (the fields of `defaults` are their defaults).
RegionPattern region_options(Options& options, const RegionPattern& defaults = {});

RegionAccess make_region_access(const RegionPattern& pattern, Description description);

// Case `name` moving `bytes_per_rank` bytes per rank (rounded down to whole
// regions) in regions of the default size and spacing: the cases that
// bench/repeat and bench/inflight sweep by size.
RegionPattern sized_region_pattern(const std::string& name, std::int64_t bytes_per_rank);

// The key=value fields that name `pattern`.
Fields region_fields(const RegionPattern& pattern);

}  // namespace bench
