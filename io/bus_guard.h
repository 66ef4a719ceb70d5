// Catching SIGBUS around copies through a file mapping. When the kernel
// cannot bring a mapped page in (a device error, or the file truncated
// behind the mapping), the faulting instruction raises SIGBUS instead of a
// system call returning an error; inside a guard that becomes a return
// value, so that the failure can travel to the caller like any I/O error.
#pragma once

namespace flowio::io {

// Runs `copy(context)`. Returns true when it ran to the end, false when a
// SIGBUS raised on this thread interrupted it. The copy is left by
// siglongjmp: it must hold nothing that needs unwinding (plain loops of
// memcpy). A SIGBUS outside any guard goes to the handler installed before
// the first guard (or takes the default action and ends the process).
bool copy_catching_bus_errors(void (*copy)(void* context), void* context);

// Throws the IoError (EIO) of a copy that a SIGBUS interrupted: `what` was
// done through a mapping of the file `fd`.
[[noreturn]] void throw_bus_error(const char* what, int fd);

}  // namespace flowio::io
