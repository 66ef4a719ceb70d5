/* The shared file pointer: write_shared, read_shared and their nonblocking
 * and _c forms, seek_shared, get_position_shared, and the ordered calls,
 * all through a view whose etype is a 16-byte record (4 ints), so that
 * positions count records.
 *
 * Which rank's write_shared lands first is not deterministic, so that file
 * (nondet_shared.dat) is checked as a set: every (rank, kind) record once,
 * and the shared pointer at the total. The ordered calls are deterministic
 * and their file (shared_ordered.dat) is compared byte for byte. */
#include "mpiio_test.h"

enum { RECORD_INTS = 4, HEADER_BYTES = 64, KINDS = 4 };

/* A record says who wrote it and with which call (kind). */
static void make_record(int* record, int rank, int kind) {
  record[0] = rank;
  record[1] = kind;
  record[2] = 1000 * kind + rank;
  record[3] = ~(rank * 16 + kind);
}

static int is_record(const int* record, int rank, int kind) {
  int expected[RECORD_INTS];
  make_record(expected, rank, kind);
  return memcmp(record, expected, sizeof expected) == 0;
}

/* Opens `name`, writes a 64-byte header from rank 0 and sets the record
 * view after it. */
static void open_with_record_view(const char* name, MPI_Datatype record, MPI_File* fh) {
  char path[4096];
  t_path(path, sizeof path, name);
  MPI_CHECK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, fh));
  if (t_rank == 0) {
    char header[HEADER_BYTES];
    memset(header, 0, sizeof header);
    snprintf(header, sizeof header, "flowio shared-pointer test, %d ranks", t_nranks);
    MPI_CHECK(MPI_File_write_at(*fh, 0, header, HEADER_BYTES, MPI_CHAR, MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_File_set_view(*fh, HEADER_BYTES, record, record, "native", MPI_INFO_NULL));
}

/* Collective here: MPI_File_get_position_shared is independent, so the
 * barrier after it keeps other ranks from moving the shared pointer (with
 * a read, a write or a seek_shared) before every rank has read it. */
static MPI_Offset shared_position(MPI_File fh) {
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position_shared(fh, &position));
  MPI_Barrier(MPI_COMM_WORLD);
  return position;
}

/* Every (rank, kind) for kind in [first_kind, first_kind + kinds) must
 * appear exactly once among the `count` records. */
static void check_record_set(const int* records, int count, int first_kind, int kinds) {
  CHECK_EQ(count, t_nranks * kinds);
  for (int r = 0; r < t_nranks; ++r)
    for (int kind = first_kind; kind < first_kind + kinds; ++kind) {
      int found = 0;
      for (int i = 0; i < count; ++i) found += is_record(records + i * RECORD_INTS, r, kind);
      CHECK_EQ(found, 1);
    }
}

