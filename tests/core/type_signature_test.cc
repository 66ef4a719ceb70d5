// TypeSignature: the element sequence of datatypes, compact for repetition,
// checked against the sequence expanded by hand; seeking by element,
// native byte and file byte.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/core/type_signature.h"

namespace {

using namespace flowio::core;

MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

// Native sizes, except doubles take 4 bytes in the file and shorts 3.
std::int64_t odd_extent(MPI_Datatype type) {
  if (type == MPI_DOUBLE) return 4;
  if (type == MPI_SHORT) return 3;
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  return size;
}

// The signature expanded element by element.
std::vector<MPI_Datatype> expand(const TypeSignature& signature, std::int64_t first,
                                 std::int64_t last) {
  std::vector<MPI_Datatype> elements;
  signature.for_each_run(first, last, [&](const ElementRun& run) {
    REQUIRE(run.count > 0);
    elements.insert(elements.end(), static_cast<std::size_t>(run.count), run.type);
  });
  return elements;
}

}  // namespace

// A struct {short; double[2]; int} repeated by a vector: the element order,
// the three counts of every position, and seeking into the middle of an
// element.
TEST_CASE("Core.TypeSignature.StructInVector") {
  const int lengths[] = {1, 2, 1};
  const MPI_Aint displacements[] = {0, 8, 24};
  const MPI_Datatype types[] = {MPI_SHORT, MPI_DOUBLE, MPI_INT};
  MPI_Datatype record, vector;
  MPI_Type_create_struct(3, lengths, displacements, types, &record);
  MPI_Type_vector(3, 2, 5, record, &vector);
  committed(vector);
  const TypeSignature signature = TypeSignature::of(vector, 2, odd_extent);
  const std::vector<MPI_Datatype> one_record = {MPI_SHORT, MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
  std::vector<MPI_Datatype> expected;
  for (int i = 0; i < 12; ++i)
    expected.insert(expected.end(), one_record.begin(), one_record.end());
  CHECK(expand(signature, 0, 48) == expected);
  CHECK(expand(signature, 5, 11) ==
        std::vector<MPI_Datatype>(expected.begin() + 5, expected.begin() + 11));
  // One record: 2 + 16 + 4 native bytes, 3 + 8 + 4 file bytes.
  CHECK(signature.total() == SignaturePosition{48, 12 * 22, 12 * 15});
  CHECK(signature.element_start(5) == SignaturePosition{5, 22 + 2, 15 + 3});
  // File byte 15 + 3 + 2 lies in the second record's first double.
  CHECK(signature.element_at_file_byte(15 + 3 + 2) == SignaturePosition{5, 24, 18});
  CHECK(signature.element_at_native_byte(22 + 2 + 8) == SignaturePosition{6, 32, 22});
  CHECK(signature.element_at_file_byte(12 * 15) == signature.total());
  CHECK(signature.node_count() <= 5);
  MPI_Type_free(&record);
  MPI_Type_free(&vector);
}

// A million doubles however described (vector, subarray, hindexed) are one
// run; value-index pairs are two elements each.
TEST_CASE("Core.TypeSignature.CompactAndPairs") {
  MPI_Datatype vector;
  MPI_Type_vector(1000, 1000, 2000, MPI_DOUBLE, &vector);
  const TypeSignature doubles = TypeSignature::of(committed(vector), 3, odd_extent);
  CHECK(doubles.node_count() <= 2);  // one run: a group of one part, and its element
  CHECK(doubles.total() == SignaturePosition{3000000, 24000000, 12000000});
  int runs = 0;
  doubles.for_each_run(10, 2999990, [&](const ElementRun& run) {
    ++runs;
    CHECK(run.type == MPI_DOUBLE);
    CHECK(run.count == 2999980);
  });
  CHECK(runs == 1);
  const TypeSignature pairs = TypeSignature::of(MPI_DOUBLE_INT, 4, odd_extent);
  CHECK(expand(pairs, 0, 8) == std::vector<MPI_Datatype>{MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT,
                                                         MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT});
  CHECK(pairs.total() == SignaturePosition{8, 48, 32});
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  CHECK(TypeSignature::of(committed(empty), 5, odd_extent).total() == SignaturePosition{});
  MPI_Type_free(&vector);
  MPI_Type_free(&empty);
}

// Large-count constructors and counts beyond 2^31 elements.
TEST_CASE("Core.TypeSignature.LargeCounts") {
  MPI_Datatype big;
  MPI_Type_contiguous_c(MPI_Count{3} << 30, MPI_FLOAT, &big);
  const TypeSignature signature = TypeSignature::of(committed(big), 2, odd_extent);
  CHECK(signature.total().element == std::int64_t{6} << 30);
  CHECK(signature.element_at_file_byte(std::int64_t{20} << 30).element == std::int64_t{5} << 30);
  MPI_Type_free(&big);
}

// Random positions agree between the three ways of seeking.
TEST_CASE("Core.TypeSignature.SeekingAgrees") {
  const int lengths[] = {3, 1, 2};
  const MPI_Aint displacements[] = {0, 40, 48};
  const MPI_Datatype types[] = {MPI_SHORT, MPI_LONG_DOUBLE_INT, MPI_DOUBLE};
  MPI_Datatype record;
  MPI_Type_create_struct(3, lengths, displacements, types, &record);
  const TypeSignature signature = TypeSignature::of(committed(record), 7, odd_extent);
  std::mt19937_64 rng(16);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t element =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(signature.total().element));
    const SignaturePosition start = signature.element_start(element);
    CHECK(start.element == element);
    CHECK(signature.element_at_file_byte(start.file) == start);
    CHECK(signature.element_at_native_byte(start.native) == start);
    const SignaturePosition next = signature.element_start(element + 1);
    if (next.file - start.file > 1) CHECK(signature.element_at_file_byte(next.file - 1) == start);
  }
  MPI_Type_free(&record);
}
