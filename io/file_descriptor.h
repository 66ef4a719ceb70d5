// FileDescriptor: a move-only owner of one POSIX file descriptor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>

namespace flowio::io {

// Owns one open file descriptor and closes it when destroyed. Every failing
// system call throws IoError with its errno and the file's path in the
// message; using a handle that holds no descriptor (default-constructed,
// moved from or closed) throws UsageError(file_closed).
//
// Thread safety: get(), sync(), size(), truncate() and preallocate() may be
// called from several threads at once (they only pass the descriptor to the
// kernel); open-handle changes (close, move, destruction) must not race
// with any other use.
class FileDescriptor {
 public:
  // Holds no descriptor.
  FileDescriptor() noexcept = default;

  // Opens `path` with open(2) `flags` (O_CLOEXEC is always added) and
  // `mode` for a file it creates. Throws IoError: ENOENT gives
  // ErrorCode::no_such_file, EEXIST file_exists, EACCES access_denied.
  static FileDescriptor open(const std::string& path, int flags, mode_t mode = 0644);

  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  // Closes the descriptor; a close error is not reported (see the
  // definition). Call close() to learn about it.
  ~FileDescriptor();

  // The descriptor, or -1 when none is held. Still owned by this handle.
  int get() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  // The path given to open(), for messages.
  const std::string& path() const noexcept { return path_; }
  // Whether the descriptor was opened with read access (O_RDONLY or
  // O_RDWR): methods that read the file before writing it (data sieving, a
  // shared writable mapping) need it.
  bool readable() const noexcept { return readable_; }

  // Closes the descriptor. The handle holds none afterwards, even when this
  // throws (Linux releases the descriptor whatever close returns, so it is
  // never retried). Throws IoError when close reports an error, e.g. EIO
  // from writing back on a network file system. Does nothing when no
  // descriptor is held.
  void close();

  // fsync: the file's data and metadata reach stable storage.
  void sync();
  // fdatasync: the file's data (and the metadata needed to read it, such as
  // its size) reach stable storage.
  void sync_data() const;

  // The file's size in bytes (fstat).
  std::int64_t size() const;

  // Sets the file's size (ftruncate): cuts it or extends it with zeros.
  // Throws UsageError(invalid_argument) for a negative size.
  void truncate(std::int64_t size);

  // MPI_File_preallocate: makes sure storage is allocated for the first
  // `size` bytes, extending the file when it is smaller; never shrinks it.
  // Where the file system cannot allocate ahead (fallocate gives
  // EOPNOTSUPP), a smaller file is only extended to `size` with ftruncate.
  // Throws UsageError(invalid_argument) for a negative size, IoError with
  // no_space when the storage is not there.
  void preallocate(std::int64_t size);

 private:
  FileDescriptor(int fd, std::string path, bool readable) noexcept
      : fd_(fd), path_(std::move(path)), readable_(readable) {}

  void require_open(const char* operation) const;

  int fd_ = -1;
  std::string path_;
  bool readable_ = false;
};

// How error messages name the open file `fd`, which calls that take a bare
// descriptor (the storage backends, mappings, locks) are given: its path as
// the kernel knows it (/proc/self/fd; absolute, links resolved), then the
// descriptor, as in "/scratch/out.dat (fd 7)". Just "fd 7" where the
// kernel gives no path. Makes a system call: for building messages, not
// for every call.
std::string describe_fd(int fd);

}  // namespace flowio::io
