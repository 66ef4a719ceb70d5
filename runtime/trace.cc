#include "runtime/trace.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace flowio::runtime {

Trace& Trace::process() {
  static Trace trace;
  return trace;
}

Trace::Trace() {
  if (const char* path = std::getenv("FLOWIO_TRACE")) path_ = path;
}

void Trace::record(const char* stage, int rank, const std::string& label, std::int64_t begin_ns,
                   std::int64_t end_ns, const std::string& args) {
  if (!enabled()) return;
  std::lock_guard lock(mutex_);
  auto track = std::find(stages_.begin(), stages_.end(), stage);
  const bool new_track = track == stages_.end();
  if (new_track) track = stages_.insert(stages_.end(), stage);
  const auto tid = track - stages_.begin();
  if (!events_.empty()) events_ += ",\n";
  events_ += "{\"name\":\"" + label + "\",\"cat\":\"" + stage +
             "\",\"ph\":\"X\",\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(tid) +
             ",\"ts\":" + std::to_string(begin_ns / 1000.0) +
             ",\"dur\":" + std::to_string((end_ns - begin_ns) / 1000.0) +
             (args.empty() ? "}" : ",\"args\":{" + args + "}}");
  if (!new_track) return;
  events_ += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
             ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"" + stage + "\"}}";
}

void Trace::write(MPI_Comm comm) {
  if (!enabled()) return;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::string mine;
  {
    std::lock_guard lock(mutex_);
    mine.swap(events_);
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
  for (int r = 0; r < ranks; ++r) {
    if (lengths[r] > 0) all_.push_back(gathered.substr(displacements[r], lengths[r]));
  }
  std::ofstream out(path_, std::ios::trunc);
  out << "{\"traceEvents\":[\n";
  for (std::size_t i = 0; i < all_.size(); ++i) out << (i > 0 ? ",\n" : "") << all_[i];
  out << "\n]}\n";
}

}  // namespace flowio::runtime
