// Blocking collective writes behind (hint flowio_write_behind,
// api/write_behind.h): checked on every process at the call, and handed to
// the engine as nonblocking writes: of a copy of their data, or, durable,
// of the caller's memory until the engine is done with it.
#include <climits>
#include <memory>
#include <string>
#include <utility>

#include "api/file_impl.h"
#include "exchange/stream_pack.h"
#include "flowio/future.h"
#include "runtime/engine/collective_error.h"

namespace flowio {
namespace {

// What every process learns at a write behind's call, in one reduction:
// the first refusal (`code` of the lowest rank whose arguments were bad),
// whether every process knows of a write behind that failed, and whether
// every process's part can go behind. Whatever depends on them, every
// process then does alike, failures included.
struct CallAgreement {
  int refused_rank = -1;
  ErrorCode refused_code = ErrorCode::invalid_argument;
  bool everyone_knows_a_failure = false;
  bool everyone_goes_behind = false;
};

CallAgreement agree_at_call(MPI_Comm comm, int rank, const ErrorCode* refused, bool knows_a_failure,
                            bool goes_behind) {
  // Rank and code in one number, so that MPI_MIN finds the lowest rank;
  // the flags as 0 where true, -1 where not, so that the least is 0 only
  // when every process's is.
  constexpr int kCodes = 256;
  const int mine[3] = {refused ? rank * kCodes + static_cast<int>(*refused) : INT_MAX,
                       knows_a_failure ? 0 : -1, goes_behind ? 0 : -1};
  int least[3] = {INT_MAX, 0, 0};
  check_mpi(MPI_Allreduce(mine, least, 3, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  CallAgreement agreed;
  if (least[0] != INT_MAX) {
    agreed.refused_rank = least[0] / kCodes;
    agreed.refused_code = static_cast<ErrorCode>(least[0] % kCodes);
  }
  agreed.everyone_knows_a_failure = least[1] == 0;
  agreed.everyone_goes_behind = least[2] == 0;
  return agreed;
}

}  // namespace

std::size_t File::Impl::write_collective_behind(MPI_Offset offset, const void* buffer,
                                                MPI_Count count, MPI_Datatype datatype,
                                                bool advance_pointer) {
  // The arguments, checked on every process before any starts: a refusal
  // anywhere fails the call everywhere, at the call, and nothing starts.
  std::exception_ptr refusal;
  ErrorCode refused_code{};
  runtime::CollectiveRequest request;
  try {
    Transfer transfer = prepare_transfer(true, offset, buffer, count, datatype, advance_pointer);
    request = request_of(true, std::move(transfer), false);
  } catch (const UsageError& error) {
    refusal = std::current_exception();
    refused_code = error.code();
  } catch (...) {
    // Any other failure: this process takes part without data.
    request = failed_request(true, false);
  }
  const std::int64_t bytes = request.memory_type ? request.memory.bytes() : 0;
  // Not behind: a part that could not be described (it fails the call
  // everywhere at once), data converted to another representation (from
  // the caller's memory type, which the copy does not keep), a copy larger
  // than the budget. Then no process's part goes behind, and the call runs
  // as without the hint.
  const bool goes_behind =
      !refusal && !request.failed_before && !request.conversion && bytes <= write_behind.budget();
  const CallAgreement agreed = agree_at_call(comm, rank, refusal ? &refused_code : nullptr,
                                             write_behind.knows_failure(), goes_behind);
  if (refusal) std::rethrow_exception(refusal);
  if (agreed.refused_rank >= 0) {
    throw UsageError(agreed.refused_code, "process " + std::to_string(agreed.refused_rank) +
                                              " passed bad arguments to this collective call");
  }
  // An earlier write behind failed, and every process knows: every one
  // reports it here, alike, and this write does not start.
  if (agreed.everyone_knows_a_failure) report_write_behind_failure();
  if (!agreed.everyone_goes_behind) return run_request(std::move(request));

  write_behind.make_room(bytes);
  WriteBehind::Write write;
  write.bytes = bytes;
  write.file_begin = request.access.file_begin();
  write.file_end = request.access.file_end();
  write.call = std::string(advance_pointer ? "write_all" : "write_at_all") + " at offset " +
               std::to_string(offset) + " (etypes), " + std::to_string(bytes) + " bytes";
  // A durable write spends most of its time waiting for the device in the
  // sync after its data phase, and only waits can hide behind computation
  // that keeps every core busy. So it makes no copy (CPU time at the
  // call), runs on the caller's memory, and returns once the engine is
  // done with that memory here, leaving the sync and the agreement behind.
  // Whether a process copies is its own choice: the operation is the same
  // either way, only the return differs.
  Future<void> memory_released;
  if (bytes > 0 && request.settings->durable) {
    auto released = std::make_shared<Promise<void>>();
    memory_released = released->get_future();
    request.on_memory_released = [released] { released->set_value(); };
    write.without_copy = true;
  } else if (bytes > 0) {
    write.copy = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    exchange::pack_stream(request.memory, 0, bytes, reinterpret_cast<char*>(write.copy.get()));
    auto packed = std::make_shared<const core::FlatType>(core::make_run(bytes), 0, bytes);
    request.memory =
        core::MemoryLayout{packed.get(), 1, reinterpret_cast<std::int64_t>(write.copy.get())};
    request.memory_type = std::move(packed);
  }
  const auto moved = static_cast<std::size_t>(request.access.bytes());
  // Started in the background, never on this thread: the call returns
  // before the write ends.
  write.done = start_request(std::move(request));
  write_behind.add(std::move(write));
  // Sleeps until the data phase is over here (every byte packed, sent or
  // written to the page cache): cores are shared with the other ranks.
  if (memory_released.valid()) memory_released.wait();
  return moved;
}

void File::Impl::before_independent_access(const Transfer& transfer) {
  if (write_behind.idle()) return;
  const core::Access access = access_of(transfer);
  write_behind.wait_overlapping(access.file_begin(), access.file_end());
}

}  // namespace flowio
