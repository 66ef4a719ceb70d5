/* The shared file pointer across many opens and closes: every file starts
 * with its shared pointer at 0, also when it is opened right after
 * another file whose pointer moved; 66 files open at once on one
 * communicator each keep their own pointer; a file opened on a
 * communicator that the program frees while the file is open keeps
 * working until it is closed. (flowio keeps the pointers in slots of one
 * window per communicator; these are the cases that reuse a slot, run out
 * of slots and outlive the communicator.) */
#include "mpiio_test.h"

enum { ROUNDS = 10, AT_ONCE = 66 };

/* Collective: each rank appends one int with write_shared; returns the
 * pointer afterwards (the same on every rank). */
static MPI_Offset append_one(MPI_File fh, int value) {
  MPI_CHECK(MPI_File_write_shared(fh, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position_shared(fh, &position));
  MPI_Barrier(MPI_COMM_WORLD);
  return position;
}

static void open_on(MPI_Comm comm, const char* name, MPI_File* fh) {
  char path[4096];
  t_path(path, sizeof path, name);
  MPI_CHECK(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "shared_reopen");

  /* Open, move the pointer, close; again and again. */
  int fresh_at_open = 1, moved = 1;
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_File fh;
    open_on(MPI_COMM_WORLD, "reopened.dat", &fh);
    MPI_Offset position = -1;
    MPI_CHECK(MPI_File_get_position_shared(fh, &position));
    fresh_at_open = fresh_at_open && position == 0;
    MPI_Barrier(MPI_COMM_WORLD);
    moved = moved && append_one(fh, round) == t_nranks * (MPI_Offset)sizeof(int);
    MPI_CHECK(MPI_File_close(&fh));
  }

  /* MPI_File_set_view resets the shared pointer: after one rank alone
   * moved it (the others cannot know), and when nobody did. */
  int reset_by_view = 1;
  {
    MPI_File fh;
    open_on(MPI_COMM_WORLD, "view_reset.dat", &fh);
    for (int round = 0; round < 3; ++round) {
      if (round < 2 && t_rank == t_nranks - 1) {
        int value = round;
        MPI_CHECK(MPI_File_write_shared(fh, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
      }
      MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
      MPI_Offset position = -1;
      MPI_CHECK(MPI_File_get_position_shared(fh, &position));
      reset_by_view = reset_by_view && position == 0;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_CHECK(MPI_File_close(&fh));
  }

  /* Many files open at once, each pointer moved a different distance. */
  MPI_File files[AT_ONCE];
  for (int i = 0; i < AT_ONCE; ++i) {
    char name[64];
    snprintf(name, sizeof name, "at_once_%d.dat", i);
    open_on(MPI_COMM_WORLD, name, &files[i]);
  }
  for (int i = 0; i < AT_ONCE; ++i)
    for (int k = 0; k < i % 3; ++k) append_one(files[i], k);
  int separate = 1;
  for (int i = 0; i < AT_ONCE; ++i) {
    MPI_Offset position = -1;
    MPI_CHECK(MPI_File_get_position_shared(files[i], &position));
    separate = separate && position == (MPI_Offset)(i % 3) * t_nranks * (MPI_Offset)sizeof(int);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < AT_ONCE; ++i) MPI_CHECK(MPI_File_close(&files[i]));

  /* The communicator freed while its file is open, then a new one. */
  int outlived = 1;
  for (int round = 0; round < 2; ++round) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_File fh;
    open_on(comm, "outlived.dat", &fh);
    MPI_Comm_free(&comm);
    outlived = outlived && append_one(fh, 7) == t_nranks * (MPI_Offset)sizeof(int);
    outlived = outlived && append_one(fh, 8) == 2 * t_nranks * (MPI_Offset)sizeof(int);
    MPI_CHECK(MPI_File_close(&fh));
  }

  t_report(
      "%d reopenings: pointer 0 at open %s, moved %s; set_view resets it: %s; %d files at once: "
      "separate %s; communicator freed first: %s",
      ROUNDS, fresh_at_open ? "yes" : "NO", moved ? "yes" : "NO", reset_by_view ? "yes" : "NO",
      AT_ONCE, separate ? "yes" : "NO", outlived ? "works" : "BROKEN");
  return t_finish();
}
