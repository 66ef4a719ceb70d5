#include "exchange/data_representation.h"

#include <map>
#include <utility>

#include "exchange/external32.h"
#include "flowio/error.h"

namespace flowio::exchange {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const DataRepresentation>> by_name;
};

// The predefined names, in both spellings ROMIO accepts.
Registry& registry() {
  static Registry* instance = [] {
    auto* made = new Registry();  // used until exit
    auto native = std::make_shared<DataRepresentation>("native", DataRepresentation::Kind::native);
    auto internal =
        std::make_shared<DataRepresentation>("internal", DataRepresentation::Kind::native);
    auto external32 =
        std::make_shared<DataRepresentation>("external32", DataRepresentation::Kind::external32);
    made->by_name = {{"native", native},         {"NATIVE", native},
                     {"internal", internal},     {"INTERNAL", internal},
                     {"external32", external32}, {"EXTERNAL32", external32}};
    return made;
  }();
  return *instance;
}

std::int64_t native_size(MPI_Datatype type) {
  MPI_Count size = 0;
  check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
  return size;
}

}  // namespace

DataRepresentation::DataRepresentation(std::string name, Kind kind, UserRepresentation user)
    : name_(std::move(name)),
      kind_(kind),
      user_(std::move(user)),
      extent_function_([this](MPI_Datatype type) { return file_extent(type); }) {}

std::int64_t DataRepresentation::file_extent(MPI_Datatype type) const {
  switch (kind_) {
    case Kind::native:
      return native_size(type);
    case Kind::external32: {
      const std::int64_t size = external32_size(type);
      if (size < 0) {
        throw UsageError(ErrorCode::conversion,
                         "external32 has no form for a predefined datatype of this access");
      }
      return size;
    }
    case Kind::user:
      break;
  }
  std::lock_guard lock(mutex_);
  const auto known = user_extents_.find(type);
  if (known != user_extents_.end()) return known->second;
  MPI_Aint extent = 0;
  const int code = user_.file_extent(type, &extent);
  if (code != MPI_SUCCESS || extent < 0) {
    throw UsageError(ErrorCode::conversion,
                     "the extent function of data representation \"" + name_ + "\" failed");
  }
  user_extents_.emplace(type, extent);
  return extent;
}

std::shared_ptr<const DataRepresentation> find_representation(const std::string& name) {
  Registry& known = registry();
  std::lock_guard lock(known.mutex);
  const auto found = known.by_name.find(name);
  if (found == known.by_name.end()) {
    throw UsageError(ErrorCode::unsupported_representation,
                     "no data representation called \"" + name + "\"");
  }
  return found->second;
}

void register_representation(const std::string& name, UserRepresentation functions) {
  if (name.empty() || name.size() >= MPI_MAX_DATAREP_STRING) {
    throw UsageError(ErrorCode::invalid_argument,
                     "register_data_representation: the name must have 1 to " +
                         std::to_string(MPI_MAX_DATAREP_STRING - 1) + " characters");
  }
  if (!functions.file_extent) {
    throw UsageError(ErrorCode::invalid_argument,
                     "register_data_representation: an extent function is required");
  }
  Registry& known = registry();
  std::lock_guard lock(known.mutex);
  if (known.by_name.count(name) != 0) {
    throw UsageError(ErrorCode::duplicate_representation,
                     "data representation \"" + name + "\" is registered already");
  }
  known.by_name.emplace(name, std::make_shared<DataRepresentation>(
                                  name, DataRepresentation::Kind::user, std::move(functions)));
}

}  // namespace flowio::exchange
