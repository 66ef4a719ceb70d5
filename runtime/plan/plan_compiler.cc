#include "runtime/plan/plan_compiler.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/core/injection_point.h"

namespace flowio::runtime {
namespace {

// Merges consecutive runs of pieces, each sorted by offset, into one
// sorted list: O(n log runs).
void merge_sorted_runs(std::vector<WindowPiecePlan>& pieces, std::vector<std::size_t> run_ends) {
  const auto by_offset = [](const WindowPiecePlan& a, const WindowPiecePlan& b) {
    return a.offset < b.offset;
  };
  while (run_ends.size() > 1) {
    std::vector<std::size_t> merged;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < run_ends.size(); i += 2) {
      if (i + 1 < run_ends.size()) {
        std::inplace_merge(pieces.begin() + static_cast<std::ptrdiff_t>(begin),
                           pieces.begin() + static_cast<std::ptrdiff_t>(run_ends[i]),
                           pieces.begin() + static_cast<std::ptrdiff_t>(run_ends[i + 1]),
                           by_offset);
        merged.push_back(run_ends[i + 1]);
      } else {
        merged.push_back(run_ends[i]);
      }
      begin = merged.back();
    }
    run_ends.swap(merged);
  }
}

// A window with every client's part and the pieces of all of them.
WindowPlan plan_window(const core::Window& window, const std::vector<CollectiveClient>& clients) {
  WindowPlan item;
  item.window = window;
  std::vector<std::size_t> run_ends;
  for (std::size_t c = 0; c < clients.size(); ++c) {
    const core::Access& access = clients[c].access;
    const std::int64_t from = access.bytes_before(window.begin);
    const std::int64_t bytes = access.bytes_before(window.end) - from;
    if (bytes == 0) continue;
    item.parts.push_back(WindowPlan::Part{c, from, bytes, item.total});
    std::int64_t at = item.total;
    access.for_each_piece(window.begin, window.end, [&](core::Piece piece) {
      item.pieces.push_back(WindowPiecePlan{piece.offset, piece.length, at});
      at += piece.length;
    });
    run_ends.push_back(item.pieces.size());
    item.total += bytes;
  }
  merge_sorted_runs(item.pieces, std::move(run_ends));
  return item;
}

// Calls visit(window, from, bytes) for each window of the layout that
// holds data of `access`, in file order: its bytes [from, from + bytes) of
// the access's data stream. Costs the windows with data, not the extent.
template <typename Visit>
void for_each_data_window(const core::RealmLayout& layout, const core::Access& access,
                          Visit visit) {
  std::int64_t x = access.file_begin();
  while (x < access.file_end()) {
    const core::Window window = layout.window_at(x);
    const std::int64_t from = access.bytes_before(window.begin);
    const std::int64_t to = access.bytes_before(window.end);
    if (to > from) visit(window, from, to - from);
    x = access.next_data_at_or_after(window.end);
  }
}

// This process's messages, in the order every aggregator works: the k-th
// window of each aggregator's realm before the (k+1)-th of any (then by
// slot). In file order instead, every client fed the first realm's
// aggregator while the others, their windows posted, waited: with realms
// of whole ranges the aggregators wrote one after another, not side by
// side, each idle for half the call. Every process orders by the
// same key, and each aggregator's windows come in increasing index, so the
// earliest unfinished window always has its messages in flight: no cycle
// of waits.
void plan_client_items(const CollectiveSettings& settings, const core::Access& mine,
                       CollectivePlan& plan) {
  std::vector<int> slots;
  for_each_data_window(
      *plan.layout, mine, [&](const core::Window& window, std::int64_t from, std::int64_t bytes) {
        plan.client_items.push_back(
            ClientItemPlan{settings.aggregator_ranks[static_cast<std::size_t>(window.slot)],
                           window.index, from, bytes});
        slots.push_back(window.slot);
      });
  std::vector<std::size_t> order(plan.client_items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto by_round = [&](std::size_t a, std::size_t b) {
    const std::int64_t wa = plan.client_items[a].window;
    const std::int64_t wb = plan.client_items[b].window;
    return wa != wb ? wa < wb : slots[a] < slots[b];
  };
  if (std::is_sorted(order.begin(), order.end(), by_round)) return;
  std::sort(order.begin(), order.end(), by_round);
  std::vector<ClientItemPlan> sorted;
  sorted.reserve(order.size());
  for (const std::size_t i : order) sorted.push_back(plan.client_items[i]);
  plan.client_items.swap(sorted);
}

void plan_windows(CollectivePlan& plan) {
  if (plan.slot < 0 || plan.clients.empty()) return;
  const core::RealmLayout& layout = *plan.layout;
  std::int64_t x = layout.begin();
  while (const std::optional<core::Window> window = layout.window_of_slot_from(plan.slot, x)) {
    WindowPlan item = plan_window(*window, plan.clients);
    if (item.total > 0) plan.windows.push_back(std::move(item));
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (const CollectiveClient& client : plan.clients) {
      const std::int64_t data = client.access.next_data_at_or_after(window->end);
      if (data < client.access.file_end()) next = std::min(next, data);
    }
    if (next == std::numeric_limits<std::int64_t>::max()) break;
    x = next;
  }
}

// This process's rounds: those where it has shares (as a client) and
// those of its windows with data (as an aggregator, plan_windows), merged
// by index. Which rounds have data anywhere is agreed after the plan
// check (CollectivePlan::live_rounds).
void plan_rounds(const CollectiveSettings& settings, const core::Access& mine, int ranks,
                 CollectivePlan& plan) {
  plan.alltoallw = true;
  struct Found {
    std::int64_t index;
    int slot;
    RoundPlan::Share share;
  };
  std::vector<Found> found;
  for_each_data_window(
      *plan.layout, mine, [&](const core::Window& window, std::int64_t from, std::int64_t bytes) {
        const int peer = settings.aggregator_ranks[static_cast<std::size_t>(window.slot)];
        found.push_back(Found{window.index, window.slot, RoundPlan::Share{peer, from, bytes}});
      });
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.index != b.index ? a.index < b.index : a.slot < b.slot;
  });
  core::injection_point("collective.plan_items");
  plan_windows(plan);
  const auto rank_count = static_cast<std::size_t>(ranks);
  plan.no_counts.assign(rank_count, 0);
  plan.no_displacements.assign(rank_count, 0);
  // Windows come in increasing index (file order within one slot).
  std::size_t f = 0;
  std::size_t w = 0;
  while (f < found.size() || w < plan.windows.size()) {
    const std::int64_t index =
        std::min(f < found.size() ? found[f].index : std::numeric_limits<std::int64_t>::max(),
                 w < plan.windows.size() ? plan.windows[w].window.index
                                         : std::numeric_limits<std::int64_t>::max());
    RoundPlan& round = plan.rounds.emplace_back();
    round.index = index;
    for (; f < found.size() && found[f].index == index; ++f) {
      round.shares.push_back(found[f].share);
      round.share_bytes += found[f].share.bytes;
    }
    if (w < plan.windows.size() && plan.windows[w].window.index == index) round.window = w++;
  }
}

}  // namespace

