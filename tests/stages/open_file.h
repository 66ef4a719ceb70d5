// OpenFile: a stage harness's file opened as the API opens one, with the
// collective context that runs whole calls on it through the engine's
// runners (engine/collective_context.h), for the tests that run calls
// rather than single stages.
#pragma once

#include <fcntl.h>

#include <memory>
#include <string>

#include "io/file_descriptor.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "runtime/engine/collective_context.h"
#include "runtime/engine/engine.h"

namespace flowio::testing {

struct OpenFile {
  explicit OpenFile(const std::string& path)
      : fd(io::FileDescriptor::open(path, O_RDWR)),
        sieve_lock(fd.get()),
        backend(io::make_storage_backend(io::BackendKind::posix)),
        engine(runtime::Engine::acquire()),
        context(MPI_COMM_WORLD, fd, sieve_lock, *backend, *engine) {}

  io::FileDescriptor fd;
  io::SieveLock sieve_lock;
  std::unique_ptr<io::StorageBackend> backend;
  std::shared_ptr<runtime::Engine> engine;
  runtime::CollectiveContext context;
};

}  // namespace flowio::testing
