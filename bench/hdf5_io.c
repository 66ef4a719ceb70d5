/* A parallel HDF5 program written as an HDF5 user would write it, knowing
 * nothing of flowio (plain C, hdf5.h and mpi.h only): a global n^3 grid of
 * doubles, block-distributed over the process grid MPI_Dims_create gives,
 * stored in four 3-D datasets, contiguous and chunked (chunk edge c), each
 * written with one transfer mode (collective or independent) and read back
 * with the other; groups, and attributes on the file, a group and every
 * dataset; a small per-rank table written independently. Everything read
 * is checked. Each repetition writes the file anew, then reads it.
 *
 *   mpiexec -n N hdf5_io FILE [n=64] [c=16] [reps=3]
 *
 * Rank 0 prints one line of key=value: the median seconds of the write
 * phase (create, write, close) and of the read phase (open, read, check,
 * close), each the slowest rank's. bench/hdf5.sh runs it on MPICH's
 * MPI-IO and through flowio's MPI-IO layer; tests/hdf5 checks the files
 * agree. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DATASETS = 4 };

static int rank, nranks;

/* The value at global position (x, y, z) of dataset d. */
static double value_at(int d, hsize_t x, hsize_t y, hsize_t z, hsize_t n) {
  return (double)d * 1e9 + (double)((x * n + y) * n + z) + 0.25;
}