bool needs_gathering(const core::AccessSummary& summary, const CollectiveSettings& settings) {
  return summary.pieces > 1 && summary.bytes < settings.direct_threshold * summary.pieces;
}

bool decide_two_phase(std::span<const core::AccessSummary> summaries,
                      const CollectiveSettings& settings) {
  using Buffering = CollectiveSettings::Buffering;
  if (std::none_of(summaries.begin(), summaries.end(),
                   [](const core::AccessSummary& s) { return s.bytes > 0; })) {
    return false;
  }
  if (settings.buffering != Buffering::automatic) return settings.buffering == Buffering::enable;
  return std::any_of(summaries.begin(), summaries.end(),
                     [&](const core::AccessSummary& s) { return needs_gathering(s, settings); });
}

void plan_realms_step(const CollectiveSettings& settings,
                      std::span<const core::AccessSummary> summaries, int rank,
                      std::optional<std::int64_t>& persistent_unit, CollectivePlan& plan) {
  plan.two_phase = true;
  plan.layout = core::plan_realms(settings.realms, summaries, persistent_unit);
  const auto mine =
      std::find(settings.aggregator_ranks.begin(), settings.aggregator_ranks.end(), rank);
  if (mine != settings.aggregator_ranks.end()) {
    plan.slot = static_cast<int>(mine - settings.aggregator_ranks.begin());
  }
  core::injection_point("collective.plan_realms");
  if (plan.slot < 0) return;
  for (int client = 0; client < static_cast<int>(summaries.size()); ++client) {
    const core::AccessSummary& s = summaries[static_cast<std::size_t>(client)];
    if (s.bytes > 0 && plan.layout->realm_meets(plan.slot, s.file_begin, s.file_end)) {
      plan.clients.push_back(CollectiveClient{client, core::Access()});
    }
  }
}

void plan_items_step(const CollectiveSettings& settings, const core::Access& mine, int ranks,
                     CollectivePlan& plan) {
  if (settings.alltoallw) {
    plan_rounds(settings, mine, ranks, plan);
  } else {
    plan_client_items(settings, mine, plan);
    core::injection_point("collective.plan_items");
    plan_windows(plan);
  }
}

std::int64_t CollectivePlan::footprint() const {
  std::int64_t bytes = sizeof(CollectivePlan);
  bytes += static_cast<std::int64_t>(client_items.size() * sizeof(ClientItemPlan));
  for (const WindowPlan& window : windows) {
    bytes += static_cast<std::int64_t>(sizeof(WindowPlan) +
                                       window.parts.size() * sizeof(WindowPlan::Part) +
                                       window.pieces.size() * sizeof(WindowPiecePlan));
  }
  for (const RoundPlan& round : rounds) {
    bytes += static_cast<std::int64_t>(sizeof(RoundPlan) +
                                       round.shares.size() * sizeof(RoundPlan::Share));
  }
  bytes += static_cast<std::int64_t>(live_rounds.size() * sizeof(std::int64_t));
  bytes += static_cast<std::int64_t>(no_counts.size() * sizeof(MPI_Count) +
                                     no_displacements.size() * sizeof(MPI_Aint));
  for (const CollectiveClient& client : clients) {
    bytes += static_cast<std::int64_t>(sizeof(CollectiveClient) +
                                       client.access.pieces().size() * sizeof(core::Piece));
  }
  return bytes;
}

}  // namespace flowio::runtime
