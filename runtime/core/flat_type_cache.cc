#include "runtime/core/flat_type_cache.h"

#include <mutex>
#include <unordered_map>

#include "flowio/error.h"

namespace flowio::core {
namespace {

using Cached = std::shared_ptr<const FlatType>;

int forget(MPI_Datatype, int, void* attribute, void*) {
  delete static_cast<Cached*>(attribute);
  return MPI_SUCCESS;
}

// Created on first use; kept for the life of the process (MPI frees it at
// finalize).
int cache_keyval() {
  static const int keyval = [] {
    int created = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, forget, &created, nullptr),
              "MPI_Type_create_keyval");
    return created;
  }();
  return keyval;
}

bool is_named(MPI_Datatype type) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  check_mpi(MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner),
            "MPI_Type_get_envelope");
  return combiner == MPI_COMBINER_NAMED;
}

}  // namespace

namespace {

// Named types never change and are never freed: one flattening each for
// the life of the process.
std::shared_ptr<const FlatType> flatten_named(MPI_Datatype type) {
  static std::mutex mutex;
  static std::unordered_map<MPI_Datatype, std::shared_ptr<const FlatType>> named;
  std::lock_guard lock(mutex);
  std::shared_ptr<const FlatType>& kept = named[type];
  if (!kept) kept = std::make_shared<const FlatType>(flatten(type));
  return kept;
}

}  // namespace

std::shared_ptr<const FlatType> flatten_cached(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return std::make_shared<FlatType>(flatten(type));
  if (is_named(type)) return flatten_named(type);
  const int keyval = cache_keyval();
  void* attribute = nullptr;
  int found = 0;
  check_mpi(MPI_Type_get_attr(type, keyval, &attribute, &found), "MPI_Type_get_attr");
  if (found) return *static_cast<Cached*>(attribute);
  auto flat = std::make_shared<const FlatType>(flatten(type));
  auto* kept = new Cached(flat);
  const int stored = MPI_Type_set_attr(type, keyval, kept);
  if (stored != MPI_SUCCESS) delete kept;  // uncached, still correct
  return flat;
}

}  // namespace flowio::core
