#include "exchange/external32.h"

#include <cstring>
#include <unordered_map>

#include "flowio/error.h"
#include "runtime/core/byte_order.h"

namespace flowio::exchange {
namespace {

// How one unit of a type changes between native and external32. A type
// is `units` units (complex types are two).
enum class Unit {
  copy,             // one byte
  swap,             // same size, byte order reversed
  narrow_signed,    // 8 native bytes <-> 4 (MPI_LONG)
  narrow_unsigned,  // 8 <-> 4 (MPI_UNSIGNED_LONG), 4 <-> 2 (MPI_WCHAR)
  long_double,      // x87 extended in 16 bytes <-> IEEE quad
};

struct Form {
  Unit unit;
  std::int64_t native_unit;
  std::int64_t file_unit;
  std::int64_t units;
};

// MPI 4.1, Table 14.2 (and the types MPI added since with fixed sizes).
// Entries this MPI build does not define (MPI_DATATYPE_NULL) or whose
// native size disagrees with the form are left out: external32 then has
// no form for them here.
const std::unordered_map<MPI_Datatype, Form>& forms() {
  static const std::unordered_map<MPI_Datatype, Form> table = [] {
    struct Entry {
      MPI_Datatype type;
      Form form;
    };
    const Form byte{Unit::copy, 1, 1, 1};
    const Form two{Unit::swap, 2, 2, 1};
    const Form four{Unit::swap, 4, 4, 1};
    const Form eight{Unit::swap, 8, 8, 1};
    const Form sixteen{Unit::swap, 16, 16, 1};
    const Form complex_four{Unit::swap, 4, 4, 2};
    const Form complex_eight{Unit::swap, 8, 8, 2};
    const Form complex_sixteen{Unit::swap, 16, 16, 2};
    const Entry entries[] = {
        {MPI_PACKED, byte},
        {MPI_BYTE, byte},
        {MPI_CHAR, byte},
        {MPI_UNSIGNED_CHAR, byte},
        {MPI_SIGNED_CHAR, byte},
        {MPI_WCHAR, {Unit::narrow_unsigned, sizeof(wchar_t), 2, 1}},
        {MPI_SHORT, two},
        {MPI_UNSIGNED_SHORT, two},
        {MPI_INT, four},
        {MPI_UNSIGNED, four},
        {MPI_LONG, {Unit::narrow_signed, sizeof(long), 4, 1}},
        {MPI_UNSIGNED_LONG, {Unit::narrow_unsigned, sizeof(unsigned long), 4, 1}},
        {MPI_LONG_LONG_INT, eight},
        {MPI_UNSIGNED_LONG_LONG, eight},
        {MPI_FLOAT, four},
        {MPI_DOUBLE, eight},
        {MPI_LONG_DOUBLE, {Unit::long_double, 16, 16, 1}},
        {MPI_C_BOOL, byte},
        {MPI_INT8_T, byte},
        {MPI_INT16_T, two},
        {MPI_INT32_T, four},
        {MPI_INT64_T, eight},
        {MPI_UINT8_T, byte},
        {MPI_UINT16_T, two},
        {MPI_UINT32_T, four},
        {MPI_UINT64_T, eight},
        {MPI_AINT, eight},
        {MPI_COUNT, eight},
        {MPI_OFFSET, eight},
        {MPI_C_FLOAT_COMPLEX, complex_four},
        {MPI_C_DOUBLE_COMPLEX, complex_eight},
        {MPI_C_LONG_DOUBLE_COMPLEX, {Unit::long_double, 16, 16, 2}},
        {MPI_CXX_BOOL, byte},
        {MPI_CXX_FLOAT_COMPLEX, complex_four},
        {MPI_CXX_DOUBLE_COMPLEX, complex_eight},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, {Unit::long_double, 16, 16, 2}},
        {MPI_CHARACTER, byte},
        {MPI_LOGICAL, four},
        {MPI_INTEGER, four},
        {MPI_REAL, four},
        {MPI_DOUBLE_PRECISION, eight},
        {MPI_COMPLEX, complex_four},
        {MPI_DOUBLE_COMPLEX, complex_eight},
        {MPI_INTEGER1, byte},
        {MPI_INTEGER2, two},
        {MPI_INTEGER4, four},
        {MPI_INTEGER8, eight},
        {MPI_INTEGER16, sixteen},
        {MPI_REAL4, four},
        {MPI_REAL8, eight},
        {MPI_REAL16, sixteen},
        {MPI_COMPLEX8, complex_four},
        {MPI_COMPLEX16, complex_eight},
        {MPI_COMPLEX32, complex_sixteen},
    };
    std::unordered_map<MPI_Datatype, Form> kept;
    for (const Entry& entry : entries) {
      if (entry.type == MPI_DATATYPE_NULL) continue;
      MPI_Count size = 0;
      if (MPI_Type_size_x(entry.type, &size) != MPI_SUCCESS) continue;
      if (size != entry.form.native_unit * entry.form.units) continue;
      kept.emplace(entry.type, entry.form);
    }
    return kept;
  }();
  return table;
}

const Form& form_of(MPI_Datatype type) {
  const auto found = forms().find(type);
  if (found == forms().end()) {
    throw UsageError(ErrorCode::conversion, "external32 has no form for this predefined datatype");
  }
  return found->second;
}

}  // namespace

