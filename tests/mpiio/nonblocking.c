/* Nonblocking reads and writes, independent and collective, with int and
 * MPI_Count (_c) counts, several requests outstanding at once, completed
 * with MPI_Wait, MPI_Test, MPI_Waitall, MPI_Waitany, MPI_Testall and
 * MPI_Waitsome; the counts and element counts of their statuses for basic
 * and derived memory types, including a read that ends inside an element.
 *
 * Outputs:
 *   nonblocking.dat       per rank a 1024-byte region (the last one cut
 *                         short) written with explicit offsets and the
 *                         file pointer
 *   nonblocking_coll.dat  ints interleaved in blocks of 4 between ranks,
 *                         written collectively */
#include "mpiio_test.h"

enum { REGION = 1024, RUN = 32, STRIDED_ITEMS = 4, STRIDED_OFFSET = 640 };

static int value(int rank, int index) { return 50000 * (rank + 1) + index; }

/* Three ints taken from every other int of memory: extent 6 ints. */
static MPI_Datatype strided_type(void) {
  MPI_Datatype vector, strided;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 0, 6 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&vector);
  return strided;
}

/* The five runs of RUN ints of a region, at these offsets in the region:
 * explicit offsets for the first three, the file pointer for the others. */
static const int run_offsets[5] = {0, 128, 256, 384, 512};

