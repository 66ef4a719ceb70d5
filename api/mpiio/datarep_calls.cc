// MPI_Register_datarep and MPI_Register_datarep_c: user-defined data
// representations (MPI 4.1, 14.5.3), registered with flowio, whose views and
// conversions then use them (flowio/data_representation.h). Errors are
// raised on the default file error handler, as MPI says.
#include <mpi.h>

#include <exception>
#include <type_traits>
#include <utility>

#include "api/mpiio/activation.h"
#include "api/mpiio/errors.h"
#include "flowio/data_representation.h"
#include "flowio/error.h"

namespace flowio::mpiio {
namespace {

// MPI's conversion function types, int and MPI_Count counts alike, as
// flowio's. flowio passes at most 2^30 items per call, so the int form
// never sees a count it cannot hold.
template <typename Function>
UserRepresentation::Conversion conversion_of(Function* function, void* extra_state) {
  if (function == nullptr) return {};  // MPI_CONVERSION_FN_NULL(_C)
  return [function, extra_state](void* user_buffer, MPI_Datatype type, MPI_Count count,
                                 void* file_buffer, MPI_Offset position) {
    using Count = std::conditional_t<std::is_same_v<Function, MPI_Datarep_conversion_function>, int,
                                     MPI_Count>;
    return function(user_buffer, type, static_cast<Count>(count), file_buffer, position,
                    extra_state);
  };
}

template <typename Function>
int register_datarep(const char* name, Function* read, Function* write,
                     MPI_Datarep_extent_function* file_extent, void* extra_state) {
  try {
    if (name == nullptr) throw UsageError(ErrorCode::invalid_argument, "no representation name");
    UserRepresentation representation;
    representation.read = conversion_of(read, extra_state);
    representation.write = conversion_of(write, extra_state);
    if (file_extent != nullptr) {
      representation.file_extent = [file_extent, extra_state](MPI_Datatype type, MPI_Aint* extent) {
        return file_extent(type, extent, extra_state);
      };
    }
    register_data_representation(name, std::move(representation));
    return MPI_SUCCESS;
  } catch (...) {
    return report(nullptr, MPI_FILE_NULL, error_code_of(std::current_exception()));
  }
}

}  // namespace
}  // namespace flowio::mpiio

using namespace flowio::mpiio;

// MPI_Register_datarep and its _c twin, alike but for the conversion
// functions' count type: one definition for both.
#define FLOWIO_REGISTER_DATAREP(SUFFIX, CONVERSION)                                          \
  int MPI_Register_datarep##SUFFIX(                                                          \
      const char* datarep, CONVERSION* read_conversion_fn, CONVERSION* write_conversion_fn,  \
      MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {                \
    if (forwarding()) {                                                                      \
      return PMPI_Register_datarep##SUFFIX(datarep, read_conversion_fn, write_conversion_fn, \
                                           dtype_file_extent_fn, extra_state);               \
    }                                                                                        \
    return register_datarep(datarep, read_conversion_fn, write_conversion_fn,                \
                            dtype_file_extent_fn, extra_state);                              \
  }

FLOWIO_REGISTER_DATAREP(, MPI_Datarep_conversion_function)
FLOWIO_REGISTER_DATAREP(_c, MPI_Datarep_conversion_function_c)
