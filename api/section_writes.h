// The writing half of both translators (remap_file, ObjectFileWriter):
// the runs a WindowRoute planned become contiguous writes of the object
// file. Private to api/.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "flowio/file.h"
#include "flowio/future.h"
#include "runtime/remap_route.h"

namespace flowio {

// The writes of one routed stretch of source data, which borrow that data
// until they are waited for (wait(), or the destructor, which ignores
// errors).
class SectionWrites {
 public:
  SectionWrites() = default;
  SectionWrites(const SectionWrites&) = delete;
  SectionWrites& operator=(const SectionWrites&) = delete;
  ~SectionWrites();

  // Starts one write per run, straight from `source` (borrowed until the
  // writes are waited for): a run of one copy as a contiguous buffer, a
  // run of several as an hindexed memory type over their places in
  // `source`, which the storage layer turns into vectored writes. Nothing
  // is copied in memory on the way. Returns the bytes the runs cover.
  std::size_t start(File& file, const std::byte* source, std::span<const runtime::Copy> copies,
                    std::span<const runtime::TargetRun> runs);

  // Waits for every write; rethrows the first failure (IoError), or throws
  // IoError when a write came up short.
  void wait();

 private:
  std::vector<Future<std::size_t>> writes_;
  std::vector<std::size_t> expected_;
  std::vector<MPI_Count> lengths_;
  std::vector<MPI_Count> displacements_;
};

}  // namespace flowio
