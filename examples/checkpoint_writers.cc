#include "checkpoint_writers.h"

#include <stdexcept>
#include <string>

namespace insitu {
namespace {

using flowio::check_mpi;

void check_bytes(const char* call, std::size_t moved, MPI_Count values) {
  const std::size_t expected = static_cast<std::size_t>(values) * sizeof(double);
  if (moved != expected) {
    throw std::runtime_error(std::string(call) + " moved " + std::to_string(moved) +
                             " bytes, not " + std::to_string(expected));
  }
}

}  // namespace

void FlowioCheckpointWriter::write(const CheckpointBuffer& checkpoint, std::int64_t slot) {
  check_bytes("flowio write_at_all",
              file_.write_at_all(slot * values_, checkpoint.data(), values_, MPI_DOUBLE), values_);
}

void FlowioCheckpointWriter::start(const CheckpointBuffer& checkpoint, std::int64_t slot) {
  written_ = file_.iwrite_at_all(slot * values_, checkpoint.data(), values_, MPI_DOUBLE);
}

void FlowioCheckpointWriter::finish() {
  check_bytes("flowio iwrite_at_all", written_.get(), values_);
}

void MpichCheckpointWriter::check_written(const MPI_Status& status, const char* call) const {
  MPI_Count values = 0;
  check_mpi(MPI_Get_count_c(&status, MPI_DOUBLE, &values), "MPI_Get_count_c");
  check_bytes(call, static_cast<std::size_t>(values) * sizeof(double), values_);
}

void MpichCheckpointWriter::write(const CheckpointBuffer& checkpoint, std::int64_t slot) {
  MPI_Status status;
  check_mpi(MPI_File_write_at_all_c(file_, slot * values_, checkpoint.data(), values_, MPI_DOUBLE,
                                    &status),
            "MPI_File_write_at_all_c");
  check_written(status, "MPI_File_write_at_all_c");
  if (durable_) check_mpi(MPI_File_sync(file_), "MPI_File_sync");
}

void MpichCheckpointWriter::start(const CheckpointBuffer& checkpoint, std::int64_t slot) {
  check_mpi(MPI_File_iwrite_at_all_c(file_, slot * values_, checkpoint.data(), values_, MPI_DOUBLE,
                                     &request_),
            "MPI_File_iwrite_at_all_c");
}

void MpichCheckpointWriter::poll() {
  if (request_ == MPI_REQUEST_NULL) return;
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, &status_), "MPI_Test");
}

void MpichCheckpointWriter::finish() {
  if (request_ != MPI_REQUEST_NULL) check_mpi(MPI_Wait(&request_, &status_), "MPI_Wait");
  check_written(status_, "MPI_File_iwrite_at_all_c");
  if (durable_) check_mpi(MPI_File_sync(file_), "MPI_File_sync");
}

}  // namespace insitu
