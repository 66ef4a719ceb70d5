/* The datatype corners MPI-IO implementations get wrong
 * (tests/support/corner_types.h), through the MPI-IO layer alone
 * (run_with_layer.sh): each corner type as a filetype and as a memory
 * type, written and read with MPI_File_write_at_all/read_at_all (two-phase
 * forced) and MPI_File_write_at/read_at. The oracle is MPI's own typemap:
 * MPI_Unpack of the data stream says where each byte lands in the file
 * (the holes between, which MPI leaves undefined, are not compared here;
 * tests/api/datatype_corners_test.cc holds flowio to zeros there), MPI_Pack
 * which memory bytes a memory type covers. Each case prints one
 * line; a mismatch fails the test. Run without the layer, the same program
 * shows what MPICH's own MPI-IO does with these types (it exits nonzero on
 * the first mismatch it meets).
 *
 * Usage: datatype_corners OUTPUT_DIRECTORY [--only=CASE | --skip=CASE,...]
 * where CASE is "filetypes", "memory_types", "large_count_filetypes" or
 * "large_count_memory_types". */
#include "mpiio_test.h"

#include <fcntl.h>

#include "tests/support/corner_types.h"

enum { REGION = 4096, COPIES = 3 };

static char stream_byte(long long i) { return (char)(1 + (i * 37 + t_rank) % 251); }

/* Reads `bytes` bytes of `path` at `offset` with POSIX (not MPI-IO) into
 * `out`; returns how many there were. */
static long long posix_read(const char* path, long long offset, char* out, long long bytes) {
  int fd = open(path, O_RDONLY);
  CHECK(fd >= 0);
  ssize_t got = pread(fd, out, (size_t)bytes, (off_t)offset);
  close(fd);
  CHECK(got >= 0);
  return (long long)got;
}

static void open_route(const char* path, int collective, MPI_File* fh) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (collective) {
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
  }
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, fh));
  MPI_Info_free(&info);
}

/* Collective: rank 0 prints the case and whether every rank matched; a
 * mismatch anywhere fails the job after the line is printed. */
