#include "flowio/info.h"

#include <string>
#include <utility>
#include <vector>

#include "flowio/error.h"

namespace flowio {

Hints hints_from_info(MPI_Info info) {
  Hints hints;
  if (info == MPI_INFO_NULL) return hints;
  int keys = 0;
  check_mpi(MPI_Info_get_nkeys(info, &keys), "MPI_Info_get_nkeys");
  for (int i = 0; i < keys; ++i) {
    std::vector<char> key(MPI_MAX_INFO_KEY + 1, '\0');
    check_mpi(MPI_Info_get_nthkey(info, i, key.data()), "MPI_Info_get_nthkey");
    int length = 0, present = 0;
    check_mpi(MPI_Info_get_valuelen(info, key.data(), &length, &present), "MPI_Info_get_valuelen");
    if (!present) continue;
    std::vector<char> value(static_cast<std::size_t>(length) + 1, '\0');
    check_mpi(MPI_Info_get(info, key.data(), length, value.data(), &present), "MPI_Info_get");
    if (present) hints[key.data()] = value.data();
  }
  return hints;
}

Info::Info(const Hints& hints) {
  check_mpi(MPI_Info_create(&info_), "MPI_Info_create");
  try {
    for (const auto& [key, value] : hints) {
      check_mpi(MPI_Info_set(info_, key.c_str(), value.c_str()), "MPI_Info_set");
    }
  } catch (...) {
    free();
    throw;
  }
}

Info::Info(Info&& other) noexcept : info_(other.release()) {}

Info& Info::operator=(Info&& other) noexcept {
  if (this != &other) {
    free();
    info_ = other.release();
  }
  return *this;
}

Info::~Info() { free(); }

MPI_Info Info::release() noexcept { return std::exchange(info_, MPI_INFO_NULL); }

void Info::free() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (info_ != MPI_INFO_NULL && !finalized) MPI_Info_free(&info_);
  info_ = MPI_INFO_NULL;
}

}  // namespace flowio
