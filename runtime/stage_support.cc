#include "runtime/stage_support.h"

#include <algorithm>

#include "exchange/stream_pack.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/converted_transfer.h"
#include "runtime/core/injection_point.h"
#include "runtime/inline_graph_runner.h"
#include "runtime/message_tags.h"

namespace flowio::runtime {

int data_tag(const CollectiveOperation& op, std::int64_t window) {
  return message_tag(MessageKind::data, op.sequence, window);
}

void pack_for_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                   char* destination) {
  if (op.request.conversion) {
    op.request.conversion->pack(from, bytes, destination);
  } else {
    exchange::pack_stream(op.request.memory, from, bytes, destination);
  }
}

void unpack_from_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                      const char* source) {
  if (op.request.conversion) {
    op.request.conversion->unpack(from, bytes, source);
  } else {
    exchange::unpack_stream(op.request.memory, from, bytes, source);
  }
}

bool anyone_failed_early(const CollectiveOperation& op) {
  return std::any_of(op.announcements.begin(), op.announcements.end(),
                     [](const Announcement& a) { return a.failed_early != 0; });
}

bool begin_compression(CollectiveOperation& op) {
  if (op.request.settings->compression.mode == exchange::CompressionMode::off) return false;
  if (!op.compression) {
    op.compression_rule = op.context.compression_rule(op.request.settings->compression);
    op.compression.emplace(*op.compression_rule);
  }
  return true;
}

void after_atomic_lease(CollectiveOperation& op, std::function<void()> then) {
  if (!op.atomic_pending.valid()) {
    then();
    return;
  }
  if (dynamic_cast<InlineGraphRunner*>(op.runner) != nullptr) {
    op.guarded([&] { op.atomic_lease = op.atomic_pending.get(); });
    then();
    return;
  }
  op.atomic_pending.then([&op, then = std::move(then)](Future<sync::Lease> held) {
    op.guarded([&] { op.atomic_lease = held.get(); });
    then();
  });
}

void leave_item(CollectiveOperation& op) { op.item_done(); }

void enter_stage(CollectiveOperation& op, const char* point) {
  // The stage's name in error messages: the point's, without the layer.
  constexpr std::size_t kLayerPrefix = sizeof("collective.") - 1;
  op.guarded([point] { core::injection_point(point); }, point + kLayerPrefix);
}

}  // namespace flowio::runtime
