#include "insitu_options.h"

#include <cstdlib>
#include <stdexcept>

namespace insitu {
namespace {

std::int64_t integer_at_least(const std::string& key, const std::string& text,
                              std::int64_t minimum) {
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < minimum) {
    throw std::invalid_argument("--" + key + " needs an integer of at least " +
                                std::to_string(minimum) + ", not '" + text + "'");
  }
  return value;
}

}  // namespace

const char* const kInsituUsage =
    "usage: insitu [--mib=80] [--steps=15] [--sweeps=0] [--durable=1] [--direct=1] "
    "[--decomposition=slabs|blocks] [--dir=PATH] [--trace=insitu_trace.json]";

InsituOptions parse_insitu_options(int argc, char** argv) {
  InsituOptions options;
  const char* tmpdir = std::getenv("TMPDIR");
  options.dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const std::size_t equals = argument.find('=');
    if (argument.rfind("--", 0) != 0 || equals == std::string::npos) {
      throw std::invalid_argument("expected --key=value, not '" + argument + "'");
    }
    const std::string key = argument.substr(2, equals - 2), value = argument.substr(equals + 1);
    const bool flag = value == "0" || value == "1";
    if (key == "mib") {
      options.mib = integer_at_least(key, value, 1);
    } else if (key == "steps") {
      options.steps = integer_at_least(key, value, 1);
    } else if (key == "sweeps") {
      options.sweeps = integer_at_least(key, value, 0);
    } else if (key == "durable" && flag) {
      options.durable = value == "1";
    } else if (key == "direct" && flag) {
      options.direct = value == "1";
    } else if (key == "decomposition" && (value == "slabs" || value == "blocks")) {
      options.decomposition = value == "slabs" ? Decomposition::slabs : Decomposition::blocks;
    } else if (key == "dir" && !value.empty()) {
      options.dir = value;
    } else if (key == "trace" && !value.empty()) {
      options.trace = value;
    } else {
      throw std::invalid_argument("unknown option '" + argument + "'");
    }
  }
  return options;
}

}  // namespace insitu
