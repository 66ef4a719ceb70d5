/* The datatype corners MPI-IO implementations get wrong, as MPI datatypes
 * for tests through the C++ API (tests/api/datatype_corners_test.cc) and
 * through the MPI-IO layer (tests/mpiio/datatype_corners.c): zero-length
 * blocks anywhere, indexed/hindexed/struct over resized, subarray and
 * darray children, resized memory types with a nonzero lower bound,
 * large-count constructors (MPI 4.0 _c functions) and strides beyond 2^31.
 * The tests compare what flowio writes and reads with what MPI_Pack and
 * MPI_Unpack say the typemap means: the oracle is MPI's own typemap, not
 * another MPI-IO implementation.
 *
 * Plain C (header-only, static functions), so that both tests share it. */
#ifndef FLOWIO_TESTS_SUPPORT_CORNER_TYPES_H_
#define FLOWIO_TESTS_SUPPORT_CORNER_TYPES_H_

#include <mpi.h>

/* What a corner type may serve as: a filetype must have non-negative,
 * non-decreasing, non-overlapping displacements; a memory type need not. */
enum { CORNER_FILETYPE = 1, CORNER_MEMORY = 2 };

typedef struct {
  const char* name;
  int uses; /* CORNER_FILETYPE | CORNER_MEMORY */
  /* Made by the MPI 4.0 large-count (_c) constructors, which MPI answers
   * only through MPI_Type_get_envelope_c / _contents_c. */
  int large_count;
  /* Builds the type, committed; intermediate types are freed. */
  MPI_Datatype (*make)(void);
} CornerType;

/* What MPI says of a type's layout: its data size, extent and true
 * extent, from which the tests size their buffers and file images. */
typedef struct {
  int size;
  MPI_Aint lb, extent, true_lb, true_extent;
} CornerLayout;

static inline CornerLayout corner_layout(MPI_Datatype type) {
  CornerLayout layout;
  MPI_Type_size(type, &layout.size);
  MPI_Type_get_extent(type, &layout.lb, &layout.extent);
  MPI_Type_get_true_extent(type, &layout.true_lb, &layout.true_extent);
  return layout;
}

static inline MPI_Datatype corner_commit(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

/* The control: a plain vector every implementation gets right, so that a
 * mismatch on a corner below is the corner's doing. */
static inline MPI_Datatype corner_control_vector(void) {
  MPI_Datatype type;
  MPI_Type_vector(3, 2, 4, MPI_INT, &type);
  return corner_commit(type);
}

/* Zero-length blocks between, before and after data blocks. */
static inline MPI_Datatype corner_indexed_zero_blocks(void) {
  const int lengths[6] = {0, 2, 0, 3, 0, 1};
  const int displacements[6] = {0, 0, 3, 5, 8, 9};
  MPI_Datatype type;
  MPI_Type_indexed(6, lengths, displacements, MPI_INT, &type);
  return corner_commit(type);
}

static inline MPI_Datatype corner_hindexed_zero_first_last(void) {
  const int lengths[4] = {0, 3, 2, 0};
  const MPI_Aint displacements[4] = {0, 8, 24, 40};
  MPI_Datatype type;
  MPI_Type_create_hindexed(4, lengths, displacements, MPI_SHORT, &type);
  return corner_commit(type);
}

/* A struct whose middle member has count 0. */
static inline MPI_Datatype corner_struct_zero_member(void) {
  const int lengths[3] = {1, 0, 2};
  const MPI_Aint displacements[3] = {0, 8, 16};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype type;
  MPI_Type_create_struct(3, lengths, displacements, types, &type);
  return corner_commit(type);
}

/* Indexed over MPI_INT resized to an extent of 12: each element leaves
 * an 8-byte gap. */
static inline MPI_Datatype corner_indexed_over_resized(void) {
  MPI_Datatype child, type;
  MPI_Type_create_resized(MPI_INT, 0, 12, &child);
  const int lengths[3] = {1, 2, 1};
  const int displacements[3] = {0, 2, 5};
  MPI_Type_indexed(3, lengths, displacements, child, &type);
  MPI_Type_free(&child);
  return corner_commit(type);
}

/* Hindexed over a child whose lower bound is below its data (lb -4,
 * extent 12), blocks of 2 and 1 copies. */
static inline MPI_Datatype corner_hindexed_over_resized_lb(void) {
  MPI_Datatype pair, child, type;
  MPI_Type_contiguous(2, MPI_SHORT, &pair);
  MPI_Type_create_resized(pair, -4, 12, &child);
  const int lengths[2] = {2, 1};
  const MPI_Aint displacements[2] = {8, 40};
  MPI_Type_create_hindexed(2, lengths, displacements, child, &type);
  MPI_Type_free(&pair);
  MPI_Type_free(&child);
  return corner_commit(type);
}

/* Indexed over a 2-D subarray (a 2x3 block at (1,2) of a 4x6 byte array). */
static inline MPI_Datatype corner_indexed_over_subarray(void) {
  const int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
  MPI_Datatype child, type;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_BYTE, &child);
  const int lengths[2] = {1, 2};
  const int displacements[2] = {0, 2};
  MPI_Type_indexed(2, lengths, displacements, child, &type);
  MPI_Type_free(&child);
  return corner_commit(type);
}

