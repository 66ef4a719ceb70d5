// flowio/flowio.h brings in the whole public API: every header under
// api/include/flowio (the test's runfiles hold them all) is included by
// it, and one name from each part compiles with it alone.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "flowio/flowio.h"

namespace {

// The public headers: a Bazel test runs in its runfiles, where
// //api:public_headers put them under their source paths.
std::vector<std::filesystem::path> public_headers() {
  std::vector<std::filesystem::path> headers;
  for (const auto& entry : std::filesystem::directory_iterator("api/include/flowio")) {
    if (entry.path().extension() == ".h") headers.push_back(entry.path());
  }
  return headers;
}

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Every public header other than flowio.h appears in an #include of it.
TEST_CASE("Api.Umbrella.IncludesEveryPublicHeader") {
  const std::vector<std::filesystem::path> headers = public_headers();
  REQUIRE(headers.size() > 10);
  std::filesystem::path umbrella;
  for (const auto& header : headers) {
    if (header.filename() == "flowio.h") umbrella = header;
  }
  REQUIRE(!umbrella.empty());
  const std::string text = text_of(umbrella);
  for (const auto& header : headers) {
    if (header.filename() == "flowio.h") continue;
    const std::string line = "#include \"flowio/" + header.filename().string() + "\"";
    INFO("flowio.h does not include ", header.filename().string());
    CHECK(text.find(line) != std::string::npos);
  }
}

// A name from each part of the API, through flowio.h alone.
TEST_CASE("Api.Umbrella.NamesFromEveryPart") {
  static_assert(std::is_class_v<flowio::File>);
  static_assert(std::is_class_v<flowio::Future<int>>);
  static_assert(std::is_class_v<flowio::Executor>);
  static_assert(std::is_class_v<flowio::Transfer>);
  static_assert(std::is_class_v<flowio::Info>);
  static_assert(std::is_class_v<flowio::ObjectSet>);
  static_assert(std::is_class_v<flowio::ObjectFile>);
  static_assert(std::is_class_v<flowio::ConsumerViews>);
  static_assert(std::is_class_v<flowio::OperationStatistics>);
  static_assert(std::is_base_of_v<flowio::Error, flowio::IoError>);
  CHECK(flowio::datatype_of<double>() == MPI_DOUBLE);
  CHECK(flowio::wait_all(std::vector<flowio::Future<int>>{}).empty());
}

// Whether a program could call the MPI-IO layer's hook on a File.
template <typename AnyFile>
concept HasLayerHook = requires(AnyFile& file) {
  file.refuse_collective(true, flowio::ErrorCode::invalid_argument);
};

// The MPI-IO layer's hook is not part of the public API: a program cannot
// call refuse_collective on a File (the layer reaches it through
// api/layer_hooks.h).
TEST_CASE("Api.Umbrella.NoLayerHookOnFile") { CHECK_FALSE(HasLayerHook<flowio::File>); }
