#include "api/section_writes.h"

#include <cstring>
#include <exception>
#include <string>

#include "flowio/error.h"

namespace flowio {

SectionWrites::~SectionWrites() {
  for (Future<std::size_t>& write : writes_) {
    if (write.valid()) write.wait();
  }
}

std::size_t SectionWrites::start(File& file, const std::byte* source,
                                 std::span<const runtime::Copy> copies,
                                 std::span<const runtime::TargetRun> runs) {
  std::size_t staged = 0, covered = 0;
  for (const runtime::TargetRun& run : runs) {
    if (run.copy_count > 1) staged += static_cast<std::size_t>(run.length);
  }
  // Sized before any pointer into it is taken: it must not move while the
  // writes borrow it.
  if (staging_.size() < staged) staging_.resize(staged);
  std::size_t at = 0;
  for (const runtime::TargetRun& run : runs) {
    const std::byte* from = source + copies[run.first_copy].source;
    if (run.copy_count > 1) {
      std::byte* into = staging_.data() + at;
      for (std::size_t k = run.first_copy; k < run.first_copy + run.copy_count; ++k) {
        std::memcpy(into, source + copies[k].source, static_cast<std::size_t>(copies[k].length));
        into += copies[k].length;
      }
      from = staging_.data() + at;
      at += static_cast<std::size_t>(run.length);
    }
    writes_.push_back(file.iwrite_at(run.target, from, run.length, MPI_BYTE));
    expected_.push_back(static_cast<std::size_t>(run.length));
    covered += static_cast<std::size_t>(run.length);
  }
  return covered;
}

void SectionWrites::wait() {
  std::exception_ptr failure;
  for (std::size_t k = 0; k < writes_.size(); ++k) {
    try {
      const std::size_t written = writes_[k].get();
      if (written != expected_[k] && !failure) {
        failure =
            std::make_exception_ptr(IoError(ErrorCode::io,
                                            "object file: short write (" + std::to_string(written) +
                                                " of " + std::to_string(expected_[k]) + " bytes)",
                                            0));
      }
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  writes_.clear();
  expected_.clear();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace flowio
