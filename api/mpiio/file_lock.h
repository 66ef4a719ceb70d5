// FileLock: POSIX record locks over a whole file, which make each access of
// a file in atomic mode (MPI_File_set_atomicity) indivisible with respect
// to the other processes' accesses: writers exclude everyone, readers
// exclude writers.
//
// The lock covers the whole file rather than the access's byte range, so
// atomic-mode accesses of different processes never run at the same time,
// even where they do not overlap: correct, and slower than range locks.
// Locks belong to the process (fcntl), so the thread that releases a lock
// need not be the one that took it.
#pragma once

#include <string>

namespace flowio::mpiio {

class FileLock {
 public:
  // Opens its own descriptor of `path` (read-write where permitted, which
  // exclusive locks need). Throws IoError when it cannot.
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Blocks until this process holds the file exclusively (writing) or
  // shared (reading). Throws IoError on failure.
  void lock(bool writing);
  void unlock();

 private:
  int fd_ = -1;
};

}  // namespace flowio::mpiio
