// InsituOptions: the demo's command line (see insitu.cc for what each
// option means), read with CLI11.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "simulation.h"

namespace insitu {

struct InsituOptions {
  std::int64_t mib = 80;
  std::int64_t rounds = 5;
  std::int64_t steps = 8;
  std::int64_t sweeps = 0;  // 0: automatic
  bool durable = true;
  bool direct = true;
  Decomposition decomposition = Decomposition::slabs;
  std::string dir;  // $TMPDIR, else /tmp
  std::string trace = "insitu_trace.json";
};

// What the command line asked for: options to run with, or an exit code
// (0 after --help, 2 for a bad or unknown option) after the text to print,
// which every rank gets and rank 0 prints.
struct ParsedInsituOptions {
  std::optional<InsituOptions> options;
  int exit_code = 0;
  std::string message;
};

ParsedInsituOptions parse_insitu_options(int argc, char** argv);

}  // namespace insitu
