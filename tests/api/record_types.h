// The two datatypes of a C struct that a test writes in a data
// representation whose sizes differ from memory's (external32): the
// struct as it lies in memory and its fields packed one after another in
// the file.
#pragma once

#include <mpi.h>

#include <span>

namespace flowio::testing {

// Both types committed at construction and freed by the destructor (not
// copyable). `lengths`, `memory_at`, `file_at` and `types` describe the
// fields as MPI_Type_create_struct takes them; the memory type is resized
// to `memory_extent` (the struct's sizeof), so that consecutive records
// are consecutive elements.
class RecordTypes {
 public:
  RecordTypes(std::span<const int> lengths, std::span<const MPI_Aint> memory_at,
              std::span<const MPI_Aint> file_at, std::span<const MPI_Datatype> types,
              MPI_Aint memory_extent) {
    const int fields = static_cast<int>(lengths.size());
    MPI_Datatype unsized = MPI_DATATYPE_NULL;
    MPI_Type_create_struct(fields, lengths.data(), memory_at.data(), types.data(), &unsized);
    MPI_Type_create_resized(unsized, 0, memory_extent, &memory_);
    MPI_Type_free(&unsized);
    MPI_Type_commit(&memory_);
    MPI_Type_create_struct(fields, lengths.data(), file_at.data(), types.data(), &file_);
    MPI_Type_commit(&file_);
  }
  ~RecordTypes() {
    MPI_Type_free(&memory_);
    MPI_Type_free(&file_);
  }
  RecordTypes(const RecordTypes&) = delete;
  RecordTypes& operator=(const RecordTypes&) = delete;

  MPI_Datatype memory() const { return memory_; }
  MPI_Datatype file() const { return file_; }

 private:
  MPI_Datatype memory_ = MPI_DATATYPE_NULL;
  MPI_Datatype file_ = MPI_DATATYPE_NULL;
};

}  // namespace flowio::testing
