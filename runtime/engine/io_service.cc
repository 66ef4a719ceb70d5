#include "runtime/engine/io_service.h"

#include <cstdlib>
#include <cstring>

#include "io/uring_backend.h"

namespace flowio::runtime {
namespace {

// No ring where no file can use one: the environment forces POSIX I/O
// (io/storage_backend.h), so nothing would ever go through it.
std::unique_ptr<io::UringQueue> make_ring() {
  const char* forced = std::getenv("FLOWIO_IO_BACKEND");
  if (forced != nullptr && std::strcmp(forced, "posix") == 0) return nullptr;
  return io::UringQueue::create();
}

}  // namespace

IoService::IoService(Progress& progress)
    : progress_(progress), ring_(make_ring()), thread_([this] { run(); }) {
  if (ring_) {
    progress_.watch_descriptor(ring_->completion_fd(), [ring = ring_.get()] { ring->reap(); });
  }
}

IoService::~IoService() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (ring_) progress_.forget_descriptor(ring_->completion_fd());
}

void IoService::post(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.notify_one();
}

void IoService::run() {
  io::UringBackend::route_this_thread(ring_.get());
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

}  // namespace flowio::runtime
