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
// 16 MiB); --hint=KEY=VALUE passes any flowio hint (repeatable); --help
// lists the options (`--key=value` and `--key value` both work). Prints one
// line of key=value pairs (sizes in bytes, the time of the slowest
// process, and the rate over the input's size) on rank 0. Exit status 0 on
// success, 2 for bad arguments, 1 when the translation fails (the error is
// printed).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "flowio/remap.h"

namespace {

struct Arguments {
  std::string input, views, output;
  flowio::Hints hints;
};

// Reads the command line; returns the exit code to end with (0 after
// --help, 2 for bad arguments, after printing why on rank 0), or -1 to go on.
int parse(int argc, char** argv, int rank, Arguments& out) {
  CLI::App app("Translates an existing file into an object file for a group of consumers.",
               "flowio_remap");
  app.add_option("--input", out.input, "the file to translate")->required();
  app.add_option("--views", out.views, "the consumers' views (ConsumerViews::save)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--output", out.output, "the object file to write")->required();
  std::string window;
  app.add_option("--window", window, "source bytes per step (hint flowio_remap_window)")
      ->check(CLI::Range(std::int64_t{1}, std::numeric_limits<std::int64_t>::max()));
  std::vector<std::string> hints;
  app.add_option("--hint", hints, "KEY=VALUE: any flowio hint (repeatable)")
      ->check(CLI::Validator(
          [](const std::string& hint) {
            return hint.find('=') == std::string::npos ? "--hint wants KEY=VALUE" : "";
          },
          "KEY=VALUE"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::ostringstream message;
    const int code = app.exit(error, message, message);
    if (rank == 0) std::fputs(message.str().c_str(), code == 0 ? stdout : stderr);
    return code == 0 ? 0 : 2;
  }
  for (const std::string& hint : hints) {
    const std::size_t split = hint.find('=');
    out.hints[hint.substr(0, split)] = hint.substr(split + 1);
  }
  if (!window.empty()) out.hints["flowio_remap_window"] = window;
  return -1;
}

// Translates as `arguments` say, printing the report on rank 0; returns
// the exit status (1 when the translation fails, after saying why).
int translate(const Arguments& arguments, int rank) {
  try {
    const flowio::ConsumerViews views = flowio::ConsumerViews::load(arguments.views);
    const flowio::RemapReport report = flowio::remap_file(MPI_COMM_WORLD, arguments.input, views,
                                                          arguments.output, arguments.hints);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
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
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "flowio_remap: rank %d: %s\n", rank, error.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Arguments arguments;
  int status = parse(argc, argv, rank, arguments);
  if (status < 0) status = translate(arguments, rank);
  MPI_Finalize();
  return status;
}
