#include "runtime/stages/converted_transfer.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "io/view_transfer.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "runtime/stages/recycled_buffers.h"

namespace flowio::runtime {
namespace {

// The stream cut in chunks of whole file-stream bytes; the conversion
// handles elements that a chunk boundary splits.
struct Chunks {
  Chunks(std::int64_t total, std::int64_t limit)
      : total(total), size(std::max<std::int64_t>(1, std::min(total, limit))) {}
  std::int64_t count() const { return (total + size - 1) / size; }
  std::int64_t begin(std::int64_t k) const { return k * size; }
  std::int64_t length(std::int64_t k) const { return std::min(size, total - k * size); }

  std::int64_t total;
  std::int64_t size;
};

// Chunk-sized buffers, recycled (runtime/recycled_buffers.h): every byte
// is converted or read before use.
RecycledBuffers::Lease chunk_buffer(const Chunks& chunks) {
  return conversion_buffers().take(static_cast<std::size_t>(chunks.size));
}

// `length` bytes at `buffer`, as the memory of a view transfer.
class ByteMemory {
 public:
  core::MemoryLayout at(const char* buffer, std::int64_t length) const {
    return core::MemoryLayout{&bytes_, length, reinterpret_cast<std::int64_t>(buffer)};
  }

 private:
  core::FlatType bytes_{core::make_run(1), 0, 1};
};

// Whether this thread runs tasks of a oneTBB arena: it must not wait for
// workers then (they may all be waiting likewise).
bool on_worker_thread() {
  return tbb::this_task_arena::current_thread_index() != tbb::task_arena::not_initialized;
}

// Conversions run by the workers, each on a buffer (slot) of its own. The
// destructor waits for every conversion started, so the tasks never
// outlive the buffers, the conversion object or the memory they touch.
class WorkerConversions {
 public:
  WorkerConversions(tbb::task_arena& workers, int slots, const Chunks& chunks) : workers_(workers) {
    for (int i = 0; i < slots; ++i) slots_.push_back(Slot{chunk_buffer(chunks), false, nullptr});
  }
  WorkerConversions(const WorkerConversions&) = delete;
  WorkerConversions& operator=(const WorkerConversions&) = delete;
  ~WorkerConversions() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
  }

  int slots() const { return static_cast<int>(slots_.size()); }
  char* buffer(int slot) { return slots_[static_cast<std::size_t>(slot)].buffer.data(); }

  // Runs `convert` on a worker. The slot must be idle (wait() returned).
  void start(int slot, std::function<void()> convert) {
    {
      std::lock_guard lock(mutex_);
      slots_[static_cast<std::size_t>(slot)].busy = true;
      ++running_;
    }
    workers_.enqueue([this, slot, convert = std::move(convert)] {
      std::exception_ptr failure;
      try {
        convert();
      } catch (...) {
        failure = std::current_exception();
      }
      // The mutex publishes the converted bytes to the thread that waits
      // for the slot.
      std::lock_guard lock(mutex_);
      Slot& done = slots_[static_cast<std::size_t>(slot)];
      done.busy = false;
      if (failure && !done.failure) done.failure = failure;
      --running_;
      done_.notify_all();
    });
  }

  // Waits until the slot's conversion is done; rethrows its failure.
  void wait(int slot) {
    std::unique_lock lock(mutex_);
    Slot& waited = slots_[static_cast<std::size_t>(slot)];
    done_.wait(lock, [&waited] { return !waited.busy; });
    if (waited.failure) std::rethrow_exception(std::exchange(waited.failure, nullptr));
  }

  // Waits for every slot; rethrows the first failure found.
  void wait_all() {
    for (int slot = 0; slot < slots(); ++slot) wait(slot);
  }

 private:
  struct Slot {
    RecycledBuffers::Lease buffer;
    bool busy = false;
    std::exception_ptr failure;
  };

  tbb::task_arena& workers_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<Slot> slots_;
  int running_ = 0;
};

int slots_for(const Chunks& chunks) {
  return static_cast<int>(std::min<std::int64_t>(kConversionsInFlight, chunks.count()));
}

}  // namespace

std::int64_t write_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                             std::int64_t stream_position,
                             const exchange::StreamConversion& conversion, std::int64_t chunk_bytes,
                             tbb::task_arena& workers) {
  const Chunks chunks(conversion.file_bytes(), chunk_bytes);
  const ByteMemory memory;
  if (chunks.count() < 2 || on_worker_thread()) {
    const RecycledBuffers::Lease staging = chunk_buffer(chunks);
    for (std::int64_t k = 0; k < chunks.count(); ++k) {
      conversion.pack(chunks.begin(k), chunks.length(k), staging.data());
      io::write_to_view(backend, fd, view, stream_position + chunks.begin(k),
                        memory.at(staging.data(), chunks.length(k)));
    }
    return chunks.total;
  }
  WorkerConversions conversions(workers, slots_for(chunks), chunks);
  const int slots = conversions.slots();
  const auto convert = [&](std::int64_t k) {
    const int slot = static_cast<int>(k % slots);
    conversions.start(slot, [&conversion, &chunks, k, into = conversions.buffer(slot)] {
      conversion.pack(chunks.begin(k), chunks.length(k), into);
    });
  };
  for (std::int64_t k = 0; k < slots; ++k) convert(k);
  for (std::int64_t k = 0; k < chunks.count(); ++k) {
    const int slot = static_cast<int>(k % slots);
    conversions.wait(slot);
    io::write_to_view(backend, fd, view, stream_position + chunks.begin(k),
                      memory.at(conversions.buffer(slot), chunks.length(k)));
    if (k + slots < chunks.count()) convert(k + slots);
  }
  return chunks.total;
}

std::int64_t read_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, exchange::StreamConversion& conversion,
                            std::int64_t chunk_bytes, tbb::task_arena& workers) {
  const Chunks chunks(conversion.file_bytes(), chunk_bytes);
  const ByteMemory memory;
  std::int64_t found = 0;
  if (chunks.count() < 2 || on_worker_thread()) {
    const RecycledBuffers::Lease staging = chunk_buffer(chunks);
    for (std::int64_t k = 0; k < chunks.count(); ++k) {
      const std::int64_t got =
          io::read_from_view(backend, fd, view, stream_position + chunks.begin(k),
                             memory.at(staging.data(), chunks.length(k)));
      conversion.unpack(chunks.begin(k), got, staging.data());
      found += got;
      if (got < chunks.length(k)) break;  // end of file
    }
    return found;
  }
  WorkerConversions conversions(workers, slots_for(chunks), chunks);
  const int slots = conversions.slots();
  for (std::int64_t k = 0; k < chunks.count(); ++k) {
    const int slot = static_cast<int>(k % slots);
    conversions.wait(slot);  // chunk k - slots is in memory: the buffer is free
    char* buffer = conversions.buffer(slot);
    const std::int64_t got = io::read_from_view(
        backend, fd, view, stream_position + chunks.begin(k), memory.at(buffer, chunks.length(k)));
    conversions.start(slot, [&conversion, from = chunks.begin(k), got, buffer] {
      conversion.unpack(from, got, buffer);
    });
    found += got;
    if (got < chunks.length(k)) break;  // end of file
  }
  conversions.wait_all();
  return found;
}

}  // namespace flowio::runtime