/* Hindexed over a darray (process 1 of 2, BLOCK over 10 ints: ints 5-9),
 * two copies 80 bytes apart. */
static inline MPI_Datatype corner_hindexed_over_darray(void) {
  const int gsizes[1] = {10}, distribs[1] = {MPI_DISTRIBUTE_BLOCK};
  const int dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {2};
  MPI_Datatype child, type;
  MPI_Type_create_darray(2, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &child);
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, 80};
  MPI_Type_create_hindexed(2, lengths, displacements, child, &type);
  MPI_Type_free(&child);
  return corner_commit(type);
}

/* A memory type with a nonzero lower bound above its first data byte:
 * three ints 8 bytes apart, resized to lb 4, extent 28. */
static inline MPI_Datatype corner_resized_positive_lb(void) {
  MPI_Datatype vector, type;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 4, 28, &type);
  MPI_Type_free(&vector);
  return corner_commit(type);
}

/* A memory type with data below the buffer pointer: ints at -8 and 4,
 * resized to lb -8, extent 20. */
static inline MPI_Datatype corner_resized_negative_lb(void) {
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {-8, 4};
  MPI_Datatype pair, type;
  MPI_Type_create_hindexed(2, lengths, displacements, MPI_INT, &pair);
  MPI_Type_create_resized(pair, -8, 20, &type);
  MPI_Type_free(&pair);
  return corner_commit(type);
}

/* Large-count constructors with small values (MPI 4.0 _c functions). */
static inline MPI_Datatype corner_large_count_vector(void) {
  MPI_Datatype type;
  MPI_Type_vector_c(3, 2, 5, MPI_INT, &type);
  return corner_commit(type);
}

static inline MPI_Datatype corner_large_count_hindexed(void) {
  const MPI_Count lengths[3] = {2, 0, 3};
  const MPI_Count displacements[3] = {0, 12, 16};
  MPI_Datatype type;
  MPI_Type_create_hindexed_c(3, lengths, displacements, MPI_INT, &type);
  return corner_commit(type);
}

/* A stride beyond 2^31 (3 GiB): two 4-byte blocks, the second past what an
 * int displacement can say. The file it describes is sparse. */
static inline MPI_Datatype corner_stride_beyond_2g(void) {
  MPI_Datatype type;
  MPI_Type_create_hvector_c(2, 4, (MPI_Count)3 << 30, MPI_BYTE, &type);
  return corner_commit(type);
}

static const CornerType corner_types[] = {
    {"control_vector", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_control_vector},
    {"indexed_zero_length_blocks", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_indexed_zero_blocks},
    {"hindexed_zero_first_last", CORNER_FILETYPE | CORNER_MEMORY, 0,
     corner_hindexed_zero_first_last},
    {"struct_zero_count_member", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_struct_zero_member},
    {"indexed_over_resized", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_indexed_over_resized},
    {"hindexed_over_resized_lb", CORNER_FILETYPE | CORNER_MEMORY, 0,
     corner_hindexed_over_resized_lb},
    {"indexed_over_subarray", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_indexed_over_subarray},
    {"hindexed_over_darray", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_hindexed_over_darray},
    {"resized_positive_lb", CORNER_FILETYPE | CORNER_MEMORY, 0, corner_resized_positive_lb},
    {"resized_negative_lb", CORNER_MEMORY, 0, corner_resized_negative_lb},
    {"large_count_vector", CORNER_FILETYPE | CORNER_MEMORY, 1, corner_large_count_vector},
    {"large_count_hindexed", CORNER_FILETYPE | CORNER_MEMORY, 1, corner_large_count_hindexed},
    {"stride_beyond_2g", CORNER_FILETYPE, 1, corner_stride_beyond_2g},
};

enum { CORNER_TYPE_COUNT = sizeof corner_types / sizeof corner_types[0] };

#endif /* FLOWIO_TESTS_SUPPORT_CORNER_TYPES_H_ */
