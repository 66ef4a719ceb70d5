/* Noncontiguous access, independent and collective, through views built
 * from vector, subarray, struct and hindexed types, with noncontiguous
 * memory types; every read and write call with an explicit offset or a
 * file pointer, int and MPI_Count (_c) counts.
 *
 * Outputs (all fully determined by the number of ranks):
 *   noncontig_subarray.dat  a 12x10x8 global array of doubles, one 3-D block
 *                           per rank (write_all, write_all_c)
 *   noncontig_vector.dat    ints interleaved in blocks of 3 between ranks
 *                           (every explicit-offset and file-pointer call)
 *   noncontig_struct.dat    records with holes (hindexed inside a struct);
 *                           the holes stay zero (set_size before the writes)
 *
 * The _c calls use small counts: MPICH 4.0.2's MPI_File_write_all_c and
 * friends assert count <= INT_MAX, so large counts are not tried. */
#include "mpiio_test.h"

/* ---- 3-D block decomposition ---------------------------------------- */

enum { GX = 12, GY = 10, GZ = 8 };

static double global_value(int i, int j, int k, double shift) {
  return i * 10000.0 + j * 100.0 + k + shift;
}

static void subarray_blocks(void) {
  int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  const int global[3] = {GX, GY, GZ};
  MPI_Dims_create(t_nranks, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int cart_rank;
  MPI_Comm_rank(cart, &cart_rank);
  MPI_Cart_coords(cart, cart_rank, 3, coords);
  int local[3], starts[3];
  for (int d = 0; d < 3; ++d) {
    CHECK_EQ(global[d] % dims[d], 0);
    local[d] = global[d] / dims[d];
    starts[d] = coords[d] * local[d];
  }
  MPI_Datatype filetype, memtype;
  MPI_Type_create_subarray(3, global, local, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
  MPI_Type_commit(&filetype);
  /* Memory: the block inside a copy with one ghost cell on every side. */
  const int padded[3] = {local[0] + 2, local[1] + 2, local[2] + 2};
  const int one[3] = {1, 1, 1};
  MPI_Type_create_subarray(3, padded, local, one, MPI_ORDER_C, MPI_DOUBLE, &memtype);
  MPI_Type_commit(&memtype);
  const int padded_count = padded[0] * padded[1] * padded[2];
  const int local_count = local[0] * local[1] * local[2];
  double* ghosted = malloc(sizeof(double) * padded_count);
  double* plain = malloc(sizeof(double) * local_count);
  CHECK(ghosted && plain);

  MPI_File fh;
  t_open("noncontig_subarray.dat", &fh);
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
  MPI_Status status;
  const double shifts[2] = {0.5, 0.25};
  for (int pass = 0; pass < 2; ++pass) {
    for (int n = 0; n < padded_count; ++n) ghosted[n] = -1.0;
    for (int i = 0; i < local[0]; ++i)
      for (int j = 0; j < local[1]; ++j)
        for (int k = 0; k < local[2]; ++k)
          ghosted[((i + 1) * padded[1] + (j + 1)) * padded[2] + (k + 1)] =
              global_value(starts[0] + i, starts[1] + j, starts[2] + k, shifts[pass]);
    if (pass == 0) {
      MPI_CHECK(MPI_File_write_all(fh, ghosted, 1, memtype, &status));
      CHECK_EQ(t_count(&status, memtype), 1);
    } else {
      MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
      MPI_CHECK(MPI_File_write_all_c(fh, ghosted, (MPI_Count)1, memtype, &status));
      MPI_Count count_c = -1;
      MPI_CHECK(MPI_Get_count_c(&status, memtype, &count_c));
      CHECK_EQ(count_c, 1);
    }
    t_make_visible(fh);
    MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    for (int n = 0; n < local_count; ++n) plain[n] = -2.0;
    if (pass == 0) {
      MPI_CHECK(MPI_File_read_all(fh, plain, local_count, MPI_DOUBLE, &status));
      CHECK_EQ(t_count(&status, MPI_DOUBLE), local_count);
    } else {
      MPI_CHECK(MPI_File_read_all_c(fh, plain, (MPI_Count)local_count, MPI_DOUBLE, &status));
      MPI_Count count_c = -1;
      MPI_CHECK(MPI_Get_count_c(&status, MPI_DOUBLE, &count_c));
      CHECK_EQ(count_c, local_count);
    }
    for (int i = 0; i < local[0]; ++i)
      for (int j = 0; j < local[1]; ++j)
        for (int k = 0; k < local[2]; ++k)
          CHECK(plain[(i * local[1] + j) * local[2] + k] ==
                global_value(starts[0] + i, starts[1] + j, starts[2] + k, shifts[pass]));
    MPI_Offset position = -1;
    MPI_CHECK(MPI_File_get_position(fh, &position));
    CHECK_EQ(position, local_count);
  }
  MPI_CHECK(MPI_File_close(&fh));

  /* Every rank checks the whole array through a fresh, contiguous view. */
  double* whole = malloc(sizeof(double) * GX * GY * GZ);
  CHECK(whole != NULL);
  t_open("noncontig_subarray.dat", &fh);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, (MPI_Offset)sizeof(double) * GX * GY * GZ);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, whole, GX * GY * GZ, MPI_DOUBLE, &status));
  CHECK_EQ(t_count(&status, MPI_DOUBLE), GX * GY * GZ);
  for (int i = 0; i < GX; ++i)
    for (int j = 0; j < GY; ++j)
      for (int k = 0; k < GZ; ++k)
        CHECK(whole[(i * GY + j) * GZ + k] == global_value(i, j, k, 0.25));
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "subarray: %dx%dx%d doubles in %dx%dx%d blocks; write_all/read_all and "
      "write_all_c/read_all_c with a ghosted memory subarray; file size %lld",
      GX, GY, GZ, dims[0], dims[1], dims[2], (long long)size);
  free(whole);
  free(plain);
  free(ghosted);
  MPI_Type_free(&memtype);
  MPI_Type_free(&filetype);
  MPI_Comm_free(&cart);
}

