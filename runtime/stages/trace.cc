#include "runtime/stages/trace.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/engine/clock.h"

namespace flowio::runtime {

// ordered_json keeps each event's members in the order written (name,
// category, phase, ...), which is how people read a trace file.
struct Trace::Events {
  nlohmann::ordered_json mine = nlohmann::ordered_json::array();
  nlohmann::ordered_json all = nlohmann::ordered_json::array();  // rank 0
};

namespace {

// Any bytes may reach the trace in a file name; those that are not UTF-8
// become U+FFFD instead of making the dump throw.
std::string json_text(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

double microseconds(std::int64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1000.0; }

}  // namespace

Trace& Trace::process() {
  static Trace trace;
  return trace;
}

Trace::Trace() : events_(std::make_unique<Events>()) {
  if (const char* path = std::getenv("FLOWIO_TRACE")) path_ = path;
}

Trace::~Trace() = default;

template <typename Event>
void Trace::append(Event&& event) {
  events_->mine.push_back(std::forward<Event>(event));
}

void Trace::record(const char* stage, int rank, const std::string& label, std::int64_t begin_ns,
                   std::int64_t end_ns, const TraceArgs& args) {
  if (!enabled()) return;
  std::lock_guard lock(mutex_);
  auto track = std::find(stages_.begin(), stages_.end(), stage);
  const bool new_track = track == stages_.end();
  if (new_track) track = stages_.insert(stages_.end(), stage);
  const auto tid = track - stages_.begin();
  nlohmann::ordered_json span = {{"name", label},
                                 {"cat", stage},
                                 {"ph", "X"},
                                 {"pid", rank},
                                 {"tid", tid},
                                 {"ts", microseconds(begin_ns)},
                                 {"dur", microseconds(end_ns - begin_ns)}};
  if (!args.empty()) {
    nlohmann::ordered_json& members = span["args"];
    for (const auto& [key, value] : args) members[key] = value;
  }
  append(std::move(span));
  if (!new_track) return;
  append(nlohmann::ordered_json{{"name", "thread_name"},
                                {"ph", "M"},
                                {"pid", rank},
                                {"tid", tid},
                                {"args", {{"name", stage}}}});
}

void Trace::record_open(int rank, const std::string& path,
                        const std::map<std::string, std::string>& hints) {
  if (!enabled()) return;
  const std::int64_t now = now_ns();
  std::lock_guard lock(mutex_);
  // "s": "p" draws the instant across the rank's tracks.
  append(nlohmann::ordered_json{{"name", "open"},
                                {"cat", "file"},
                                {"ph", "i"},
                                {"s", "p"},
                                {"pid", rank},
                                {"tid", 0},
                                {"ts", microseconds(now)},
                                {"args", {{"file", path}, {"hints", hints}}}});
}

void Trace::write(MPI_Comm comm) {
  if (!enabled()) return;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::string mine;
  {
    std::lock_guard lock(mutex_);
    mine = json_text(events_->mine);
    events_->mine = nlohmann::ordered_json::array();
  }
  // A long run's events pass 2 GiB: lengths as MPI_Count, MPI_Gatherv_c.
  const auto length = static_cast<MPI_Count>(mine.size());
  std::vector<MPI_Count> lengths(ranks);
  std::vector<MPI_Aint> displacements(ranks);
  MPI_Gather(&length, 1, MPI_COUNT, lengths.data(), 1, MPI_COUNT, 0, comm);
  std::string gathered;
  if (rank == 0) {
    MPI_Aint total = 0;
    for (int r = 0; r < ranks; ++r) {
      displacements[r] = total;
      total += lengths[r];
    }
    gathered.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv_c(mine.data(), length, MPI_CHAR, gathered.data(), lengths.data(),
                displacements.data(), MPI_CHAR, 0, comm);
  if (rank != 0) return;
  std::lock_guard lock(mutex_);
  for (int r = 0; r < ranks; ++r) {
    const auto events = nlohmann::ordered_json::parse(
        gathered.begin() + displacements[r], gathered.begin() + displacements[r] + lengths[r]);
    for (const auto& event : events) events_->all.push_back(event);
  }
  std::ofstream out(path_, std::ios::trunc);
  out << json_text(nlohmann::ordered_json{{"traceEvents", events_->all}}) << '\n';
}

}  // namespace flowio::runtime
