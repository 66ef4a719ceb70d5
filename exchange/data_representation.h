// DataRepresentation: one of the data representations a file view may name
// (MPI 4.1, 14.5): native (and internal, which is native here), external32,
// or a user representation registered with its conversion functions. It
// answers how many bytes a predefined type takes in the file; the
// conversion of an access's data is StreamConversion's (stream_conversion.h).
//
// Representations are immutable and live for the whole process (MPI has no
// way to unregister one); every method is thread safe.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "flowio/data_representation.h"
#include "runtime/core/flat_type.h"

namespace flowio::exchange {

class DataRepresentation {
 public:
  enum class Kind { native, external32, user };

  DataRepresentation(std::string name, Kind kind, UserRepresentation user = {});
  DataRepresentation(const DataRepresentation&) = delete;
  DataRepresentation& operator=(const DataRepresentation&) = delete;

  const std::string& name() const { return name_; }
  Kind kind() const { return kind_; }
  // Native data needs no conversion and keeps memory's layout.
  bool is_native() const { return kind_ == Kind::native; }
  // The functions of a user representation (nullptr for the others).
  const UserRepresentation* user() const { return kind_ == Kind::user ? &user_ : nullptr; }

  // Bytes one element of predefined `type` takes in the file. Throws
  // UsageError(conversion) when the representation has no form for it
  // (external32) or the user's extent function fails.
  std::int64_t file_extent(MPI_Datatype type) const;
  // file_extent as the function core's view and signature code take.
  const core::FileExtentOf& extent_function() const { return extent_function_; }

 private:
  std::string name_;
  Kind kind_;
  UserRepresentation user_;
  core::FileExtentOf extent_function_;
  // The user's extent function is asked once per type.
  mutable std::mutex mutex_;
  mutable std::unordered_map<MPI_Datatype, std::int64_t> user_extents_;
};

// The representation called `name`: "native", "internal", "external32"
// (also in capitals, as ROMIO accepts them) or one registered. Throws
// UsageError(unsupported_representation) for any other name.
std::shared_ptr<const DataRepresentation> find_representation(const std::string& name);

// See flowio::register_data_representation.
void register_representation(const std::string& name, UserRepresentation functions);

}  // namespace flowio::exchange
