/* The external32 data representation, compared with MPICH's own MPI-IO:
 * for each predefined type whose external32 form MPICH 4.0.2 produces
 * correctly, every rank writes
 * elements at explicit offsets (contiguous memory) and through a
 * collective write_all with an interleaving vector filetype and a strided
 * memory type, then reads both back independently and collectively.
 * MPI_File_get_type_extent is asked under the view. The test harness
 * compares the files byte for byte with MPICH's: flowio's external32 files
 * are MPICH's.
 *
 * Left out, because MPICH 4.0.2 gets them wrong (tests/api/external32_test.cc
 * checks flowio on them against the MPI standard's rules instead):
 * MPI_LONG and MPI_UNSIGNED_LONG (4 bytes in external32; ROMIO writes 8 of
 * a 4-byte buffer), MPI_WCHAR (2 bytes; MPICH's packing aborts), the
 * value-index pairs and structs of several types (MPICH packs one basic
 * type per datatype), Fortran's MPI_COMPLEX and MPI_DOUBLE_COMPLEX (MPICH
 * swaps the whole element, putting the imaginary part first), and
 * MPI_LONG_DOUBLE and MPI_C_LONG_DOUBLE_COMPLEX (the low six bytes of the
 * IEEE quad, zero for any x87 value, hold different garbage in every MPICH
 * run when written by a collective call from strided memory). */
#include "mpiio_test.h"

enum { COUNT = 5, STRIDED = 3, MAX_SIZE = 32 };

enum Fill { BYTES, BOOL, FLOAT, DOUBLE };

struct Type {
  MPI_Datatype type;
  const char* name;
  enum Fill fill;
  int parts;        /* 2 for complex types */
  int significant;  /* bytes of a part that carry the value (x87: 10 of 16) */
};

static const struct Type types[] = {
    {MPI_CHAR, "char", BYTES, 1, 1},
    {MPI_SIGNED_CHAR, "signed_char", BYTES, 1, 1},
    {MPI_UNSIGNED_CHAR, "unsigned_char", BYTES, 1, 1},
    {MPI_BYTE, "byte", BYTES, 1, 1},
    {MPI_SHORT, "short", BYTES, 1, 2},
    {MPI_UNSIGNED_SHORT, "unsigned_short", BYTES, 1, 2},
    {MPI_INT, "int", BYTES, 1, 4},
    {MPI_UNSIGNED, "unsigned", BYTES, 1, 4},
    {MPI_LONG_LONG, "long_long", BYTES, 1, 8},
    {MPI_UNSIGNED_LONG_LONG, "unsigned_long_long", BYTES, 1, 8},
    {MPI_FLOAT, "float", FLOAT, 1, 4},
    {MPI_DOUBLE, "double", DOUBLE, 1, 8},
    {MPI_C_BOOL, "c_bool", BOOL, 1, 1},
    {MPI_INT8_T, "int8", BYTES, 1, 1},
    {MPI_INT16_T, "int16", BYTES, 1, 2},
    {MPI_INT32_T, "int32", BYTES, 1, 4},
    {MPI_INT64_T, "int64", BYTES, 1, 8},
    {MPI_UINT8_T, "uint8", BYTES, 1, 1},
    {MPI_UINT16_T, "uint16", BYTES, 1, 2},
    {MPI_UINT32_T, "uint32", BYTES, 1, 4},
    {MPI_UINT64_T, "uint64", BYTES, 1, 8},
    {MPI_AINT, "aint", BYTES, 1, 8},
    {MPI_COUNT, "count", BYTES, 1, 8},
    {MPI_OFFSET, "offset", BYTES, 1, 8},
    {MPI_C_FLOAT_COMPLEX, "c_float_complex", FLOAT, 2, 4},
    {MPI_C_DOUBLE_COMPLEX, "c_double_complex", DOUBLE, 2, 8},
    {MPI_CHARACTER, "character", BYTES, 1, 1},
    {MPI_INTEGER, "integer", BYTES, 1, 4},
    {MPI_REAL, "real", FLOAT, 1, 4},
    {MPI_DOUBLE_PRECISION, "double_precision", DOUBLE, 1, 8},
};

/* Element `index` of rank `rank`'s data: a value of the type. */
static void make_element(const struct Type* t, int rank, int index, unsigned char* out) {
  int size = 0;
  MPI_Type_size(t->type, &size);
  memset(out, 0, MAX_SIZE);
  const int part_size = size / t->parts;
  for (int part = 0; part < t->parts; ++part) {
    unsigned char* at = out + part * part_size;
    const double value = rank * 100 + index * 3 + part + 0.25;
    switch (t->fill) {
      case BYTES:
        for (int k = 0; k < part_size; ++k)
          at[k] = (unsigned char)(rank * 37 + index * 11 + part * 5 + k * 3 + 1);
        break;
      case BOOL:
        at[0] = (unsigned char)((rank + index) & 1);
        break;
      case FLOAT: {
        const float f = (float)value;
        memcpy(at, &f, sizeof f);
        break;
      }
      case DOUBLE:
        memcpy(at, &value, sizeof value);
        break;
    }
  }
}

