#include "io/fault_injection.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <thread>

#include "flowio/error.h"
#include "runtime/core/injection_point.h"

namespace flowio::io {
namespace {

[[noreturn]] void bad_plan(const std::string& why) {
  throw UsageError(ErrorCode::invalid_argument, "FLOWIO_FAULT: " + why);
}

std::int64_t parse_number(const std::string& key, const std::string& text, std::int64_t least) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least) {
    bad_plan(key + "=" + text + ": expected an integer >= " + std::to_string(least));
  }
  return value;
}

FaultKind parse_fault(const std::string& text) {
  static const std::map<std::string, FaultKind> kinds = {
      {"eio", FaultKind::eio},
      {"enospc", FaultKind::enospc},
      {"short", FaultKind::short_transfer},
      {"stall", FaultKind::stall},
      {"usage", FaultKind::usage},
      {"bad_alloc", FaultKind::bad_alloc},
      {"malformed", FaultKind::malformed},
  };
  const auto found = kinds.find(text);
  if (found == kinds.end()) {
    bad_plan("fault=" + text +
             ": expected eio, enospc, short, stall, usage, bad_alloc or malformed");
  }
  return found->second;
}

FaultRule parse_rule(const std::string& text) {
  FaultRule rule;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto equals = item.find('=');
    if (equals == std::string::npos) bad_plan("\"" + item + "\" is not key=value");
    const std::string key = item.substr(0, equals), value = item.substr(equals + 1);
    if (key == "on") {
      if (value.empty()) bad_plan("on= names nothing");
      rule.on = value;
    } else if (key == "rank") {
      rule.rank = static_cast<int>(parse_number(key, value, 0));
    } else if (key == "nth") {
      rule.nth = parse_number(key, value, 1);
    } else if (key == "times") {
      rule.times = parse_number(key, value, 0);
    } else if (key == "fault") {
      rule.fault = parse_fault(value);
    } else if (key == "ms") {
      rule.stall_ms = parse_number(key, value, 0);
    } else {
      bad_plan("unknown key \"" + key + "\"");
    }
  }
  if (rule.on.empty()) bad_plan("rule \"" + text + "\" has no on=");
  return rule;
}

int world_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

bool applies_here(const FaultRule& rule, int rank) { return !rule.rank || *rule.rank == rank; }

[[noreturn]] void throw_injected(FaultKind fault, const std::string& where) {
  switch (fault) {
    case FaultKind::enospc:
    case FaultKind::short_transfer:
      throw_errno(fault == FaultKind::enospc ? ENOSPC : EIO, "injected fault at " + where);
    case FaultKind::usage:
      throw UsageError(ErrorCode::invalid_argument, "injected fault at " + where);
    case FaultKind::bad_alloc:
      throw std::bad_alloc();
    case FaultKind::malformed:
      throw MpiError("injected malformed message at " + where, 0);
    case FaultKind::eio:
    case FaultKind::stall:
      break;
  }
  throw_errno(EIO, "injected fault at " + where);
}

void stall(const FaultRule& rule) {
  std::this_thread::sleep_for(std::chrono::milliseconds(rule.stall_ms));
}

// The plan set by set_fault_plan, if any.
struct PlanOverride {
  std::mutex mutex;
  std::optional<FaultPlan> plan;
};

PlanOverride& plan_override() {
  static PlanOverride* instance = new PlanOverride();  // used until exit
  return *instance;
}

// The plan in force now: the override, else FLOWIO_FAULT (re-read at each
// call, so that a program may change it between opens).
FaultPlan current_plan() {
  PlanOverride& state = plan_override();
  {
    std::lock_guard lock(state.mutex);
    if (state.plan) return *state.plan;
  }
  const char* text = std::getenv("FLOWIO_FAULT");
  if (text == nullptr || *text == '\0') return {};
  return FaultPlan::parse(text);
}

class FaultInjectingBackend final : public StorageBackend {
 public:
  FaultInjectingBackend(std::unique_ptr<StorageBackend> inner, std::vector<FaultRule> reads,
                        std::vector<FaultRule> writes)
      : inner_(std::move(inner)), reads_(std::move(reads)), writes_(std::move(writes)) {}

  const char* name() const noexcept override { return inner_->name(); }

