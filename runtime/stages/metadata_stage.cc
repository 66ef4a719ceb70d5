// Metadata transfer: clients describe their accesses to the aggregators
// whose realms they meet (a compiled plan only).
#include <vector>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

// A process that failed already posts nothing: its notice in the plan
// check takes the place of its descriptions, and its own receives are
// made there.
void metadata_stage(Operation& op, std::size_t, Next next) {
  Planning& planning = op.phase<Planning>();
  if (planning.origin != PlanOrigin::compiled) {
    next();
    return;
  }
  enter_stage(op, "collective.metadata");
  if (op.failed()) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const CollectivePlan& plan = *planning.plan;
        std::vector<int> client_ranks;
        std::vector<std::int64_t> client_words;
        for (const CollectiveClient& client : plan.clients) {
          client_ranks.push_back(client.rank);
          client_words.push_back(
              planning.summaries[static_cast<std::size_t>(client.rank)].metadata_words);
        }
        planning.view_words = exchange::encode_view_access(op.request().access);
        const bool framed = begin_compression(op, planning.compression_rule, planning.compression);
        requests = planning.metadata.post(
            op.file().comm(), op.tag(MessageKind::metadata), op.request().access,
            planning.view_words, *plan.layout, op.request().settings->aggregator_ranks, plan.slot,
            client_ranks, client_words, framed ? planning.compression.get() : nullptr,
            planning.metadata_compression);
        planning.descriptions_posted = true;
      },
      "metadata");
  op.executor().wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                  int code, std::span<const MPI_Status> statuses) {
    Planning& planning = op.phase<Planning>();
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("metadata exchange", code)), "metadata");
    } else if (planning.descriptions_posted) {
      planning.metadata.received(statuses);
    }
    op.recorder().record(Stage::metadata, begin, -1, "", 0, planning.metadata.messages());
    next();
  });
}

}  // namespace flowio::runtime