std::int64_t external32_size(MPI_Datatype type) {
  const auto found = forms().find(type);
  if (found == forms().end()) return -1;
  return found->second.file_unit * found->second.units;
}

bool external32_keeps_bytes(MPI_Datatype type) {
  const auto found = forms().find(type);
  return found != forms().end() && found->second.unit == Unit::copy;
}

std::int64_t external32_reversed_unit(MPI_Datatype type) {
  const auto found = forms().find(type);
  if (found == forms().end() || found->second.unit != Unit::swap) return 0;
  return found->second.native_unit;
}

void to_external32(MPI_Datatype type, std::int64_t count, const char* native, char* file) {
  const Form& form = form_of(type);
  const std::int64_t units = count * form.units;
  switch (form.unit) {
    case Unit::copy:
      std::memcpy(file, native, static_cast<std::size_t>(units));
      return;
    case Unit::swap:
      core::reverse_units(form.native_unit, native, file, units);
      return;
    case Unit::narrow_signed:
    case Unit::narrow_unsigned:
      for (std::int64_t i = 0; i < units; ++i) {
        std::uint64_t value = 0;
        std::memcpy(&value, native + i * form.native_unit,
                    static_cast<std::size_t>(form.native_unit));
        // Big-endian: the low file_unit bytes of the value, most significant first.
        for (std::int64_t b = 0; b < form.file_unit; ++b) {
          file[i * form.file_unit + b] = static_cast<char>(value >> (8 * (form.file_unit - 1 - b)));
        }
      }
      return;
    case Unit::long_double:
      for (std::int64_t i = 0; i < units; ++i) {
        long double value;
        std::memcpy(&value, native + 16 * i, sizeof value);
        const __float128 quad = value;
        core::reverse_units(16, reinterpret_cast<const char*>(&quad), file + 16 * i, 1);
      }
      return;
  }
}

void from_external32(MPI_Datatype type, std::int64_t count, const char* file, char* native) {
  const Form& form = form_of(type);
  const std::int64_t units = count * form.units;
  switch (form.unit) {
    case Unit::copy:
      std::memcpy(native, file, static_cast<std::size_t>(units));
      return;
    case Unit::swap:
      core::reverse_units(form.native_unit, file, native, units);
      return;
    case Unit::narrow_signed:
    case Unit::narrow_unsigned:
      for (std::int64_t i = 0; i < units; ++i) {
        std::uint64_t value = 0;
        for (std::int64_t b = 0; b < form.file_unit; ++b) {
          value = (value << 8) | static_cast<unsigned char>(file[i * form.file_unit + b]);
        }
        const int unused_bits = static_cast<int>(64 - 8 * form.file_unit);
        if (form.unit == Unit::narrow_signed) {
          value = static_cast<std::uint64_t>(static_cast<std::int64_t>(value << unused_bits) >>
                                             unused_bits);
        }
        std::memcpy(native + i * form.native_unit, &value,
                    static_cast<std::size_t>(form.native_unit));
      }
      return;
    case Unit::long_double:
      for (std::int64_t i = 0; i < units; ++i) {
        __float128 quad;
        core::reverse_units(16, file + 16 * i, reinterpret_cast<char*>(&quad), 1);
        const long double value = static_cast<long double>(quad);
        std::memset(native + 16 * i, 0, 16);
        std::memcpy(native + 16 * i, &value, 10);  // the x87 bytes; the rest is padding
      }
      return;
  }
}

}  // namespace flowio::exchange
