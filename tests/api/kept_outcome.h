// A case's outcome through flowio, kept in a file and compared later with
// the same case run again in a fresh process. MPICH's MPI-IO in one
// long-lived process can go wrong late in a sweep (seen with MPICH 4.0.2:
// after about 850 cases in one process, one byte packed wrong, in MPICH's
// file and in the independent-writes witness alike, while the case run
// alone agrees everywhere). A case that differed late in a run is therefore
// judged again alone (tools/differential_sweep.sh): flowio's outcome there
// must equal its outcome in the long run, byte for byte, and agree with a
// fresh MPICH. Only then was the difference MPICH's state, not flowio's.
#pragma once

#include <string>

#include "tests/api/differential_case.h"

namespace flowio::testing {

// Writes `outcome` (counts, pointers, read buffers, the file's image, a
// failure) to `path`. A sparse case's file is kept by its blocks that hold
// data (tests/support/sparse_file.h nonzero_blocks), read while it exists.
void keep_outcome(const std::string& path, const CaseOutcome& outcome);

// Whether `outcome` equals the one kept at `path`; if not, `why` says
// where they part (or that nothing readable was kept).
bool same_as_kept(const std::string& path, const CaseOutcome& outcome, std::string& why);

}  // namespace flowio::testing
