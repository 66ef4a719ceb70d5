/* Basic MPI-IO calls on one shared file: open, independent reads and writes
 * with the individual file pointer and explicit offsets, seeks, sizes,
 * preallocation, sync, the file's mode and group, type extents, a derived
 * view and what get_view returns for it, c2f/f2c, close and delete.
 *
 * Output: basic.dat. Rank r owns bytes [r*REGION, (r+1)*REGION); after
 * those regions (at BASE = nranks*REGION) come 32*nranks bytes written
 * through an interleaved view, then one int per rank written through the
 * handle that MPI_File_f2c returned. Every byte of the file is written or
 * lies in a hole that was zero-filled by the file system (the holes are
 * all below the end of file when they are created). */
#include "mpiio_test.h"

enum { REGION = 4096, HEAD_INTS = 64, MID_OFFSET = 512, MID_INTS = 32 };

static int head_value(int rank, int i) { return rank * 1000 + i; }
static int mid_value(int rank, int i) { return rank * 1000 + 500 + i; }
static int marker_value(int rank) { return 7000000 + rank; }

/* Independent writes and reads with the file pointer and explicit offsets,
 * and the seeks that move between them. */
static void pointer_and_offsets(MPI_File fh) {
  int head[HEAD_INTS], mid[MID_INTS], back[HEAD_INTS];
  MPI_Status status;
  MPI_Offset position = -1, byte_offset = -1;
  const MPI_Offset start = (MPI_Offset)t_rank * REGION;
  for (int i = 0; i < HEAD_INTS; ++i) head[i] = head_value(t_rank, i);
  for (int i = 0; i < MID_INTS; ++i) mid[i] = mid_value(t_rank, i);

  MPI_CHECK(MPI_File_seek(fh, start, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start);
  MPI_CHECK(MPI_File_write(fh, head, HEAD_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), HEAD_INTS);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start + HEAD_INTS * 4);
  /* With the default view (etype MPI_BYTE, no displacement) byte offsets
   * are the offsets themselves. */
  MPI_CHECK(MPI_File_get_byte_offset(fh, position, &byte_offset));
  CHECK_EQ(byte_offset, position);

  MPI_CHECK(MPI_File_write_at(fh, start + MID_OFFSET, mid, MID_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), MID_INTS);
  /* write_at leaves the individual file pointer where it was. */
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start + HEAD_INTS * 4);
  int marker = marker_value(t_rank);
  MPI_CHECK(MPI_File_write_at(fh, start + REGION - 4, &marker, 1, MPI_INT, MPI_STATUS_IGNORE));

  MPI_CHECK(MPI_File_seek(fh, -HEAD_INTS * 4, MPI_SEEK_CUR));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start);
  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_read(fh, back, HEAD_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), HEAD_INTS);
  for (int i = 0; i < HEAD_INTS; ++i) CHECK_EQ(back[i], head[i]);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, start + HEAD_INTS * 4);

  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_read_at(fh, start + MID_OFFSET, back, MID_INTS, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), MID_INTS);
  for (int i = 0; i < MID_INTS; ++i) CHECK_EQ(back[i], mid[i]);

  /* The gap between the head and the middle was never written: it reads
   * as zeros, since the file already extends past it. */
  unsigned char gap[MID_OFFSET - HEAD_INTS * 4];
  memset(gap, 0xEE, sizeof gap);
  MPI_CHECK(MPI_File_read_at(fh, start + HEAD_INTS * 4, gap, (int)sizeof gap, MPI_BYTE, &status));
  CHECK_EQ(t_count(&status, MPI_BYTE), sizeof gap);
  for (size_t i = 0; i < sizeof gap; ++i) CHECK_EQ(gap[i], 0);

  t_make_visible(fh);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, (MPI_Offset)t_nranks * REGION);

  /* SEEK_END: relative to the file's size, which every rank now sees. */
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_END));
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, size);
  MPI_CHECK(MPI_File_seek(fh, -4, MPI_SEEK_END));
  int last = 0;
  MPI_CHECK(MPI_File_read(fh, &last, 1, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 1);
  CHECK_EQ(last, marker_value(t_nranks - 1));
  /* Reading another rank's region sees its data after t_make_visible(). */
  int peer = (t_rank + 1) % t_nranks;
  MPI_CHECK(MPI_File_read_at(fh, (MPI_Offset)peer * REGION + 8, back, 2, MPI_INT, &status));
  CHECK_EQ(back[0], head_value(peer, 2));
  CHECK_EQ(back[1], head_value(peer, 3));
  t_report("pointer and offsets: size %lld, last int %d", (long long)size, last);
}