static void fail(const char* what) {
  fprintf(stderr, "rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

#define CHECK(call)              \
  do {                           \
    if ((call) < 0) fail(#call); \
  } while (0)

struct Layout {
  hsize_t n;        /* global edge */
  hsize_t chunk;    /* chunk edge */
  hsize_t start[3]; /* this rank's block */
  hsize_t count[3];
  size_t elements;
};

static struct Layout layout_of(hsize_t n, hsize_t chunk) {
  struct Layout layout;
  int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  MPI_Comm cart;
  MPI_Dims_create(nranks, 3, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  MPI_Cart_coords(cart, rank, 3, coords);
  MPI_Comm_free(&cart);
  layout.n = n;
  layout.chunk = chunk;
  layout.elements = 1;
  for (int i = 0; i < 3; ++i) {
    const hsize_t base = n / (hsize_t)dims[i], extra = n % (hsize_t)dims[i];
    const hsize_t c = (hsize_t)coords[i];
    layout.start[i] = c * base + (c < extra ? c : extra);
    layout.count[i] = base + (c < extra ? 1 : 0);
    layout.elements *= (size_t)layout.count[i];
  }
  return layout;
}

static void fill_block(const struct Layout* layout, int d, double* block) {
  size_t i = 0;
  for (hsize_t x = 0; x < layout->count[0]; ++x)
    for (hsize_t y = 0; y < layout->count[1]; ++y)
      for (hsize_t z = 0; z < layout->count[2]; ++z)
        block[i++] = value_at(d, layout->start[0] + x, layout->start[1] + y, layout->start[2] + z,
                              layout->n);
}

static const char* dataset_name(int d) {
  static const char* names[DATASETS] = {
      "/grid/fields/contiguous_collective", "/grid/fields/contiguous_independent",
      "/grid/fields/chunked_collective", "/grid/fields/chunked_independent"};
  return names[d];
}

static int chunked(int d) { return d >= 2; }
static int written_collectively(int d) { return d % 2 == 0; }

static void write_string_attribute(hid_t object, const char* name, const char* text) {
  hid_t type = H5Tcopy(H5T_C_S1);
  CHECK(H5Tset_size(type, strlen(text) + 1));
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(attribute);
  CHECK(H5Awrite(attribute, type, text));
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

static void write_attribute(hid_t object, const char* name, hid_t type, hsize_t count,
                            const void* values) {
  hid_t space = H5Screate_simple(1, &count, NULL);
  hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(attribute);
  CHECK(H5Awrite(attribute, type, values));
  H5Aclose(attribute);
  H5Sclose(space);
}

static hid_t transfer(int collective) {
  hid_t plist = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(plist, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
  return plist;
}

static hid_t file_access(void) {
  hid_t plist = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(plist, MPI_COMM_WORLD, MPI_INFO_NULL));
  return plist;
}

static void write_file(const char* path, const struct Layout* layout, double* block) {
  hid_t access = file_access();
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, access);
  CHECK(file);
  H5Pclose(access);
  write_string_attribute(file, "title", "flowio HDF5 benchmark grid");
  const int step = 42;
  write_attribute(file, "step", H5T_NATIVE_INT, 1, &step);

  hid_t grid = H5Gcreate2(file, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t fields = H5Gcreate2(file, "/grid/fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t meta = H5Gcreate2(file, "/meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(grid);
  CHECK(fields);
  CHECK(meta);
  const int edge[3] = {(int)layout->n, (int)layout->n, (int)layout->n};
  write_attribute(grid, "dims", H5T_NATIVE_INT, 3, edge);

  const hsize_t dims[3] = {layout->n, layout->n, layout->n};
  hid_t file_space = H5Screate_simple(3, dims, NULL);
  hid_t memory_space = H5Screate_simple(3, layout->count, NULL);
  CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, layout->start, NULL, layout->count, NULL));
  for (int d = 0; d < DATASETS; ++d) {
    hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    if (chunked(d)) {
      const hsize_t chunk[3] = {layout->chunk, layout->chunk, layout->chunk};
      CHECK(H5Pset_chunk(create, 3, chunk));
    }
    hid_t dataset = H5Dcreate2(file, dataset_name(d), H5T_NATIVE_DOUBLE, file_space, H5P_DEFAULT,
                               create, H5P_DEFAULT);
    CHECK(dataset);
    write_string_attribute(dataset, "units", d % 2 == 0 ? "kelvin" : "pascal");
    const double scale = 1.0 / (d + 1);
    write_attribute(dataset, "scale", H5T_NATIVE_DOUBLE, 1, &scale);
    fill_block(layout, d, block);
    hid_t plist = transfer(written_collectively(d));
    CHECK(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory_space, file_space, plist, block));
    H5Pclose(plist);
    H5Dclose(dataset);
    H5Pclose(create);
  }
  H5Sclose(memory_space);
  H5Sclose(file_space);

  /* One small element per rank, written independently. */
  const hsize_t ranks = (hsize_t)nranks;
  hid_t table_space = H5Screate_simple(1, &ranks, NULL);
  hid_t table = H5Dcreate2(meta, "rank_elements", H5T_NATIVE_LLONG, table_space, H5P_DEFAULT,
                           H5P_DEFAULT, H5P_DEFAULT);
  CHECK(table);
  const hsize_t mine = (hsize_t)rank, one = 1;
  CHECK(H5Sselect_hyperslab(table_space, H5S_SELECT_SET, &mine, NULL, &one, NULL));
  hid_t one_space = H5Screate_simple(1, &one, NULL);
  const long long elements = (long long)layout->elements;
  hid_t independent = transfer(0);
  CHECK(H5Dwrite(table, H5T_NATIVE_LLONG, one_space, table_space, independent, &elements));
  H5Pclose(independent);
  H5Sclose(one_space);
  H5Dclose(table);
  H5Sclose(table_space);
  H5Gclose(meta);
  H5Gclose(fields);
  H5Gclose(grid);
  CHECK(H5Fclose(file));
}

static void read_file(const char* path, const struct Layout* layout, double* block) {
  hid_t access = file_access();
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, access);
  CHECK(file);
  H5Pclose(access);
  int step = 0;
  hid_t attribute = H5Aopen(file, "step", H5P_DEFAULT);
  CHECK(H5Aread(attribute, H5T_NATIVE_INT, &step));
  H5Aclose(attribute);
  if (step != 42) fail("attribute step");
  hid_t grid = H5Gopen2(file, "/grid", H5P_DEFAULT);
  int edge[3] = {0, 0, 0};
  attribute = H5Aopen(grid, "dims", H5P_DEFAULT);
  CHECK(H5Aread(attribute, H5T_NATIVE_INT, edge));
  H5Aclose(attribute);
  if (edge[0] != (int)layout->n || edge[2] != (int)layout->n) fail("attribute dims");

  hid_t memory_space = H5Screate_simple(3, layout->count, NULL);
  for (int d = 0; d < DATASETS; ++d) {
    hid_t dataset = H5Dopen2(file, dataset_name(d), H5P_DEFAULT);
    CHECK(dataset);
    double scale = 0;
    attribute = H5Aopen(dataset, "scale", H5P_DEFAULT);
    CHECK(H5Aread(attribute, H5T_NATIVE_DOUBLE, &scale));
    H5Aclose(attribute);
    if (scale != 1.0 / (d + 1)) fail("attribute scale");
    hid_t file_space = H5Dget_space(dataset);
    CHECK(
        H5Sselect_hyperslab(file_space, H5S_SELECT_SET, layout->start, NULL, layout->count, NULL));
    memset(block, 0, layout->elements * sizeof(double));
    /* Read with the other transfer mode than the write's. */
    hid_t plist = transfer(!written_collectively(d));
    CHECK(H5Dread(dataset, H5T_NATIVE_DOUBLE, memory_space, file_space, plist, block));
    H5Pclose(plist);
    size_t i = 0;
    for (hsize_t x = 0; x < layout->count[0]; ++x)
      for (hsize_t y = 0; y < layout->count[1]; ++y)
        for (hsize_t z = 0; z < layout->count[2]; ++z, ++i)
          if (block[i] != value_at(d, layout->start[0] + x, layout->start[1] + y,
                                   layout->start[2] + z, layout->n))
            fail("a value read differs from the one written");
    H5Sclose(file_space);
    H5Dclose(dataset);
  }
  H5Sclose(memory_space);
  H5Gclose(grid);
  CHECK(H5Fclose(file));
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  return values[count / 2];
}

/* The slowest rank's seconds for `phase`. */
static double timed(void (*phase)(const char*, const struct Layout*, double*), const char* path,
                    const struct Layout* layout, double* block) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double begin = MPI_Wtime();
  phase(path, layout, block);
  double mine = MPI_Wtime() - begin, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE [n=64] [chunk=16] [reps=3]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const hsize_t n = argc > 2 ? (hsize_t)atoll(argv[2]) : 64;
  const hsize_t chunk = argc > 3 ? (hsize_t)atoll(argv[3]) : 16;
  const int reps = argc > 4 ? atoi(argv[4]) : 3;
  if (n < 1 || chunk < 1 || reps < 1) fail("n, chunk and reps must be positive");
  const struct Layout layout = layout_of(n, chunk);
  double* block = malloc(layout.elements * sizeof(double) + 1);
  double* write_seconds = malloc(sizeof(double) * (size_t)reps);
  double* read_seconds = malloc(sizeof(double) * (size_t)reps);
  if (block == NULL || write_seconds == NULL || read_seconds == NULL) fail("out of memory");
  for (int rep = 0; rep < reps; ++rep) {
    write_seconds[rep] = timed(write_file, argv[1], &layout, block);
    read_seconds[rep] = timed(read_file, argv[1], &layout, block);
  }
  const double write_s = median(write_seconds, reps), read_s = median(read_seconds, reps);
  if (rank == 0) {
    printf(
        "bench=hdf5 ranks=%d n=%llu chunk=%llu reps=%d write_s=%.6f read_s=%.6f total_s=%.6f "
        "checked=yes\n",
        nranks, (unsigned long long)n, (unsigned long long)chunk, reps, write_s, read_s,
        write_s + read_s);
  }
  free(block);
  free(write_seconds);
  free(read_seconds);
  MPI_Finalize();
  return 0;
}
