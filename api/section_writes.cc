#include "api/section_writes.h"

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
  std::size_t covered = 0;
  for (const runtime::TargetRun& run : runs) {
    const std::span<const runtime::Copy> parts = copies.subspan(run.first_copy, run.copy_count);
    if (parts.size() == 1) {
      writes_.push_back(file.iwrite_at(run.target, source + parts[0].source, run.length, MPI_BYTE));
    } else {
      lengths_.clear();
      displacements_.clear();
      for (const runtime::Copy& part : parts) {
        lengths_.push_back(part.length);
        displacements_.push_back(part.source);
      }
      // The large-count constructor: copies and runs of any length.
      MPI_Datatype gather = MPI_DATATYPE_NULL;
      check_mpi(MPI_Type_create_hindexed_c(static_cast<MPI_Count>(parts.size()), lengths_.data(),
                                           displacements_.data(), MPI_BYTE, &gather),
                "MPI_Type_create_hindexed_c");
      check_mpi(MPI_Type_commit(&gather), "MPI_Type_commit");
      // The write flattens the type at the call and keeps the flattened
      // form, so the handle may go at once.
      try {
        writes_.push_back(file.iwrite_at(run.target, source, 1, gather));
      } catch (...) {
        MPI_Type_free(&gather);
        throw;
      }
      MPI_Type_free(&gather);
    }
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
