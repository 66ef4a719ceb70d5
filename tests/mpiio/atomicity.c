/* Atomic mode: set_atomicity/get_atomicity; writes by one rank seen by
 * another after a barrier without sync; concurrent overlapping writes,
 * independent and collective, contiguous and through a view with holes,
 * after which every overlapped region holds exactly one rank's data.
 *
 * Outputs:
 *   atomicity_turns.dat           ranks overwrite one region in turn (the
 *                                 last rank's data remains)
 *   nondet_atomicity_indep.dat    concurrent independent writes: which rank
 *   nondet_atomicity_coll.dat     wins each round differs between runs, so
 *                                 only rank-independent facts are printed */
#include "mpiio_test.h"

enum {
  ROUNDS = 8,
  BLOCKS = 8,        /* blocks of the view with holes */
  BLOCK_INTS = 256,  /* ints in each */
  STRIDE_INTS = 512, /* from block to block */
  VIEW_INTS = BLOCKS * BLOCK_INTS,
  VIEW_EXTENT_BYTES = ((BLOCKS - 1) * STRIDE_INTS + BLOCK_INTS) * 4,
  CONTIG_INTS = 16384, /* 64 KiB */
  CONTIG_OFFSET = 16384
};
_Static_assert(VIEW_EXTENT_BYTES <= CONTIG_OFFSET,
               "the view's blocks end before the contiguous region");

/* What rank `rank` writes in round `round`. */
static int datum(int rank, int round, int index) {
  return (rank + 1) * 10000000 + round * 100000 + index;
}

/* The rank whose round-`round` data `data` is, or -1 if none (mixed). */
static int owner_of(const int* data, int count, int round) {
  for (int r = 0; r < t_nranks; ++r) {
    int all = 1;
    for (int i = 0; i < count && all; ++i) all = data[i] == datum(r, round, i);
    if (all) return r;
  }
  return -1;
}

static void set_atomic(MPI_File fh, int flag) {
  MPI_CHECK(MPI_File_set_atomicity(fh, flag));
  int got = -1;
  MPI_CHECK(MPI_File_get_atomicity(fh, &got));
  CHECK_EQ(got, flag);
}

/* Ranks overwrite the same 64 ints in turn; after each write and a barrier
 * (no sync: atomic mode makes the write visible) every rank reads it. */
static void in_turn(void) {
  MPI_File fh;
  t_open("atomicity_turns.dat", &fh);
  int flag = -1;
  MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
  CHECK_EQ(flag, 0);
  set_atomic(fh, 1);
  int data[64], back[64];
  MPI_Status status;
  for (int turn = 0; turn < t_nranks; ++turn) {
    if (t_rank == turn) {
      for (int i = 0; i < 64; ++i) data[i] = datum(turn, 0, i);
      MPI_CHECK(MPI_File_write_at(fh, 4 * turn, data, 64, MPI_INT, &status));
      CHECK_EQ(t_count(&status, MPI_INT), 64);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_CHECK(MPI_File_read_at(fh, 4 * turn, back, 64, MPI_INT, &status));
    CHECK_EQ(t_count(&status, MPI_INT), 64);
    CHECK_EQ(owner_of(back, 64, 0), turn);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  set_atomic(fh, 0);
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "in turn: get_atomicity 0 after open, 1 after set; each rank's write seen by all "
      "after a barrier without sync");
}

/* The view shared by all ranks: BLOCKS blocks of BLOCK_INTS ints, holes
 * between them. */
static MPI_Datatype holes_filetype(void) {
  MPI_Datatype filetype;
  MPI_Type_vector(BLOCKS, BLOCK_INTS, STRIDE_INTS, MPI_INT, &filetype);
  MPI_Type_commit(&filetype);
  return filetype;
}

/* Every rank writes the same regions at the same time, round after round;
 * afterwards each region must hold one rank's data, whole. Returns the
 * number of (region, round) pairs found mixed. */
static int concurrent(const char* name, int collective) {
  MPI_File fh;
  t_open(name, &fh);
  /* Give the file its size first, so that the holes of the view are zeros
   * below the end of file (see noncontig.c on MPICH's data sieving). */
  MPI_CHECK(MPI_File_set_size(fh, (MPI_Offset)CONTIG_OFFSET + 4 * CONTIG_INTS));
  set_atomic(fh, 1);
  MPI_Datatype filetype = holes_filetype();
  int* contiguous = malloc(sizeof(int) * CONTIG_INTS);
  int* strided = malloc(sizeof(int) * VIEW_INTS);
  int* back = malloc(sizeof(int) * CONTIG_INTS);
  CHECK(contiguous && strided && back);
  int mixed = 0;
  MPI_Status status;
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < CONTIG_INTS; ++i) contiguous[i] = datum(t_rank, round, i);
    for (int i = 0; i < VIEW_INTS; ++i) strided[i] = datum(t_rank, round, i);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, filetype, "native", MPI_INFO_NULL));
    if (collective) {
      MPI_CHECK(MPI_File_write_at_all(fh, 0, strided, VIEW_INTS, MPI_INT, &status));
    } else {
      MPI_CHECK(MPI_File_write_at(fh, 0, strided, VIEW_INTS, MPI_INT, &status));
    }
    CHECK_EQ(t_count(&status, MPI_INT), VIEW_INTS);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (collective) {
      MPI_CHECK(
          MPI_File_write_at_all(fh, CONTIG_OFFSET, contiguous, CONTIG_INTS, MPI_INT, &status));
    } else {
      MPI_CHECK(MPI_File_write_at(fh, CONTIG_OFFSET, contiguous, CONTIG_INTS, MPI_INT, &status));
    }
    CHECK_EQ(t_count(&status, MPI_INT), CONTIG_INTS);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_CHECK(MPI_File_read_at(fh, CONTIG_OFFSET, back, CONTIG_INTS, MPI_INT, &status));
    CHECK_EQ(t_count(&status, MPI_INT), CONTIG_INTS);
    mixed += owner_of(back, CONTIG_INTS, round) < 0;
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, filetype, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_read_at(fh, 0, back, VIEW_INTS, MPI_INT, &status));
    CHECK_EQ(t_count(&status, MPI_INT), VIEW_INTS);
    mixed += owner_of(back, VIEW_INTS, round) < 0;
    /* The holes were never written. */
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_CHECK(
        MPI_File_read_at(fh, 4 * BLOCK_INTS, back, STRIDE_INTS - BLOCK_INTS, MPI_INT, &status));
    for (int i = 0; i < STRIDE_INTS - BLOCK_INTS; ++i) CHECK_EQ(back[i], 0);
  }
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, (MPI_Offset)CONTIG_OFFSET + 4 * CONTIG_INTS);
  set_atomic(fh, 0);
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&filetype);
  free(back);
  free(strided);
  free(contiguous);
  return mixed;
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "atomicity");
  in_turn();
  int mixed = concurrent("nondet_atomicity_indep.dat", 0);
  t_report(
      "independent: %d rounds of overlapping write_at (contiguous 64 KiB; view with "
      "holes), regions mixed: %d",
      ROUNDS, mixed);
  CHECK_EQ(mixed, 0);
  mixed = concurrent("nondet_atomicity_coll.dat", 1);
  t_report(
      "collective: %d rounds of overlapping write_at_all (contiguous 64 KiB; view with "
      "holes), regions mixed: %d",
      ROUNDS, mixed);
  CHECK_EQ(mixed, 0);
  return t_finish();
}
