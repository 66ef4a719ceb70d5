/* Edge cases: ranks with nothing to transfer inside collectives, calls
 * with count 0 of every kind, reads at and across the end of file, writes
 * far past it, statuses filled with garbage before every call (so that a
 * call that does not set its status shows), and MPI_STATUS_IGNORE /
 * MPI_STATUSES_IGNORE accepted by every call that takes a status.
 *
 * Reads across the end of file are independent and contiguous in the
 * file: for collective reads and for reads through a view with holes,
 * MPICH 4.0.2 reports the requested count in the status instead of what
 * was read (a collective read_at_all of 16 ints, 8 before the end,
 * reports 16), so those cases are left out.
 *
 * Outputs:
 *   edges.dat        blocks of 16 ints from the even ranks (odd ranks take
 *                    part in the collectives with count 0), zeros between
 *   edges_far.dat    one int written 1 MiB past the end: a hole of zeros
 *   edges_ignore.dat written by every call with its status ignored
 *   edges_empty.dat  never written */
#include "mpiio_test.h"

enum { BLOCK_INTS = 16, BLOCK_BYTES = 64 };

static MPI_Status status;

/* Runs `call` with `status` full of garbage; the call must succeed and
 * leave a count of `expected` elements of `type` in `status`. */
#define EXPECT_COUNT(call, type, expected)        \
  do {                                            \
    t_garble(&status);                            \
    MPI_CHECK(call);                              \
    CHECK_EQ(t_count(&status, type), (expected)); \
  } while (0)

static int block_value(int rank, int pass, int i) { return 1000 * rank + 100 * pass + i; }

/* Collectives in which odd ranks transfer nothing; every call leaves the
 * even ranks' blocks at rank*BLOCK_BYTES. */
static void zero_byte_ranks(MPI_File fh) {
  const int active = t_rank % 2 == 0;
  const int count = active ? BLOCK_INTS : 0;
  const MPI_Offset offset = (MPI_Offset)t_rank * BLOCK_BYTES;
  int data[BLOCK_INTS], back[BLOCK_INTS];
  MPI_Request request;
  for (int pass = 0; pass < 4; ++pass) {
    for (int i = 0; i < BLOCK_INTS; ++i) data[i] = block_value(t_rank, pass, i);
    switch (pass) {
      case 0:
        EXPECT_COUNT(MPI_File_write_at_all(fh, offset, data, count, MPI_INT, &status), MPI_INT,
                     count);
        break;
      case 1:
        MPI_CHECK(MPI_File_seek(fh, offset, MPI_SEEK_SET));
        EXPECT_COUNT(MPI_File_write_all(fh, data, count, MPI_INT, &status), MPI_INT, count);
        break;
      case 2:
        MPI_CHECK(MPI_File_iwrite_at_all(fh, offset, data, count, MPI_INT, &request));
        EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, count);
        break;
      default:
        MPI_CHECK(MPI_File_write_at_all_begin(fh, offset, data, count, MPI_INT));
        EXPECT_COUNT(MPI_File_write_at_all_end(fh, data, &status), MPI_INT, count);
        break;
    }
    t_make_visible(fh);
    memset(back, 0, sizeof back);
    switch (pass) {
      case 0:
        EXPECT_COUNT(MPI_File_read_at_all(fh, offset, back, count, MPI_INT, &status), MPI_INT,
                     count);
        break;
      case 1:
        MPI_CHECK(MPI_File_seek(fh, offset, MPI_SEEK_SET));
        EXPECT_COUNT(MPI_File_read_all(fh, back, count, MPI_INT, &status), MPI_INT, count);
        break;
      case 2:
        MPI_CHECK(MPI_File_iread_at_all(fh, offset, back, count, MPI_INT, &request));
        EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, count);
        break;
      default:
        MPI_CHECK(MPI_File_read_at_all_begin(fh, offset, back, count, MPI_INT));
        EXPECT_COUNT(MPI_File_read_at_all_end(fh, back, &status), MPI_INT, count);
        break;
    }
    for (int i = 0; i < count; ++i) CHECK_EQ(back[i], data[i]);
    if (!active) CHECK_EQ(back[0], 0);
  }
  /* A collective in which no rank transfers anything. */
  EXPECT_COUNT(MPI_File_write_at_all(fh, 0, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_all(fh, back, 0, MPI_INT, &status), MPI_INT, 0);
  t_report(
      "zero-byte ranks: write_at_all, write_all, iwrite_at_all, write_at_all_begin and the "
      "matching reads with count %d",
      count);
}

