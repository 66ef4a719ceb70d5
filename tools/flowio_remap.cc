// flowio_remap: translates an existing file into an object file for a
// group of consumers (flowio::remap_file), from the command line.
//
//   mpiexec -n N flowio_remap --input=image.dat --views=image.views --output=image.obj
//
// --views names a description the consumers wrote with
// flowio::ConsumerViews::save (one view and range per consumer). Any number
// of processes may translate; each reads windows of the input with
// collective reads and writes contiguous stretches of the output.
// --window=BYTES sets the window (hint flowio_remap_window, default
// 16 MiB); --hint=KEY=VALUE passes any flowio hint (repeatable). Prints one
// line of key=value pairs (sizes in bytes, the time of the slowest
// process, and the rate over the input's size) on rank 0. Exit status 0 on
// success, 2 for bad arguments, 1 when the translation fails (the error is
// printed).
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <string_view>

#include "flowio/error.h"
#include "flowio/remap.h"

namespace {

constexpr const char* kUsage =
    "usage: flowio_remap --input=FILE --views=FILE --output=FILE [--window=BYTES] "
    "[--hint=KEY=VALUE ...]\n";

struct Arguments {
  std::string input, views, output;
  flowio::Hints hints;
};

// Returns false (after printing why on rank 0) for bad arguments.
bool parse(int argc, char** argv, int rank, Arguments& out) {
  const auto complain = [&](const std::string& why) {
    if (rank == 0) std::fprintf(stderr, "flowio_remap: %s\n%s", why.c_str(), kUsage);
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    const std::size_t equals = argument.find('=');
    if (argument.substr(0, 2) != "--" || equals == std::string_view::npos) {
      return complain("unexpected argument " + std::string(argument));
    }
    const std::string key(argument.substr(2, equals - 2));
    const std::string value(argument.substr(equals + 1));
    if (key == "input") {
      out.input = value;
    } else if (key == "views") {
      out.views = value;
    } else if (key == "output") {
      out.output = value;
    } else if (key == "window") {
      out.hints["flowio_remap_window"] = value;
    } else if (key == "hint") {
      const std::size_t split = value.find('=');
      if (split == std::string::npos) return complain("--hint wants KEY=VALUE, got " + value);
      out.hints[value.substr(0, split)] = value.substr(split + 1);
    } else {
      return complain("unknown option --" + key);
    }
  }
  if (out.input.empty() || out.views.empty() || out.output.empty()) {
    return complain("--input, --views and --output are required");
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Arguments arguments;
  int status = 0;
  if (!parse(argc, argv, rank, arguments)) {
    status = 2;
  } else {
    try {
      const flowio::ConsumerViews views = flowio::ConsumerViews::load(arguments.views);
      const flowio::RemapReport report = flowio::remap_file(MPI_COMM_WORLD, arguments.input, views,
                                                            arguments.output, arguments.hints);
      if (rank == 0) {
        const double rate = report.seconds > 0 ? report.source_bytes / report.seconds : 0;
        std::printf(
            "tool=flowio_remap ranks=%d consumers=%zu source_bytes=%lld object_file_bytes=%lld "
            "index_bytes=%lld extra_bytes=%lld bytes_read=%lld bytes_written=%lld seconds=%.4f "
            "gib_per_s=%.3f\n",
            ranks, views.size(), static_cast<long long>(report.source_bytes),
            static_cast<long long>(report.object_file_bytes),
            static_cast<long long>(report.index_bytes),
            static_cast<long long>(report.object_file_bytes - report.source_bytes),
            static_cast<long long>(report.bytes_read), static_cast<long long>(report.bytes_written),
            report.seconds, rate / (1024.0 * 1024.0 * 1024.0));
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "flowio_remap: rank %d: %s\n", rank, error.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
