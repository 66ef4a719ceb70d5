// Named injection points: places in flowio's stages where a test may make
// a failure happen on a chosen rank ("collective.pack" throws on rank 1 the
// first time it runs), to prove that a failure anywhere reaches every rank.
//
// A stage calls injection_point("<stage name>") where its work begins, on
// the thread that runs it, inside the code whose failures it already
// reports (an exception thrown there must take the stage's error path).
// Nothing is armed in a release program: the call costs one atomic load of
// a null pointer. Test programs arm points by linking
// //io:fault_injection (io/fault_injection.h), which installs the hook.
#pragma once

#include <atomic>

namespace flowio::core {

// Called with the point's name; throws or stalls when the test armed it.
// Must be callable from any thread.
using InjectionHook = void (*)(const char* point);

namespace detail {
extern std::atomic<InjectionHook> injection_hook;
}  // namespace detail

// Installs the hook every injection_point() call goes through (nullptr
// removes it). For test-only code; release code never calls it.
void set_injection_hook(InjectionHook hook) noexcept;

// Does nothing unless a test armed `point` (a string literal naming the
// stage, "<layer>.<stage>", e.g. "collective.pack"); then throws the
// error the test asked for, or waits as long as it asked.
inline void injection_point(const char* point) {
  // Acquire pairs with the release in set_injection_hook: a hook seen
  // here was installed completely.
  if (const InjectionHook hook = detail::injection_hook.load(std::memory_order_acquire)) {
    hook(point);
  }
}

}  // namespace flowio::core
