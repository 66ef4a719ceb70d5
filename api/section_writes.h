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

// The writes of one routed stretch of source data, and the memory they
// borrow. Waiting (wait(), or the destructor, which ignores errors) ends
// the borrowing.
class SectionWrites {
 public:
  SectionWrites() = default;
  SectionWrites(const SectionWrites&) = delete;
  SectionWrites& operator=(const SectionWrites&) = delete;
  // Waits for the writes still outstanding; errors are dropped here (call
  // wait() to see them).
  ~SectionWrites();

  // Starts one write per run: a run of one copy straight from `source`
  // (borrowed until the writes are waited for), the others packed into
  // this object's staging buffer first. Requires the previous writes
  // waited for. Returns the bytes the runs cover.
  std::size_t start(File& file, const std::byte* source, std::span<const runtime::Copy> copies,
                    std::span<const runtime::TargetRun> runs);

  // Waits for every write; rethrows the first failure (IoError), or throws
  // IoError when a write came up short.
  void wait();

 private:
  std::vector<std::byte> staging_;
  std::vector<Future<std::size_t>> writes_;
  std::vector<std::size_t> expected_;
};

}  // namespace flowio