static void verdict(const char* what, const CornerType* corner, int collective, int matched) {
  int all = 0;
  MPI_Allreduce(&matched, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  t_report("%-13s %-28s %-11s %s", what, corner->name, collective ? "collective" : "independent",
           matched ? "matches MPI_Pack/Unpack" : "MISMATCH");
  if (!all) t_fail_at(__FILE__, __LINE__, what, corner->name);
}

static void check_filetype(const CornerType* corner, int collective) {
  t_doing(corner->name);
  MPI_Datatype type = corner->make();
  const CornerLayout layout = corner_layout(type);
  const MPI_Aint extent = layout.extent, true_lb = layout.true_lb, true_extent = layout.true_extent;
  const int sparse = strcmp(corner->name, "stride_beyond_2g") == 0;
  const int copies = sparse ? 1 : COPIES;
  const long long bytes = (long long)layout.size * copies;
  char* stream = malloc((size_t)bytes);
  char* back = calloc((size_t)bytes, 1);
  CHECK(stream != NULL && back != NULL);
  for (long long i = 0; i < bytes; ++i) stream[i] = stream_byte(i);
  const MPI_Offset displacement = (MPI_Offset)t_rank * (sparse ? 8 : REGION);
  char path[4096];
  t_path(path, sizeof path, collective ? "filetype_collective.dat" : "filetype_independent.dat");
  if (t_rank == 0) unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh;
  open_route(path, collective, &fh);
  MPI_CHECK(MPI_File_set_view(fh, displacement, MPI_BYTE, type, "native", MPI_INFO_NULL));
  MPI_Status status;
  if (collective) {
    MPI_CHECK(MPI_File_write_at_all(fh, 0, stream, (int)bytes, MPI_BYTE, &status));
  } else {
    MPI_CHECK(MPI_File_write_at(fh, 0, stream, (int)bytes, MPI_BYTE, &status));
  }
  t_make_visible(fh);
  if (collective) {
    MPI_CHECK(MPI_File_read_at_all(fh, 0, back, (int)bytes, MPI_BYTE, &status));
  } else {
    MPI_CHECK(MPI_File_read_at(fh, 0, back, (int)bytes, MPI_BYTE, &status));
  }
  int matched = memcmp(back, stream, (size_t)bytes) == 0;
  MPI_CHECK(MPI_File_close(&fh));
  if (sparse) {
    /* Two 4-byte blocks, at 0 and 3 GiB from the displacement. */
    char first[4], second[4];
    matched = matched && posix_read(path, displacement, first, 4) == 4 &&
              posix_read(path, displacement + (3LL << 30), second, 4) == 4 &&
              memcmp(first, stream, 4) == 0 && memcmp(second, stream + 4, 4) == 0;
  } else {
    /* Where MPI puts the stream's bytes: unpacked into an image of the
     * file from the displacement on. Only those bytes are compared: MPI
     * leaves the holes of a new file undefined. */
    CHECK(true_lb >= 0);
    const long long image_bytes = (copies - 1) * (long long)extent + true_lb + true_extent;
    CHECK(image_bytes <= REGION);
    char image[REGION] = {0}, covered[REGION] = {0}, file_bytes[REGION] = {0};
    char* ones = malloc((size_t)bytes);
    CHECK(ones != NULL);
    memset(ones, 1, (size_t)bytes);
    int position = 0;
    MPI_Unpack(stream, (int)bytes, &position, image, copies, type, MPI_COMM_SELF);
    position = 0;
    MPI_Unpack(ones, (int)bytes, &position, covered, copies, type, MPI_COMM_SELF);
    free(ones);
    matched = matched && posix_read(path, displacement, file_bytes, image_bytes) == image_bytes;
    for (long long i = 0; i < image_bytes; ++i) {
      if (covered[i] && file_bytes[i] != image[i]) matched = 0;
    }
  }
  verdict("filetype", corner, collective, matched);
  free(stream);
  free(back);
  MPI_Type_free(&type);
}

static void check_memory_type(const CornerType* corner, int collective) {
  t_doing(corner->name);
  MPI_Datatype type = corner->make();
  const CornerLayout layout = corner_layout(type);
  const MPI_Aint extent = layout.extent, true_lb = layout.true_lb, true_extent = layout.true_extent;
  const long long before = true_lb < 0 ? -(long long)true_lb : 0;
  const long long span = before + (COPIES - 1) * (long long)extent + true_lb + true_extent;
  const long long bytes = (long long)layout.size * COPIES;
  char* memory = malloc((size_t)span);
  char* read_memory = malloc((size_t)span);
  char* expected = malloc((size_t)span);
  char* packed = malloc((size_t)bytes);
  char* file_bytes = malloc((size_t)bytes);
  CHECK(memory && read_memory && expected && packed && file_bytes);
  for (long long i = 0; i < span; ++i) memory[i] = stream_byte(i);
  memset(read_memory, '#', (size_t)span);
  memset(expected, '#', (size_t)span);
  int position = 0;
  MPI_Pack(memory + before, COPIES, type, packed, (int)bytes, &position, MPI_COMM_SELF);
  position = 0;
  MPI_Unpack(packed, (int)bytes, &position, expected + before, COPIES, type, MPI_COMM_SELF);

  char path[4096];
  t_path(path, sizeof path, collective ? "memory_collective.dat" : "memory_independent.dat");
  if (t_rank == 0) unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh;
  open_route(path, collective, &fh);
  const MPI_Offset at = (MPI_Offset)t_rank * REGION;
  MPI_Status status;
  if (collective) {
    MPI_CHECK(MPI_File_write_at_all(fh, at, memory + before, COPIES, type, &status));
  } else {
    MPI_CHECK(MPI_File_write_at(fh, at, memory + before, COPIES, type, &status));
  }
  t_make_visible(fh);
  if (collective) {
    MPI_CHECK(MPI_File_read_at_all(fh, at, read_memory + before, COPIES, type, &status));
  } else {
    MPI_CHECK(MPI_File_read_at(fh, at, read_memory + before, COPIES, type, &status));
  }
  MPI_CHECK(MPI_File_close(&fh));
  const int matched = posix_read(path, at, file_bytes, bytes) == bytes &&
                      memcmp(file_bytes, packed, (size_t)bytes) == 0 &&
                      memcmp(read_memory, expected, (size_t)span) == 0;
  verdict("memory type", corner, collective, matched);
  free(memory);
  free(read_memory);
  free(expected);
  free(packed);
  free(file_bytes);
  MPI_Type_free(&type);
}

static void check_all(int uses, int large_count) {
  for (int i = 0; i < CORNER_TYPE_COUNT; ++i) {
    const CornerType* corner = &corner_types[i];
    if ((corner->uses & uses) == 0 || corner->large_count != large_count) continue;
    for (int collective = 1; collective >= 0; --collective) {
      if (uses == CORNER_FILETYPE) {
        check_filetype(corner, collective);
      } else {
        check_memory_type(corner, collective);
      }
    }
  }
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "datatype_corners");
  t_select_cases(argc, argv);
  if (t_should_run("filetypes")) check_all(CORNER_FILETYPE, 0);
  if (t_should_run("memory_types")) check_all(CORNER_MEMORY, 0);
  if (t_should_run("large_count_filetypes")) check_all(CORNER_FILETYPE, 1);
  if (t_should_run("large_count_memory_types")) check_all(CORNER_MEMORY, 1);
  return t_finish();
}
