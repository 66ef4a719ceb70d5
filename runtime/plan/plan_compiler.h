// The plan compiler: the steps that turn the gathered access summaries of
// a collective call into a CollectivePlan (collective_plan.h). Every
// process runs them on the same summaries and reaches the same decisions
// without further messages, except for the clients' access descriptions
// that aggregators receive in between (the metadata stage).
//
//   decide_two_phase  gather the data (two-phase I/O) or let every process
//                     access the file itself;
//   plan_realms_step  the realm calc: the realm layout, this process's
//                     aggregator slot, the clients it will hear from;
//   plan_items_step   once the clients' accesses are known: this process's
//                     messages to aggregators, its windows with their
//                     pieces, the Alltoallw rounds.
//
// The steps pass injection points part way (core/injection_point.h):
// "collective.plan_realms" once the layout is made, "collective.plan_items"
// once this process's messages (or the rounds) are listed, so that a test
// can make the plan's making itself fail with part of the plan built.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "runtime/core/access.h"
#include "runtime/core/realm_policy.h"
#include "runtime/plan/collective_plan.h"
#include "runtime/plan/collective_settings.h"

namespace flowio::runtime {

// Whether one process's access alone calls for two-phase I/O under
// automatic buffering: many pieces, small on average (a single piece is one
// request however small; large pieces gain nothing from being gathered).
bool needs_gathering(const core::AccessSummary& summary, const CollectiveSettings& settings);

// The two-phase decision, the same on every process: by the hints, or
// under automatic buffering, whether any process's access needs gathering.
bool decide_two_phase(std::span<const core::AccessSummary> summaries,
                      const CollectiveSettings& settings);

// The realm calc. `persistent_unit` is the file's stripe unit of persistent
// realms (set by the first operation that uses them). Fills plan.layout,
// plan.slot and plan.clients (ranks whose access meets this process's
// realm; their accesses come with the metadata).
void plan_realms_step(const CollectiveSettings& settings,
                      std::span<const core::AccessSummary> summaries, int rank,
                      std::optional<std::int64_t>& persistent_unit, CollectivePlan& plan);

// Builds the items, windows and rounds from the layout, this process's
// access and the clients' accesses (plan.clients[i].access set).
void plan_items_step(const CollectiveSettings& settings, const core::Access& mine, int ranks,
                     CollectivePlan& plan);

}  // namespace flowio::runtime
