/* What the two hints programs (hints.c, system_hints.c) share: printing the
 * values a file's info reports for chosen keys, and a collective write
 * under those hints that must still be right.
 *
 * Header-only, like mpiio_test.h, which it needs. */
#ifndef FLOWIO_TESTS_MPIIO_HINTS_TEST_H_
#define FLOWIO_TESTS_MPIIO_HINTS_TEST_H_

#include "mpiio_test.h"

/* Collective: reports (t_report) "when: key=value ..." for each of the
 * `count` keys of `info`, "(absent)" for a key info does not hold. Only
 * chosen keys are printed: the others MPI_File_get_info reports are the
 * implementation's own and legitimately differ between MPICH's MPI-IO and
 * the layer. */
static inline void t_report_info_keys(MPI_Info info, const char* when, const char* const* keys,
                                      size_t count) {
  char line[T_LINE] = "";
  for (size_t k = 0; k < count; ++k) {
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, keys[k], MPI_MAX_INFO_VAL, value, &flag));
    size_t at = strlen(line);
    snprintf(line + at, sizeof line - at, " %s=%s", keys[k], flag ? value : "(absent)");
  }
  t_report("%s:%s", when, line);
}

/* The int at `index` of `rank`'s data in write number `pass`: distinct
 * across ranks and passes, so that a block written by the wrong rank or
 * left from the previous pass shows. */
static inline int t_interleaved_value(int rank, int pass, int index) {
  return 1000000 * pass + 10000 * rank + index;
}

/* Collective: sets a view on `fh` in which the ranks' blocks of `block`
 * ints alternate (rank r owns blocks r, r + nranks, ...), writes `blocks`
 * blocks per rank of t_interleaved_value(rank, pass, i) with
 * MPI_File_write_all, makes them visible, reads them back with
 * MPI_File_read_at_all and checks every int and both counts. The
 * interleaving view stays set. */
static inline void t_write_interleaved_and_check(MPI_File fh, int pass, int block, int blocks) {
  const int count = block * blocks;
  int* data = malloc(sizeof(int) * (size_t)count);
  int* back = calloc((size_t)count, sizeof(int));
  CHECK(data && back);
  for (int i = 0; i < count; ++i) data[i] = t_interleaved_value(t_rank, pass, i);
  MPI_Datatype contiguous, filetype;
  MPI_CHECK(MPI_Type_contiguous(block, MPI_INT, &contiguous));
  MPI_CHECK(
      MPI_Type_create_resized(contiguous, 0, (MPI_Aint)sizeof(int) * block * t_nranks, &filetype));
  MPI_CHECK(MPI_Type_commit(&filetype));
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * block * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  MPI_Status status;
  MPI_CHECK(MPI_File_write_all(fh, data, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  t_make_visible(fh);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  for (int i = 0; i < count; ++i) CHECK_EQ(back[i], data[i]);
  MPI_CHECK(MPI_Type_free(&filetype));
  MPI_CHECK(MPI_Type_free(&contiguous));
  free(back);
  free(data);
}

#endif /* FLOWIO_TESTS_MPIIO_HINTS_TEST_H_ */