/* ---- vector view: every read and write call ------------------------- */

enum { BLOCK = 3, PIECE = 24, PIECES = 6 };

/* The value of the rank's etype number `index` in its view. */
static int vector_value(int rank, int index) { return 1000000 * (rank + 1) + index; }

/* Memory: PIECE ints, every other int of a buffer of 2*PIECE. */
static void spread(int* spread_buffer, int rank, int first) {
  for (int i = 0; i < 2 * PIECE; ++i) spread_buffer[i] = -7;
  for (int i = 0; i < PIECE; ++i) spread_buffer[2 * i] = vector_value(rank, first + i);
}

static void vector_view(void) {
  const int n = t_nranks;
  MPI_Datatype vector, filetype, memtype;
  MPI_Type_vector(2, BLOCK, BLOCK * n, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 0, (MPI_Aint)sizeof(int) * 2 * BLOCK * n, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_vector(PIECE, 1, 2, MPI_INT, &memtype);
  MPI_Type_commit(&memtype);

  MPI_File fh;
  t_open("noncontig_vector.dat", &fh);
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * BLOCK * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  int buffer[2 * PIECE];
  MPI_Status status;
  MPI_Count count_c;
  /* Piece p covers etypes [p*PIECE, (p+1)*PIECE) of every rank's view. */
  spread(buffer, t_rank, 0 * PIECE);
  MPI_CHECK(MPI_File_write_at_all(fh, 0 * PIECE, buffer, 1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  spread(buffer, t_rank, 1 * PIECE);
  MPI_CHECK(MPI_File_write_at_all_c(fh, 1 * PIECE, buffer, (MPI_Count)1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  spread(buffer, t_rank, 2 * PIECE);
  MPI_CHECK(MPI_File_write_at(fh, 2 * PIECE, buffer, 1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  spread(buffer, t_rank, 3 * PIECE);
  MPI_CHECK(MPI_File_write_at_c(fh, 3 * PIECE, buffer, (MPI_Count)1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  MPI_CHECK(MPI_File_seek(fh, 4 * PIECE, MPI_SEEK_SET));
  spread(buffer, t_rank, 4 * PIECE);
  MPI_CHECK(MPI_File_write(fh, buffer, 1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  spread(buffer, t_rank, 5 * PIECE);
  MPI_CHECK(MPI_File_write_c(fh, buffer, (MPI_Count)1, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), 1);
  MPI_Offset position = -1;
  MPI_CHECK(MPI_File_get_position(fh, &position));
  CHECK_EQ(position, PIECES * PIECE);
  t_make_visible(fh);

  /* Read every piece back, contiguous in memory, with each read call. */
  int back[PIECE];
  int elements = -1;
  for (int piece = 0; piece < PIECES; ++piece) {
    for (int i = 0; i < PIECE; ++i) back[i] = -9;
    const MPI_Offset offset = (MPI_Offset)piece * PIECE;
    switch (piece) {
      case 0:
        MPI_CHECK(MPI_File_read_at_all(fh, offset, back, PIECE, MPI_INT, &status));
        break;
      case 1:
        MPI_CHECK(MPI_File_read_at_all_c(fh, offset, back, (MPI_Count)PIECE, MPI_INT, &status));
        break;
      case 2:
        MPI_CHECK(MPI_File_read_at(fh, offset, back, PIECE, MPI_INT, &status));
        break;
      case 3:
        MPI_CHECK(MPI_File_read_at_c(fh, offset, back, (MPI_Count)PIECE, MPI_INT, &status));
        break;
      case 4:
        MPI_CHECK(MPI_File_seek(fh, offset, MPI_SEEK_SET));
        MPI_CHECK(MPI_File_read(fh, back, PIECE, MPI_INT, &status));
        break;
      default:
        MPI_CHECK(MPI_File_read_c(fh, back, (MPI_Count)PIECE, MPI_INT, &status));
        break;
    }
    count_c = -1;
    MPI_CHECK(MPI_Get_count_c(&status, MPI_INT, &count_c));
    CHECK_EQ(count_c, PIECE);
    for (int i = 0; i < PIECE; ++i) CHECK_EQ(back[i], vector_value(t_rank, piece * PIECE + i));
  }
  /* Read the rank's first piece again into the spread memory type. */
  int spread_back[2 * PIECE];
  for (int i = 0; i < 2 * PIECE; ++i) spread_back[i] = -5;
  MPI_CHECK(MPI_File_read_at_all(fh, 0, spread_back, 1, memtype, &status));
  MPI_CHECK(MPI_Get_elements(&status, memtype, &elements));
  CHECK_EQ(elements, PIECE);
  for (int i = 0; i < PIECE; ++i) {
    CHECK_EQ(spread_back[2 * i], vector_value(t_rank, i));
    CHECK_EQ(spread_back[2 * i + 1], -5);
  }
  MPI_CHECK(MPI_File_close(&fh));

  /* The raw file: blocks of BLOCK ints, rank by rank in turn. */
  t_open("noncontig_vector.dat", &fh);
  const int total = PIECES * PIECE * n;
  int* raw = malloc(sizeof(int) * total);
  CHECK(raw != NULL);
  MPI_CHECK(MPI_File_read_all(fh, raw, total, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), total);
  for (int i = 0; i < total; ++i) {
    int block = i / BLOCK, owner = block % n, index = (block / n) * BLOCK + i % BLOCK;
    CHECK_EQ(raw[i], vector_value(owner, index));
  }
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  MPI_CHECK(MPI_File_close(&fh));
  free(raw);
  t_report(
      "vector view: write_at_all, write_at_all_c, write_at, write_at_c, write, write_c "
      "of a strided memory type and the matching reads; file size %lld",
      (long long)size);
  MPI_Type_free(&memtype);
  MPI_Type_free(&filetype);
  MPI_Type_free(&vector);
}

/* ---- struct and hindexed with holes --------------------------------- */

/* One record in memory: four ints, a gap, a double. */
typedef struct {
  int ints[4];
  int gap[2];
  double real;
} Record;

enum { RECORD_FILE_EXTENT = 40, RECORDS = 10, HALF = RECORDS / 2 };

static void fill_record(Record* record, int rank, int index) {
  for (int i = 0; i < 4; ++i) record->ints[i] = 100 * (rank + 1) + 10 * index + i;
  record->gap[0] = record->gap[1] = -3;
  record->real = rank + index / 16.0;
}

static void struct_hindexed(void) {
  const int n = t_nranks;
  /* In the file, one record occupies 40 bytes: ints at 0, 8, 12 and 20
   * (an hindexed type with holes at 4 and 16), the double at 32 (a hole at
   * 24), then the other ranks' records. */
  const int block_lengths[3] = {1, 2, 1};
  const MPI_Aint block_offsets[3] = {0, 8, 20};
  MPI_Datatype ints_with_holes, record_in_file, filetype;
  MPI_Type_create_hindexed(3, block_lengths, block_offsets, MPI_INT, &ints_with_holes);
  const int struct_lengths[2] = {1, 1};
  const MPI_Aint struct_offsets[2] = {0, 32};
  const MPI_Datatype struct_types[2] = {ints_with_holes, MPI_DOUBLE};
  MPI_Type_create_struct(2, struct_lengths, struct_offsets, struct_types, &record_in_file);
  MPI_Type_create_resized(record_in_file, 0, (MPI_Aint)RECORD_FILE_EXTENT * n, &filetype);
  MPI_Type_commit(&filetype);
  /* In memory: the Record struct, whose gap is skipped. */
  const int memory_lengths[2] = {4, 1};
  const MPI_Aint memory_offsets[2] = {0, offsetof(Record, real)};
  const MPI_Datatype memory_types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype record_in_memory, memtype;
  MPI_Type_create_struct(2, memory_lengths, memory_offsets, memory_types, &record_in_memory);
  MPI_Type_create_resized(record_in_memory, 0, sizeof(Record), &memtype);
  MPI_Type_commit(&memtype);

  MPI_File fh;
  t_open("noncontig_struct.dat", &fh);
  /* The holes must read as zeros: MPICH's data sieving writes whatever its
   * buffer held over holes that lie past the end of file, so the file gets
   * its final size before any record is written. */
  const MPI_Offset size = (MPI_Offset)RECORD_FILE_EXTENT * n * RECORDS;
  MPI_CHECK(MPI_File_set_size(fh, size));
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)RECORD_FILE_EXTENT * t_rank, MPI_BYTE, filetype,
                              "native", MPI_INFO_NULL));
  Record records[RECORDS], back[RECORDS];
  for (int i = 0; i < RECORDS; ++i) fill_record(&records[i], t_rank, i);
  MPI_Status status;
  const int record_bytes = 4 * (int)sizeof(int) + (int)sizeof(double);
  /* The first half collectively, the second independently; offsets count
   * bytes (the etype). */
  MPI_CHECK(MPI_File_write_all(fh, records, HALF, memtype, &status));
  CHECK_EQ(t_count(&status, memtype), HALF);
  MPI_CHECK(MPI_File_write_at(fh, (MPI_Offset)HALF * record_bytes, records + HALF, HALF, memtype,
                              &status));
  CHECK_EQ(t_count(&status, memtype), HALF);
  t_make_visible(fh);

  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, RECORDS, memtype, &status));
  int count = t_count(&status, memtype), elements = -1;
  MPI_Count elements_x = -1;
  MPI_CHECK(MPI_Get_elements(&status, memtype, &elements));
  MPI_CHECK(MPI_Get_elements_x(&status, memtype, &elements_x));
  CHECK_EQ(count, RECORDS);
  CHECK_EQ(elements, 5 * RECORDS);
  CHECK_EQ(elements_x, 5 * RECORDS);
  for (int i = 0; i < RECORDS; ++i) {
    for (int j = 0; j < 4; ++j) CHECK_EQ(back[i].ints[j], records[i].ints[j]);
    CHECK(back[i].real == records[i].real);
    CHECK_EQ(back[i].gap[0], 0); /* not read into */
  }
  MPI_CHECK(MPI_File_close(&fh));

  /* Raw bytes: the records, zeros in every hole. */
  t_open("noncontig_struct.dat", &fh);
  unsigned char* raw = malloc((size_t)size);
  CHECK(raw != NULL);
  MPI_CHECK(MPI_File_read_at(fh, 0, raw, (int)size, MPI_BYTE, &status));
  CHECK_EQ(t_count(&status, MPI_BYTE), size);
  for (int slot = 0; slot < n * RECORDS; ++slot) {
    const unsigned char* at = raw + (size_t)slot * RECORD_FILE_EXTENT;
    Record expected;
    fill_record(&expected, slot % n, slot / n);
    int ints[6];
    double real;
    memcpy(ints, at, sizeof ints);
    memcpy(&real, at + 32, sizeof real);
    CHECK_EQ(ints[0], expected.ints[0]);
    CHECK_EQ(ints[1], 0);
    CHECK_EQ(ints[2], expected.ints[1]);
    CHECK_EQ(ints[3], expected.ints[2]);
    CHECK_EQ(ints[4], 0);
    CHECK_EQ(ints[5], expected.ints[3]);
    for (int b = 24; b < 32; ++b) CHECK_EQ(at[b], 0);
    CHECK(real == expected.real);
  }
  free(raw);
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "struct/hindexed with holes: write_all + write_at, read_at_all count %d elements %d "
      "elements_x %lld; holes zero",
      count, elements, (long long)elements_x);
  MPI_Type_free(&memtype);
  MPI_Type_free(&record_in_memory);
  MPI_Type_free(&filetype);
  MPI_Type_free(&record_in_file);
  MPI_Type_free(&ints_with_holes);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "noncontig");
  subarray_blocks();
  vector_view();
  struct_hindexed();
  return t_finish();
}
