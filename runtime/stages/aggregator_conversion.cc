#include "runtime/stages/aggregator_conversion.h"

#include "runtime/stages/collective_request.h"

namespace flowio::runtime {

std::int32_t reversed_unit_to_announce(const CollectiveRequest& request) {
  if (!request.writing || !request.conversion || request.settings->alltoallw) return 0;
  return static_cast<std::int32_t>(request.conversion->reversed_unit());
}

std::int32_t aggregator_unit(std::span<const Announcement> announcements,
                             const CollectiveRequest& request, int client_rank, std::int64_t from,
                             std::int64_t bytes) {
  const std::int32_t unit = announcements[static_cast<std::size_t>(client_rank)].reversed_unit;
  if (unit <= 1 || request.settings->alltoallw) return 0;
  return from % unit == 0 && bytes % unit == 0 ? unit : 0;
}

}  // namespace flowio::runtime