/* set_size to grow and shrink, preallocate; leaves the size at `size`. */
static void sizes(MPI_File fh, MPI_Offset size) {
  MPI_Status status;
  MPI_Offset now = -1;
  MPI_CHECK(MPI_File_set_size(fh, size + 1000));
  MPI_CHECK(MPI_File_get_size(fh, &now));
  CHECK_EQ(now, size + 1000);
  int grown[10];
  memset(grown, 0x5A, sizeof grown);
  MPI_CHECK(MPI_File_read_at(fh, size + 100, grown, 10, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 10);
  for (int i = 0; i < 10; ++i) CHECK_EQ(grown[i], 0);

  MPI_CHECK(MPI_File_set_size(fh, size - 2));
  MPI_CHECK(MPI_File_get_size(fh, &now));
  CHECK_EQ(now, size - 2);
  unsigned char tail[8];
  MPI_CHECK(MPI_File_read_at(fh, size - 4, tail, 8, MPI_BYTE, &status));
  int tail_count = t_count(&status, MPI_BYTE);
  CHECK_EQ(tail_count, 2);

  MPI_CHECK(MPI_File_preallocate(fh, size + 8192));
  MPI_Offset preallocated = -1;
  MPI_CHECK(MPI_File_get_size(fh, &preallocated));
  /* Preallocating less than the size changes nothing. */
  MPI_CHECK(MPI_File_preallocate(fh, 16));
  MPI_CHECK(MPI_File_get_size(fh, &now));
  CHECK_EQ(now, preallocated);
  MPI_CHECK(MPI_File_set_size(fh, size));
  MPI_CHECK(MPI_File_get_size(fh, &now));
  CHECK_EQ(now, size);
  t_make_visible(fh);
  t_report(
      "sizes: grown +1000 reads zeros, shrunk -2 reads %d of 8 bytes at size-4, "
      "preallocate(size+8192) gives size+%lld",
      tail_count, (long long)(preallocated - size));
}

static void mode_group_extents(MPI_File fh) {
  int amode = 0;
  MPI_CHECK(MPI_File_get_amode(fh, &amode));
  CHECK_EQ(amode, MPI_MODE_CREATE | MPI_MODE_RDWR);

  MPI_Group file_group, world_group;
  int comparison = -1, group_size = 0;
  MPI_CHECK(MPI_File_get_group(fh, &file_group));
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_compare(file_group, world_group, &comparison);
  MPI_Group_size(file_group, &group_size);
  CHECK_EQ(comparison, MPI_IDENT);
  CHECK_EQ(group_size, t_nranks);
  MPI_Group_free(&file_group);
  MPI_Group_free(&world_group);

  MPI_Aint extent = -1;
  MPI_Count extent_c = -1;
  MPI_CHECK(MPI_File_get_type_extent(fh, MPI_INT, &extent));
  CHECK_EQ(extent, 4);
  MPI_CHECK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &extent));
  CHECK_EQ(extent, 8);
  MPI_CHECK(MPI_File_get_type_extent_c(fh, MPI_SHORT, &extent_c));
  CHECK_EQ(extent_c, 2);
  /* A derived type with holes: its extent in the file ("native") is its
   * extent in memory. */
  MPI_Datatype spaced, resized;
  MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &spaced); /* extent 9 doubles */
  MPI_Type_create_resized(spaced, 0, 96, &resized);
  /* ROMIO rejects uncommitted types here (MPI_ERR_TYPE). */
  MPI_Type_commit(&spaced);
  MPI_Type_commit(&resized);
  MPI_CHECK(MPI_File_get_type_extent(fh, spaced, &extent));
  CHECK_EQ(extent, 72);
  MPI_CHECK(MPI_File_get_type_extent_c(fh, resized, &extent_c));
  CHECK_EQ(extent_c, 96);
  MPI_Type_free(&spaced);
  MPI_Type_free(&resized);
  t_report(
      "amode CREATE|RDWR, group MPI_IDENT, extents int 4 double 8 short 2 vector 72 "
      "resized 96");
}

/* Returns `type` without the copy wrappers around it, freeing them (the
 * caller owns `type`, and then owns what is returned). MPICH's get_view
 * returns the filetype wrapped in MPI_Type_contiguous(1, ...); MPI asks
 * only for an equivalent type, so a dup or a contiguous of one element is
 * peeled off before the structure is checked. */
