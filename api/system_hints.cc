#include "api/system_hints.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flowio {
namespace {

constexpr const char* kDefaultFile = "/etc/romio-hints";

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (true) {
    at = line.find_first_not_of(" \t\r", at);
    if (at == std::string_view::npos) return words;
    const std::size_t end = std::min(line.find_first_of(" \t\r", at), line.size());
    words.push_back(line.substr(at, end - at));
    at = end;
  }
}

// The file named by the first of FLOWIO_HINTS, ROMIO_HINTS that is set
// and not empty, else the default file if it exists ("" if none).
// `named` tells whether a variable named it (then a missing file is a
// problem worth saying; a missing default file is the usual case).
std::string hints_file(bool& named) {
  for (const char* variable : {"FLOWIO_HINTS", "ROMIO_HINTS"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') {
      named = true;
      return value;
    }
  }
  named = false;
  std::ifstream probe(kDefaultFile);
  return probe ? kDefaultFile : "";
}

SystemHints read_system_hints() {
  bool named = false;
  const std::string path = hints_file(named);
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) {
    SystemHints unread;
    unread.source = path;
    unread.problems.push_back(std::string("cannot be read (") + std::strerror(errno) +
                              "); no system hints apply");
    return unread;
  }
  std::ostringstream text;
  text << in.rdbuf();
  SystemHints read = parse_system_hints(text.str());
  read.source = path;
  return read;
}

void print_problems(const SystemHints& found) {
  if (found.problems.empty()) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  for (const std::string& problem : found.problems) {
    std::fprintf(stderr, "flowio: hints file %s: %s\n", found.source.c_str(), problem.c_str());
  }
}

}  // namespace

SystemHints parse_system_hints(std::string_view text) {
  SystemHints parsed;
  int number = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++number;
    const std::vector<std::string_view> words = words_of(line);
    if (words.empty() || words.front().front() == '#') continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (words.size() != 2) {
      parsed.problems.push_back(where + "ignored: \"" + std::string(line) +
                                "\" is not \"key value\" (" + std::to_string(words.size()) +
                                (words.size() == 1 ? " word)" : " words)"));
      continue;
    }
    const std::string key(words[0]);
    const auto [kept, inserted] = parsed.hints.try_emplace(key, words[1]);
    if (!inserted) {
      parsed.problems.push_back(where + "ignored: " + key + " is set again; the first value, " +
                                kept->second + ", stays");
    }
  }
  return parsed;
}

const SystemHints& system_hints() {
  // Read once per process: a static's initialization runs once even when
  // several threads open files at the same time.
  static const SystemHints found = [] {
    SystemHints read = read_system_hints();
    print_problems(read);
    return read;
  }();
  return found;
}

Hints with_system_hints(const Hints& hints) {
  Hints merged = hints;
  for (const auto& [key, value] : system_hints().hints) merged.try_emplace(key, value);
  return merged;
}

}  // namespace flowio
