/* Corners of the MPI 4.1 I/O chapter the other programs of this directory
 * leave out, each printed so that MPICH's MPI-IO is the oracle:
 *   - open: MPI_MODE_UNIQUE_OPEN (accepted, kept in get_amode), file
 *     pointers of an MPI_MODE_APPEND file, a "ufs:" file name prefix in
 *     open and delete, the classes of opening a directory and a file in a
 *     missing directory, and on MPI_COMM_NULL; deleting a file that is
 *     open; the hints MPI reserves (ignored), the permissions of a new
 *     file;
 *   - views: set_view resets the individual and the shared file pointer;
 *     positions and explicit offsets in units of a derived etype; seek
 *     from the end and get_byte_offset under a filetype with holes; the
 *     upper-case datarep names ROMIO accepts, and what get_view returns;
 *   - data access: a memory type of absolute addresses at MPI_BOTTOM; a
 *     read of a derived type cut short by the end of file (MPI_Get_count
 *     MPI_UNDEFINED, MPI_Get_elements the basic elements read, the file
 *     pointer advanced by what was read); three nonblocking collectives
 *     outstanding at once, completed in reverse order; a file request
 *     passed to MPI_Cancel (it completes; MPI_Test_cancelled says no);
 *   - split collectives: a second begin, and an end without a begin;
 *   - set_atomicity with a flag that differs between processes.
 *
 * Outputs: corners_*.dat (all deterministic). */
#include "mpiio_test.h"

#include <errno.h>
#include <sys/stat.h>

enum { INTS = 8 };

static void path_of(const char* name, char* path, size_t size) { t_path(path, size, name); }

/* The class of `code`, or "MPI_SUCCESS". */
static const char* outcome(int code) {
  return t_class_name(code == MPI_SUCCESS ? MPI_SUCCESS : t_class_of(code));
}

