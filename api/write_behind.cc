#include "api/write_behind.h"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "flowio/error.h"

namespace flowio {
namespace {

// WriteBehind::process_counts(); relaxed: read at MPI_Finalize, after
// every file call.
std::atomic<std::int64_t> writes_behind{0};
std::atomic<std::int64_t> without_copy{0};
std::atomic<std::int64_t> waits_for_room{0};

// The byte count `text` spells, or -1 when it spells none.
std::int64_t parse_bytes(const std::string& text) {
  std::int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return -1;
  return value;
}

// `failure` with its message prefixed by the write it ended, keeping its
// type and code (the MPI-IO layer maps them to error classes).
std::exception_ptr named(const std::exception_ptr& failure, const std::string& call) {
  const std::string prefix = "a write behind (" + call + ") failed: ";
  try {
    std::rethrow_exception(failure);
  } catch (const IoError& e) {
    return std::make_exception_ptr(
        IoError(e.code(), prefix + e.message(), e.system_errno(), e.where()));
  } catch (const MpiError& e) {
    return std::make_exception_ptr(MpiError(prefix + e.message(), e.mpi_code(), e.where()));
  } catch (const UsageError& e) {
    return std::make_exception_ptr(UsageError(e.code(), prefix + e.message(), e.where()));
  } catch (const Error& e) {
    return std::make_exception_ptr(
        Error(e.code(), prefix + e.message(), e.system_errno(), e.mpi_code(), e.where()));
  } catch (...) {
    return failure;
  }
}

}  // namespace

std::int64_t write_behind_budget(const Hints& hints) {
  const auto hint = hints.find("flowio_write_behind");
  if (hint != hints.end()) {
    const std::int64_t bytes = parse_bytes(hint->second);
    if (bytes < 0) {
      throw UsageError(
          ErrorCode::invalid_hint,
          "hint flowio_write_behind: expected a byte count, got \"" + hint->second + "\"");
    }
    return bytes;
  }
  const char* forced = std::getenv("FLOWIO_WRITE_BEHIND");
  if (forced == nullptr || *forced == '\0') return 0;
  const std::int64_t bytes = parse_bytes(forced);
  if (bytes < 0) {
    throw UsageError(
        ErrorCode::invalid_hint,
        std::string("FLOWIO_WRITE_BEHIND: expected a byte count, got \"") + forced + "\"");
  }
  return bytes;
}

void require_same_write_behind(MPI_Comm comm, bool on, const char* operation) {
  const int mine[2] = {on ? 1 : 0, on ? -1 : 0};
  int least[2] = {0, 0};
  const int code = MPI_Allreduce(mine, least, 2, MPI_INT, MPI_MIN, comm);
  if (code != MPI_SUCCESS) throw MpiError(std::string(operation) + ": MPI_Allreduce", code);
  if (least[0] != -least[1]) {
    throw UsageError(ErrorCode::not_same,
                     std::string(operation) +
                         ": hint flowio_write_behind is on for some processes and off for others");
  }
}

WriteBehind::Counts WriteBehind::process_counts() {
  return Counts{writes_behind.load(std::memory_order_relaxed),
                without_copy.load(std::memory_order_relaxed),
                waits_for_room.load(std::memory_order_relaxed)};
}

bool WriteBehind::make_room(std::int64_t bytes) {
  if (!on() || bytes > budget_) return false;
  reap();
  if (in_flight_ + bytes > budget_) waits_for_room.fetch_add(1, std::memory_order_relaxed);
  while (in_flight_ + bytes > budget_) finish(0);
  return true;
}

void WriteBehind::add(Write write) {
  in_flight_ += write.bytes;
  writes_behind.fetch_add(1, std::memory_order_relaxed);
  if (write.without_copy) without_copy.fetch_add(1, std::memory_order_relaxed);
  writes_.push_back(std::move(write));
}

void WriteBehind::wait_overlapping(std::int64_t begin, std::int64_t end) {
  for (std::size_t i = 0; i < writes_.size();) {
    const Write& write = writes_[i];
    if (write.file_begin < end && begin < write.file_end) {
      finish(i);
    } else {
      ++i;
    }
  }
  reap();
}

void WriteBehind::drain() {
  while (!writes_.empty()) finish(0);
}

std::exception_ptr WriteBehind::take_failure() {
  reap();
  return std::exchange(failure_, nullptr);
}

void WriteBehind::finish(std::size_t index) {
  Write& write = writes_[index];
  write.done.wait();
  if (!failure_) {
    try {
      write.done.get();
    } catch (...) {
      failure_ = named(std::current_exception(), write.call);
    }
  }
  in_flight_ -= write.bytes;
  writes_.erase(writes_.begin() + static_cast<std::ptrdiff_t>(index));
}

void WriteBehind::reap() {
  for (std::size_t i = 0; i < writes_.size();) {
    if (writes_[i].done.ready()) {
      finish(i);
    } else {
      ++i;
    }
  }
}

}  // namespace flowio
