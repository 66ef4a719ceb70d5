#include "api/mpiio/info_hints.h"

#include <string>
#include <vector>

namespace flowio::mpiio {

Hints hints_from_info(MPI_Info info) {
  Hints hints;
  if (info == MPI_INFO_NULL) return hints;
  int keys = 0;
  MPI_Info_get_nkeys(info, &keys);
  for (int i = 0; i < keys; ++i) {
    std::vector<char> key(MPI_MAX_INFO_KEY + 1, '\0');
    MPI_Info_get_nthkey(info, i, key.data());
    int length = 0, present = 0;
    MPI_Info_get_valuelen(info, key.data(), &length, &present);
    if (!present) continue;
    std::vector<char> value(static_cast<std::size_t>(length) + 1, '\0');
    MPI_Info_get(info, key.data(), length, value.data(), &present);
    if (present) hints[key.data()] = value.data();
  }
  return hints;
}

MPI_Info info_from_hints(const Hints& hints) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  for (const auto& [key, value] : hints) MPI_Info_set(info, key.c_str(), value.c_str());
  return info;
}

}  // namespace flowio::mpiio
