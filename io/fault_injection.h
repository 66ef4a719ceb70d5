// Fault injection for tests: a storage backend that makes the N-th read or
// write on a chosen rank fail (EIO, ENOSPC), come back short or stall, and
// the hook behind named injection points (runtime/core/injection_point.h)
// that makes a chosen stage throw or stall on a chosen rank.
//
// Test-only: the target //io:fault_injection is testonly, and nothing in a
// release program links it. A test program that links it has every backend
// make_storage_backend() creates wrapped (see set_backend_wrapper), and its
// injection points armed, by the plan in force: the one given to
// set_fault_plan(), else the environment variable FLOWIO_FAULT, read at
// each open (so a C program under the MPI-IO layer may setenv() it
// between opens).
//
// FLOWIO_FAULT is a list of rules separated by ';', each a list of
// key=value separated by ',':
//   on=write|read|<point>   the backend operation, or an injection point's
//                           name ("collective.pack")
//   rank=R                  only on this rank of MPI_COMM_WORLD (default:
//                           every rank)
//   nth=N                   from the N-th call on (1-based; default 1):
//                           backend calls are counted per backend (that is,
//                           per open file and rank), points per process
//   times=K                 for K calls (default 1; 0: every call from the
//                           N-th on)
//   fault=eio|enospc|short|stall|usage|bad_alloc|malformed
//       eio, enospc  the call throws IoError with that errno and moves
//                    nothing;
//       short        a write moves the first half of its first request,
//                    then throws IoError(ENOSPC), as a disk that fills up
//                    in the middle of a write; a read reports its first
//                    request ending half way, as if the file had been cut
//                    there; at a point, like eio;
//       stall        the call waits `ms` milliseconds, then proceeds;
//       usage        (points) throws UsageError(invalid_argument);
//       bad_alloc    (points) throws std::bad_alloc, as a failed
//                    allocation.
//       malformed    (points) throws MpiError, as a message from a peer
//                    that does not decode.
//   ms=M                    the stall, in milliseconds (default 1000)
// Example: FLOWIO_FAULT="on=write,rank=1,nth=2,fault=enospc".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/storage_backend.h"

namespace flowio::io {

enum class FaultKind { eio, enospc, short_transfer, stall, usage, bad_alloc, malformed };

struct FaultRule {
  std::string on;           // "read", "write", or an injection point's name
  std::optional<int> rank;  // of MPI_COMM_WORLD; every rank when empty
  std::int64_t nth = 1;     // first call that fails, 1-based
  std::int64_t times = 1;   // calls that fail from the nth; 0 = all
  FaultKind fault = FaultKind::eio;
  std::int64_t stall_ms = 1000;

  // Whether the `call`-th call (1-based) is one this rule hits.
  bool hits(std::int64_t call) const { return call >= nth && (times == 0 || call < nth + times); }
};

struct FaultPlan {
  std::vector<FaultRule> rules;

  // Parses the FLOWIO_FAULT syntax above. Throws UsageError(invalid_argument)
  // naming the bad part.
  static FaultPlan parse(const std::string& text);
};

// The plan backends created from now on, and injection points, follow on
// this process; nullopt returns to FLOWIO_FAULT. Thread-safe.
void set_fault_plan(std::optional<FaultPlan> plan);

// The backend that carries out `plan`'s read and write rules for `rank`
// over `inner` (what make_storage_backend installs for test programs; also
// usable directly in unit tests). Calls are counted per instance.
std::unique_ptr<StorageBackend> make_fault_injecting_backend(std::unique_ptr<StorageBackend> inner,
                                                             FaultPlan plan, int rank);

}  // namespace flowio::io