static void unordered(MPI_Datatype record) {
  const int n = t_nranks;
  MPI_File fh;
  open_with_record_view("nondet_shared.dat", record, &fh);
  CHECK_EQ(shared_position(fh), 0);
  int mine[KINDS][RECORD_INTS];
  for (int kind = 0; kind < KINDS; ++kind) make_record(mine[kind], t_rank, kind);
  MPI_Status status;
  MPI_Request request;
  t_garble(&status);
  MPI_CHECK(MPI_File_write_shared(fh, mine[0], 1, record, &status));
  CHECK_EQ(t_count(&status, record), 1);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_shared_c(fh, mine[1], (MPI_Count)RECORD_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), RECORD_INTS);
  t_garble(&status);
  MPI_CHECK(MPI_File_iwrite_shared(fh, mine[2], 1, record, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_EQ(t_count(&status, record), 1);
  t_garble(&status);
  MPI_CHECK(MPI_File_iwrite_shared_c(fh, mine[3], (MPI_Count)1, record, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_EQ(t_count(&status, record), 1);
  t_make_visible(fh);
  const MPI_Offset after_writes = shared_position(fh);
  CHECK_EQ(after_writes, KINDS * n);
  /* The individual file pointer did not move. */
  MPI_Offset individual = -1;
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  CHECK_EQ(individual, 0);

  int* file = malloc(sizeof(int) * RECORD_INTS * KINDS * n);
  CHECK(file != NULL);
  MPI_CHECK(MPI_File_read_at(fh, 0, file, KINDS * n, record, &status));
  CHECK_EQ(t_count(&status, record), KINDS * n);
  check_record_set(file, KINDS * n, 0, KINDS);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, HEADER_BYTES + (MPI_Offset)sizeof(int) * RECORD_INTS * KINDS * n);

  /* Read everything back with the shared pointer: each rank one record per
   * call. The records of call k are some n of the file's records k*n..;
   * together they are all records once. */
  MPI_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  CHECK_EQ(shared_position(fh), 0);
  int got[KINDS][RECORD_INTS];
  memset(got, 0, sizeof got);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_shared(fh, got[0], 1, record, &status));
  CHECK_EQ(t_count(&status, record), 1);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_shared_c(fh, got[1], (MPI_Count)RECORD_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), RECORD_INTS);
  /* The shared pointer only advances: all ranks' first reads come before
   * anyone's third once everyone has passed this barrier. */
  MPI_Barrier(MPI_COMM_WORLD);
  t_garble(&status);
  MPI_CHECK(MPI_File_iread_shared(fh, got[2], 1, record, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_EQ(t_count(&status, record), 1);
  t_garble(&status);
  MPI_CHECK(MPI_File_iread_shared_c(fh, got[3], (MPI_Count)1, record, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_EQ(t_count(&status, record), 1);
  int* all = malloc(sizeof(int) * RECORD_INTS * KINDS * n);
  CHECK(all != NULL);
  MPI_Allgather(got, KINDS * RECORD_INTS, MPI_INT, all, KINDS * RECORD_INTS, MPI_INT,
                MPI_COMM_WORLD);
  check_record_set(all, KINDS * n, 0, KINDS);
  /* What ranks read before the barrier is the first half of the file. */
  int found_first_half = 0;
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 2 * n; ++i)
        found_first_half += memcmp(all + (r * KINDS + k) * RECORD_INTS, file + i * RECORD_INTS,
                                   sizeof(int) * RECORD_INTS) == 0;
  CHECK_EQ(found_first_half, 2 * n);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(shared_position(fh), KINDS * n);

  /* seek_shared: whence SET, CUR and END (the end of the view's data). */
  int at[3];
  MPI_CHECK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
  at[0] = (int)shared_position(fh);
  MPI_CHECK(MPI_File_seek_shared(fh, 1, MPI_SEEK_CUR));
  at[1] = (int)shared_position(fh);
  MPI_CHECK(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
  at[2] = (int)shared_position(fh);
  CHECK_EQ(at[0], 2);
  CHECK_EQ(at[1], 3);
  CHECK_EQ(at[2], KINDS * n - 1);
  int last[RECORD_INTS];
  if (t_rank == 0) {
    MPI_CHECK(MPI_File_read_shared(fh, last, 1, record, &status));
    CHECK(memcmp(last, file + (KINDS * n - 1) * RECORD_INTS, sizeof last) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(shared_position(fh), KINDS * n);
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  CHECK_EQ(individual, 0);
  MPI_CHECK(MPI_File_close(&fh));
  free(all);
  free(file);
  t_report(
      "unordered: %d records, each (rank, kind) once, shared pointer %lld after the "
      "writes; reads with the shared pointer return each record once; seek_shared "
      "SET 2 / CUR +1 / END -1 give %d %d %d",
      KINDS * n, (long long)after_writes, at[0], at[1], at[2]);
}

static void ordered(MPI_Datatype record) {
  const int n = t_nranks, mine = t_rank + 1;
  MPI_File fh;
  open_with_record_view("shared_ordered.dat", record, &fh);
  int(*data)[RECORD_INTS] = malloc(sizeof(int) * RECORD_INTS * (mine + 1));
  int(*back)[RECORD_INTS] = malloc(sizeof(int) * RECORD_INTS * (mine + 1));
  CHECK(data && back);
  for (int i = 0; i <= mine; ++i) make_record(data[i], t_rank, 10 + i);
  MPI_Status status;
  t_garble(&status);
  MPI_CHECK(MPI_File_write_ordered(fh, data, mine, record, &status));
  CHECK_EQ(t_count(&status, record), mine);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_ordered_c(fh, data[mine], (MPI_Count)RECORD_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), RECORD_INTS);
  const int first_total = n * (n + 1) / 2;
  CHECK_EQ(shared_position(fh), first_total + n);
  t_make_visible(fh);

  MPI_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  memset(back, 0, sizeof(int) * RECORD_INTS * (mine + 1));
  t_garble(&status);
  MPI_CHECK(MPI_File_read_ordered(fh, back, mine, record, &status));
  CHECK_EQ(t_count(&status, record), mine);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_ordered_c(fh, back[mine], (MPI_Count)1, record, &status));
  CHECK_EQ(t_count(&status, record), 1);
  CHECK(memcmp(back, data, sizeof(int) * RECORD_INTS * (mine + 1)) == 0);
  CHECK_EQ(shared_position(fh), first_total + n);

  /* Where the records are: rank by rank, then one more from each rank. */
  const int before = t_rank * (t_rank + 1) / 2;
  int one[RECORD_INTS];
  MPI_CHECK(MPI_File_read_at(fh, before, one, 1, record, &status));
  CHECK(is_record(one, t_rank, 10));
  MPI_CHECK(MPI_File_read_at(fh, first_total + t_rank, one, 1, record, &status));
  CHECK(is_record(one, t_rank, 10 + mine));
  MPI_CHECK(MPI_File_close(&fh));
  free(back);
  free(data);
  t_report(
      "ordered: write_ordered of %d records, write_ordered_c of %d ints, read back with "
      "read_ordered and read_ordered_c; shared pointer %d records",
      mine, RECORD_INTS, first_total + n);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "shared");
  MPI_Datatype record;
  MPI_Type_contiguous(RECORD_INTS, MPI_INT, &record);
  MPI_Type_commit(&record);
  unordered(record);
  ordered(record);
  MPI_Type_free(&record);
  return t_finish();
}
