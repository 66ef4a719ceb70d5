// PlanCache: a file's compiled collective plans, kept for reuse.
//
// A time-stepping code repeats the same collective call every step. A call
// whose key equals that of a kept plan reruns that plan, skipping realm
// calc and metadata transfer. The key is the whole of what the plan
// depends on while plans are kept: the direction, this process's realm
// tiling (the same object until the file forgets its plans), and for every
// process where its access lies in its view's stream (first byte and
// length), which every process announces with its call; keys are compared
// in full, never by a hash. Every process sees the same keys and consults
// and fills its cache in call order (the realms stage), with the same
// eviction rule, so all reach the same decision without a message. Nothing
// here allocates once the capacity and the number of processes are set,
// so a failed allocation can never leave one process's cache unlike the
// others'.
//
// Bounded by a number of plans (hint flowio_plan_cache, default 4; 0
// disables it) and by plan size (the realms stage keeps no plan of more
// than a million pieces). Dropped whole when the view, hints or file size
// change (the file calls clear()), and when a plan could not be made on
// some process (note_failures()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/plan/collective_plan.h"

namespace flowio::runtime {

// One process's part of a call's key.
struct PlanKeyPart {
  std::int64_t stream_begin = 0;
  std::int64_t bytes = 0;
  bool operator==(const PlanKeyPart&) const = default;
};

// A call's key: `parts(rank)` gives each process's part.
template <typename Parts>
struct PlanKey {
  bool writing;
  const void* tiling;  // this process's realm tiling, or null
  Parts parts;
};

// Not thread safe: used at a step that operations pass one at a time.
class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity = 4) { set_capacity(capacity); }

  // Keys of `ranks` processes: the room for them, reserved now.
  void set_key_ranks(int ranks);
  void set_capacity(std::size_t capacity);

  // The plan kept under `key`, made most recently used, or nullopt. A kept
  // plan may be null: its compiling could not even begin on this process
  // (an allocation failed), which the caller treats as a plan that failed.
  template <typename Parts>
  std::optional<std::shared_ptr<CollectivePlan>> find(const PlanKey<Parts>& key) noexcept;
  // Keeps `plan` (possibly null, see find) under `key`, evicting the least
  // recently used plan when full. The plan may still be compiling:
  // operations that reuse it start their data phase after the one
  // compiling it (data phases start in call order), by when it is
  // complete, or known everywhere to have failed (CollectivePlan::complete).
  template <typename Parts>
  void insert(const PlanKey<Parts>& key, std::shared_ptr<CollectivePlan> plan) noexcept;
  void clear() noexcept;
  std::size_t size() const;

  // `failures`: how many plans of this file failed to compile, as the
  // processes knew when they announced the call being planned (the
  // largest count announced, the same on every process). When it grew
  // since the last call, every plan is dropped: one kept since may be the
  // one that failed, and which plans failed is not known alike everywhere
  // yet (a plan's check may still be under way on some process).
  void note_failures(std::int64_t failures) noexcept;

 private:
  struct Entry {
    bool kept = false;
    bool writing = false;
    const void* tiling = nullptr;
    std::vector<PlanKeyPart> parts;  // room for every process, reserved
    std::shared_ptr<CollectivePlan> plan;
    std::uint64_t used = 0;  // larger: used more recently
  };
  template <typename Parts>
  static bool matches(const Entry& entry, const PlanKey<Parts>& key) noexcept;
  void reserve_entries();

  std::size_t ranks_ = 1;
  std::vector<Entry> entries_;  // capacity entries, all with room
  std::uint64_t uses_ = 0;
  std::int64_t failures_ = 0;
};

template <typename Parts>
bool PlanCache::matches(const Entry& entry, const PlanKey<Parts>& key) noexcept {
  if (!entry.kept || entry.writing != key.writing || entry.tiling != key.tiling) return false;
  for (std::size_t rank = 0; rank < entry.parts.size(); ++rank) {
    if (!(entry.parts[rank] == key.parts(rank))) return false;
  }
  return true;
}

template <typename Parts>
std::optional<std::shared_ptr<CollectivePlan>> PlanCache::find(const PlanKey<Parts>& key) noexcept {
  for (Entry& entry : entries_) {
    if (matches(entry, key)) {
      entry.used = ++uses_;
      return entry.plan;
    }
  }
  return std::nullopt;
}

template <typename Parts>
void PlanCache::insert(const PlanKey<Parts>& key, std::shared_ptr<CollectivePlan> plan) noexcept {
  if (entries_.empty()) return;
  Entry* slot = &entries_.front();
  for (Entry& entry : entries_) {
    if (!entry.kept) {
      slot = &entry;
      break;
    }
    if (entry.used < slot->used) slot = &entry;
  }
  slot->kept = true;
  slot->writing = key.writing;
  slot->tiling = key.tiling;
  // Within the reserved room: no allocation.
  slot->parts.resize(ranks_);
  for (std::size_t rank = 0; rank < ranks_; ++rank) slot->parts[rank] = key.parts(rank);
  slot->plan = std::move(plan);
  slot->used = ++uses_;
}

}  // namespace flowio::runtime
