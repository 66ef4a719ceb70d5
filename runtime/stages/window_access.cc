#include "runtime/stages/window_access.h"

#include <algorithm>
#include <span>
#include <vector>

#include "io/window_io.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/aggregator_conversion.h"

namespace flowio::runtime {
namespace {

// The window's pieces with their memory in `buffer`, in a list kept by the
// calling thread (it only grows: a window's list is rebuilt for every run,
// since the buffer is new each time). `unit` > 1: every piece converted in
// that unit (write_pieces).
std::span<io::WindowPiece> window_pieces(const WindowPlan& plan, const ByteBuffer& buffer,
                                         std::int32_t unit = 0) {
  thread_local std::vector<io::WindowPiece> pieces;
  if (pieces.size() < plan.pieces.size()) pieces.resize(plan.pieces.size());
  char* const base = buffer.data();
  // Units are powers of two: the mask keeps a division out of a loop over
  // up to a million pieces.
  const std::int64_t phase_mask = unit > 1 ? unit - 1 : 0;
  for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
    const WindowPiecePlan& piece = plan.pieces[i];
    pieces[i] = io::WindowPiece{piece.offset, piece.length, base + piece.at, unit,
                                static_cast<std::int32_t>(piece.at & phase_mask)};
  }
  return {pieces.data(), plan.pieces.size()};
}

// A write's pieces, those that this aggregator converts
// (aggregator_conversion.h) marked with their unit and how far into its
// unit each begins: its client's part begins on a unit boundary.
std::span<io::WindowPiece> write_pieces(Operation& op, const WindowPlan& plan,
                                        const ByteBuffer& buffer) {
  const Moving& moving = op.phase<Moving>();
  thread_local std::vector<std::int32_t> units;
  units.clear();
  bool any = false;
  // Whether every part is converted in the same unit and begins on a
  // multiple of it in the buffer.
  bool uniform = true;
  for (const WindowPlan::Part& part : plan.parts) {
    units.push_back(aggregator_unit(moving.announcements, op.request(),
                                    moving.plan->clients[part.client].rank, part.from, part.bytes));
    any = any || units.back() > 1;
    uniform = uniform && units.back() == units.front() &&
              (units.front() <= 1 || part.at % units.front() == 0);
  }
  // The usual case (every client writes doubles, say): a piece's phase is
  // its place in the buffer, found without searching for its part, which
  // cost as much as a tenth of converting 64-byte pieces.
  if (!any || uniform) return window_pieces(plan, buffer, any ? units.front() : 0);
  const std::span<io::WindowPiece> pieces = window_pieces(plan, buffer);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::int64_t at = plan.pieces[i].at;
    // The parts lie one after another in the buffer.
    const auto after = std::upper_bound(
        plan.parts.begin(), plan.parts.end(), at,
        [](std::int64_t position, const WindowPlan::Part& part) { return position < part.at; });
    const std::size_t p = static_cast<std::size_t>(after - plan.parts.begin()) - 1;
    const std::int32_t unit = units[p];
    if (unit <= 1) continue;
    io::WindowPiece& piece = pieces[i];
    piece.reversed_unit = unit;
    piece.unit_phase = static_cast<std::int32_t>((at - plan.parts[p].at) % unit);
  }
  return pieces;
}

void record_window_io(Operation& op, const WindowPlan& plan, std::int64_t begin,
                      const io::WindowIoResult& result) {
  switch (result.method) {
    case io::WindowMethod::none:
      break;
    case io::WindowMethod::contiguous:
      op.recorder().add_method(Method::contiguous);
      break;
    case io::WindowMethod::sieve:
      op.recorder().add_method(Method::sieve);
      break;
    case io::WindowMethod::mapped:
      op.recorder().add_method(Method::mapped);
      break;
    case io::WindowMethod::vectored:
      op.recorder().add_method(Method::vectored);
      break;
  }
  op.recorder().record(Stage::io, begin, plan.window.index, "", result.file_bytes, 0,
                       result.requests);
}

// Sieving and staging go through a buffer kept by each thread that does
// window I/O (the I/O thread, the callers), which only grows: allocating
// and zero-filling one per window would cost as much as the copies.
std::vector<char>& thread_staging() {
  thread_local std::vector<char> staging;
  return staging;
}

}  // namespace

void write_window(Operation& op, std::size_t w) {
  Moving& moving = op.phase<Moving>();
  const WindowPlan& plan = moving.plan->windows[w];
  WindowRun& run = moving.window_runs[w];
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  // The operation fails anyway when this process or a client of the
  // window failed: the file keeps what it had there.
  if (op.failed() || run.client_failed || run.buffer.data() == nullptr) return;
  op.guarded(
      [&] {
        result = io::write_window(
            op.file().backend(), op.file().file().get(), write_pieces(op, plan, run.buffer),
            op.request().settings->window_io, thread_staging(), &op.file().sieve_lock());
      },
      "window_write");
  record_window_io(op, plan, begin, result);
}

void read_window(Operation& op, std::size_t w) {
  Moving& moving = op.phase<Moving>();
  const WindowPlan& plan = moving.plan->windows[w];
  WindowRun& run = moving.window_runs[w];
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  run.before_end.clear();
  // An aggregator that failed reads nothing and sends its clients empty
  // parts.
  if (op.failed() || run.buffer.data() == nullptr) {
    run.before_end.assign(plan.parts.size(), 0);
    return;
  }
  for (const WindowPlan::Part& part : plan.parts) run.before_end.push_back(part.bytes);
  op.guarded(
      [&] {
        result = io::read_window(op.file().backend(), op.file().file().get(),
                                 window_pieces(plan, run.buffer), op.request().settings->window_io,
                                 thread_staging());
        // Each client's part is in file order: what lies past end of file is
        // its tail, which is not sent, so that the client's memory there is
        // left as it was (as an independent read leaves it).
        if (result.bytes_read < plan.total) {
          const std::int64_t end = std::min(plan.window.end, result.data_end);
          for (std::size_t p = 0; p < plan.parts.size(); ++p) {
            const core::Access& access = moving.plan->clients[plan.parts[p].client].access;
            run.before_end[p] = std::clamp<std::int64_t>(
                access.bytes_before(end) - access.bytes_before(plan.window.begin), 0,
                plan.parts[p].bytes);
          }
        }
      },
      "window_read");
  if (op.failed()) run.before_end.assign(plan.parts.size(), 0);
  record_window_io(op, plan, begin, result);
}

}  // namespace flowio::runtime
