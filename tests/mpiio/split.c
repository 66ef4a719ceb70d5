/* Split collectives: every *_begin / *_end pair, int and MPI_Count (_c)
 * counts, and the statuses the _end calls return.
 *
 * No collective read here crosses the end of file: MPICH 4.0.2 then
 * reports the requested count in the status, not what was read (see
 * edges.c).
 *
 * Outputs:
 *   split.dat          ints interleaved in pairs between ranks, written with
 *                      write_all and write_at_all begin/end (and _c)
 *   split_ordered.dat  rank 0's 1 int, rank 1's 2 ints, ..., then 2 ints
 *                      per rank, written with write_ordered begin/end */
#include "mpiio_test.h"

enum { PAIR = 2, PIECE = 8 };

static int value(int rank, int index) { return 30000 * (rank + 1) + index; }

static void all_and_at_all(void) {
  const int n = t_nranks;
  MPI_File fh;
  t_open("split.dat", &fh);
  MPI_Datatype pair, filetype;
  MPI_Type_contiguous(PAIR, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, (MPI_Aint)sizeof(int) * PAIR * n, &filetype);
  MPI_Type_commit(&filetype);
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * PAIR * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  int pieces[4][PIECE];
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < PIECE; ++i) pieces[p][i] = value(t_rank, p * PIECE + i);
  MPI_Status status;
  int counts[8];

  t_garble(&status);
  MPI_CHECK(MPI_File_write_all_begin(fh, pieces[0], PIECE, MPI_INT));
  MPI_CHECK(MPI_File_write_all_end(fh, pieces[0], &status));
  counts[0] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_all_begin_c(fh, pieces[1], (MPI_Count)PIECE, MPI_INT));
  MPI_CHECK(MPI_File_write_all_end(fh, pieces[1], &status));
  counts[1] = t_count(&status, MPI_INT);
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 2 * PIECE);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_at_all_begin(fh, 2 * PIECE, pieces[2], PIECE, MPI_INT));
  MPI_CHECK(MPI_File_write_at_all_end(fh, pieces[2], &status));
  counts[2] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_at_all_begin_c(fh, 3 * PIECE, pieces[3], (MPI_Count)PIECE / 2, MPI_INT));
  MPI_CHECK(MPI_File_write_at_all_end(fh, pieces[3], &status));
  counts[3] = t_count(&status, MPI_INT);
  /* The second half of the last piece, with the status ignored. */
  MPI_CHECK(MPI_File_write_at_all_begin(fh, 3 * PIECE + PIECE / 2, pieces[3] + PIECE / 2, PIECE / 2,
                                        MPI_INT));
  MPI_CHECK(MPI_File_write_at_all_end(fh, pieces[3] + PIECE / 2, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 2 * PIECE);
  t_make_visible(fh);

  int back[4][PIECE];
  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  t_garble(&status);
  MPI_CHECK(MPI_File_read_all_begin(fh, back[0], PIECE, MPI_INT));
  MPI_CHECK(MPI_File_read_all_end(fh, back[0], &status));
  counts[4] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_all_begin_c(fh, back[1], (MPI_Count)PIECE, MPI_INT));
  MPI_CHECK(MPI_File_read_all_end(fh, back[1], &status));
  counts[5] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_at_all_begin(fh, 2 * PIECE, back[2], PIECE, MPI_INT));
  MPI_CHECK(MPI_File_read_at_all_end(fh, back[2], &status));
  counts[6] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_at_all_begin_c(fh, 3 * PIECE, back[3], (MPI_Count)PIECE, MPI_INT));
  MPI_CHECK(MPI_File_read_at_all_end(fh, back[3], &status));
  counts[7] = t_count(&status, MPI_INT);
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < PIECE; ++i) CHECK_EQ(back[p][i], pieces[p][i]);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 2 * PIECE);

  MPI_CHECK(MPI_File_close(&fh));

  /* The raw file: pairs of ints, rank by rank in turn. */
  t_open("split.dat", &fh);
  const int total = 4 * PIECE * n;
  int* raw = malloc(sizeof(int) * total);
  CHECK(raw != NULL);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, raw, total, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), total);
  for (int i = 0; i < total; ++i) {
    int block = i / PAIR, owner = block % n, index = (block / n) * PAIR + i % PAIR;
    CHECK_EQ(raw[i], value(owner, index));
  }
  free(raw);
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "write_all, write_all_c, write_at_all, write_at_all_c(half) end counts %d %d %d %d; "
      "read_all, read_all_c, read_at_all, read_at_all_c end counts %d %d %d %d",
      counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7]);
  MPI_Type_free(&filetype);
  MPI_Type_free(&pair);
}

/* Rank r's ints in the ordered file: r+1 of them, then 2 more. */
static int ordered_value(int rank, int index) { return 800 + 10 * rank + index; }

static void ordered(void) {
  const int n = t_nranks, mine = t_rank + 1;
  const int before = t_rank * (t_rank + 1) / 2; /* ints of the ranks before */
  const int first_total = n * (n + 1) / 2;
  MPI_File fh;
  t_open("split_ordered.dat", &fh);
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int data[64], back[64];
  CHECK(n < 60);
  for (int i = 0; i < mine + 2; ++i) data[i] = ordered_value(t_rank, i);
  MPI_Status status;
  int counts[4];
  t_garble(&status);
  MPI_CHECK(MPI_File_write_ordered_begin(fh, data, mine, MPI_INT));
  MPI_CHECK(MPI_File_write_ordered_end(fh, data, &status));
  counts[0] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_write_ordered_begin_c(fh, data + mine, (MPI_Count)2, MPI_INT));
  MPI_CHECK(MPI_File_write_ordered_end(fh, data + mine, &status));
  counts[1] = t_count(&status, MPI_INT);
  MPI_Offset shared = -1;
  MPI_CHECK(MPI_File_get_position_shared(fh, &shared));
  CHECK_EQ(shared, first_total + 2 * n);
  t_make_visible(fh);

  MPI_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  memset(back, 0, sizeof back);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_ordered_begin(fh, back, mine, MPI_INT));
  MPI_CHECK(MPI_File_read_ordered_end(fh, back, &status));
  counts[2] = t_count(&status, MPI_INT);
  t_garble(&status);
  MPI_CHECK(MPI_File_read_ordered_begin_c(fh, back + mine, (MPI_Count)2, MPI_INT));
  MPI_CHECK(MPI_File_read_ordered_end(fh, back + mine, &status));
  counts[3] = t_count(&status, MPI_INT);
  for (int i = 0; i < mine + 2; ++i) CHECK_EQ(back[i], data[i]);
  MPI_CHECK(MPI_File_get_position_shared(fh, &shared));
  CHECK_EQ(shared, first_total + 2 * n);

  /* The raw file, through the individual file pointer. */
  int raw[64 * 64];
  const int total = first_total + 2 * n;
  MPI_CHECK(MPI_File_read_at(fh, 0, raw, total, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), total);
  for (int i = 0; i < mine; ++i) CHECK_EQ(raw[before + i], ordered_value(t_rank, i));
  for (int i = 0; i < 2; ++i)
    CHECK_EQ(raw[first_total + 2 * t_rank + i], ordered_value(t_rank, mine + i));
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "ordered: write_ordered %d, write_ordered_c %d, read_ordered %d, read_ordered_c %d "
      "ints; shared pointer at %lld ints",
      counts[0], counts[1], counts[2], counts[3], (long long)shared);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "split");
  all_and_at_all();
  ordered();
  return t_finish();
}
