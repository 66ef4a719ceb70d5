// PlanCache: a file's compiled collective plans, kept for reuse.
//
// A time-stepping code repeats the same collective call every step. Each
// process announces, with its access summary, a key of its access (the
// view, its stream range, the direction and the settings generation); a
// call whose keys on every process equal those of a kept plan reruns that
// plan, skipping realm calc and metadata transfer. Every process sees the
// same keys and consults and fills its cache in call order
// (CallOrderGate), with the same eviction rule, so all reach the same
// decision without a message. Nothing here allocates once the capacity is
// set, so a failed allocation can never leave one process's cache unlike
// the others'.
//
// Bounded by a number of plans (hint flowio_plan_cache, default 4; 0
// disables it) and by plan size: a plan larger than `largest_plan_bytes` of
// some process's data pieces is not kept — decided from the gathered
// summaries, the same everywhere. Dropped whole when the view, hints or
// file size change (File calls clear()), and when a plan could not be made
// on some process (note_failures()).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/collective_plan.h"

namespace flowio::runtime {

// Not thread safe: used at a step that operations pass one at a time.
class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity = 4) { set_capacity(capacity); }

  // The combined key of a call: every process's announced key, in rank
  // order; mix() adds one key at a time (no allocation), from kNoKeys.
  static constexpr std::uint64_t kNoKeys = 14695981039346656037ull;
  static std::uint64_t mix(std::uint64_t combined, std::uint64_t key) noexcept;
  static std::uint64_t combine(std::span<const std::uint64_t> keys) noexcept;

  // The plan kept under `key`, made most recently used, or nullopt. A kept
  // plan may be null: its compiling could not even begin on this process
  // (an allocation failed), which the caller treats as a plan that failed.
  std::optional<std::shared_ptr<CollectivePlan>> find(std::uint64_t key) noexcept;
  // Keeps `plan` (possibly null, see find) under `key`, evicting the least
  // recently used plan when full. The plan may still be compiling:
  // operations that reuse it start their data phase after the one
  // compiling it (the scheduler orders them), by when it is complete, or
  // known everywhere to have failed (CollectivePlan::complete).
  void insert(std::uint64_t key, std::shared_ptr<CollectivePlan> plan) noexcept;
  void clear() noexcept;
  void set_capacity(std::size_t capacity);
  std::size_t size() const { return entries_.size(); }

  // `failures`: how many plans of this file failed to compile, as the
  // processes knew when they announced the call being planned (the
  // largest count announced, the same on every process). When it grew
  // since the last call, every plan is dropped: one kept since may be the
  // one that failed, and which plans failed is not known alike everywhere
  // yet (a plan's check may still be under way on some process).
  void note_failures(std::int64_t failures) noexcept;

 private:
  struct Entry {
    std::uint64_t key;
    std::shared_ptr<CollectivePlan> plan;
    std::uint64_t used;  // larger: used more recently
  };
  std::size_t capacity_ = 0;
  std::vector<Entry> entries_;  // room for capacity_ reserved
  std::uint64_t uses_ = 0;
  std::int64_t failures_ = 0;
};

}  // namespace flowio::runtime
