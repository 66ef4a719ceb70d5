// The MPI datatype of a C++ element type, for the typed forms of File's
// calls (file.h), which take a std::span, a std::vector or a std::array of
// arithmetic values and deduce the datatype:
//
//   std::vector<double> grid(n);
//   file.write_at_all(offset, grid);            // MPI_DOUBLE, n elements
//   file.read_at(0, std::span<std::complex<float>>(buffer, m));
//
// The types and their datatypes:
//   char -> MPI_CHAR, wchar_t -> MPI_WCHAR, bool -> MPI_CXX_BOOL,
//   std::byte -> MPI_BYTE;
//   the other integer types (signed char, short, int, long, long long and
//   their unsigned forms, so also std::int8_t ... std::uint64_t) -> the
//   MPI fixed-width type of their size and signedness (MPI_INT8_T ...
//   MPI_UINT64_T): in the external32 representation MPI_LONG has 4 bytes,
//   and a long written as MPI_LONG would lose its upper half;
//   float -> MPI_FLOAT, double -> MPI_DOUBLE, long double -> MPI_LONG_DOUBLE;
//   std::complex<float / double / long double> -> MPI_CXX_FLOAT_COMPLEX /
//   MPI_CXX_DOUBLE_COMPLEX / MPI_CXX_LONG_DOUBLE_COMPLEX.
// const and volatile are ignored. Other types (structs, pointers) have no
// predefined datatype: describe them with a derived datatype and use the
// forms that take one.
#pragma once

#include <mpi.h>

#include <complex>
#include <concepts>
#include <cstddef>
#include <ranges>
#include <type_traits>

namespace flowio {

namespace detail {

// MPI's fixed-width integer type of `Bytes` bytes and the given signedness.
template <std::size_t Bytes, bool Signed>
MPI_Datatype fixed_width_integer() {
  if constexpr (Bytes == 1) return Signed ? MPI_INT8_T : MPI_UINT8_T;
  if constexpr (Bytes == 2) return Signed ? MPI_INT16_T : MPI_UINT16_T;
  if constexpr (Bytes == 4) return Signed ? MPI_INT32_T : MPI_UINT32_T;
  if constexpr (Bytes == 8) return Signed ? MPI_INT64_T : MPI_UINT64_T;
}

template <typename T>
inline constexpr bool is_fixed_width_integer =
    std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
    !std::is_same_v<T, bool> && !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> &&
    !std::is_same_v<T, char32_t> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

template <typename T>
inline constexpr bool has_datatype =
    is_fixed_width_integer<T> || std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
    std::is_same_v<T, bool> || std::is_same_v<T, std::byte> || std::is_same_v<T, float> ||
    std::is_same_v<T, double> || std::is_same_v<T, long double> ||
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>> ||
    std::is_same_v<T, std::complex<long double>>;

}  // namespace detail

// A type with a predefined MPI datatype (the list above).
template <typename T>
concept PredefinedElement = detail::has_datatype<std::remove_cv_t<T>>;

// The predefined MPI datatype of T (the list above).
template <PredefinedElement T>
MPI_Datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (detail::is_fixed_width_integer<U>) {
    return detail::fixed_width_integer<sizeof(U), std::is_signed_v<U>>();
  } else if constexpr (std::is_same_v<U, char>) {
    return MPI_CHAR;
  } else if constexpr (std::is_same_v<U, wchar_t>) {
    return MPI_WCHAR;
  } else if constexpr (std::is_same_v<U, bool>) {
    return MPI_CXX_BOOL;
  } else if constexpr (std::is_same_v<U, std::byte>) {
    return MPI_BYTE;
  } else if constexpr (std::is_same_v<U, float>) {
    return MPI_FLOAT;
  } else if constexpr (std::is_same_v<U, double>) {
    return MPI_DOUBLE;
  } else if constexpr (std::is_same_v<U, long double>) {
    return MPI_LONG_DOUBLE;
  } else if constexpr (std::is_same_v<U, std::complex<float>>) {
    return MPI_CXX_FLOAT_COMPLEX;
  } else if constexpr (std::is_same_v<U, std::complex<double>>) {
    return MPI_CXX_DOUBLE_COMPLEX;
  } else {
    return MPI_CXX_LONG_DOUBLE_COMPLEX;
  }
}

// Data a typed write takes: contiguous, of known size, of a predefined
// element type (std::span<const double>, std::vector<int>,
// std::array<std::complex<float>, N>, ...).
template <typename Range>
concept TypedData = std::ranges::contiguous_range<Range> && std::ranges::sized_range<Range> &&
    PredefinedElement<std::ranges::range_value_t<Range>>;

// A buffer a typed read fills: TypedData whose elements may be assigned
// (std::span<double>, a non-const std::vector<int>, ...).
template <typename Range>
concept TypedBuffer = TypedData<Range> &&
    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Range>>>;

// TypedData / TypedBuffer that a nonblocking call may borrow until its
// Future is ready: not a container passed as a temporary, which would be
// destroyed before the call completes (a std::span, or a container named
// by an lvalue, qualify; std::ranges::borrowed_range).
template <typename Range>
concept BorrowableData = TypedData<Range> && std::ranges::borrowed_range<Range>;
template <typename Range>
concept BorrowableBuffer = TypedBuffer<Range> && std::ranges::borrowed_range<Range>;

}  // namespace flowio
