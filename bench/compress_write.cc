#include "bench/compress_write.h"

#include <mpi.h>

#include <algorithm>

#include "flowio/error.h"

namespace bench::compress {
namespace {

std::int64_t sum_over_ranks(std::int64_t mine) {
  std::int64_t all = 0;
  flowio::check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
                    "MPI_Allreduce");
  return all;
}

double slowest_rank(double mine) {
  double all = 0;
  flowio::check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                    "MPI_Allreduce");
  return all;
}

double stage_seconds(const flowio::OperationStatistics& statistics, const std::string& name) {
  for (const flowio::StageStatistics& stage : statistics.stages) {
    if (stage.name == name) return stage.seconds;
  }
  return 0;
}

}  // namespace

WholeWrites::WholeWrites(const Mesh& mesh, const std::vector<std::string>& modes,
                         const std::string& dir, std::int64_t window_bytes)
    : mesh_(mesh), modes_(modes) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  local_ = mesh.local_data(rank);
  std::vector<MPI_Aint> displacements;
  for (const std::int64_t node : mesh.nodes_of(rank)) {
    displacements.push_back(static_cast<MPI_Aint>(node * mesh.node_bytes()));
  }
  MPI_Datatype hindexed = MPI_DATATYPE_NULL;
  flowio::check_mpi(MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()),
                                                   static_cast<int>(mesh.node_bytes()),
                                                   displacements.data(), MPI_BYTE, &hindexed),
                    "MPI_Type_create_hindexed_block");
  view_.emplace(hindexed);
  const flowio::Hints hints = {{"cb_buffer_size", std::to_string(window_bytes)},
                               {"romio_cb_write", "enable"}};
  for (const std::string& mode : modes_) {
    paths_.emplace_back(dir, "compress_flowio_" + mode);
    flowio::Hints with_mode = hints;
    with_mode["flowio_compress"] = mode;
    flowio::File& file = flowio_[mode].emplace(
        flowio::File::open(MPI_COMM_WORLD, paths_.back().path(),
                           flowio::Mode::create | flowio::Mode::wronly, with_mode));
    file.set_view(0, MPI_BYTE, view_->get());
  }
  paths_.emplace_back(dir, "compress_mpich");
  mpich_.emplace(paths_.back().path(), hints);
  flowio::check_mpi(
      MPI_File_set_view(mpich_->get(), 0, MPI_BYTE, view_->get(), "native", MPI_INFO_NULL),
      "MPI_File_set_view");
}

void WholeWrites::write(bool warm_up, int rotation) {
  std::vector<std::string> order = modes_;
  order.push_back("mpich");
  std::rotate(order.begin(),
              order.begin() +
                  static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rotation) % order.size()),
              order.end());
  for (const std::string& who : order) {
    const double seconds = time_collective([&] {
      if (who == "mpich") {
        MPI_Status status;
        flowio::check_mpi(
            MPI_File_write_at_all_c(mpich_->get(), 0, local_.data(),
                                    static_cast<MPI_Count>(local_.size()), MPI_BYTE, &status),
            "MPI_File_write_at_all_c");
      } else {
        flowio_.at(who)->write_at_all(0, local_.data(), static_cast<MPI_Count>(local_.size()),
                                      MPI_BYTE);
      }
    });
    if (warm_up) {
      ++warm_ups_[who];
    } else {
      seconds_[who].push_back(seconds);
    }
  }
}

void WholeWrites::close() {
  for (const std::string& mode : modes_) {
    std::vector<flowio::OperationStatistics> all = flowio_.at(mode)->statistics();
    // The timed writes are the last ones.
    const std::size_t skip = std::min(all.size(), warm_ups_[mode]);
    statistics_[mode].assign(all.begin() + static_cast<std::ptrdiff_t>(skip), all.end());
    flowio_.at(mode)->close();
  }
  mpich_->close();
}

void WholeWrites::report(Report& report, const Fields& fields) const {
  const double bytes = static_cast<double>(mesh_.file_bytes());
  const double mpich = median(seconds_.at("mpich"));
  report.line(Fields(fields)
                  .add("stage", "total")
                  .add("impl", "mpich")
                  .add("seconds", mpich)
                  .add("MiBps", bytes / 1048576.0 / mpich));
  for (const std::string& mode : modes_) {
    const double seconds = median(seconds_.at(mode));
    const std::vector<flowio::OperationStatistics>& writes = statistics_.at(mode);
    std::vector<double> exchange;
    std::int64_t in = 0, out = 0, compressed = 0;
    for (const flowio::OperationStatistics& write : writes) {
      exchange.push_back(slowest_rank(stage_seconds(write, "exchange")));
      in += write.compression.data_bytes_in;
      out += write.compression.data_bytes_out;
      compressed += write.compression.decisions.compressed;
    }
    in = sum_over_ranks(in);
    out = sum_over_ranks(out);
    compressed = sum_over_ranks(compressed);
    report.line(Fields(fields)
                    .add("stage", "total")
                    .add("impl", "flowio")
                    .add("mode", mode)
                    .add("seconds", seconds)
                    .add("MiBps", bytes / 1048576.0 / seconds)
                    .add("ratio", mpich / seconds)
                    .add("exchange_stage_s", exchange.empty() ? 0.0 : median(exchange))
                    .add("wire", in > 0 ? static_cast<double>(out) / static_cast<double>(in) : 1.0)
                    .add("compressed", writes.empty() ? 0.0
                                                      : static_cast<double>(compressed) /
                                                            static_cast<double>(writes.size())));
  }
}

std::vector<std::string> WholeWrites::paths() const {
  std::vector<std::string> paths;
  for (const ScratchFile& file : paths_) paths.push_back(file.path());
  return paths;
}

}  // namespace bench::compress
