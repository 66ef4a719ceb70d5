// File::set_hints and File::hints (the hints in force, defaults included).
#include <cstdint>
#include <set>
#include <string>

#include "api/file_impl.h"
#include "runtime/engine/collective_error.h"
#include "sync/lock_settings.h"

namespace flowio {

void File::set_hints(const Hints& hints) {
  Impl& file = impl();
  file.wait_idle();
  std::int64_t write_behind = 0;
  runtime::run_collectively(file.comm, "set_hints", [&] {
    Hints merged = file.hints;
    for (const auto& [key, value] : hints) merged[key] = value;
    check_hints(merged, file.ranks, file.file_realms.get());
    write_behind = write_behind_budget(merged);
  });
  require_same_write_behind(file.comm, write_behind > 0, "set_hints");
  file.merge_hints(hints);
  file.report_write_behind_failure();
}

namespace {

// The hints flowio acts on (hints.h). Others are ignored, as MPI says, and
// not reported as in force.
bool is_known_hint(const std::string& key) {
  static const std::set<std::string> known = {
      "cb_buffer_size",        "cb_nodes",
      "flowio_aggregators",    "flowio_buffers_in_flight",
      "flowio_compress",       "flowio_compress_min_bytes",
      "flowio_direct_io",      "flowio_direct_threshold",
      "flowio_durable",        "flowio_plan_cache",
      "flowio_ds_mapping",     "flowio_ds_threshold",
      "flowio_exchange",       "flowio_io_backend",
      "flowio_lock",           "flowio_lock_ranges",
      "flowio_mapped_io",      "flowio_realm_policy",
      "flowio_realm_stripe",   "flowio_write_behind",
      "ind_rd_buffer_size",    "ind_wr_buffer_size",
      "romio_cb_fr_type",      "romio_no_indep_rw",
      "romio_cb_fr_alignment", "romio_cb_pfr",
      "romio_cb_read",         "romio_cb_write",
      "romio_ds_read",         "romio_ds_write",
      "striping_unit",
  };
  return known.count(key) != 0;
}

}  // namespace

Hints File::hints() const {
  const Impl& file = impl();
  Hints in_force;
  for (const auto& [key, value] : file.hints) {
    if (is_known_hint(key)) in_force.emplace(key, value);
  }
  // The values collective operations would use now, defaults included.
  const auto writes =
      runtime::CollectiveSettings::from_hints(file.hints, file.ranks, true, file.file_realms.get());
  const auto reads = runtime::CollectiveSettings::from_hints(file.hints, file.ranks, false,
                                                             file.file_realms.get());
  auto buffering = [](runtime::CollectiveSettings::Buffering mode) {
    using Buffering = runtime::CollectiveSettings::Buffering;
    return mode == Buffering::enable    ? "enable"
           : mode == Buffering::disable ? "disable"
                                        : "automatic";
  };
  auto sieving = [](io::SieveMode mode) {
    return mode == io::SieveMode::enable    ? "enable"
           : mode == io::SieveMode::disable ? "disable"
                                            : "automatic";
  };
  in_force["cb_buffer_size"] = std::to_string(writes.realms.window_bytes);
  in_force["flowio_buffers_in_flight"] = std::to_string(writes.buffers_in_flight);
  in_force["cb_nodes"] = std::to_string(writes.aggregator_ranks.size());
  in_force["flowio_realm_policy"] = core::realm_policy_name(writes.realms.policy);
  in_force["flowio_exchange"] = writes.alltoallw ? "alltoallw" : "point_to_point";
  in_force["flowio_compress"] = exchange::to_string(writes.compression.mode);
  in_force["flowio_compress_min_bytes"] = std::to_string(writes.compression.min_bytes);
  in_force["romio_cb_write"] = buffering(writes.buffering);
  in_force["romio_cb_read"] = buffering(reads.buffering);
  in_force["romio_ds_write"] = sieving(writes.window_io.sieve);
  in_force["romio_ds_read"] = sieving(reads.window_io.sieve);
  in_force["flowio_ds_threshold"] = std::to_string(writes.window_io.sieve_threshold);
  in_force["flowio_ds_mapping"] = sieving(writes.window_io.mapping);
  in_force["flowio_direct_threshold"] = std::to_string(writes.direct_threshold);
  in_force["flowio_durable"] = writes.durable ? "enable" : "disable";
  in_force["flowio_write_behind"] = std::to_string(file.write_behind.budget());
  in_force["flowio_plan_cache"] = std::to_string(writes.plans_kept);
  in_force["ind_wr_buffer_size"] = std::to_string(writes.window_io.independent_batch_bytes);
  in_force["ind_rd_buffer_size"] = std::to_string(reads.window_io.independent_batch_bytes);
  in_force["romio_no_indep_rw"] = writes.no_independent_accesses ? "true" : "false";
  in_force.try_emplace("flowio_direct_io", "disable");
  // The lock atomic mode uses (or would use, if turned on now).
  (file.atomic ? file.atomic->settings() : sync::LockSettings::from_hints(file.hints))
      .describe(in_force);
  return in_force;
}

}  // namespace flowio
