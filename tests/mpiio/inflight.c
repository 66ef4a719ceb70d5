/* More nonblocking operations in flight on one file than a message tag can
 * tell apart (flowio keeps 8 bits of an operation's number in its tags),
 * of mixed kinds at once: collective writes and reads, independent writes,
 * split collectives begun and ended in between, and a second file handle
 * of the same file with another view, its operations in flight beside the
 * first's. Every byte is checked afterwards, on every rank.
 *
 * Usage: inflight OUTPUT_DIRECTORY [OPERATIONS] (default 1200 per phase)
 *
 * Outputs:
 *   inflight.dat  regions of BLOCKS blocks of BLOCK bytes per rank,
 *                 interleaved between ranks block by block (a vector view);
 *                 region i written by the operation of phase A or B
 *                 numbered i, byte j of a rank's part of it value(rank, i, j)
 *   second.dat    per rank a strip of SECOND bytes per operation, written
 *                 contiguously through a second view */
#include "mpiio_test.h"

enum { BLOCKS = 4, BLOCK = 64, PART = BLOCKS * BLOCK, SECOND = 32 };

static unsigned char value(int rank, int region, int j) {
  return (unsigned char)(rank * 31 + region * 7 + j * 3 + region / 256);
}

/* Each rank's BLOCKS blocks of every region, one after another in the file
 * (blocks of the ranks interleaved). */
static MPI_Datatype interleaved_view(void) {
  MPI_Datatype vector, view;
  MPI_Type_vector(BLOCKS, BLOCK, BLOCK * t_nranks, MPI_BYTE, &vector);
  MPI_Type_create_resized(vector, 0, (MPI_Aint)PART * t_nranks, &view);
  MPI_Type_commit(&view);
  MPI_Type_free(&vector);
  return view;
}

static void fill(unsigned char* part, int region) {
  for (int j = 0; j < PART; ++j) part[j] = value(t_rank, region, j);
}

static void wait_all(int count, MPI_Request* requests) {
  MPI_Status* statuses = malloc(sizeof(MPI_Status) * (size_t)count);
  CHECK(statuses != NULL);
  MPI_CHECK(MPI_Waitall(count, requests, statuses));
  free(statuses);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "inflight");
  const int operations = argc > 2 ? atoi(argv[2]) : 1200;
  CHECK(operations >= 512);
  MPI_File fh, second;
  t_open("inflight.dat", &fh);
  t_open("second.dat", &second);
  MPI_Datatype view = interleaved_view();
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * BLOCK, MPI_BYTE, view, "native", MPI_INFO_NULL));
  MPI_CHECK(MPI_File_set_view(second, (MPI_Offset)t_rank * operations * SECOND, MPI_BYTE, MPI_BYTE,
                              "native", MPI_INFO_NULL));
  unsigned char* parts = malloc((size_t)2 * operations * PART);
  unsigned char* read_back = calloc((size_t)operations, PART);
  unsigned char* strips = malloc((size_t)operations * SECOND);
  MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)3 * operations);
  CHECK(parts != NULL && read_back != NULL && strips != NULL && requests != NULL);
  for (int region = 0; region < 2 * operations; ++region)
    fill(parts + (size_t)region * PART, region);
  for (int i = 0; i < operations * SECOND; ++i) strips[i] = (unsigned char)(t_rank + i * 5);

  /* Phase A: regions 0..operations-1, collective and independent writes
   * alternating, all in flight before the first wait. */
  t_doing("phase A: writes in flight");
  for (int region = 0; region < operations; ++region) {
    const MPI_Offset at = (MPI_Offset)region * PART;
    unsigned char* data = parts + (size_t)region * PART;
    if (region % 3 == 2) {
      MPI_CHECK(MPI_File_iwrite_at(fh, at, data, PART, MPI_BYTE, &requests[region]));
    } else {
      MPI_CHECK(MPI_File_iwrite_at_all(fh, at, data, PART, MPI_BYTE, &requests[region]));
    }
  }
  wait_all(operations, requests);
  MPI_CHECK(MPI_File_sync(fh));

  /* Phase B: reads of phase A's regions, writes of the next ones (collective
   * and independent), the second handle's writes, and a split collective
   * every 100 calls, all in flight at once. */
  t_doing("phase B: reads and writes in flight on two handles");
  int posted = 0;
  for (int i = 0; i < operations; ++i) {
    const int region = operations + i;
    MPI_CHECK(MPI_File_iread_at_all(fh, (MPI_Offset)i * PART, read_back + (size_t)i * PART, PART,
                                    MPI_BYTE, &requests[posted++]));
    unsigned char* data = parts + (size_t)region * PART;
    const MPI_Offset at = (MPI_Offset)region * PART;
    if (i % 100 == 50) {
      MPI_CHECK(MPI_File_write_at_all_begin(fh, at, data, PART, MPI_BYTE));
      MPI_Status status;
      MPI_CHECK(MPI_File_write_at_all_end(fh, data, &status));
      CHECK_EQ(t_count(&status, MPI_BYTE), PART);
    } else if (i % 2 == 1) {
      MPI_CHECK(MPI_File_iwrite_at(fh, at, data, PART, MPI_BYTE, &requests[posted++]));
    } else {
      MPI_CHECK(MPI_File_iwrite_at_all(fh, at, data, PART, MPI_BYTE, &requests[posted++]));
    }
    MPI_CHECK(MPI_File_iwrite_at_all(second, (MPI_Offset)i * SECOND, strips + (size_t)i * SECOND,
                                     SECOND, MPI_BYTE, &requests[posted++]));
  }
  wait_all(posted, requests);

  int wrong = memcmp(read_back, parts, (size_t)operations * PART) != 0;
  t_doing("check: everything read back");
  unsigned char* all = calloc((size_t)2 * operations, PART);
  CHECK(all != NULL);
  MPI_CHECK(MPI_File_sync(fh));
  MPI_CHECK(MPI_File_read_at_all(fh, 0, all, 2 * operations * PART, MPI_BYTE, MPI_STATUS_IGNORE));
  wrong += memcmp(all, parts, (size_t)2 * operations * PART) != 0;
  unsigned char* strips_back = calloc((size_t)operations, SECOND);
  CHECK(strips_back != NULL);
  MPI_CHECK(MPI_File_read_at_all(second, 0, strips_back, operations * SECOND, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
  wrong += memcmp(strips_back, strips, (size_t)operations * SECOND) != 0;
  t_report("%d operations per phase in flight: %s", operations,
           wrong == 0 ? "every byte right" : "WRONG BYTES");

  MPI_CHECK(MPI_File_close(&fh));
  MPI_CHECK(MPI_File_close(&second));
  MPI_Type_free(&view);
  free(parts);
  free(read_back);
  free(strips);
  free(strips_back);
  free(all);
  free(requests);
  return t_finish();
}
