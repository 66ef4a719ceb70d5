/* One datatype of more than 2 GiB in one call, in the spirit of MPICH's
 * bigtype and i_bigtype (written anew here): a memory type that is a
 * struct of two adjacent blocks, 2^31 - 4 bytes and 12 bytes (2^31 + 8
 * bytes, contiguous), through a view whose filetype is 2^29 + 2 ints (one
 * contiguous type of 2^31 + 8 bytes) after a displacement of 4100 bytes.
 * Written with one MPI_File_write_at_all, read back with one
 * MPI_File_iread_at_all and MPI_Wait into the same buffer: the counts and
 * every word are checked, and the file is compared with MPICH's. One
 * rank: the buffer is 2 GiB.
 *
 * The blocks are adjacent, as bigtype's: with a gap between them (a
 * noncontiguous memory type of more than 2 GiB), MPICH 4.0.2's
 * MPI_File_iread_at_all had not finished after 15 minutes (the layer
 * takes seconds; tests/scale/huge_memory_type_test covers such types
 * against MPICH with data packed). Classic constructors: MPICH 4.0.2's
 * MPI-IO cannot read a type made by a large-count (_c) constructor (it
 * asks MPI_Type_get_envelope, which refuses it). */
#include <stdint.h>

#include "tests/mpiio/mpiio_test.h"

static const MPI_Count kFirst = (1LL << 31) - 4;
static const MPI_Count kSecond = 12;
static const MPI_Count kBytes = kFirst + kSecond;
static const MPI_Offset kDisplacement = 4100;

/* The data: 8-byte words, word k holding k times a large odd number (no
 * two of the 2^28 words alike), cheap to make and check at 2 GiB. */
static uint64_t word_at(MPI_Count k) { return (uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull; }

static void fill(char* buffer) {
  for (MPI_Count k = 0; k < kBytes / 8; ++k) {
    const uint64_t word = word_at(k);
    memcpy(buffer + 8 * k, &word, 8);
  }
}

static long long wrong_words(const char* buffer) {
  long long wrong = 0;
  for (MPI_Count k = 0; k < kBytes / 8; ++k) {
    uint64_t word;
    memcpy(&word, buffer + 8 * k, 8);
    wrong += word != word_at(k);
  }
  return wrong;
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "big_type_layer");
  MPI_Datatype first, second, memory, filetype;
  MPI_CHECK(MPI_Type_contiguous((int)kFirst, MPI_BYTE, &first));
  MPI_CHECK(MPI_Type_contiguous((int)kSecond, MPI_BYTE, &second));
  int lengths[2] = {1, 1};
  MPI_Aint displacements[2] = {0, kFirst};
  MPI_Datatype types[2] = {first, second};
  MPI_CHECK(MPI_Type_create_struct(2, lengths, displacements, types, &memory));
  MPI_CHECK(MPI_Type_commit(&memory));
  MPI_Type_free(&first);
  MPI_Type_free(&second);
  MPI_CHECK(MPI_Type_contiguous((int)(kBytes / 4), MPI_INT, &filetype));
  MPI_CHECK(MPI_Type_commit(&filetype));
  MPI_Count size = 0;
  MPI_CHECK(MPI_Type_size_c(memory, &size));
  CHECK_EQ(size, kBytes);

  char* buffer = malloc((size_t)kBytes);
  CHECK(buffer != NULL);
  fill(buffer);
  MPI_File fh;
  t_open("big_type.dat", &fh);
  MPI_CHECK(MPI_File_set_view(fh, kDisplacement, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
  t_doing("write_at_all");
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at_all(fh, 0, buffer, 1, memory, &status));
  MPI_Count written = 0;
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &written));

  memset(buffer, 0, (size_t)kBytes);
  t_doing("iread_at_all");
  MPI_Request request;
  MPI_CHECK(MPI_File_iread_at_all(fh, 0, buffer, 1, memory, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  MPI_Count read = 0;
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &read));
  t_doing("check");
  const long long wrong = wrong_words(buffer);
  MPI_Offset file_size = 0;
  MPI_CHECK(MPI_File_get_size(fh, &file_size));
  t_report("memory type of %lld bytes: wrote %lld, read %lld, %lld words wrong, file of %lld",
           (long long)size, (long long)written, (long long)read, wrong, (long long)file_size);
  CHECK_EQ(written, size);
  CHECK_EQ(read, size);
  CHECK_EQ(wrong, 0);
  MPI_CHECK(MPI_File_close(&fh));
  free(buffer);
  MPI_Type_free(&memory);
  MPI_Type_free(&filetype);
  return t_finish();
}
