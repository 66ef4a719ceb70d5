/* Many variables with holes, more than 2^31 bytes per process in one
 * call, in the spirit of MPICH's large_count (written anew here): 513
 * variables, each a 2-D array of bytes split over a grid of processes in
 * blocks of 2048 x 2048 of which each process owns 2047 x 2047 (so that
 * the file has holes); the filetype is the process's block of every
 * variable (a struct of 513 subarrays), the memory type the same blocks
 * in a buffer of 2048 x 2048 per variable. One MPI_File_write_all, then
 * MPI_File_iread_all + MPI_Wait from the start: counts and every byte
 * checked, the file compared with MPICH's. One rank: 2.15 GB of data. */
#include "tests/mpiio/mpiio_test.h"

enum { kVariables = 513, kSide = 2048, kOwned = kSide - 1 };

static MPI_Datatype blocks(const int sizes[2], const int starts[2], MPI_Aint variable_bytes) {
  const int owned[2] = {kOwned, kOwned};
  MPI_Datatype one, all;
  MPI_CHECK(MPI_Type_create_subarray(2, sizes, owned, starts, MPI_ORDER_C, MPI_BYTE, &one));
  int lengths[kVariables];
  MPI_Aint displacements[kVariables];
  MPI_Datatype types[kVariables];
  for (int v = 0; v < kVariables; ++v) {
    lengths[v] = 1;
    displacements[v] = v * variable_bytes;
    types[v] = one;
  }
  MPI_CHECK(MPI_Type_create_struct(kVariables, lengths, displacements, types, &all));
  MPI_CHECK(MPI_Type_commit(&all));
  MPI_Type_free(&one);
  return all;
}

/* Row r of variable v holds the pattern from (rank * 29 + v * 7 + r * 3)
 * mod 251 on: rows copied from one table, cheap at 2 GB. */
static char pattern[251 + kSide];

static const char* row_of(int variable, int row) {
  return pattern + (t_rank * 29 + variable * 7 + row * 3) % 251;
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "variables_layer");
  int grid[2] = {0, 0};
  MPI_CHECK(MPI_Dims_create(t_nranks, 2, grid));
  const int global[2] = {kSide * grid[0], kSide * grid[1]};
  const int file_starts[2] = {kSide * (t_rank / grid[1]), kSide * (t_rank % grid[1])};
  const int local[2] = {kSide, kSide}, local_starts[2] = {0, 0};
  MPI_Datatype filetype = blocks(global, file_starts, (MPI_Aint)global[0] * global[1]);
  MPI_Datatype memory = blocks(local, local_starts, (MPI_Aint)kSide * kSide);
  MPI_Count size = 0;
  MPI_CHECK(MPI_Type_size_c(memory, &size));

  const size_t variable_bytes = (size_t)kSide * kSide;
  char* buffer = malloc(variable_bytes * kVariables);
  CHECK(buffer != NULL);
  for (size_t i = 0; i < sizeof pattern; ++i) pattern[i] = (char)(1 + i % 251);
  for (int v = 0; v < kVariables; ++v) {
    for (int r = 0; r < kSide; ++r) {
      memcpy(buffer + v * variable_bytes + (size_t)r * kSide, row_of(v, r), kSide);
    }
  }
  MPI_File fh;
  t_open("variables.dat", &fh);
  /* Every variable's bytes exist before the first write: MPICH's MPI-IO
   * fills the holes of what it sieves past the end of the file with
   * garbage. */
  MPI_CHECK(MPI_File_set_size(fh, (MPI_Offset)kVariables * global[0] * global[1]));
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
  t_doing("write_all");
  MPI_Status status;
  MPI_CHECK(MPI_File_write_all(fh, buffer, 1, memory, &status));
  MPI_Count written = 0;
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &written));

  memset(buffer, 0, variable_bytes * kVariables);
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  t_doing("iread_all");
  MPI_Request request;
  MPI_CHECK(MPI_File_iread_all(fh, buffer, 1, memory, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  MPI_Count read = 0;
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &read));
  t_doing("check");
  /* The owned part of each row as written; the rest (the holes) zero. */
  static const char zeros[kSide];
  long long wrong = 0;
  for (int v = 0; v < kVariables; ++v) {
    for (int r = 0; r < kSide; ++r) {
      const char* row = buffer + v * variable_bytes + (size_t)r * kSide;
      if (r < kOwned) {
        wrong += memcmp(row, row_of(v, r), kOwned) != 0 || row[kOwned] != 0;
      } else {
        wrong += memcmp(row, zeros, kSide) != 0;
      }
    }
  }
  t_report("%d variables, %lld bytes per process: wrote %lld, read %lld, %lld rows wrong",
           kVariables, (long long)size, (long long)written, (long long)read, wrong);
  CHECK_EQ(written, size);
  CHECK_EQ(read, size);
  CHECK_EQ(wrong, 0);
  MPI_CHECK(MPI_File_close(&fh));
  free(buffer);
  MPI_Type_free(&memory);
  MPI_Type_free(&filetype);
  return t_finish();
}