static MPI_Datatype peel_copies(MPI_Datatype type) {
  for (;;) {
    int num_integers = -1, num_addresses = -1, num_datatypes = -1, combiner = -1;
    MPI_Type_get_envelope(type, &num_integers, &num_addresses, &num_datatypes, &combiner);
    int count = 1;
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    if (combiner == MPI_COMBINER_DUP) {
      MPI_Type_get_contents(type, 0, 0, 1, NULL, NULL, &inner);
    } else if (combiner == MPI_COMBINER_CONTIGUOUS) {
      MPI_Type_get_contents(type, 1, 0, 1, &count, NULL, &inner);
      if (count != 1) {
        int inner_combiner = -1;
        MPI_Type_get_envelope(inner, &num_integers, &num_addresses, &num_datatypes,
                              &inner_combiner);
        if (inner_combiner != MPI_COMBINER_NAMED) MPI_Type_free(&inner);
        return type;
      }
    } else {
      return type;
    }
    MPI_Type_free(&type);
    type = inner;
  }
}

/* A view with a derived filetype: rank r owns 2-int slots r, r+n, r+2n,
 * r+3n of the 32*n bytes at `base`. Checks what get_view returns,
 * get_byte_offset inside the view, and writes and reads through it. */
static void derived_view(MPI_File fh, MPI_Offset base) {
  const int n = t_nranks;
  MPI_Datatype vector, filetype;
  MPI_Type_vector(2, 2, 2 * n, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 0, (MPI_Aint)16 * n, &filetype);
  MPI_Type_commit(&filetype);
  const MPI_Offset disp = base + (MPI_Offset)t_rank * 8;
  MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL));

  MPI_Offset got_disp = -1;
  MPI_Datatype got_etype = MPI_DATATYPE_NULL, got_filetype = MPI_DATATYPE_NULL;
  char datarep[MPI_MAX_DATAREP_STRING];
  MPI_CHECK(MPI_File_get_view(fh, &got_disp, &got_etype, &got_filetype, datarep));
  CHECK_EQ(got_disp, disp);
  CHECK(got_etype == MPI_INT);
  CHECK(strcmp(datarep, "native") == 0);
  int num_integers = -1, num_addresses = -1, num_datatypes = -1, combiner = -1;
  MPI_Type_get_envelope(got_etype, &num_integers, &num_addresses, &num_datatypes, &combiner);
  CHECK_EQ(combiner, MPI_COMBINER_NAMED);
  got_filetype = peel_copies(got_filetype);
  MPI_Type_get_envelope(got_filetype, &num_integers, &num_addresses, &num_datatypes, &combiner);
  CHECK_EQ(combiner, MPI_COMBINER_RESIZED);
  CHECK_EQ(num_integers, 0);
  CHECK_EQ(num_addresses, 2);
  CHECK_EQ(num_datatypes, 1);
  MPI_Aint addresses[2] = {-1, -1};
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  MPI_Type_get_contents(got_filetype, 0, 2, 1, NULL, addresses, &inner);
  CHECK_EQ(addresses[0], 0);
  CHECK_EQ(addresses[1], 16 * n);
  MPI_Type_get_envelope(inner, &num_integers, &num_addresses, &num_datatypes, &combiner);
  CHECK_EQ(combiner, MPI_COMBINER_VECTOR);
  CHECK_EQ(num_integers, 3);
  CHECK_EQ(num_datatypes, 1);
  int integers[3] = {-1, -1, -1};
  MPI_Datatype innermost = MPI_DATATYPE_NULL;
  MPI_Type_get_contents(inner, 3, 0, 1, integers, NULL, &innermost);
  CHECK_EQ(integers[0], 2);
  CHECK_EQ(integers[1], 2);
  CHECK_EQ(integers[2], 2 * n);
  CHECK(innermost == MPI_INT);
  /* Derived types returned by get_view and get_contents belong to the
   * caller; predefined ones must not be freed. */
  MPI_Type_free(&inner);
  MPI_Type_free(&got_filetype);

  /* Setting a view resets the individual file pointer to 0. */
  MPI_Offset position = -1, byte_offset = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 0);
  int data[8], back[8];
  for (int i = 0; i < 8; ++i) data[i] = 900000 + t_rank * 100 + i;
  MPI_Status status;
  MPI_CHECK(MPI_File_write(fh, data, 8, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 8);
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, 8);
  /* Offsets count etypes through the view: the 8th int starts the third
   * filetype instance; the 4th int is the second in the second block. */
  MPI_CHECK(MPI_File_get_byte_offset(fh, 8, &byte_offset));
  CHECK_EQ(byte_offset, disp + 32 * n);
  MPI_CHECK(MPI_File_get_byte_offset(fh, 3, &byte_offset));
  CHECK_EQ(byte_offset, disp + 8 * n + 4);
  MPI_CHECK(MPI_File_get_byte_offset(fh, 5, &byte_offset));
  CHECK_EQ(byte_offset, disp + 16 * n + 4);
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  MPI_CHECK(MPI_File_read(fh, back, 8, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 8);
  for (int i = 0; i < 8; ++i) CHECK_EQ(back[i], data[i]);
  MPI_CHECK(MPI_File_read_at(fh, 2, back, 3, MPI_INT, &status));
  CHECK_EQ(back[0], data[2]);
  CHECK_EQ(back[2], data[4]);
  MPI_Type_free(&filetype);

  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  MPI_CHECK(MPI_File_get_view(fh, &got_disp, &got_etype, &got_filetype, datarep));
  CHECK_EQ(got_disp, 0);
  CHECK(got_etype == MPI_BYTE);
  CHECK(got_filetype == MPI_BYTE);
  t_make_visible(fh);
  /* Every rank checks the whole interleaved region in the raw file. */
  int raw[8 * 64];
  CHECK(8 * n <= 8 * 64);
  MPI_CHECK(MPI_File_read_at(fh, base, raw, 8 * n, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 8 * n);
  for (int slot = 0; slot < 4 * n; ++slot) {
    int owner = slot % n, k = slot / n;
    for (int j = 0; j < 2; ++j) CHECK_EQ(raw[2 * slot + j], 900000 + owner * 100 + 2 * k + j);
  }
  t_report(
      "derived view: get_view disp/etype/filetype(resized(vector 2,2,2n)) as set; "
      "byte offsets of 8/3/5 etypes = disp+32n/disp+8n+4/disp+16n+4; raw layout checked");
}

/* MPI_File_c2f / MPI_File_f2c round trip; the handle from f2c writes. */
static void fortran_handles(MPI_File fh, MPI_Offset offset) {
  MPI_Fint fortran = MPI_File_c2f(fh);
  MPI_File back = MPI_File_f2c(fortran);
  CHECK(back == fh);
  int value = 4200 + t_rank;
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at(back, offset + 4 * t_rank, &value, 1, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), 1);
  MPI_File null_back = MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL));
  CHECK(null_back == MPI_FILE_NULL);
  t_make_visible(fh);
  int all[64];
  CHECK(t_nranks <= 64);
  MPI_CHECK(MPI_File_read_at(fh, offset, all, t_nranks, MPI_INT, &status));
  for (int r = 0; r < t_nranks; ++r) CHECK_EQ(all[r], 4200 + r);
  t_report("c2f/f2c: round trip gives the same handle, it writes; MPI_FILE_NULL round trips");
}

