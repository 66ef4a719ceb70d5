#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "flowio/error.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// Sets FLOWIO_IO_BACKEND for one scope and restores what was there.
class ScopedBackendVariable {
 public:
  explicit ScopedBackendVariable(const char* value) {
    if (const char* old = std::getenv(name)) previous_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedBackendVariable() {
    if (previous_) {
      ::setenv(name, previous_->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedBackendVariable(const ScopedBackendVariable&) = delete;
  ScopedBackendVariable& operator=(const ScopedBackendVariable&) = delete;

 private:
  static constexpr const char* name = "FLOWIO_IO_BACKEND";
  std::optional<std::string> previous_;
};

}  // namespace

// The three hint values parse; anything else is a usage error.
TEST_CASE("Io.BackendSelection.ParseKind") {
  CHECK(parse_backend_kind("auto") == BackendKind::automatic);
  CHECK(parse_backend_kind("io_uring") == BackendKind::io_uring);
  CHECK(parse_backend_kind("posix") == BackendKind::posix);
  CHECK_THROWS_AS(parse_backend_kind("uring"), UsageError);
  CHECK_THROWS_AS(parse_backend_kind(""), UsageError);
}

// Without the variable, automatic takes io_uring where the kernel allows it.
TEST_CASE("Io.BackendSelection.AutomaticByKernel") {
  const ScopedBackendVariable variable(nullptr);
  const std::string expected = UringBackend::available() ? "io_uring" : "posix";
  CHECK(make_storage_backend()->name() == expected);
  CHECK(make_storage_backend(BackendKind::posix)->name() == std::string("posix"));
}

// FLOWIO_IO_BACKEND overrides the automatic choice.
TEST_CASE("Io.BackendSelection.VariableOverridesAutomatic") {
  {
    const ScopedBackendVariable variable("posix");
    CHECK(make_storage_backend()->name() == std::string("posix"));
  }
  {
    const ScopedBackendVariable variable("io_uring");
    if (UringBackend::available()) {
      CHECK(make_storage_backend()->name() == std::string("io_uring"));
    } else {
      CHECK_THROWS_AS(make_storage_backend(), UsageError);
    }
  }
  {
    const ScopedBackendVariable variable("auto");
    const std::string expected = UringBackend::available() ? "io_uring" : "posix";
    CHECK(make_storage_backend()->name() == expected);
  }
}

// An explicit kind wins over the variable.
TEST_CASE("Io.BackendSelection.ExplicitKindIgnoresVariable") {
  const ScopedBackendVariable variable("io_uring");
  CHECK(make_storage_backend(BackendKind::posix)->name() == std::string("posix"));
}

// A bad value in the variable is a usage error naming the variable.
TEST_CASE("Io.BackendSelection.InvalidVariable") {
  const ScopedBackendVariable variable("fastest");
  try {
    make_storage_backend();
    FAIL("a bad FLOWIO_IO_BACKEND was accepted");
  } catch (const UsageError& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(std::string(error.what()).find("FLOWIO_IO_BACKEND") != std::string::npos);
  }
}

// Asking for io_uring explicitly where the kernel refuses it is unsupported.
TEST_CASE("Io.BackendSelection.ExplicitUringOnThisKernel") {
  if (UringBackend::available()) {
    CHECK(make_storage_backend(BackendKind::io_uring)->name() == std::string("io_uring"));
    return;
  }
  try {
    make_storage_backend(BackendKind::io_uring);
    FAIL("io_uring was created on a kernel that refuses it");
  } catch (const UsageError& error) {
    CHECK(error.code() == ErrorCode::unsupported);
  }
}

}  // namespace flowio::io::testing