static void unique_open_and_prefix(void) {
  char path[4096], prefixed[4200];
  path_of("corners_unique.dat", path, sizeof path);
  snprintf(prefixed, sizeof prefixed, "ufs:%s", path);
  MPI_File fh = MPI_FILE_NULL;
  const int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, prefixed, amode, MPI_INFO_NULL, &fh));
  int got = -1;
  MPI_CHECK(MPI_File_get_amode(fh, &got));
  CHECK_EQ(got, amode);
  int value = 1000 + t_rank;
  MPI_CHECK(MPI_File_write_at(fh, t_rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT,
                              MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  /* The plain name reaches the file the prefixed one made. */
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, t_nranks * (MPI_Offset)sizeof value);
  MPI_CHECK(MPI_File_close(&fh));
  /* A copy that stays, for the byte comparison, then delete by prefix. */
  char kept[4096];
  path_of("corners_prefixed.dat", kept, sizeof kept);
  snprintf(prefixed, sizeof prefixed, "ufs:%s", kept);
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, prefixed, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh));
  MPI_CHECK(MPI_File_write_at_all(fh, t_rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT,
                                  MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  int deleted = MPI_SUCCESS;
  if (t_rank == 0) {
    snprintf(prefixed, sizeof prefixed, "ufs:%s", path);
    deleted = MPI_File_delete(prefixed, MPI_INFO_NULL);
  }
  MPI_Bcast(&deleted, 1, MPI_INT, 0, MPI_COMM_WORLD);
  struct stat st;
  const int gone = stat(path, &st) != 0 && errno == ENOENT;
  t_report(
      "UNIQUE_OPEN kept by get_amode; \"ufs:\" prefix: open reaches the file, delete %s, "
      "file gone: %s",
      outcome(deleted), gone ? "yes" : "no");
}

/* The hints MPI reserves that flowio and ROMIO have no use for: accepted,
 * ignored, and so absent from get_info; file_perm too, so a new file gets
 * what the umask allows of read and write for all (ROMIO's choice). */
static void reserved_hints_and_permissions(void) {
  static const char* const reserved[][2] = {
      {"access_style", "read_once,write_mostly"},
      {"collective_buffering", "true"},
      {"file_perm", "0600"},
      {"io_node_list", "nodeA,nodeB"},
      {"nb_proc", "2"},
      {"num_io_nodes", "1"},
      {"chunked", "10,10"},
      {"chunked_item", "4"},
      {"chunked_size", "5,5"},
      {"filename", "another_name.dat"},
  };
  enum { RESERVED = sizeof reserved / sizeof reserved[0] };
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  for (int i = 0; i < RESERVED; ++i) MPI_CHECK(MPI_Info_set(info, reserved[i][0], reserved[i][1]));
  char path[4096];
  path_of("corners_permissions.dat", path, sizeof path);
  const mode_t before = umask(002);
  MPI_File fh = MPI_FILE_NULL;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
  umask(before);
  MPI_CHECK(MPI_Info_free(&info));
  int value = 600 + t_rank;
  MPI_CHECK(MPI_File_write_at_all(fh, t_rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT,
                                  MPI_STATUS_IGNORE));
  MPI_Info used = MPI_INFO_NULL;
  MPI_CHECK(MPI_File_get_info(fh, &used));
  int reported = 0;
  for (int i = 0; i < RESERVED; ++i) {
    char text[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(used, reserved[i][0], MPI_MAX_INFO_VAL, text, &flag));
    reported += flag;
  }
  MPI_CHECK(MPI_Info_free(&used));
  MPI_CHECK(MPI_File_close(&fh));
  struct stat st;
  CHECK(stat(path, &st) == 0);
  t_report(
      "%d reserved hints accepted, %d reported by get_info; the file, created under umask "
      "002, has mode %03o",
      RESERVED, reported, (unsigned)(st.st_mode & 0777));
}

static void open_failures(void) {
  char directory[4096], missing_parent[4096];
  path_of("", directory, sizeof directory);
  path_of("no_such_directory/corners.dat", missing_parent, sizeof missing_parent);
  MPI_File fh = MPI_FILE_NULL;
  const int on_null = MPI_File_open(MPI_COMM_NULL, directory, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  CHECK(fh == MPI_FILE_NULL);
  const int on_directory =
      MPI_File_open(MPI_COMM_WORLD, directory, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  CHECK(fh == MPI_FILE_NULL);
  const int in_missing = MPI_File_open(MPI_COMM_WORLD, missing_parent,
                                       MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  CHECK(fh == MPI_FILE_NULL);
  t_report("open on MPI_COMM_NULL: %s; a directory RDWR: %s; create in a missing directory: %s",
           outcome(on_null), outcome(on_directory), outcome(in_missing));
}

/* MPI leaves deleting an open file to the implementation; ROMIO unlinks it
 * and the open handle goes on working. */
static void delete_while_open(void) {
  char path[4096];
  path_of("corners_deleted.dat", path, sizeof path);
  MPI_File fh = MPI_FILE_NULL;
  MPI_CHECK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  int deleted = MPI_SUCCESS;
  if (t_rank == 0) deleted = MPI_File_delete(path, MPI_INFO_NULL);
  MPI_Bcast(&deleted, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int value = 77 + t_rank, back = -1;
  MPI_CHECK(MPI_File_write_at_all(fh, t_rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT,
                                  MPI_STATUS_IGNORE));
  t_make_visible(fh);
  MPI_CHECK(MPI_File_read_at(fh, t_rank * (MPI_Offset)sizeof value, &back, 1, MPI_INT,
                             MPI_STATUS_IGNORE));
  CHECK_EQ(back, value);
  MPI_CHECK(MPI_File_close(&fh));
  struct stat st;
  const int gone = stat(path, &st) != 0 && errno == ENOENT;
  t_report("delete while open: %s, the open handle still reads and writes, file gone: %s",
           outcome(deleted), gone ? "yes" : "no");
}

static void append_pointers(void) {
  char path[4096];
  path_of("corners_append.dat", path, sizeof path);
  MPI_File fh = MPI_FILE_NULL;
  int data[INTS];
  for (int i = 0; i < INTS; ++i) data[i] = i;
  MPI_CHECK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  if (t_rank == 0) MPI_CHECK(MPI_File_write_at(fh, 0, data, INTS, MPI_INT, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_CHECK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_Offset individual = -1, shared = -1;
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  MPI_CHECK(MPI_File_get_position_shared(fh, &shared));
  MPI_Barrier(MPI_COMM_WORLD);
  /* An ordered write lands after the old end. */
  int mine = 500 + t_rank;
  MPI_CHECK(MPI_File_write_ordered(fh, &mine, 1, MPI_INT, MPI_STATUS_IGNORE));
  t_make_visible(fh);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "APPEND|RDWR on %d bytes: individual pointer %lld, shared pointer %lld; after "
      "write_ordered the size is %lld",
      (int)sizeof data, (long long)individual, (long long)shared, (long long)size);
}

/* A filetype of `count` ints, one every other int (a hole after each). */
static MPI_Datatype every_other_int(void) {
  MPI_Datatype vector, resized;
  MPI_CHECK(MPI_Type_vector(1, 1, 2, MPI_INT, &vector));
  MPI_CHECK(MPI_Type_create_resized(vector, 0, 2 * sizeof(int), &resized));
  MPI_CHECK(MPI_Type_commit(&resized));
  MPI_Type_free(&vector);
  return resized;
}

static void view_corners(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_view.dat", &fh);
  const MPI_Offset base = t_rank * 64 * (MPI_Offset)sizeof(int);
  int data[64];
  for (int i = 0; i < 64; ++i) data[i] = 100 * t_rank + i;
  MPI_CHECK(MPI_File_write_at_all(fh, base, data, 64, MPI_INT, MPI_STATUS_IGNORE));

  /* set_view resets both pointers. */
  MPI_CHECK(MPI_File_seek(fh, 12, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_seek_shared(fh, 5, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  MPI_Offset individual = -1, shared = -1;
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  MPI_CHECK(MPI_File_get_position_shared(fh, &shared));
  t_report("set_view resets the pointers: individual %lld, shared %lld", (long long)individual,
           (long long)shared);
  t_make_visible(fh);

  /* A derived etype of 3 ints: offsets and positions count etypes. */
  MPI_Datatype triple;
  MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &triple));
  MPI_CHECK(MPI_Type_commit(&triple));
  MPI_CHECK(MPI_File_set_view(fh, base, triple, triple, "native", MPI_INFO_NULL));
  int at_two[3] = {0, 0, 0}, got[3] = {0, 0, 0};
  MPI_Status status;
  MPI_CHECK(MPI_File_read_at(fh, 2, at_two, 1, triple, &status));
  CHECK_EQ(at_two[0], 100 * t_rank + 6);
  MPI_CHECK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_read(fh, got, 1, triple, &status));
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  MPI_Offset byte = -1;
  MPI_CHECK(MPI_File_get_byte_offset(fh, individual, &byte));
  t_report(
      "etype of 3 ints: read at etype 1 gives %d %d %d, position after %lld, its byte "
      "offset %lld",
      got[0] - 100 * t_rank, got[1] - 100 * t_rank, got[2] - 100 * t_rank, (long long)individual,
      (long long)(byte - base));
  MPI_Type_free(&triple);

  /* A filetype with holes: seek from the end (of the file, in the view). */
  MPI_Datatype holes = every_other_int();
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, holes, "native", MPI_INFO_NULL));
  MPI_CHECK(MPI_File_seek(fh, -3, MPI_SEEK_END));
  MPI_CHECK(MPI_File_get_position(fh, &individual));
  MPI_CHECK(MPI_File_get_byte_offset(fh, individual, &byte));
  MPI_CHECK(MPI_File_get_byte_offset(fh, 5, &shared));
  t_report(
      "filetype with holes: seek(-3, SEEK_END) is etype %lld at byte %lld; etype 5 is at "
      "byte %lld",
      (long long)individual, (long long)byte, (long long)shared);

  /* Upper-case names of the predefined representations, which ROMIO
   * accepts. get_view's name for "internal" is not printed: ROMIO says
   * "native", the layer the name the view was set with. */
  const char* names[] = {"NATIVE", "EXTERNAL32", "INTERNAL"};
  for (int i = 0; i < 3; ++i) {
    char back[MPI_MAX_DATAREP_STRING] = "";
    const int code = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, names[i], MPI_INFO_NULL);
    if (code == MPI_SUCCESS) {
      MPI_Offset disp = -1;
      MPI_Datatype etype, filetype;
      MPI_CHECK(MPI_File_get_view(fh, &disp, &etype, &filetype, back));
      if (strcmp(names[i], "INTERNAL") == 0) snprintf(back, sizeof back, "-");
    }
    t_report("set_view datarep \"%s\": %s; get_view says \"%s\"", names[i], outcome(code), back);
  }
  MPI_Type_free(&holes);
  MPI_CHECK(MPI_File_close(&fh));
}

/* Two ints and a double in three separate variables, written and read by
 * absolute address through a struct type at MPI_BOTTOM. */
static void absolute_addresses(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_bottom.dat", &fh);
  int first = 11 + t_rank, second = 22 + t_rank;
  double third = 0.5 + t_rank;
  MPI_Aint where[3];
  MPI_Get_address(&first, &where[0]);
  MPI_Get_address(&third, &where[1]);
  MPI_Get_address(&second, &where[2]);
  const int lengths[3] = {1, 1, 1};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
  MPI_Datatype absolute;
  MPI_CHECK(MPI_Type_create_struct(3, lengths, where, types, &absolute));
  MPI_CHECK(MPI_Type_commit(&absolute));
  const MPI_Offset at = t_rank * 16;
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at_all(fh, at, MPI_BOTTOM, 1, absolute, &status));
  CHECK_EQ(t_count(&status, absolute), 1);
  t_make_visible(fh);
  first = second = 0;
  third = 0.0;
  MPI_CHECK(MPI_File_read_at(fh, at, MPI_BOTTOM, 1, absolute, &status));
  CHECK_EQ(t_count(&status, absolute), 1);
  t_report("MPI_BOTTOM with absolute addresses: read back %d %g %d", first - t_rank, third - t_rank,
           second - t_rank);
  MPI_Type_free(&absolute);
  MPI_CHECK(MPI_File_close(&fh));
}

/* A type of 3 ints read twice from a file of 16 bytes: one whole element
 * and one int of the second. (With a struct type of an int and a double,
 * MPICH's MPI-IO reports the whole count at the end of file even when the
 * memory is contiguous, where the layer reports what was read: not
 * comparable.) */
static void short_derived_read(void) {
  MPI_File fh = MPI_FILE_NULL;
  char path[4096];
  path_of("corners_short.dat", path, sizeof path);
  MPI_CHECK(
      MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  if (t_rank == 0) {
    char bytes[16];
    for (int i = 0; i < 16; ++i) bytes[i] = (char)i;
    MPI_CHECK(MPI_File_write_at(fh, 0, bytes, 16, MPI_BYTE, MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_CHECK(MPI_File_sync(fh));
  MPI_Datatype triple;
  MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &triple));
  MPI_CHECK(MPI_Type_commit(&triple));
  int triples[6];
  MPI_Status status;
  t_garble(&status);
  MPI_CHECK(MPI_File_read(fh, triples, 2, triple, &status));
  int count = -2, elements = -2, bytes = -2;
  MPI_CHECK(MPI_Get_count(&status, triple, &count));
  MPI_CHECK(MPI_Get_elements(&status, triple, &elements));
  MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  t_report("3 ints x2 from 16 bytes: count %s, elements %d, bytes %d, position %lld",
           count == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined", elements, bytes,
           (long long)position);
  MPI_Type_free(&triple);
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Three nonblocking collectives on one file at once, completed by MPI_Wait
 * in reverse order, then read back by two at once. */
static void outstanding_collectives(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_collectives.dat", &fh);
  int pieces[3][INTS];
  MPI_Request requests[3];
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < INTS; ++i) pieces[k][i] = 1000 * k + 100 * t_rank + i;
    const MPI_Offset at = ((MPI_Offset)k * t_nranks + t_rank) * INTS * (MPI_Offset)sizeof(int);
    MPI_CHECK(MPI_File_iwrite_at_all(fh, at, pieces[k], INTS, MPI_INT, &requests[k]));
  }
  MPI_Status status;
  for (int k = 2; k >= 0; --k) {
    MPI_CHECK(MPI_Wait(&requests[k], &status));
    CHECK_EQ(t_count(&status, MPI_INT), INTS);
  }
  t_make_visible(fh);
  int back[2][INTS];
  for (int k = 0; k < 2; ++k) {
    const MPI_Offset at =
        ((MPI_Offset)(2 - k) * t_nranks + t_rank) * INTS * (MPI_Offset)sizeof(int);
    MPI_CHECK(MPI_File_iread_at_all(fh, at, back[k], INTS, MPI_INT, &requests[k]));
  }
  MPI_CHECK(MPI_Wait(&requests[1], &status));
  MPI_CHECK(MPI_Wait(&requests[0], &status));
  CHECK(memcmp(back[0], pieces[2], sizeof back[0]) == 0);
  CHECK(memcmp(back[1], pieces[1], sizeof back[1]) == 0);
  MPI_CHECK(MPI_File_close(&fh));
  t_report("3 iwrite_at_all outstanding, waited in reverse; 2 iread_at_all likewise: data right");
}

/* MPI_Cancel on a file request: the operation completes anyway. */
static void cancel_request(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_cancel.dat", &fh);
  int data[INTS];
  for (int i = 0; i < INTS; ++i) data[i] = 300 + 10 * t_rank + i;
  MPI_Request request;
  const MPI_Offset at = t_rank * (MPI_Offset)sizeof data;
  MPI_CHECK(MPI_File_iwrite_at(fh, at, data, INTS, MPI_INT, &request));
  MPI_CHECK(MPI_Cancel(&request));
  MPI_Status status;
  MPI_CHECK(MPI_Wait(&request, &status));
  int cancelled = -1;
  MPI_CHECK(MPI_Test_cancelled(&status, &cancelled));
  const int count = t_count(&status, MPI_INT);
  t_make_visible(fh);
  int back[INTS];
  MPI_CHECK(MPI_File_read_at(fh, at, back, INTS, MPI_INT, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  t_report("MPI_Cancel on iwrite_at: cancelled %d, count %d, data written %s", cancelled, count,
           memcmp(back, data, sizeof data) == 0 ? "yes" : "no");
}

static void split_misuse(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_split.dat", &fh);
  int data[INTS], more[INTS];
  for (int i = 0; i < INTS; ++i) data[i] = more[i] = 40 + t_rank;
  const MPI_Offset at = t_rank * (MPI_Offset)sizeof data;
  const int end_alone = MPI_File_write_at_all_end(fh, data, MPI_STATUS_IGNORE);
  MPI_CHECK(MPI_File_write_at_all_begin(fh, at, data, INTS, MPI_INT));
  const int second = MPI_File_write_all_begin(fh, more, INTS, MPI_INT);
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at_all_end(fh, data, &status));
  CHECK_EQ(t_count(&status, MPI_INT), INTS);
  MPI_CHECK(MPI_File_close(&fh));
  t_report("split collectives: end without begin %s, a second begin %s", outcome(end_alone),
           outcome(second));
}

/* MPI requires the same flag everywhere. The process that differs fails
 * under both; the others succeed under ROMIO (it compares with rank 0's
 * flag) and fail under the layer (every process learns of the mismatch),
 * so only the process that differs prints its class. */
static void atomicity_not_same(void) {
  MPI_File fh = MPI_FILE_NULL;
  t_open("corners_atomicity.dat", &fh);
  const int differs = t_rank == t_nranks - 1;
  const int code = MPI_File_set_atomicity(fh, differs ? 1 : 0);
  int flag = -1;
  MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
  MPI_CHECK(MPI_File_close(&fh));
  t_report("set_atomicity, last rank 1 and the others 0: %s, flag now %d",
           differs ? outcome(code) : "-", flag);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "chapter_corners");
  unique_open_and_prefix();
  reserved_hints_and_permissions();
  open_failures();
  delete_while_open();
  append_pointers();
  view_corners();
  absolute_addresses();
  short_derived_read();
  outstanding_collectives();
  cancel_request();
  split_misuse();
  atomicity_not_same();
  return t_finish();
}
