// System hints: hints a site or a user sets for every file a program
// opens, in a file of lines "key value", as ROMIO reads them, so that a
// hints file written for MPICH's MPI-IO serves flowio unchanged (and
// unmodified MPI-IO programs under flowio's layer find their hints
// applied).
//
// The file is the one the environment variable FLOWIO_HINTS names, else
// ROMIO_HINTS, else /etc/romio-hints if it exists. File::open applies its
// hints under the ones the program passes: a key the program sets keeps
// the program's value. A key the file sets twice keeps its first value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flowio/hints.h"

namespace flowio {

struct SystemHints {
  std::string source;  // the file read ("" when there was none)
  Hints hints;
  // One sentence per line ignored, and for a file that was named but
  // could not be read, saying which and why ("line 3: ...").
  std::vector<std::string> problems;
};

// Parses the text of a hints file. Each line is "key value" (words
// separated by spaces or tabs); lines that are empty or start with '#'
// are skipped silently; a line with one word or more than two is ignored
// and reported in `problems`, as is a repeated key (whose first value
// stays).
SystemHints parse_system_hints(std::string_view text);

// The system hints of this process: the file found as the header says,
// read and parsed at the first call (any thread; later calls return the
// same object). Its problems are printed to stderr once, by the process
// of rank 0 in MPI_COMM_WORLD, prefixed by "flowio: hints file FILE".
// Needs MPI initialized.
const SystemHints& system_hints();

// `hints` (the program's) over the system hints.
Hints with_system_hints(const Hints& hints);

}  // namespace flowio
