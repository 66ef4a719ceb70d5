// MPI_Register_datarep and MPI_Register_datarep_c through the MPI-IO layer
// (linked into this test, so the MPI_* calls below are the layer's): a
// representation storing doubles as 32-bit integers scaled by 1000, set by
// name in MPI_File_set_view, reported by MPI_File_get_view and
// MPI_File_get_type_extent, round-tripped; duplicates fail with
// MPI_ERR_DUP_DATAREP. MPICH's own MPI-IO refuses user representations in
// set_view, so this test has no MPICH run to compare with.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/api/test_paths.h"

namespace {

int calls = 0;  // conversion calls, counted through extra_state

int scaled_write(void* user, MPI_Datatype type, int count, void* file, MPI_Offset position,
                 void* extra_state) {
  REQUIRE(type == MPI_DOUBLE);
  ++*static_cast<int*>(extra_state);
  for (int i = 0; i < count; ++i) {
    const double value = static_cast<const double*>(user)[position + i];
    const auto scaled = static_cast<std::int32_t>(std::lround(value * 1000));
    std::memcpy(static_cast<char*>(file) + 4 * i, &scaled, 4);
  }
  return MPI_SUCCESS;
}

int scaled_read(void* user, MPI_Datatype type, int count, void* file, MPI_Offset position,
                void* extra_state) {
  REQUIRE(type == MPI_DOUBLE);
  ++*static_cast<int*>(extra_state);
  for (int i = 0; i < count; ++i) {
    std::int32_t scaled = 0;
    std::memcpy(&scaled, static_cast<char*>(file) + 4 * i, 4);
    static_cast<double*>(user)[position + i] = scaled / 1000.0;
  }
  return MPI_SUCCESS;
}

int scaled_extent(MPI_Datatype type, MPI_Aint* extent, void*) {
  int size = 0;
  MPI_Type_size(type, &size);
  *extent = type == MPI_DOUBLE ? 4 : size;
  return MPI_SUCCESS;
}

int class_of(int code) {
  int error_class = -1;
  MPI_Error_class(code, &error_class);
  return error_class;
}

}  // namespace

// Registered, used by name, refused twice.
TEST_CASE("Mpiio.RegisterDatarep.ScaledDoublesThroughTheLayer") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  REQUIRE(MPI_Register_datarep("scaled", scaled_read, scaled_write, scaled_extent, &calls) ==
          MPI_SUCCESS);
  CHECK(class_of(MPI_Register_datarep("scaled", scaled_read, scaled_write, scaled_extent,
                                      &calls)) == MPI_ERR_DUP_DATAREP);
  CHECK(class_of(MPI_Register_datarep_c("external32", MPI_CONVERSION_FN_NULL_C,
                                        MPI_CONVERSION_FN_NULL_C, scaled_extent, nullptr)) ==
        MPI_ERR_DUP_DATAREP);
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "register_datarep");
  MPI_File fh;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  REQUIRE(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "scaled", MPI_INFO_NULL) == MPI_SUCCESS);
  MPI_Aint extent = 0;
  CHECK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &extent) == MPI_SUCCESS);
  CHECK(extent == 4);
  MPI_Offset displacement = -1;
  MPI_Datatype etype, filetype;
  char datarep[MPI_MAX_DATAREP_STRING] = {};
  CHECK(MPI_File_get_view(fh, &displacement, &etype, &filetype, datarep) == MPI_SUCCESS);
  CHECK(std::string(datarep) == "scaled");
  constexpr int kCount = 100;
  std::vector<double> values(kCount);
  for (int i = 0; i < kCount; ++i) values[static_cast<std::size_t>(i)] = rank + i * 0.0015;
  MPI_Status status;
  CHECK(MPI_File_write_at_all(fh, rank * kCount, values.data(), kCount, MPI_DOUBLE, &status) ==
        MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&status, MPI_DOUBLE, &count);
  CHECK(count == kCount);
  MPI_Offset size = 0;
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  CHECK(MPI_File_get_size(fh, &size) == MPI_SUCCESS);
  CHECK(size == static_cast<MPI_Offset>(ranks) * kCount * 4);
  std::vector<double> back(kCount, -1);
  CHECK(MPI_File_read_at(fh, rank * kCount, back.data(), kCount, MPI_DOUBLE, &status) ==
        MPI_SUCCESS);
  for (int i = 0; i < kCount; ++i) {
    const auto k = static_cast<std::size_t>(i);
    CHECK(back[k] == std::lround(values[k] * 1000) / 1000.0);
  }
  CHECK(calls >= 2);
  MPI_File_close(&fh);
}
