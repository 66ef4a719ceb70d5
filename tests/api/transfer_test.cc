// The vocabulary of the typed calls, without files, on one process: the
// datatype deduced for each element type (datatype.h) and what a Transfer
// says of the bytes moved (transfer.h), checked against MPI's own answers.
#include <doctest/doctest.h>
#include <mpi.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flowio/datatype.h"
#include "flowio/transfer.h"

// Every element type datatype.h lists maps to the predefined datatype it
// names; integers go by size and signedness to MPI's fixed-width types.
TEST_CASE("Api.Datatype.DeducedForPredefinedTypes") {
  CHECK(flowio::datatype_of<double>() == MPI_DOUBLE);
  CHECK(flowio::datatype_of<const float>() == MPI_FLOAT);
  CHECK(flowio::datatype_of<long double>() == MPI_LONG_DOUBLE);
  CHECK(flowio::datatype_of<char>() == MPI_CHAR);
  CHECK(flowio::datatype_of<wchar_t>() == MPI_WCHAR);
  CHECK(flowio::datatype_of<bool>() == MPI_CXX_BOOL);
  CHECK(flowio::datatype_of<std::byte>() == MPI_BYTE);
  CHECK(flowio::datatype_of<signed char>() == MPI_INT8_T);
  CHECK(flowio::datatype_of<unsigned char>() == MPI_UINT8_T);
  CHECK(flowio::datatype_of<short>() == MPI_INT16_T);
  CHECK(flowio::datatype_of<unsigned short>() == MPI_UINT16_T);
  CHECK(flowio::datatype_of<int>() == MPI_INT32_T);
  CHECK(flowio::datatype_of<unsigned>() == MPI_UINT32_T);
  CHECK(flowio::datatype_of<long>() == MPI_INT64_T);
  CHECK(flowio::datatype_of<unsigned long long>() == MPI_UINT64_T);
  CHECK(flowio::datatype_of<std::int64_t>() == MPI_INT64_T);
  CHECK(flowio::datatype_of<std::complex<float>>() == MPI_CXX_FLOAT_COMPLEX);
  CHECK(flowio::datatype_of<std::complex<double>>() == MPI_CXX_DOUBLE_COMPLEX);
  CHECK(flowio::datatype_of<std::complex<long double>>() == MPI_CXX_LONG_DOUBLE_COMPLEX);
  static_assert(!flowio::PredefinedElement<int*>);
  static_assert(!flowio::PredefinedElement<std::array<int, 2>>);
  static_assert(flowio::TypedData<std::span<const double>>);
  static_assert(flowio::TypedData<const std::vector<int>&>);
  static_assert(flowio::TypedBuffer<std::span<double>>);
  static_assert(!flowio::TypedBuffer<std::span<const double>>);
  static_assert(!flowio::TypedBuffer<const std::vector<int>&>);
  static_assert(!flowio::TypedData<std::vector<std::string>>);
}

// A Transfer says what MPI_Get_count and MPI_Get_elements say of the same
// bytes, for whole and partial copies of a derived datatype.
TEST_CASE("Api.Transfer.CountsAsMpiStatusDoes") {
  MPI_Datatype pair = MPI_DATATYPE_NULL;  // {double, int}: 2 elements, 12 bytes of data
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, lengths, displacements, types, &pair);
  MPI_Type_commit(&pair);
  const flowio::Transfer whole(36, pair);
  CHECK(whole.bytes() == 36);
  CHECK(whole.count() == 3);
  CHECK(whole.elements() == 6);
  const flowio::Transfer partial(32, pair);  // 2 copies and the double of a third
  CHECK(partial.count() == MPI_UNDEFINED);
  CHECK(partial.elements() == 5);
  const MPI_Status status = partial.status();
  int count = 0, elements = 0, cancelled = 1;
  MPI_Get_count(&status, pair, &count);
  MPI_Get_elements(&status, pair, &elements);
  MPI_Test_cancelled(&status, &cancelled);
  CHECK(count == MPI_UNDEFINED);
  CHECK(elements == 5);
  CHECK(cancelled == 0);
  CHECK(status.MPI_ERROR == MPI_SUCCESS);
  const flowio::Transfer big(std::size_t{3} << 32, MPI_BYTE);  // counts past 2^32
  CHECK(big.count() == (MPI_Count{3} << 32));
  CHECK(big.elements() == (MPI_Count{3} << 32));
  MPI_Type_free(&pair);
}
