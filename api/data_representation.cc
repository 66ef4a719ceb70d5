#include "flowio/data_representation.h"

#include <utility>

#include "exchange/data_representation.h"

namespace flowio {

void register_data_representation(const std::string& name, UserRepresentation representation) {
  exchange::register_representation(name, std::move(representation));
}

}  // namespace flowio