static void reopen_read_only(const char* path, MPI_Offset size) {
  MPI_File fh = MPI_FILE_NULL;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  int amode = 0;
  MPI_CHECK(MPI_File_get_amode(fh, &amode));
  CHECK_EQ(amode, MPI_MODE_RDONLY);
  MPI_Offset now = -1;
  MPI_CHECK(MPI_File_get_size(fh, &now));
  CHECK_EQ(now, size);
  int head[HEAD_INTS];
  MPI_Status status;
  MPI_CHECK(MPI_File_read_at(fh, 0, head, HEAD_INTS, MPI_INT, &status));
  for (int i = 0; i < HEAD_INTS; ++i) CHECK_EQ(head[i], head_value(0, i));
  MPI_CHECK(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL);
  t_report("reopened read-only: amode RDONLY, size %lld", (long long)now);
}

static void delete_then_open(void) {
  char path[4096];
  t_path(path, sizeof path, "basic_deleted.dat");
  MPI_File fh = MPI_FILE_NULL;
  MPI_CHECK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  int value = t_rank;
  MPI_CHECK(MPI_File_write_at(fh, 4 * t_rank, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  if (t_rank == 0) MPI_CHECK(MPI_File_delete(path, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  int code = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  CHECK(code != MPI_SUCCESS);
  CHECK(fh == MPI_FILE_NULL);
  int error_class = t_class_of(code);
  CHECK_EQ(error_class, MPI_ERR_NO_SUCH_FILE);
  t_report("delete, then open without create: %s", t_class_name(error_class));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "basic");
  char path[4096];
  MPI_File fh = MPI_FILE_NULL;
  t_open_path("basic.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, path, sizeof path, &fh);
  CHECK(fh != MPI_FILE_NULL);
  const MPI_Offset base = (MPI_Offset)t_nranks * REGION;
  mode_group_extents(fh);
  pointer_and_offsets(fh);
  sizes(fh, base);
  derived_view(fh, base);
  fortran_handles(fh, base + 32 * t_nranks);
  MPI_CHECK(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL);
  reopen_read_only(path, base + 36 * t_nranks);
  delete_then_open();
  return t_finish();
}
