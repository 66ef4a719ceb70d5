// A main for the fuzz targets built without libFuzzer (the regular gcc
// build of the test suite): runs the target once on every file named, or
// found in the directories named, on the command line, so that the corpus
// in the repository is replayed as a regression test. A finding aborts.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

// Optional, as libFuzzer has it: only a target that needs to set
// something up first (MPI, for flatten_fuzz) defines it.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path = argv[i];
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        run_file(entry.path());
        ++inputs;
      }
    } else {
      run_file(path);
      ++inputs;
    }
  }
  std::printf("corpus_driver: %zu inputs, no finding\n", inputs);
  return inputs > 0 ? 0 : 1;
}