static int same_element(const struct Type* t, const unsigned char* a, const unsigned char* b) {
  int size = 0;
  MPI_Type_size(t->type, &size);
  const int part_size = size / t->parts;
  for (int part = 0; part < t->parts; ++part)
    if (memcmp(a + part * part_size, b + part * part_size, (size_t)t->significant) != 0) return 0;
  return 1;
}

static void check_type(const struct Type* t) {
  char name[256];
  snprintf(name, sizeof name, "e32_%s.dat", t->name);
  MPI_File fh;
  t_open(name, &fh);
  int size = 0;
  MPI_Type_size(t->type, &size);
  MPI_CHECK(MPI_File_set_view(fh, 0, t->type, t->type, "external32", MPI_INFO_NULL));
  MPI_Aint file_extent = 0;
  MPI_CHECK(MPI_File_get_type_extent(fh, t->type, &file_extent));

  /* Explicit offsets, contiguous memory: rank r's COUNT elements at r * COUNT. */
  unsigned char written[COUNT * MAX_SIZE], read[COUNT * MAX_SIZE];
  for (int i = 0; i < COUNT; ++i) make_element(t, t_rank, i, written + i * size);
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at(fh, (MPI_Offset)t_rank * COUNT, written, COUNT, t->type, &status));
  CHECK_EQ(t_count(&status, t->type), COUNT);

  /* Collective: element j of rank r at base + (j * ranks + r), from every
   * other element of memory. */
  const MPI_Offset base = (MPI_Offset)t_nranks * COUNT * file_extent;
  MPI_Datatype filetype, memtype;
  MPI_CHECK(MPI_Type_vector(STRIDED, 1, t_nranks, t->type, &filetype));
  MPI_CHECK(MPI_Type_commit(&filetype));
  MPI_CHECK(MPI_Type_vector(STRIDED, 1, 2, t->type, &memtype));
  MPI_CHECK(MPI_Type_commit(&memtype));
  unsigned char strided[2 * STRIDED * MAX_SIZE], strided_back[2 * STRIDED * MAX_SIZE];
  for (int j = 0; j < 2 * STRIDED; ++j) make_element(t, t_rank, 50 + j, strided + j * size);
  MPI_CHECK(MPI_File_set_view(fh, base + t_rank * file_extent, t->type, filetype, "external32",
                              MPI_INFO_NULL));
  MPI_CHECK(MPI_File_write_all(fh, strided, 1, memtype, &status));
  t_make_visible(fh);

  /* Read back both ways. */
  MPI_CHECK(MPI_File_set_view(fh, 0, t->type, t->type, "external32", MPI_INFO_NULL));
  memset(read, 0, sizeof read);
  MPI_CHECK(MPI_File_read_at(fh, (MPI_Offset)t_rank * COUNT, read, COUNT, t->type, &status));
  int contiguous_ok = t_count(&status, t->type) == COUNT;
  for (int i = 0; i < COUNT; ++i)
    contiguous_ok = contiguous_ok && same_element(t, written + i * size, read + i * size);
  MPI_CHECK(MPI_File_set_view(fh, base + t_rank * file_extent, t->type, filetype, "external32",
                              MPI_INFO_NULL));
  memset(strided_back, 0xEE, sizeof strided_back);
  MPI_CHECK(MPI_File_read_all(fh, strided_back, 1, memtype, &status));
  int strided_ok = 1;
  for (int j = 0; j < 2 * STRIDED; ++j) {
    if (j % 2 == 0) {
      strided_ok = strided_ok && same_element(t, strided + j * size, strided_back + j * size);
    } else {
      /* The gaps of the memory type are left alone. */
      for (int k = 0; k < size; ++k) strided_ok = strided_ok && strided_back[j * size + k] == 0xEE;
    }
  }
  t_report("%s: file extent %ld, write_at/read_at %s, write_all/read_all %s", t->name,
           (long)file_extent, contiguous_ok ? "ok" : "WRONG", strided_ok ? "ok" : "WRONG");
  MPI_Type_free(&filetype);
  MPI_Type_free(&memtype);
  MPI_CHECK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "external32");
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) check_type(&types[i]);
  return t_finish();
}