/* Every independent and nonblocking call with count 0: a count of 0 in the
 * status, the file pointer and the size unchanged. */
static void count_zero(MPI_File fh) {
  int data[1] = {42};
  MPI_Request request;
  MPI_Offset before = -1, after = -1, size_before = -1, size_after = -1;
  MPI_CHECK(MPI_File_seek(fh, 8, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_get_position(fh, &before));
  MPI_CHECK(MPI_File_get_size(fh, &size_before));
  MPI_Barrier(MPI_COMM_WORLD);
  const MPI_Offset past = size_before + 4096;
  EXPECT_COUNT(MPI_File_write(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_c(fh, data, (MPI_Count)0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_c(fh, data, (MPI_Count)0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_at(fh, past, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_at(fh, past, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_at_c(fh, 0, data, (MPI_Count)0, MPI_DOUBLE, &status), MPI_DOUBLE, 0);
  EXPECT_COUNT(MPI_File_read_at_c(fh, 0, data, (MPI_Count)0, MPI_DOUBLE, &status), MPI_DOUBLE, 0);
  MPI_CHECK(MPI_File_iwrite(fh, data, 0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_iread(fh, data, 0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_iwrite_at(fh, past, data, 0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_iread_at_c(fh, past, data, (MPI_Count)0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_iwrite_all(fh, data, 0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_iread_all_c(fh, data, (MPI_Count)0, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_all_c(fh, data, (MPI_Count)0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_at_all_c(fh, past, data, (MPI_Count)0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_shared(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_shared(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_write_ordered(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_ordered(fh, data, 0, MPI_INT, &status), MPI_INT, 0);
  CHECK_EQ(data[0], 42);
  MPI_CHECK(MPI_File_get_position(fh, &after));
  CHECK_EQ(after, before);
  MPI_Offset shared = -1;
  MPI_CHECK(MPI_File_get_position_shared(fh, &shared));
  CHECK_EQ(shared, 0);
  t_make_visible(fh);
  MPI_CHECK(MPI_File_get_size(fh, &size_after));
  CHECK_EQ(size_after, size_before);
  t_report(
      "count 0: 20 calls (independent, collective, nonblocking, shared, ordered) report "
      "count 0; file pointer, shared pointer and size unchanged");
}

/* Independent, contiguous reads at, across and past the end of file. */
static void end_of_file(MPI_File fh) {
  MPI_Offset size = -1, position = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  int buffer[BLOCK_INTS];
  MPI_Request request;
  int counts[10];
  MPI_Count count_c = -1;

  EXPECT_COUNT(MPI_File_read_at(fh, size - 10, buffer, 40, MPI_BYTE, &status), MPI_BYTE, 10);
  counts[0] = t_count(&status, MPI_BYTE);
  EXPECT_COUNT(MPI_File_read_at(fh, size, buffer, 10, MPI_BYTE, &status), MPI_BYTE, 0);
  counts[1] = 0;
  EXPECT_COUNT(MPI_File_read_at(fh, size + 100, buffer, 10, MPI_INT, &status), MPI_INT, 0);
  counts[2] = 0;
  /* 10 bytes left: 2 ints and half of one. */
  t_garble(&status);
  MPI_CHECK(MPI_File_read_at(fh, size - 10, buffer, 4, MPI_INT, &status));
  counts[3] = t_count(&status, MPI_INT);
  int elements = -2;
  MPI_CHECK(MPI_Get_elements(&status, MPI_INT, &elements));
  counts[4] = elements;
  CHECK_EQ(t_count(&status, MPI_BYTE), 10);
  /* The file pointer moves by what was read. */
  MPI_CHECK(MPI_File_seek(fh, size - 8, MPI_SEEK_SET));
  EXPECT_COUNT(MPI_File_read(fh, buffer, 4, MPI_INT, &status), MPI_INT, 2);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  counts[5] = (int)(position - size);
  EXPECT_COUNT(MPI_File_read(fh, buffer, 4, MPI_INT, &status), MPI_INT, 0);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  counts[6] = (int)(position - size);
  MPI_CHECK(MPI_File_seek(fh, size - 12, MPI_SEEK_SET));
  t_garble(&status);
  MPI_CHECK(MPI_File_read_c(fh, buffer, (MPI_Count)BLOCK_INTS, MPI_INT, &status));
  MPI_CHECK(MPI_Get_count_c(&status, MPI_INT, &count_c));
  counts[7] = (int)count_c;
  MPI_CHECK(MPI_File_iread_at(fh, size - 4, buffer, 3, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 1);
  counts[8] = 1;
  MPI_CHECK(MPI_File_iread_at_c(fh, size + 4, buffer, (MPI_Count)3, MPI_INT, &request));
  EXPECT_COUNT(MPI_Wait(&request, &status), MPI_INT, 0);
  counts[9] = 0;
  t_report(
      "end of file (size %lld): read_at 40 bytes at size-10 -> %d, at size -> %d, at "
      "size+100 -> %d ints; 4 ints at size-10 -> count %s, elements %s, 10 bytes; read 4 "
      "ints at size-8 -> 2, pointer at size%+d, again -> 0, pointer at size%+d; read_c 16 "
      "ints at size-12 -> %d; iread_at 3 ints at size-4 -> %d, at size+4 -> %d",
      (long long)size, counts[0], counts[1], counts[2],
      counts[3] == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined",
      counts[4] == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined", counts[5], counts[6], counts[7],
      counts[8], counts[9]);
}

/* A write far past the end of file leaves a hole of zeros. */
static void far_write(void) {
  MPI_File fh;
  t_open("edges_far.dat", &fh);
  const MPI_Offset far = 1 << 20;
  if (t_rank == t_nranks - 1) {
    int value = 99;
    EXPECT_COUNT(MPI_File_write_at(fh, far, &value, 1, MPI_INT, &status), MPI_INT, 1);
  }
  t_make_visible(fh);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, far + 4);
  int hole[256];
  memset(hole, 0x33, sizeof hole);
  EXPECT_COUNT(MPI_File_read_at(fh, far / 2 + 4 * t_rank, hole, 256, MPI_INT, &status), MPI_INT,
               256);
  for (int i = 0; i < 256; ++i) CHECK_EQ(hole[i], 0);
  MPI_CHECK(MPI_File_close(&fh));
  t_report("write 1 MiB past the end: size %lld, the hole reads as zeros", (long long)size);
}

static void empty_file(void) {
  MPI_File fh;
  t_open("edges_empty.dat", &fh);
  int buffer[4];
  EXPECT_COUNT(MPI_File_read(fh, buffer, 4, MPI_INT, &status), MPI_INT, 0);
  EXPECT_COUNT(MPI_File_read_at(fh, 0, buffer, 4, MPI_INT, &status), MPI_INT, 0);
  MPI_Offset size = -1, position = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_END));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  MPI_CHECK(MPI_File_close(&fh));
  t_report("empty file: reads return 0, size %lld, SEEK_END to %lld", (long long)size,
           (long long)position);
}

/* GCC 12 takes MPI_STATUSES_IGNORE, MPICH's (MPI_Status*)1, for an array
 * of size 0 and warns (-Wstringop-overflow) where it is passed. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

/* Every call that takes a status, with MPI_STATUS_IGNORE (or
 * MPI_STATUSES_IGNORE); rank r's ints go to its own 256-byte region. */
static void statuses_ignored(void) {
  MPI_File fh;
  t_open("edges_ignore.dat", &fh);
  MPI_Status* const ignore = MPI_STATUS_IGNORE;
  const MPI_Offset base = (MPI_Offset)t_rank * 256;
  int v[64], back[64];
  for (int i = 0; i < 64; ++i) v[i] = 5000 * (t_rank + 1) + i;
  MPI_Request requests[4];
  /* Writes of 2 ints each at consecutive places of the region: ints
   * v[2k], v[2k+1] go to base + 8k. */
  MPI_CHECK(MPI_File_seek(fh, base, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_write(fh, v + 0, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_c(fh, v + 2, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_all(fh, v + 4, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_all_c(fh, v + 6, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_at(fh, base + 32, v + 8, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_at_c(fh, base + 40, v + 10, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_at_all(fh, base + 48, v + 12, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_at_all_c(fh, base + 56, v + 14, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_seek(fh, base + 64, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_write_all_begin(fh, v + 16, 2, MPI_INT));
  MPI_CHECK(MPI_File_write_all_end(fh, v + 16, ignore));
  MPI_CHECK(MPI_File_write_at_all_begin(fh, base + 72, v + 18, 2, MPI_INT));
  MPI_CHECK(MPI_File_write_at_all_end(fh, v + 18, ignore));
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 80, v + 20, 2, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_Wait(&requests[0], ignore));
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 88, v + 22, 2, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iwrite_at_c(fh, base + 96, v + 24, (MPI_Count)2, MPI_INT, &requests[1]));
  MPI_CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 104, v + 26, 2, MPI_INT, &requests[0]));
  int index = -1, flag = 0;
  MPI_CHECK(MPI_Waitany(1, requests, &index, ignore));
  CHECK_EQ(index, 0);
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 112, v + 28, 2, MPI_INT, &requests[0]));
  while (!flag) MPI_CHECK(MPI_Test(&requests[0], &flag, ignore));
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 120, v + 30, 2, MPI_INT, &requests[0]));
  flag = 0;
  while (!flag) MPI_CHECK(MPI_Testall(1, requests, &flag, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_File_iwrite_at(fh, base + 128, v + 32, 2, MPI_INT, &requests[0]));
  int outcount = 0, indices[1];
  while (outcount != MPI_UNDEFINED)
    MPI_CHECK(MPI_Waitsome(1, requests, &outcount, indices, MPI_STATUSES_IGNORE));
  t_make_visible(fh);

  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_seek(fh, base, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_read(fh, back + 0, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_c(fh, back + 2, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_all(fh, back + 4, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_all_c(fh, back + 6, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_at(fh, base + 32, back + 8, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_at_c(fh, base + 40, back + 10, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_at_all(fh, base + 48, back + 12, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_at_all_c(fh, base + 56, back + 14, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_seek(fh, base + 64, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_read_all_begin(fh, back + 16, 2, MPI_INT));
  MPI_CHECK(MPI_File_read_all_end(fh, back + 16, ignore));
  MPI_CHECK(MPI_File_read_at_all_begin(fh, base + 72, back + 18, 2, MPI_INT));
  MPI_CHECK(MPI_File_read_at_all_end(fh, back + 18, ignore));
  MPI_CHECK(MPI_File_iread_at(fh, base + 80, back + 20, 14, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_Wait(&requests[0], ignore));
  for (int i = 0; i < 34; ++i) CHECK_EQ(back[i], v[i]);
  MPI_CHECK(MPI_File_close(&fh));

  /* The shared-pointer calls, in a file of their own regions after all
   * ranks' regions. */
  t_open("edges_ignore.dat", &fh);
  MPI_Offset end = (MPI_Offset)t_nranks * 256;
  MPI_CHECK(MPI_File_set_view(fh, end, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  MPI_CHECK(MPI_File_write_ordered(fh, v, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_ordered_c(fh, v + 2, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_ordered_begin(fh, v + 4, 2, MPI_INT));
  MPI_CHECK(MPI_File_write_ordered_end(fh, v + 4, ignore));
  MPI_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_read_ordered(fh, back, 2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_ordered_c(fh, back + 2, (MPI_Count)2, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_ordered_begin(fh, back + 4, 2, MPI_INT));
  MPI_CHECK(MPI_File_read_ordered_end(fh, back + 4, ignore));
  for (int i = 0; i < 6; ++i) CHECK_EQ(back[i], v[i]);
  /* Unordered shared writes of the same value from every rank: whichever
   * order they land in, the content is the same. */
  const int same = 777;
  MPI_CHECK(MPI_File_seek_shared(fh, 6 * t_nranks, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_write_shared(fh, &same, 1, MPI_INT, ignore));
  MPI_CHECK(MPI_File_write_shared_c(fh, &same, (MPI_Count)1, MPI_INT, ignore));
  MPI_CHECK(MPI_File_iwrite_shared(fh, &same, 1, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iwrite_shared_c(fh, &same, (MPI_Count)1, MPI_INT, &requests[1]));
  MPI_CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  t_make_visible(fh);
  MPI_CHECK(MPI_File_seek_shared(fh, 6 * t_nranks, MPI_SEEK_SET));
  int got[4];
  MPI_CHECK(MPI_File_read_shared(fh, got + 0, 1, MPI_INT, ignore));
  MPI_CHECK(MPI_File_read_shared_c(fh, got + 1, (MPI_Count)1, MPI_INT, ignore));
  MPI_CHECK(MPI_File_iread_shared(fh, got + 2, 1, MPI_INT, &requests[0]));
  MPI_CHECK(MPI_File_iread_shared_c(fh, got + 3, (MPI_Count)1, MPI_INT, &requests[1]));
  MPI_CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK_EQ(got[i], same);
  MPI_CHECK(MPI_File_close(&fh));
  t_report("MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE accepted by every call that takes a status");
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

int main(int argc, char** argv) {
  t_init(&argc, &argv, "edges");
  MPI_File fh;
  t_open("edges.dat", &fh);
  zero_byte_ranks(fh);
  count_zero(fh);
  t_make_visible(fh);
  end_of_file(fh);
  MPI_CHECK(MPI_File_close(&fh));
  far_write();
  empty_file();
  statuses_ignored();
  return t_finish();
}
