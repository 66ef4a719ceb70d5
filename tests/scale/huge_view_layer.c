/* The subarray views of huge_filetype_test through the MPI-IO API: each
 * process's 1024 x 1024 x 288 doubles (2.25 GiB) and 1024 x 1024 x 576
 * (4.5 GiB) of a 3-D array as one filetype; MPI_File_set_view, collective
 * writes (blocking and MPI_File_iwrite_at_all) at the start of the view,
 * across 2^31 bytes of it, near its end and across into the filetype's
 * second copy (the file already that long), then a collective and an
 * independent read of parts. Prints what the reads returned and a digest
 * of the file (file_digest.h), which must be MPICH's; the files, tens of
 * GiB long and sparse, are removed. */
#define _GNU_SOURCE /* SEEK_DATA and SEEK_HOLE, before any system header */

#include "tests/mpiio/mpiio_test.h"
#include "tests/scale/file_digest.h"

enum { kWriteDoubles = 4096 };
static const MPI_Offset kDisplacement = 1000;

static MPI_Datatype block_of(int depth) {
  int sizes[3] = {1024, 1024, t_nranks * depth};
  int subsizes[3] = {1024, 1024, depth};
  int starts[3] = {0, 0, t_rank * depth};
  MPI_Datatype type;
  MPI_CHECK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  return type;
}

static void fill(double* data, int call) {
  for (int i = 0; i < kWriteDoubles; ++i) data[i] = t_rank * 1e9 + call * 1e6 + i;
}

static uint64_t hash_of(const double* data, int count) {
  const unsigned char* bytes = (const unsigned char*)data;
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < (size_t)count * sizeof(double); ++i) {
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  return hash;
}

static void run(int depth) {
  MPI_Datatype block = block_of(depth);
  MPI_Count size = 0;
  MPI_CHECK(MPI_Type_size_c(block, &size));
  const MPI_Offset view_doubles = size / 8;
  const MPI_Offset at[4] = {0, ((1LL << 31) - 3000) / 8, view_doubles - 3 * kWriteDoubles,
                            view_doubles - kWriteDoubles / 2};
  char name[64], path[4096];
  snprintf(name, sizeof name, "huge_view_%d.dat", depth);
  t_path(path, sizeof path, name);
  MPI_File fh;
  t_open(name, &fh);
  /* Past every access before the first write: MPICH's MPI-IO fills the
   * holes of what it sieves past the end of the file with garbage. */
  t_doing("set_size");
  MPI_CHECK(MPI_File_set_size(fh, kDisplacement + 2 * size * t_nranks));
  t_doing("set_view");
  MPI_CHECK(MPI_File_set_view(fh, kDisplacement, MPI_DOUBLE, block, "native", MPI_INFO_NULL));
  static double data[kWriteDoubles], collective[2 * kWriteDoubles], independent[kWriteDoubles];
  for (int call = 0; call < 4; ++call) {
    t_doing("write");
    fill(data, call);
    MPI_Status status;
    if (call % 2 == 0) {
      MPI_CHECK(MPI_File_write_at_all(fh, at[call], data, kWriteDoubles, MPI_DOUBLE, &status));
    } else {
      MPI_Request request;
      MPI_CHECK(MPI_File_iwrite_at_all(fh, at[call], data, kWriteDoubles, MPI_DOUBLE, &request));
      MPI_CHECK(MPI_Wait(&request, &status));
    }
    CHECK_EQ(t_count(&status, MPI_DOUBLE), kWriteDoubles);
  }
  t_make_visible(fh);
  t_doing("read");
  MPI_CHECK(MPI_File_read_at_all(fh, at[1] - 100, collective, 2 * kWriteDoubles, MPI_DOUBLE,
                                 MPI_STATUS_IGNORE));
  MPI_CHECK(
      MPI_File_read_at(fh, at[3] - 200, independent, kWriteDoubles, MPI_DOUBLE, MPI_STATUS_IGNORE));
  CHECK(collective[100] == t_rank * 1e9 + 1e6);
  CHECK(collective[100 + kWriteDoubles] == 0.0);
  CHECK(independent[200] == t_rank * 1e9 + 3e6);
  t_report("depth %d: view of %lld bytes, reads %016llx %016llx", depth, (long long)size,
           (unsigned long long)hash_of(collective, 2 * kWriteDoubles),
           (unsigned long long)hash_of(independent, kWriteDoubles));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&block);
  if (t_rank == 0) {
    const struct file_digest digest = digest_file(path);
    t_say("depth %d: file of %lld bytes, %lld nonzero, digest %016llx", depth, digest.size,
          digest.nonzero, (unsigned long long)digest.hash);
    unlink(path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "huge_view_layer");
  run(288);
  run(576);
  return t_finish();
}
