// Dynamic remapping (Logan and Dickens, "Improving I/O Performance through
// the Dynamic Remapping of Object Sets"): a file written under one set of
// views (a producer's) is translated into an object file laid out for the
// views of another group of processes (the consumers), in which each
// consumer's data is contiguous, in the order of its view's stream. A
// consumer then reads its whole view with one contiguous request
// (flowio::ObjectFile, object_file.h) instead of one per piece. Bytes that
// several consumers read (shared objects) are stored once per consumer:
// the object file trades storage for reads.
//
// Three steps:
//   1. The consumers describe their views, collectively:
//        flowio::ConsumerViews views = flowio::ConsumerViews::gather(
//            comm, {0, MPI_BYTE, my_tile, 0, tile_bytes});
//        if (rank == 0) views.save("image.views");
//   2. A translator translates a file, collectively, on any number of
//      processes (tools/flowio_remap does it from the command line):
//        flowio::remap_file(comm, "image.dat", views, "image.obj");
//      or the producer writes the object file while it writes its data
//      (ObjectFileWriter below), without reading the file back.
//   3. Each consumer reads its data: flowio::ObjectFile (object_file.h).
//
// Reading consumer c's section gives exactly the bytes that reading the
// source file through c's view would give, including a short read where
// the view runs past the source's end.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "flowio/hints.h"

namespace flowio {

// What one consumer will read: `bytes` bytes of its view's stream starting
// at view offset `offset` (in etypes, as File::read_at counts), the view as
// File::set_view takes it. For a read of `count` copies of `datatype`,
// bytes is count times the datatype's size.
struct ConsumerView {
  MPI_Offset displacement = 0;
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype filetype = MPI_BYTE;
  MPI_Offset offset = 0;
  MPI_Offset bytes = 0;
};

// The views of a group of consumers, consumer c being rank c of the group
// that gathered them. Kept flattened (a few words per view, whatever its
// number of pieces); the datatypes given may be freed afterwards.
// Immutable; copies share the description; any thread may read it.
class ConsumerViews {
 public:
  // Collective over `comm`: each process gives its own view. Throws
  // UsageError on every process when any view is invalid (see
  // File::set_view) or any offset or byte count is negative.
  static ConsumerViews gather(MPI_Comm comm, const ConsumerView& mine);
  // The description of consumers whose views this process knows (consumer
  // c reads views[c]): what a translator or a tool that knows the
  // consumers' layout builds without them. Local. Throws UsageError as
  // gather() does.
  static ConsumerViews describe(const std::vector<ConsumerView>& views);
  // Reads a description written by save(). Local. Throws IoError when the
  // file cannot be read, UsageError(invalid_argument) when it is not a
  // description.
  static ConsumerViews load(const std::string& path);

  // No consumers.
  ConsumerViews();
  ~ConsumerViews();
  ConsumerViews(const ConsumerViews&);
  ConsumerViews& operator=(const ConsumerViews&);
  ConsumerViews(ConsumerViews&&) noexcept;
  ConsumerViews& operator=(ConsumerViews&&) noexcept;

  // Writes the description to `path` (replacing it). Local: call it on one
  // process. Throws IoError when the file cannot be written.
  void save(const std::string& path) const;

  std::size_t size() const;
  // The stream bytes consumer c asked for.
  MPI_Offset bytes(std::size_t consumer) const;

 private:
  struct Impl;
  // flowio's translator and reader (api/consumer_views_access.h).
  friend struct ConsumerViewsAccess;
  explicit ConsumerViews(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// What a translation did, the same on every process of the translator.
struct RemapReport {
  double seconds = 0;                // the slowest process's time
  MPI_Offset source_bytes = 0;       // size of the source file
  MPI_Offset bytes_read = 0;         // source bytes read, all processes
  MPI_Offset bytes_written = 0;      // object file bytes written (index and data)
  MPI_Offset object_file_bytes = 0;  // size of the object file
  MPI_Offset index_bytes = 0;        // the index at its start
};

// Collective over `comm` (the translator, any number of processes, not
// necessarily the consumers): translates the existing file `source` into
// the object file `target` (created or replaced) for `consumers`. Each
// process reads windows of the source with collective reads
// (File::iread_at_all, the next window read while the last is routed) and
// writes contiguous stretches of the object file, one per consumer holding
// data in the window, straight from the window (vectored writes: the data
// is copied once on the way in and once on the way out, as by cp). Hints
// go to both files; `flowio_remap_window` (bytes, default 16 MiB) sets the
// window, and so the memory: two windows per process. Throws on every
// process as
// flowio::File's calls do (IoError for a missing source, for instance).
RemapReport remap_file(MPI_Comm comm, const std::string& source, const ConsumerViews& consumers,
                       const std::string& target, const Hints& hints = {});

// The producer-side translator: the producer places its data in the object
// file as it writes it, with no second pass over the source file. Each
// process gives what it writes the way File::write_at does (its view, an
// offset and a typed buffer); the bytes the consumers read land in their
// sections. To keep the ordinary file as well, write it with File as
// usual; the two writes may run at once.
class ObjectFileWriter {
 public:
  // Collective over `comm`: creates (or replaces) the object file `target`
  // for `consumers` reading a source of `source_size` bytes (bytes past it
  // are what the consumers' reads would not get) and writes its index.
  // Bytes no process writes read as zeros, as holes in the source would.
  static ObjectFileWriter create(MPI_Comm comm, const std::string& target,
                                 const ConsumerViews& consumers, MPI_Offset source_size,
                                 const Hints& hints = {});

  ObjectFileWriter();
  ~ObjectFileWriter();
  ObjectFileWriter(ObjectFileWriter&&) noexcept;
  ObjectFileWriter& operator=(ObjectFileWriter&&) noexcept;
  ObjectFileWriter(const ObjectFileWriter&) = delete;
  ObjectFileWriter& operator=(const ObjectFileWriter&) = delete;

  // Independent, blocking: places the data that File::write_at(offset,
  // buffer, count, datatype) would write under the view (displacement,
  // etype, filetype). Returns the bytes placed in the object file (a byte
  // read by k consumers counts k times). Throws UsageError for a bad view
  // or arguments, IoError when a write fails.
  std::size_t write(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                    MPI_Offset offset, const void* buffer, MPI_Count count, MPI_Datatype datatype);

  // Collective: waits for the writes and closes the object file.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flowio
