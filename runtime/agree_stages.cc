#include "runtime/agree_stages.h"

#include <vector>

#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/executor.h"
#include "runtime/message_tags.h"
#include "runtime/stage_support.h"

namespace flowio::runtime {
namespace {

// Durable writes (hint flowio_durable): a process that wrote makes the
// file's data durable before it agrees, so the future completes only once
// the checkpoint is on storage, and the sync overlaps whatever the
// program does meanwhile.
void persist_stage(CollectiveOperation& op, std::size_t, Next next) {
  enter_stage(op, "collective.persist");
  const bool wrote =
      op.accessed_directly || (op.plan && op.plan->two_phase && (!op.plan->windows.empty()));
  if (!op.request.writing || !op.request.settings->durable || !wrote || op.failure()) {
    next();
    return;
  }
  op.executor->run_io([&op, next = std::move(next)] {
    const std::int64_t begin = now_ns();
    op.guarded([&] { op.context.file().sync_data(); }, "persist");
    op.recorder.record(Stage::io, begin, -1, " fdatasync", 0, 0, 1);
    next();
  });
}

void agree_stage(CollectiveOperation& op, std::size_t, Next next) {
  op.agree_begin_ns = now_ns();
  enter_stage(op, "collective.agree");
  std::vector<MPI_Request> requests;
  const int tag = message_tag(MessageKind::outcome, op.sequence);
  op.guarded([&] {
    requests = op.agreement.post(op.context.comm(), tag, op.context.rank(), op.context.ranks(),
                                 op.failure(), op.failed_stage());
  });
  op.executor->wait_for(std::move(requests), [&op, next = std::move(next)](
                                                 int code, std::span<const MPI_Status>) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)));
    }
    std::vector<MPI_Request> replies;
    op.guarded([&] { replies = op.agreement.reply(); });
    op.executor->wait_for(std::move(replies), [&op, next](int code, std::span<const MPI_Status>) {
      if (code != MPI_SUCCESS) {
        op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)));
      }
      op.outcome =
          op.agreement.outcome(op.request.writing ? "collective write" : "collective read");
      // Every process's part is done with the file: the atomic-mode lease
      // of two-phase I/O may go.
      op.atomic_lease.release();
      op.recorder.record(Stage::agree, op.agree_begin_ns);
      next();
    });
  });
}

void leave_agree(CollectiveOperation& op) { op.complete(); }

}  // namespace

const Pipeline& agree_pipeline() {
  static const Pipeline kAgree{"agree", {persist_stage, agree_stage}, false, leave_agree};
  return kAgree;
}

}  // namespace flowio::runtime
