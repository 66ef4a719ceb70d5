// Collective reads and writes: the request each call hands to the runtime
// (runtime/engine/collective_context.h), a process's refusal that still
// takes part, and the statistics.
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "api/file_impl.h"
#include "runtime/core/injection_point.h"

namespace flowio {

runtime::CollectiveRequest File::Impl::bare_request(bool writing, bool blocking) {
  runtime::CollectiveRequest request;
  request.blocking = blocking;
  request.settings = collective_settings(writing);
  request.writing = writing;
  return request;
}

runtime::CollectiveRequest File::Impl::request_without_data(bool writing, bool blocking) {
  runtime::CollectiveRequest request = bare_request(writing, blocking);
  request.memory_type = std::make_shared<const core::FlatType>();
  request.memory = core::MemoryLayout{request.memory_type.get(), 0, 0};
  return request;
}

runtime::CollectiveRequest File::Impl::failed_request(bool writing, bool blocking) {
  runtime::CollectiveRequest without_data = request_without_data(writing, blocking);
  without_data.failed_before = std::current_exception();
  without_data.failed_before_stage = "describe";
  return without_data;
}

runtime::CollectiveRequest File::Impl::collective_request(bool writing, MPI_Offset offset,
                                                          const void* buffer, MPI_Count count,
                                                          MPI_Datatype datatype,
                                                          bool advance_pointer, bool blocking) {
  Transfer transfer;
  try {
    transfer = prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
  } catch (const UsageError& error) {
    refuse_and_rethrow(writing, error.code(), blocking);
  } catch (...) {
    return failed_request(writing, blocking);
  }
  return request_of(writing, std::move(transfer), blocking);
}

runtime::CollectiveRequest File::Impl::request_of(bool writing, Transfer&& transfer,
                                                  bool blocking) {
  runtime::CollectiveRequest request = bare_request(writing, blocking);
  try {
    core::injection_point("collective.describe");
    request.access = core::Access(view, transfer.stream_position,
                                  transfer.stream_position + transfer.stream_bytes);
  } catch (...) {
    return failed_request(writing, blocking);
  }
  request.memory_type = std::move(transfer.memory_type);
  request.memory = transfer.memory;
  request.conversion = std::move(transfer.conversion);
  request.atomic = atomic;
  // A view whose pieces overlap (read-only files) is not in file order:
  // only this process can walk it, so its part goes direct.
  request.own_part_only = view->overlaps();
  return request;
}

Future<std::size_t> File::Impl::start_collective(bool writing, MPI_Offset offset,
                                                 const void* buffer, MPI_Count count,
                                                 MPI_Datatype datatype, bool advance_pointer) {
  return start_request(
      collective_request(writing, offset, buffer, count, datatype, advance_pointer, false));
}

std::size_t File::Impl::run_collective(bool writing, MPI_Offset offset, const void* buffer,
                                       MPI_Count count, MPI_Datatype datatype,
                                       bool advance_pointer) {
  if (writing && write_behind.on() && !atomic) {
    return write_collective_behind(offset, buffer, count, datatype, advance_pointer);
  }
  return run_request(
      collective_request(writing, offset, buffer, count, datatype, advance_pointer, true));
}

std::size_t File::Impl::run_request(runtime::CollectiveRequest request) {
  // As start_request(): a write keeps this process's independent writes
  // under the sieve lock while it is pending. Any other blocking call is
  // not counted pending: its caller waits for it here, and where the
  // background finishes it, closing the file waits for the graph it runs
  // in (a small read saves the two lock pairs).
  request.blocking = true;
  const bool writes = request.writing && !request.without_data();
  if (writes) begin_collective(true);
  std::exception_ptr failure;
  std::size_t moved = 0;
  try {
    moved = runtime::run_collective(
        collective_context(), std::move(request),
        writes ? std::function<void()>([this] { end_collective(true); }) : std::function<void()>(),
        failure);
  } catch (...) {
    if (writes) end_collective(true);
    throw;
  }
  if (failure) std::rethrow_exception(failure);
  return moved;
}

Future<std::size_t> File::Impl::start_request(runtime::CollectiveRequest request) {
  const bool writes = request.writing && !request.without_data();
  begin_collective(writes);
  try {
    return runtime::start_collective(collective_context(), std::move(request),
                                     [this, writes] { end_collective(writes); });
  } catch (...) {
    end_collective(writes);
    throw;
  }
}

void File::Impl::refuse_collective(bool writing, ErrorCode code, bool blocking) {
  runtime::CollectiveRequest request = request_without_data(writing, blocking);
  request.refused = static_cast<int>(code) + 1;
  // Its outcome is the refusal, which the caller reports; every process
  // learns of it from the gather.
  start_request(std::move(request));
}

void File::Impl::refuse_and_rethrow(bool writing, ErrorCode code, bool blocking) {
  // Bad arguments fail this call at once, but the other processes are in
  // the collective call already: this process still takes part.
  const std::exception_ptr refusal = std::current_exception();
  refuse_collective(writing, code, blocking);
  std::rethrow_exception(refusal);
}

Future<std::size_t> File::iwrite_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                                        MPI_Datatype datatype) {
  return impl().start_collective(true, offset, buffer, count, datatype);
}

Future<std::size_t> File::iread_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                                       MPI_Datatype datatype) {
  return impl().start_collective(false, offset, buffer, count, datatype);
}

Future<std::size_t> File::iwrite_all(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(true, file.pointer, buffer, count, datatype, true);
}

Future<std::size_t> File::iread_all(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(false, file.pointer, buffer, count, datatype, true);
}

// The blocking forms tell the runtime that the caller waits at once, so it
// may do the work on this thread.
std::size_t File::write_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                               MPI_Datatype datatype) {
  return impl().run_collective(true, offset, buffer, count, datatype);
}

std::size_t File::read_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                              MPI_Datatype datatype) {
  return impl().run_collective(false, offset, buffer, count, datatype);
}

std::size_t File::write_all(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_collective(true, file.pointer, buffer, count, datatype, true);
}

std::size_t File::read_all(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_collective(false, file.pointer, buffer, count, datatype, true);
}

std::vector<OperationStatistics> File::statistics() const {
  const Impl& file = impl();
  file.write_behind.drain();
  return file.collective ? file.collective->statistics() : std::vector<OperationStatistics>{};
}

}  // namespace flowio
