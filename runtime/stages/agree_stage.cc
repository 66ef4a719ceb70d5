// Agree: every process learns whether the operation failed anywhere, and
// if so the error of the lowest failing rank (outcome_agreement.h), so that
// every process's future completes alike.
#include <cassert>
#include <vector>

#include "flowio/error.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {
namespace {

const char* operation_name(const Operation& op) {
  return op.request().writing ? "collective write" : "collective read";
}

}  // namespace

void agree_stage(Operation& op, std::size_t, Next next) {
  Agreeing& agreeing = op.phase<Agreeing>();
  assert(agreeing.gather != GatherOutcome::settled && "a settled call completes leaving control");
  agreeing.begin_ns = now_ns();
  enter_stage(op, "collective.agree");
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        requests = agreeing.agreement.post(op.file().comm(), op.tag(MessageKind::outcome),
                                           op.file().rank(), op.file().ranks(), op.failure(),
                                           op.failed_stage());
      },
      nullptr);
  op.executor().wait_for(std::move(requests), [&op, next = std::move(next)](
                                                  int code, std::span<const MPI_Status>) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)), nullptr);
    }
    std::vector<MPI_Request> replies;
    op.guarded([&] { replies = op.phase<Agreeing>().agreement.reply(); }, nullptr);
    op.executor().wait_for(std::move(replies), [&op, next](int code, std::span<const MPI_Status>) {
      Agreeing& agreeing = op.phase<Agreeing>();
      if (code != MPI_SUCCESS) {
        op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)), nullptr);
      }
      agreeing.outcome = agreeing.agreement.outcome(operation_name(op));
      // Every process's part is done with the file: the atomic-mode lease
      // of two-phase I/O may go.
      agreeing.lease.release();
      op.recorder().record(Stage::agree, agreeing.begin_ns);
      next();
    });
  });
}

}  // namespace flowio::runtime
