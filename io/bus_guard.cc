#include "io/bus_guard.h"

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <mutex>
#include <string>

#include "flowio/error.h"
#include "io/file_descriptor.h"

namespace flowio::io {
namespace {

// Where a SIGBUS on this thread jumps to, while a guard runs. Volatile so
// that the compiler keeps the stores around the copy (memcpy is known not
// to read it); initial-exec so that the handler reads it without any
// allocation of thread-local storage.
thread_local sigjmp_buf* volatile guard_target __attribute__((tls_model("initial-exec"))) = nullptr;

struct sigaction previous_action;

void on_bus_error(int signal, siginfo_t* info, void* context) {
  if (sigjmp_buf* target = guard_target) siglongjmp(*target, 1);
  // Not ours. Returning re-executes the faulting instruction, which
  // raises the signal again: for the default action (and for "ignore",
  // which cannot ignore a fault) put the default back first.
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    previous_action.sa_sigaction(signal, info, context);
  } else if (previous_action.sa_handler == SIG_DFL || previous_action.sa_handler == SIG_IGN) {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGBUS, &fallback, nullptr);
  } else {
    previous_action.sa_handler(signal);
  }
}

void install_handler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous_action);
  });
}

}  // namespace

bool copy_catching_bus_errors(void (*copy)(void* context), void* context) {
  install_handler();
  sigjmp_buf target;
  // The signal mask is not saved (that is a system call, as much as the
  // small copies guarded here cost): the handler runs with only SIGBUS
  // added to the mask (sa_mask is empty), so after the jump out of it,
  // unblocking SIGBUS restores the mask. It was not blocked before: a
  // fault with SIGBUS blocked ends the process instead of reaching a
  // handler.
  if (sigsetjmp(target, 0) != 0) {
    guard_target = nullptr;
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
    return false;
  }
  guard_target = &target;
  copy(context);
  guard_target = nullptr;
  return true;
}

void throw_bus_error(const char* what, int fd) {
  throw IoError(ErrorCode::io,
                std::string(what) + " through a mapping of " + describe_fd(fd) +
                    ": a page could not be brought in (SIGBUS: a device error, or the file was "
                    "truncated meanwhile)",
                EIO);
}

}  // namespace flowio::io
