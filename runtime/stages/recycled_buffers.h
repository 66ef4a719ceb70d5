// RecycledBuffers: byte buffers of several MiB that are kept after use and
// handed out again, so that their pages stay mapped from one use to the
// next.
//
// Why: a buffer of more than a few hundred KiB comes from mmap (glibc),
// and is unmapped or trimmed when freed; the next one takes a page fault
// per 4 KiB page, and the kernel zeroes each page before the data is
// written. For the conversion buffers of a data representation (a client
// item converted to external32 before it is sent, a chunk converted
// before it is written) that zeroing is a second pass over memory as long
// as the conversion: bench/checkpoint on 4 ranks wrote external32 in 0.43 s
// with fresh buffers against 0.23 s with pages kept, 0.22-0.26 s in native
// (6ba8c59:bench/README.md, "external32 against native").
//
// What is kept: up to `kept_bytes` bytes of buffers handed back (the
// oldest beyond that are freed). take() hands out the smallest kept buffer
// large enough, else a new one. Thread safety: every method may be called
// from any thread; a Lease is used by one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace flowio::runtime {

class RecycledBuffers {
 public:
  // Room for bytes whose contents are undefined, given back to its
  // RecycledBuffers (which must outlive it) when the lease ends.
  // Move-only; an empty lease holds nothing.
  class Lease {
   public:
    Lease() = default;
    ~Lease() { give_back(); }
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    char* data() const { return buffer_.get(); }
    explicit operator bool() const { return buffer_ != nullptr; }
    // Gives the buffer back now; the lease is empty afterwards.
    void give_back();

   private:
    friend class RecycledBuffers;
    Lease(RecycledBuffers* owner, std::unique_ptr<char[]> buffer, std::size_t capacity)
        : owner_(owner), buffer_(std::move(buffer)), capacity_(capacity) {}

    RecycledBuffers* owner_ = nullptr;
    std::unique_ptr<char[]> buffer_;
    std::size_t capacity_ = 0;
  };

  explicit RecycledBuffers(std::size_t kept_bytes) : kept_bytes_limit_(kept_bytes) {}
  RecycledBuffers(const RecycledBuffers&) = delete;
  RecycledBuffers& operator=(const RecycledBuffers&) = delete;

  // A buffer of at least `bytes` bytes. Throws std::bad_alloc.
  Lease take(std::size_t bytes);

  // Bytes of the buffers kept now (for tests).
  std::size_t kept_bytes() const;

 private:
  struct Kept {
    std::unique_ptr<char[]> buffer;
    std::size_t capacity;
  };
  void keep(std::unique_ptr<char[]> buffer, std::size_t capacity);

  const std::size_t kept_bytes_limit_;
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;  // oldest first
  std::size_t kept_bytes_ = 0;
};

// The process's buffers for data representation conversions: 64 MiB kept
// at most (four windows of the default cb_buffer_size).
RecycledBuffers& conversion_buffers();

}  // namespace flowio::runtime
