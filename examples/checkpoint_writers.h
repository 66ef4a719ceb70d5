// CheckpointWriter: how one implementation writes a rank's checkpoint
// buffer into a slot of its file, blocking or in the background; and the
// two implementations the demo compares, flowio and MPICH's MPI-IO.
//
// Slot s starts at view offset s * checkpoint_values (etypes of the view,
// each rank counting only its own data), so at byte s * checkpoint_bytes.
// Every call is collective over the file's communicator; one thread per
// rank calls, and every call throws unless every byte of the rank's
// checkpoint went.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "checkpoint_buffer.h"
#include "flowio/flowio.h"

namespace insitu {

class CheckpointWriter {
 public:
  virtual ~CheckpointWriter() = default;
  // Writes `checkpoint` into `slot` and returns once it is written (on
  // storage, for a durable writer).
  virtual void write(const CheckpointBuffer& checkpoint, std::int64_t slot) = 0;
  // Starts writing `checkpoint` into `slot`; `checkpoint` is borrowed
  // until finish() returns.
  virtual void start(const CheckpointBuffer& checkpoint, std::int64_t slot) = 0;
  // Called between stencil sweeps while a started write proceeds.
  virtual void poll() = 0;
  // Waits for the started write (and makes it durable, for a durable writer).
  virtual void finish() = 0;
};

// flowio's collective writes (write_at_all, iwrite_at_all). Durability is
// the file's: with the hint flowio_durable the sync is part of each write.
class FlowioCheckpointWriter : public CheckpointWriter {
 public:
  // `file` is borrowed for the writer's life; its view counts doubles.
  FlowioCheckpointWriter(flowio::File& file, MPI_Count checkpoint_values)
      : file_(file), values_(checkpoint_values) {}
  void write(const CheckpointBuffer& checkpoint, std::int64_t slot) override;
  void start(const CheckpointBuffer& checkpoint, std::int64_t slot) override;
  void poll() override {}  // flowio's progress engine carries the write
  void finish() override;

 private:
  flowio::File& file_;
  MPI_Count values_;
  flowio::Future<std::size_t> written_;
};

// MPICH's collective writes (MPI_File_write_at_all_c,
// MPI_File_iwrite_at_all_c). MPICH advances nonblocking I/O only inside
// MPI calls, so poll() calls MPI_Test. MPI-IO has no nonblocking sync: a
// durable writer calls MPI_File_sync after the write completes.
class MpichCheckpointWriter : public CheckpointWriter {
 public:
  // `file` is borrowed for the writer's life; its view counts doubles.
  MpichCheckpointWriter(MPI_File file, MPI_Count checkpoint_values, bool durable)
      : file_(file), values_(checkpoint_values), durable_(durable) {}
  void write(const CheckpointBuffer& checkpoint, std::int64_t slot) override;
  void start(const CheckpointBuffer& checkpoint, std::int64_t slot) override;
  void poll() override;
  void finish() override;

 private:
  void check_written(const MPI_Status& status, const char* call) const;

  MPI_File file_;
  MPI_Count values_;
  bool durable_;
  // MPI_Test frees a completed request (leaving MPI_REQUEST_NULL), so the
  // status is kept from whichever call completes it.
  MPI_Request request_ = MPI_REQUEST_NULL;
  MPI_Status status_{};
};

}  // namespace insitu
