#include "runtime/stages/stage_support.h"

#include <algorithm>

#include "exchange/stream_pack.h"
#include "runtime/core/injection_point.h"
#include "runtime/plan/plan_compiler.h"

namespace flowio::runtime {

void pack_for_file(const Operation& op, std::int64_t from, std::int64_t bytes, char* destination) {
  const CollectiveRequest& request = op.request();
  if (request.conversion) {
    request.conversion->pack(from, bytes, destination);
  } else {
    exchange::pack_stream(request.memory, from, bytes, destination);
  }
}

void unpack_from_file(const Operation& op, std::int64_t from, std::int64_t bytes,
                      const char* source) {
  const CollectiveRequest& request = op.request();
  if (request.conversion) {
    request.conversion->unpack(from, bytes, source);
  } else {
    exchange::unpack_stream(request.memory, from, bytes, source);
  }
}

bool may_go_direct(const CollectiveRequest& request, const core::AccessSummary& summary) {
  using Buffering = CollectiveSettings::Buffering;
  const Buffering buffering = request.settings->buffering;
  return request.own_part_only || buffering == Buffering::disable ||
         (buffering == Buffering::automatic && !needs_gathering(summary, *request.settings));
}

bool anyone_failed_early(std::span<const Announcement> announcements) {
  return std::any_of(announcements.begin(), announcements.end(),
                     [](const Announcement& a) { return a.failed_early != 0; });
}

bool begin_compression(const Operation& op, std::shared_ptr<exchange::CompressionRule>& rule,
                       std::unique_ptr<exchange::CompressStage>& stage) {
  const exchange::CompressionSettings& settings = op.request().settings->compression;
  if (settings.mode == exchange::CompressionMode::off) return false;
  if (!stage) {
    rule = op.file().compression_rule(settings);
    stage = std::make_unique<exchange::CompressStage>(*rule);
  }
  return true;
}

void enter_stage(Operation& op, const char* point) {
  // The stage's name in error messages: the point's, without the layer.
  constexpr std::size_t kLayerPrefix = sizeof("collective.") - 1;
  op.guarded([point] { core::injection_point(point); }, point + kLayerPrefix);
}

}  // namespace flowio::runtime