  void write(int fd, std::span<const IoRequest> requests) override {
    const std::int64_t call = ++write_calls_;  // relaxed enough: only a count
    for (const FaultRule& rule : writes_) {
      if (!rule.hits(call)) continue;
      const std::string where =
          "write call " + std::to_string(call) + " on fd " + std::to_string(fd);
      if (rule.fault == FaultKind::stall) {
        stall(rule);
        continue;
      }
      if (rule.fault == FaultKind::short_transfer && !requests.empty()) {
        write_first_half(fd, requests.front());
        throw_errno(ENOSPC, "injected short " + where + ": half of it written");
      }
      throw_injected(rule.fault, where);
    }
    inner_->write(fd, requests);
  }

  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override {
    const std::int64_t call = ++read_calls_;
    bool cut = false;
    for (const FaultRule& rule : reads_) {
      if (!rule.hits(call)) continue;
      if (rule.fault == FaultKind::stall) {
        stall(rule);
        continue;
      }
      if (rule.fault == FaultKind::short_transfer) {
        cut = true;
        continue;
      }
      throw_injected(rule.fault,
                     "read call " + std::to_string(call) + " on fd " + std::to_string(fd));
    }
    if (!cut || requests.empty()) {
      inner_->read(fd, requests, bytes_read);
      return;
    }
    // As if the file ended half way through the first request: only what
    // lies before that point is read, and memory for the rest is left
    // untouched, as a real end of file leaves it.
    const std::int64_t end =
        requests.front().file_offset + static_cast<std::int64_t>(requests.front().bytes / 2);
    std::vector<std::vector<iovec>> prefixes;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      bytes_read[i] = 0;
      const std::int64_t kept = std::min<std::int64_t>(static_cast<std::int64_t>(requests[i].bytes),
                                                       end - requests[i].file_offset);
      if (kept <= 0) continue;
      prefixes.push_back(prefix(requests[i], static_cast<std::size_t>(kept)));
      index.push_back(i);
    }
    std::vector<IoRequest> before_end;
    for (std::size_t k = 0; k < index.size(); ++k) {
      std::size_t bytes = 0;
      for (const iovec& piece : prefixes[k]) bytes += piece.iov_len;
      before_end.push_back(IoRequest{requests[index[k]].file_offset, prefixes[k], bytes});
    }
    std::vector<std::size_t> got(before_end.size(), 0);
    inner_->read(fd, before_end, got);
    for (std::size_t k = 0; k < index.size(); ++k) bytes_read[index[k]] = got[k];
  }

 private:
  // The memory pieces of the first `bytes` bytes of `request`.
  static std::vector<iovec> prefix(const IoRequest& request, std::size_t bytes) {
    std::vector<iovec> pieces;
    for (const iovec& piece : request.memory) {
      if (bytes == 0) break;
      const std::size_t take = std::min(bytes, piece.iov_len);
      pieces.push_back(iovec{piece.iov_base, take});
      bytes -= take;
    }
    return pieces;
  }

  void write_first_half(int fd, const IoRequest& request) {
    const std::vector<iovec> half = prefix(request, request.bytes / 2);
    const IoRequest first{request.file_offset, half, request.bytes / 2};
    if (first.bytes > 0) inner_->write(fd, std::span<const IoRequest>(&first, 1));
  }

  std::unique_ptr<StorageBackend> inner_;
  std::vector<FaultRule> reads_;
  std::vector<FaultRule> writes_;
  std::atomic<std::int64_t> read_calls_{0};
  std::atomic<std::int64_t> write_calls_{0};
};

// The rules for injection points, counted per process and point.
struct PointCounters {
  std::mutex mutex;
  std::map<std::string, std::int64_t> calls;
};

PointCounters& point_counters() {
  static PointCounters* instance = new PointCounters();  // used until exit
  return *instance;
}

// The hook behind core::injection_point().
void injection_hook(const char* point) {
  const FaultPlan plan = current_plan();
  const int rank = world_rank();
  std::int64_t call = 0;
  bool armed = false;
  for (const FaultRule& rule : plan.rules)
    armed = armed || (rule.on == point && applies_here(rule, rank));
  if (!armed) return;
  {
    PointCounters& counters = point_counters();
    std::lock_guard lock(counters.mutex);
    call = ++counters.calls[point];
  }
  for (const FaultRule& rule : plan.rules) {
    if (rule.on != point || !applies_here(rule, rank) || !rule.hits(call)) continue;
    if (rule.fault == FaultKind::stall) {
      stall(rule);
      continue;
    }
    throw_injected(rule.fault, std::string("injection point ") + point + " (call " +
                                   std::to_string(call) + ", rank " + std::to_string(rank) + ")");
  }
}

std::unique_ptr<StorageBackend> wrap_for_this_rank(std::unique_ptr<StorageBackend> inner) {
  return make_fault_injecting_backend(std::move(inner), current_plan(), world_rank());
}

// Installed when a test program links this library (alwayslink).
[[maybe_unused]] const bool installed = [] {
  set_backend_wrapper(&wrap_for_this_rank);
  core::set_injection_hook(&injection_hook);
  return true;
}();

}  // namespace

FaultPlan FaultPlan::parse(const std::string& text) {
  FaultPlan plan;
  std::stringstream in(text);
  std::string rule;
  while (std::getline(in, rule, ';')) {
    if (!rule.empty()) plan.rules.push_back(parse_rule(rule));
  }
  return plan;
}

void set_fault_plan(std::optional<FaultPlan> plan) {
  PlanOverride& state = plan_override();
  std::lock_guard lock(state.mutex);
  state.plan = std::move(plan);
  // A new plan counts its points' calls from 1.
  PointCounters& counters = point_counters();
  std::lock_guard counters_lock(counters.mutex);
  counters.calls.clear();
}

std::unique_ptr<StorageBackend> make_fault_injecting_backend(std::unique_ptr<StorageBackend> inner,
                                                             FaultPlan plan, int rank) {
  std::vector<FaultRule> reads, writes;
  for (FaultRule& rule : plan.rules) {
    if (!applies_here(rule, rank)) continue;
    if (rule.on == "read") reads.push_back(rule);
    if (rule.on == "write") writes.push_back(rule);
  }
  if (reads.empty() && writes.empty()) return inner;
  return std::make_unique<FaultInjectingBackend>(std::move(inner), std::move(reads),
                                                 std::move(writes));
}

}  // namespace flowio::io
