// remap_file: the offline translator. Each process takes every T-th window
// of the source (T processes), reads it with a collective read, routes it
// through the consumers' object set of the window and writes one
// contiguous stretch of the object file per consumer holding data there.
// Two windows per process are in memory: the next one is read while the
// current one is routed and written.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "api/consumer_views_access.h"
#include "api/section_writes.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/remap.h"
#include "runtime/engine/collective_error.h"
#include "runtime/object_file_index.h"
#include "runtime/remap_route.h"

namespace flowio {
namespace {

constexpr std::int64_t kDefaultWindow = std::int64_t{16} << 20;

std::int64_t window_bytes(const Hints& hints) {
  const auto it = hints.find("flowio_remap_window");
  if (it == hints.end()) return kDefaultWindow;
  std::int64_t value = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Reads carry int counts in places: keep a window well below 2 GiB.
  if (error != std::errc() || end != text.data() + text.size() || value < 4096 ||
      value > (std::int64_t{1} << 30)) {
    throw UsageError(
        ErrorCode::invalid_argument,
        "hint flowio_remap_window: expected bytes in [4096, 2^30], got \"" + text + "\"");
  }
  return value;
}

// The windows of the source that hold some consumer's data, in file order.
std::vector<std::int64_t> windows_with_data(const runtime::ObjectFileIndex& index,
                                            std::int64_t window) {
  std::int64_t low = index.source_size(), high = 0;
  for (std::size_t c = 0; c < index.consumer_count(); ++c) {
    if (index.section(c).bytes == 0) continue;
    low = std::min(low, index.consumer(c).file_begin());
    high = std::max(high, std::min(index.consumer(c).file_end(), index.source_size()));
  }
  std::vector<std::int64_t> starts;
  for (std::int64_t begin = low; begin < high; begin += window) {
    const std::int64_t end = std::min(begin + window, high);
    for (const core::Access& consumer : index.consumers()) {
      if (consumer.bytes_before(end) > consumer.bytes_before(begin)) {
        starts.push_back(begin);
        break;
      }
    }
  }
  return starts;
}

// One window's buffer, its read and the writes that borrow it.
struct Slot {
  std::vector<std::byte> data;
  std::int64_t begin = 0;
  std::int64_t length = 0;
  Future<std::size_t> read;
  SectionWrites writes;
};

}  // namespace

RemapReport remap_file(MPI_Comm comm, const std::string& source, const ConsumerViews& consumers,
                       const std::string& target, const Hints& hints) {
  const double started = MPI_Wtime();
  const std::int64_t window = window_bytes(hints);
  File in = File::open(comm, source, Mode::rdonly, hints);
  // Translating a file onto itself would cut it before it is read. Every
  // process sees the same answer (the files are shared).
  std::error_code ignored;
  if (std::filesystem::equivalent(source, target, ignored)) {
    throw UsageError(ErrorCode::invalid_argument,
                     "remap_file: the target " + target + " is the source file");
  }
  const runtime::ObjectFileIndex index =
      runtime::ObjectFileIndex::plan(ConsumerViewsAccess::accesses(consumers), in.size());
  File out = File::open(comm, target, Mode::create | Mode::wronly, hints);
  // Whatever the target held past the new size is cut away; the windows
  // fill every section byte, so nothing else of it survives but the
  // padding between sections, which no reader reads.
  out.set_size(index.file_size());
  const int rank = [&] {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
  }();
  const int ranks = [&] {
    int n = 0;
    MPI_Comm_size(comm, &n);
    return n;
  }();

  std::int64_t read_bytes = 0, written_bytes = 0;
  std::exception_ptr failure;
  if (rank == 0) {
    try {
      const std::vector<std::byte> encoded = index.encode();
      out.write_at(0, encoded.data(), static_cast<MPI_Count>(encoded.size()), MPI_BYTE);
      written_bytes += static_cast<std::int64_t>(encoded.size());
    } catch (...) {
      failure = std::current_exception();
    }
  }

  const std::vector<std::int64_t> starts = windows_with_data(index, window);
  const std::size_t steps =
      (starts.size() + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
  Slot slots[2];
  // Collective: every process calls it for every step, with no data when it
  // has no window in the step or has failed (it keeps taking part so that
  // the others do not wait for it).
  const auto start_read = [&](std::size_t step, Slot& slot) {
    const std::size_t w = step * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(rank);
    slot.begin = 0;
    slot.length = 0;
    if (w < starts.size() && !failure) {
      slot.begin = starts[w];
      slot.length = std::min(window, index.source_size() - slot.begin);
      if (slot.data.size() < static_cast<std::size_t>(slot.length)) {
        slot.data.resize(static_cast<std::size_t>(slot.length));
      }
    }
    slot.read = in.iread_at_all(slot.begin, slot.data.data(), slot.length, MPI_BYTE);
  };

  if (steps > 0) start_read(0, slots[0]);
  std::vector<runtime::Copy> copies;
  for (std::size_t step = 0; step < steps; ++step) {
    Slot& current = slots[step % 2];
    Slot& next = slots[(step + 1) % 2];
    // A failed read fails on every process (collective reads agree), so
    // all leave the loop together; the slots' destructors wait for writes.
    const std::size_t got = current.read.get();
    read_bytes += static_cast<std::int64_t>(got);
    try {
      next.writes.wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    if (step + 1 < steps) start_read(step + 1, next);
    if (failure || current.length == 0) continue;
    try {
      if (static_cast<std::int64_t>(got) != current.length) {
        throw IoError(ErrorCode::io,
                      "remap_file: " + source + " changed size during the translation", 0);
      }
      const runtime::WindowRoute route(index, current.begin, current.begin + current.length);
      copies.clear();
      route.route(core::Piece{current.begin, current.length}, 0, copies);
      const std::vector<runtime::TargetRun> runs = runtime::plan_runs(copies);
      written_bytes +=
          static_cast<std::int64_t>(current.writes.start(out, current.data.data(), copies, runs));
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  for (Slot& slot : slots) {
    try {
      slot.writes.wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  runtime::agree_on_outcome(comm, failure, "remap_file");
  in.close();
  out.close();

  RemapReport report;
  report.source_bytes = index.source_size();
  report.object_file_bytes = index.file_size();
  report.index_bytes = index.index_bytes();
  std::int64_t totals[2] = {read_bytes, written_bytes};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  report.bytes_read = totals[0];
  report.bytes_written = totals[1];
  double elapsed = MPI_Wtime() - started;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  report.seconds = elapsed;
  return report;
}

}  // namespace flowio
