// InsituOptions: the demo's command line (see insitu.cc for what each
// option means).
#pragma once

#include <cstdint>
#include <string>

#include "simulation.h"

namespace insitu {

struct InsituOptions {
  std::int64_t mib = 80;
  std::int64_t steps = 15;
  std::int64_t sweeps = 0;  // 0: automatic
  bool durable = true;
  bool direct = true;
  Decomposition decomposition = Decomposition::slabs;
  std::string dir;  // $TMPDIR, else /tmp
  std::string trace = "insitu_trace.json";
};

// The one-line usage text.
extern const char* const kInsituUsage;

// Reads --key=value arguments; throws std::invalid_argument for anything
// else, so that a misspelt option is an error rather than ignored.
InsituOptions parse_insitu_options(int argc, char** argv);

}  // namespace insitu
