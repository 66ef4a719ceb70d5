// What flowio's translator and object-file reader see of ConsumerViews:
// the consumers' accesses (flattened views with stream ranges). Private to
// api/.
#pragma once

#include <vector>

#include "flowio/remap.h"
#include "runtime/core/access.h"

namespace flowio {

struct ConsumerViews::Impl {
  std::vector<core::Access> accesses;  // consumer c's is accesses[c]
};

struct ConsumerViewsAccess {
  static const std::vector<core::Access>& accesses(const ConsumerViews& views) {
    return views.impl_->accesses;
  }
  static ConsumerViews make(std::vector<core::Access> accesses) {
    auto impl = std::make_shared<ConsumerViews::Impl>();
    impl->accesses = std::move(accesses);
    return ConsumerViews(std::move(impl));
  }
};

}  // namespace flowio
