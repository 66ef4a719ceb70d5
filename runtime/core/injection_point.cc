#include "runtime/core/injection_point.h"

namespace flowio::core {

namespace detail {
std::atomic<InjectionHook> injection_hook{nullptr};
}  // namespace detail

void set_injection_hook(InjectionHook hook) noexcept {
  detail::injection_hook.store(hook, std::memory_order_release);
}

}  // namespace flowio::core
