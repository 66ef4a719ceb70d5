#include "api/mpiio/file_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "flowio/error.h"

namespace flowio::mpiio {
namespace {

void set_lock(int fd, short type) {
  struct flock region {};
  region.l_type = type;
  region.l_whence = SEEK_SET;
  region.l_start = 0;
  region.l_len = 0;  // to the end of the file, however far it grows
  while (::fcntl(fd, F_SETLKW, &region) != 0) {
    if (errno != EINTR) throw_errno(errno, "fcntl(F_SETLKW) for atomic mode");
  }
}

}  // namespace

FileLock::FileLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw_errno(errno, "open " + path + " for atomic-mode locks");
}

// Closing the descriptor drops every lock this process holds on the file;
// the layer closes it only when no access is in flight.
FileLock::~FileLock() { ::close(fd_); }

void FileLock::lock(bool writing) { set_lock(fd_, writing ? F_WRLCK : F_RDLCK); }

void FileLock::unlock() { set_lock(fd_, F_UNLCK); }

}  // namespace flowio::mpiio
