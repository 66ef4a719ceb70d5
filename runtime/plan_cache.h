// PlanCache: a file's compiled collective plans, kept for reuse.
//
// A time-stepping code repeats the same collective call every step. Each
// process announces, with its access summary, a key of its access (the
// view, its stream range, the direction and the settings generation); a
// call whose keys on every process equal those of a kept plan reruns that
// plan, skipping realm calc and metadata transfer. Every process sees the
// same keys and consults and fills its cache in call order
// (CallOrderGate), with the same eviction rule, so all reach the same
// decision without a message.
//
// Bounded by a number of plans (hint flowio_plan_cache, default 4; 0
// disables it) and by plan size: a plan larger than `largest_plan_bytes` of
// some process's data pieces is not kept — decided from the gathered
// summaries, the same everywhere. Dropped whole when the view, hints or
// file size change (File calls clear()).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>

#include "runtime/collective_plan.h"

namespace flowio::runtime {

// Not thread safe: used at a step that operations pass one at a time.
class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity = 4) : capacity_(capacity) {}

  // The combined key of a call: every process's announced key, in rank
  // order.
  static std::uint64_t combine(std::span<const std::uint64_t> keys);

  // The plan kept under `key`, made most recently used, or null.
  std::shared_ptr<CollectivePlan> find(std::uint64_t key);
  // Keeps `plan` under `key`, evicting the least recently used plan when
  // full. The plan may still be compiling: operations that reuse it start
  // their data phase after the one compiling it (the scheduler orders
  // them), by when it is complete.
  void insert(std::uint64_t key, std::shared_ptr<CollectivePlan> plan);
  void clear();
  void set_capacity(std::size_t capacity);
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t key;
    std::shared_ptr<CollectivePlan> plan;
  };
  std::size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace flowio::runtime
