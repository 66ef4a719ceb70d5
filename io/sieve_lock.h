// SieveLock: keeps a read-modify-write of a file extent from losing other
// writes of that extent.
//
// Data sieving writes a window's holes back as it read them, so a write of
// a hole's bytes by anyone else between the read and the write would be
// lost, and MPI promises that concurrent writes of different bytes both
// land. A sieving writer therefore holds this lock over its extent from
// the read to the write, and so does every other write of the file that
// may run meanwhile (an independent write made while a collective write is
// pending on its process, api/file_impl.h). Other processes are kept out by an
// open file description lock on the extent (fcntl F_OFD_SETLKW); threads of
// this process by a mutex, since locks taken through one open file
// description do not exclude one another. (The lock lies at offsets far
// past the file's data, 2^62 + the extent, so that it never meets a lock
// of the file's bytes themselves, such as atomic mode's.) The lock is held only around
// local I/O, never while waiting for another process's messages, so a
// waiter waits at most for one read and one write.
//
// Where the file system has no such locks, `lock` says so (an empty Held):
// the sieving writer then writes its pieces one by one instead, which needs
// no lock, and other writers go ahead unlocked.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace flowio::io {

class SieveLock {
 public:
  // `fd` is a descriptor of the file open for writing; borrowed.
  explicit SieveLock(int fd) : fd_(fd) {}
  SieveLock(const SieveLock&) = delete;
  SieveLock& operator=(const SieveLock&) = delete;

  // A held extent; released when destroyed.
  class Held {
   public:
    Held() = default;
    Held(Held&& other) noexcept;
    Held& operator=(Held&& other) noexcept;
    ~Held() { release(); }
    explicit operator bool() const { return owner_ != nullptr; }
    void release();

   private:
    friend class SieveLock;
    Held(SieveLock* owner, std::int64_t begin, std::int64_t end)
        : owner_(owner), begin_(begin), end_(end) {}
    SieveLock* owner_ = nullptr;
    std::int64_t begin_ = 0;
    std::int64_t end_ = 0;
  };

  // Waits until no other holder, in this process or another, holds bytes
  // of [begin, end), and holds them. Returns an empty Held where the file
  // system has no locks (then every later call does too). Throws IoError
  // when locking fails otherwise.
  Held lock(std::int64_t begin, std::int64_t end);

  // Whether locks have worked so far (false once the file system refused
  // one).
  bool available() const;

 private:
  void unlock(std::int64_t begin, std::int64_t end);

  const int fd_;
  // One holder per process at a time. Not a bare mutex: a Held may be
  // released on another thread than the one that took it.
  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool held_ = false;
  bool available_ = true;
};

}  // namespace flowio::io
