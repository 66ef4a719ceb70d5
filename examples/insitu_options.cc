#include "insitu_options.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace insitu {

namespace {

// Counts of rounds, steps, MiB: at least 1 (0 for sweeps: automatic).
const CLI::Range kPositive(std::int64_t{1}, std::numeric_limits<std::int64_t>::max());
const CLI::Range kNotNegative(std::int64_t{0}, std::numeric_limits<std::int64_t>::max());

}  // namespace

ParsedInsituOptions parse_insitu_options(int argc, char** argv) {
  InsituOptions options;
  const char* tmpdir = std::getenv("TMPDIR");
  options.dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  CLI::App app(
      "In-situ checkpointing: a simulation with a checkpoint every step, flowio "
      "against MPICH's MPI-IO.",
      "insitu");
  app.add_option("--mib", options.mib, "checkpoint size in MiB")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--rounds", options.rounds,
                 "rounds, each a run without checkpoints, one with flowio, one with MPICH")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--steps", options.steps, "steps per run, a checkpoint each")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--sweeps", options.sweeps, "stencil sweeps per step (0: automatic)")
      ->check(kNotNegative)
      ->capture_default_str();
  app.add_option("--durable", options.durable, "checkpoints count once on storage (0 or 1)")
      ->capture_default_str();
  app.add_option("--direct", options.direct, "flowio writes with O_DIRECT (0 or 1)")
      ->capture_default_str();
  std::string decomposition = "slabs";
  app.add_option("--decomposition", decomposition, "how the grid is cut among the ranks")
      ->check(CLI::IsMember({"slabs", "blocks"}))
      ->capture_default_str();
  app.add_option("--dir", options.dir, "directory of the data files (default $TMPDIR, else /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--trace", options.trace, "where flowio writes its Perfetto trace")
      ->capture_default_str();
  ParsedInsituOptions parsed;
  try {
    app.parse(argc, argv);
    options.decomposition = decomposition == "slabs" ? Decomposition::slabs : Decomposition::blocks;
    parsed.options = options;
  } catch (const CLI::ParseError& error) {
    std::ostringstream out;
    parsed.exit_code = app.exit(error, out, out) == 0 ? 0 : 2;
    parsed.message = out.str();
  }
  return parsed;
}

}  // namespace insitu