static void independent(void) {
  MPI_File fh;
  t_open("nonblocking.dat", &fh);
  MPI_Datatype strided = strided_type();
  const MPI_Offset start = (MPI_Offset)t_rank * REGION;
  int runs[5][RUN];
  int spread[6 * STRIDED_ITEMS];
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < RUN; ++i) runs[k][i] = value(t_rank, run_offsets[k] + i);
  for (int i = 0; i < 6 * STRIDED_ITEMS; ++i)
    spread[i] = i % 2 == 0 ? value(t_rank, STRIDED_OFFSET + i / 2) : -1;

  /* Six writes outstanding at once, completed by one MPI_Waitall. */
  MPI_Request requests[6];
  MPI_Status statuses[6];
  for (int k = 0; k < 6; ++k) t_garble(&statuses[k]);
  MPI_CHECK(MPI_File_iwrite_at(fh, start + run_offsets[0], runs[0], RUN, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iwrite_at(fh, start + run_offsets[1], runs[1], RUN, MPI_INT, &requests[1]));
  MPI_CHECK(MPI_File_iwrite_at_c(fh, start + run_offsets[2], runs[2], (MPI_Count)RUN, MPI_INT,
                                 &requests[2]));
  /* The file pointer moves when a nonblocking call starts. */
  MPI_CHECK(MPI_File_seek(fh, start + run_offsets[3], MPI_SEEK_SET));
  MPI_CHECK(MPI_File_iwrite(fh, runs[3], RUN, MPI_INT, &requests[3]));
  MPI_CHECK(MPI_File_iwrite_c(fh, runs[4], (MPI_Count)RUN, MPI_INT, &requests[4]));
  MPI_CHECK(
      MPI_File_iwrite_at(fh, start + STRIDED_OFFSET, spread, STRIDED_ITEMS, strided, &requests[5]));
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start + run_offsets[4] + RUN * 4);
  MPI_CHECK(MPI_Waitall(6, requests, statuses));
  for (int k = 0; k < 6; ++k) CHECK(requests[k] == MPI_REQUEST_NULL);
  for (int k = 0; k < 5; ++k) CHECK_EQ(t_count(&statuses[k], MPI_INT), RUN);
  CHECK_EQ(t_count(&statuses[5], strided), STRIDED_ITEMS);
  CHECK_EQ(t_count(&statuses[5], MPI_INT), 3 * STRIDED_ITEMS);
  t_make_visible(fh);

  /* Six reads outstanding, completed one by one with MPI_Waitany; the
   * order of completion is not part of what is printed. */
  int back[5][RUN];
  int spread_back[6 * STRIDED_ITEMS];
  memset(back, 0, sizeof back);
  for (int i = 0; i < 6 * STRIDED_ITEMS; ++i) spread_back[i] = -2;
  MPI_CHECK(MPI_File_iread_at(fh, start + run_offsets[0], back[0], RUN, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iread_at_c(fh, start + run_offsets[1], back[1], (MPI_Count)RUN, MPI_INT,
                                &requests[1]));
  MPI_CHECK(MPI_File_iread_at(fh, start + run_offsets[2], back[2], RUN, MPI_INT, &requests[2]));
  MPI_CHECK(MPI_File_seek(fh, start + run_offsets[3], MPI_SEEK_SET));
  MPI_CHECK(MPI_File_iread(fh, back[3], RUN, MPI_INT, &requests[3]));
  MPI_CHECK(MPI_File_iread_c(fh, back[4], (MPI_Count)RUN, MPI_INT, &requests[4]));
  MPI_CHECK(MPI_File_iread_at(fh, start + STRIDED_OFFSET, spread_back, STRIDED_ITEMS, strided,
                              &requests[5]));
  int done[6] = {0, 0, 0, 0, 0, 0};
  for (int completed = 0; completed < 6; ++completed) {
    int index = -1;
    MPI_Status status;
    t_garble(&status);
    MPI_CHECK(MPI_Waitany(6, requests, &index, &status));
    CHECK(index >= 0 && index < 6 && !done[index]);
    done[index] = 1;
    CHECK(requests[index] == MPI_REQUEST_NULL);
    if (index < 5) {
      MPI_Count count_c = -1;
      MPI_CHECK(MPI_Get_count_c(&status, MPI_INT, &count_c));
      CHECK_EQ(count_c, RUN);
    } else {
      CHECK_EQ(t_count(&status, strided), STRIDED_ITEMS);
    }
  }
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < RUN; ++i) CHECK_EQ(back[k][i], runs[k][i]);
  for (int i = 0; i < 6 * STRIDED_ITEMS; ++i)
    CHECK_EQ(spread_back[i], spread[i] == -1 ? -2 : spread[i]);
  /* All requests are null now: MPI_Waitany says so with MPI_UNDEFINED. */
  int none = 0;
  MPI_CHECK(MPI_Waitany(6, requests, &none, MPI_STATUS_IGNORE));
  CHECK_EQ(none, MPI_UNDEFINED);

  /* A read that ends inside a derived element: 2 triples asked, 16 bytes
   * (4 ints) left before the end of file. */
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, (MPI_Offset)(t_nranks - 1) * REGION + STRIDED_OFFSET + 12 * 4);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int triples[6] = {0, 0, 0, 0, 0, 0};
  MPI_Request request;
  MPI_Status status;
  t_garble(&status);
  MPI_CHECK(MPI_File_iread_at(fh, size - 16, triples, 2, triple, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  int count_triple = -2, count_int = -2, elements = -2;
  MPI_Count elements_x = -2, elements_c = -2, count_c_int = -2, count_c_triple = -2;
  MPI_CHECK(MPI_Get_count(&status, triple, &count_triple));
  MPI_CHECK(MPI_Get_count(&status, MPI_INT, &count_int));
  MPI_CHECK(MPI_Get_elements(&status, triple, &elements));
  MPI_CHECK(MPI_Get_elements_x(&status, triple, &elements_x));
  MPI_CHECK(MPI_Get_elements_c(&status, triple, &elements_c));
  MPI_CHECK(MPI_Get_count_c(&status, MPI_INT, &count_c_int));
  MPI_CHECK(MPI_Get_count_c(&status, triple, &count_c_triple));
  CHECK_EQ(count_triple, MPI_UNDEFINED);
  CHECK_EQ(elements, 4);
  for (int i = 0; i < 4; ++i) CHECK_EQ(triples[i], value(t_nranks - 1, STRIDED_OFFSET + 8 + i));
  CHECK_EQ(triples[4], 0);
  t_report(
      "independent: 6 writes under Waitall, 6 reads under Waitany, strided count %d; "
      "read of 2 triples at size-16: count(triple) %s, count(int) %d, elements %d, "
      "elements_x %lld, elements_c %lld, count_c(int) %lld, count_c(triple) %s",
      STRIDED_ITEMS, count_triple == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined", count_int,
      elements, (long long)elements_x, (long long)elements_c, (long long)count_c_int,
      count_c_triple == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined");
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
  MPI_CHECK(MPI_File_close(&fh));
}

/* The collective part. MPICH 4.0.2 breaks when two nonblocking collective
 * I/O calls are outstanding on one file at once (MPI allows it): reads
 * completed by MPI_Waitsome, MPI_Waitany or MPI_Testall return other
 * ranks' data or fail inside ROMIO with "Fatal error in internal_Testall",
 * reads completed by MPI_Test in turn return mixed data, and two writes
 * completed by MPI_Waitsome hang. So one collective at a time is
 * outstanding here, together with independent requests on the same file.
 *
 * Pieces 0-3 of every rank's view are written collectively, 4-5
 * independently; the view interleaves blocks of QUAD ints between ranks. */
enum { QUAD = 4, PIECE = 8, PIECES = 6 };

static int coll_value(int rank, int index) { return 70000 * (rank + 1) + index; }

static void test_until_done(MPI_Request* request, MPI_Status* status) {
  int flag = 0;
  while (!flag) MPI_CHECK(MPI_Test(request, &flag, status));
  CHECK(*request == MPI_REQUEST_NULL);
}

/* Completes `count` requests with MPI_Waitsome; every status must count
 * PIECE ints. Returns the number of MPI_Waitsome calls. */
static int waitsome_all(int count, MPI_Request* requests) {
  MPI_Status statuses[8];
  int indices[8], completed = 0, calls = 0;
  CHECK(count <= 8);
  while (completed < count) {
    int outcount = -1;
    for (int k = 0; k < count; ++k) t_garble(&statuses[k]);
    MPI_CHECK(MPI_Waitsome(count, requests, &outcount, indices, statuses));
    CHECK(outcount >= 1 && outcount <= count - completed);
    for (int k = 0; k < outcount; ++k) {
      CHECK(requests[indices[k]] == MPI_REQUEST_NULL);
      CHECK_EQ(t_count(&statuses[k], MPI_INT), PIECE);
    }
    completed += outcount;
    ++calls;
  }
  return calls;
}

static void collective(void) {
  const int n = t_nranks;
  MPI_File fh;
  t_open("nonblocking_coll.dat", &fh);
  MPI_Datatype quad, filetype, every_other;
  MPI_Type_contiguous(QUAD, MPI_INT, &quad);
  MPI_Type_create_resized(quad, 0, (MPI_Aint)sizeof(int) * QUAD * n, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_vector(PIECE, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * QUAD * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  int pieces[PIECES][2 * PIECE];
  for (int p = 0; p < PIECES; ++p)
    for (int i = 0; i < 2 * PIECE; ++i)
      pieces[p][i] = i % 2 == 0 ? coll_value(t_rank, p * PIECE + i / 2) : -1;

  MPI_Request requests[3];
  MPI_Status statuses[3];
  MPI_Status status;
  t_garble(&status);
  MPI_CHECK(MPI_File_iwrite_all(fh, pieces[0], 1, every_other, &requests[0]));
  MPI_CHECK(MPI_Wait(&requests[0], &status));
  CHECK_EQ(t_count(&status, every_other), 1);
  t_garble(&status);
  MPI_CHECK(MPI_File_iwrite_all_c(fh, pieces[1], (MPI_Count)1, every_other, &requests[0]));
  test_until_done(&requests[0], &status);
  CHECK_EQ(t_count(&status, MPI_INT), PIECE);
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 2 * PIECE);
  /* A collective and an independent write outstanding: MPI_Testall. */
  for (int k = 0; k < 2; ++k) t_garble(&statuses[k]);
  MPI_CHECK(MPI_File_iwrite_at_all(fh, 2 * PIECE, pieces[2], 1, every_other, &requests[0]));
  MPI_CHECK(MPI_File_iwrite_at(fh, 4 * PIECE, pieces[4], 1, every_other, &requests[1]));
  int all_done = 0;
  while (!all_done) MPI_CHECK(MPI_Testall(2, requests, &all_done, statuses));
  for (int k = 0; k < 2; ++k) {
    CHECK(requests[k] == MPI_REQUEST_NULL);
    CHECK_EQ(t_count(&statuses[k], every_other), 1);
  }
  /* And again with _c calls, completed by MPI_Waitall. */
  for (int k = 0; k < 2; ++k) t_garble(&statuses[k]);
  MPI_CHECK(
      MPI_File_iwrite_at_all_c(fh, 3 * PIECE, pieces[3], (MPI_Count)1, every_other, &requests[0]));
  MPI_CHECK(
      MPI_File_iwrite_at_c(fh, 5 * PIECE, pieces[5], (MPI_Count)1, every_other, &requests[1]));
  MPI_CHECK(MPI_Waitall(2, requests, statuses));
  for (int k = 0; k < 2; ++k) CHECK_EQ(t_count(&statuses[k], MPI_INT), PIECE);
  t_make_visible(fh);

  int back[PIECES][PIECE], again[PIECE];
  memset(back, 0, sizeof back);
  memset(again, 0, sizeof again);
  /* A collective read and two independent ones: MPI_Waitsome. */
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_iread_all(fh, back[0], PIECE, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iread_at(fh, 4 * PIECE, back[4], PIECE, MPI_INT, &requests[1]));
  MPI_CHECK(MPI_File_iread_at_c(fh, 5 * PIECE, back[5], (MPI_Count)PIECE, MPI_INT, &requests[2]));
  waitsome_all(3, requests);
  /* A collective and an independent read: MPI_Waitany twice. */
  MPI_CHECK(MPI_File_iread_all_c(fh, back[1], (MPI_Count)PIECE, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iread_at(fh, 4 * PIECE, again, PIECE, MPI_INT, &requests[1]));
  for (int k = 0; k < 2; ++k) {
    int index = -1;
    t_garble(&status);
    MPI_CHECK(MPI_Waitany(2, requests, &index, &status));
    CHECK(index == 0 || index == 1);
    CHECK_EQ(t_count(&status, MPI_INT), PIECE);
  }
  CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL);
  MPI_CHECK(MPI_File_iread_at_all(fh, 2 * PIECE, back[2], PIECE, MPI_INT, &requests[0]));
  all_done = 0;
  t_garble(&statuses[0]);
  while (!all_done) MPI_CHECK(MPI_Testall(1, requests, &all_done, statuses));
  CHECK_EQ(t_count(&statuses[0], MPI_INT), PIECE);
  MPI_CHECK(
      MPI_File_iread_at_all_c(fh, 3 * PIECE, back[3], (MPI_Count)PIECE, MPI_INT, &requests[0]));
  t_garble(&status);
  MPI_CHECK(MPI_Wait(&requests[0], &status));
  CHECK_EQ(t_count(&status, MPI_INT), PIECE);
  for (int p = 0; p < PIECES; ++p)
    for (int i = 0; i < PIECE; ++i) CHECK_EQ(back[p][i], coll_value(t_rank, p * PIECE + i));
  for (int i = 0; i < PIECE; ++i) CHECK_EQ(again[i], coll_value(t_rank, 4 * PIECE + i));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 2 * PIECE);

  /* The raw file, read through a contiguous view. */
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  const int total = PIECES * PIECE * n;
  int* raw = malloc(sizeof(int) * total);
  CHECK(raw != NULL);
  MPI_Request request;
  MPI_CHECK(MPI_File_iread_at(fh, 0, raw, total, MPI_INT, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_EQ(t_count(&status, MPI_INT), total);
  for (int i = 0; i < total; ++i) {
    int block = i / QUAD, owner = block % n, index = (block / n) * QUAD + i % QUAD;
    CHECK_EQ(raw[i], coll_value(owner, index));
  }
  free(raw);
  t_report(
      "collective: iwrite_all/Wait, iwrite_all_c/Test, iwrite_at_all+iwrite_at/Testall, "
      "iwrite_at_all_c+iwrite_at_c/Waitall, iread_all+2 iread_at/Waitsome, "
      "iread_all_c+iread_at/Waitany, iread_at_all/Testall, iread_at_all_c/Wait; "
      "%d pieces of %d ints verified",
      PIECES, PIECE);
  MPI_Type_free(&every_other);
  MPI_Type_free(&filetype);
  MPI_Type_free(&quad);
  MPI_CHECK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "nonblocking");
  independent();
  collective();
  return t_finish();
}
