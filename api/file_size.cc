// The file's size and durability: File::size, set_size, preallocate, sync.
#include <cstdint>
#include <string>

#include "api/file_impl.h"
#include "runtime/engine/collective_error.h"

namespace flowio {
namespace {

// Collective: whether `value` is the same on every process of `comm`
// (every process learns the answer). Also a barrier.
bool same_everywhere(MPI_Comm comm, std::int64_t value) {
  const std::int64_t mine[2] = {value, -value};
  std::int64_t least[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, least, 2, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return least[0] == -least[1];
}

void check_size_argument(MPI_Offset bytes, Mode mode, const char* operation) {
  if (bytes < 0) {
    throw UsageError(ErrorCode::invalid_argument, std::string(operation) + ": negative size");
  }
  if (has(mode, Mode::rdonly)) {
    throw UsageError(ErrorCode::read_only, std::string(operation) + ": read-only file");
  }
}

}  // namespace

void File::sync() {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "sync", [&] { file.fd.sync(); });
  // Another handle's size change becomes visible here (sync, barrier,
  // sync): what this process knew of the size may no longer hold.
  file.mapping->forget_size();
  file.report_write_behind_failure();
}

MPI_Offset File::size() const {
  const Impl& file = impl();
  // Every byte written before the call counts, writes behind included.
  file.write_behind.drain();
  return file.fd.size();
}

// Size changes are made once, by rank 0, after every process has finished
// what it did before the call, so that none of it sees the change early.
// The arguments are agreed on first, so that a bad one on any process
// fails the call everywhere and changes nothing; the size must be the same
// on every process (MPI 4.0, 14.2.6).
void File::set_size(MPI_Offset bytes) {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "set_size",
                            [&] { check_size_argument(bytes, file.mode, "set_size"); });
  require_same(same_everywhere(file.comm, bytes), "set_size: the size");
  file.mapping->forget();
  runtime::run_collectively(file.comm, "set_size", [&] {
    if (file.rank == 0) file.fd.truncate(bytes);
  });
  file.forget_plans();
  file.report_write_behind_failure();
}

void File::preallocate(MPI_Offset bytes) {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "preallocate",
                            [&] { check_size_argument(bytes, file.mode, "preallocate"); });
  require_same(same_everywhere(file.comm, bytes), "preallocate: the size");
  runtime::run_collectively(file.comm, "preallocate", [&] {
    if (file.rank == 0) file.fd.preallocate(bytes);
  });
  file.forget_plans();
  file.report_write_behind_failure();
}

}  // namespace flowio
