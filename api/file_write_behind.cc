// Blocking collective writes behind (hint flowio_write_behind,
// api/write_behind.h): checked on every process at the call, copied, and
// handed to the engine as nonblocking writes of their copies.
#include <climits>
#include <memory>
#include <string>
#include <utility>

#include "api/file_impl.h"
#include "exchange/stream_pack.h"
#include "runtime/engine/collective_error.h"

namespace flowio {
namespace {

// The first refusal over every process: `code` of the lowest rank whose
// arguments were bad, or none. One reduction, every process learns it.
struct Refusal {
  int rank = -1;
  ErrorCode code = ErrorCode::invalid_argument;
};

Refusal first_refusal(MPI_Comm comm, int rank, const ErrorCode* refused) {
  // Rank and code in one number, so that MPI_MIN finds the lowest rank.
  constexpr int kCodes = 256;
  const int mine = refused ? rank * kCodes + static_cast<int>(*refused) : INT_MAX;
  int least = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (least == INT_MAX) return Refusal{};
  return Refusal{least / kCodes, static_cast<ErrorCode>(least % kCodes)};
}

}  // namespace

std::size_t File::Impl::write_collective_behind(MPI_Offset offset, const void* buffer,
                                                MPI_Count count, MPI_Datatype datatype,
                                                bool advance_pointer) {
  // The arguments, checked on every process before any starts: a refusal
  // anywhere fails the call everywhere, at the call, and nothing starts.
  Transfer transfer;
  std::exception_ptr refusal;
  ErrorCode refused_code{};
  std::exception_ptr failure;  // any other failure to describe the part
  try {
    transfer = prepare_transfer(true, offset, buffer, count, datatype, advance_pointer);
  } catch (const UsageError& error) {
    refusal = std::current_exception();
    refused_code = error.code();
  } catch (...) {
    failure = std::current_exception();
  }
  const Refusal first = first_refusal(comm, rank, refusal ? &refused_code : nullptr);
  if (refusal) std::rethrow_exception(refusal);
  if (first.rank >= 0) {
    throw UsageError(first.code, "process " + std::to_string(first.rank) +
                                     " passed bad arguments to this collective call");
  }
  runtime::CollectiveRequest request;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (...) {
      request = failed_request(true, false);
    }
  } else {
    request = request_of(true, std::move(transfer), false);
  }

  const std::int64_t bytes = request.memory.bytes();
  // Converted data (another representation) is converted from the
  // caller's memory type, which the copy does not keep.
  if (request.conversion || !write_behind.make_room(bytes)) return run_request(std::move(request));
  WriteBehind::Write write;
  write.bytes = bytes;
  write.file_begin = request.access.file_begin();
  write.file_end = request.access.file_end();
  write.call = std::string(advance_pointer ? "write_all" : "write_at_all") + " at offset " +
               std::to_string(offset) + " (etypes), " + std::to_string(bytes) + " bytes";
  if (bytes > 0) {
    write.copy = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    exchange::pack_stream(request.memory, 0, bytes, reinterpret_cast<char*>(write.copy.get()));
    auto packed = std::make_shared<const core::FlatType>(core::make_run(bytes), 0, bytes);
    request.memory =
        core::MemoryLayout{packed.get(), 1, reinterpret_cast<std::int64_t>(write.copy.get())};
    request.memory_type = std::move(packed);
  }
  const auto moved = static_cast<std::size_t>(request.access.bytes());
  write.done = start_request(std::move(request));
  write_behind.add(std::move(write));
  return moved;
}

void File::Impl::before_independent_access(const Transfer& transfer) {
  if (write_behind.idle() && !write_behind.failed()) return;
  if (!write_behind.idle()) {
    const core::Access access = access_of(transfer);
    write_behind.wait_overlapping(access.file_begin(), access.file_end());
  }
  report_write_behind_failure();
}

}  // namespace flowio
