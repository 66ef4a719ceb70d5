// flowio::ObjectFile: reading an object file written by remap_file or an
// ObjectFileWriter (remap.h). Consumer c's data is one contiguous section
// of the file, in the order of c's view's stream, so reading all of it is
// one request (one pread, or one io_uring read) wherever its view's pieces
// lay in the source file.
//
//   flowio::ObjectFile objects = flowio::ObjectFile::open(comm, "image.obj");
//   objects.read(rank, 0, tile.data(), tile.size(), MPI_FLOAT);
//   objects.close();
//
// Threads: like flowio::File, one thread at a time per ObjectFile; the
// Futures it returns may be waited on from any thread.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "flowio/file.h"
#include "flowio/future.h"
#include "flowio/hints.h"

namespace flowio {

class ObjectFile {
 public:
  // Collective over `comm` (the consumers, or any group): opens the object
  // file read-only and reads its index. Throws IoError when the file cannot
  // be opened, UsageError(invalid_argument) on every process when it is not
  // an object file.
  static ObjectFile open(MPI_Comm comm, const std::string& path, const Hints& hints = {});

  ObjectFile();
  ~ObjectFile();
  ObjectFile(ObjectFile&&) noexcept;
  ObjectFile& operator=(ObjectFile&&) noexcept;
  ObjectFile(const ObjectFile&) = delete;
  ObjectFile& operator=(const ObjectFile&) = delete;

  // Consumers the file holds a section for (consumer c was rank c of the
  // group that gathered the ConsumerViews).
  std::size_t consumers() const;
  // Bytes of consumer c's section: the stream bytes it asked for that lie
  // in the source file.
  MPI_Offset section_bytes(std::size_t consumer) const;
  // Where consumer c's section starts in the file (a multiple of 4096), for
  // readers other than this class (plain MPI-IO, a mapping).
  MPI_Offset section_offset(std::size_t consumer) const;
  // The stream bytes consumer c asked for (ConsumerView::bytes).
  MPI_Offset requested_bytes(std::size_t consumer) const;
  // Size of the source file the sections were taken from.
  MPI_Offset source_bytes() const;

  // Independent, nonblocking: reads `count` copies of `datatype` into
  // `buffer` from consumer c's data, starting `position` bytes into it (0
  // for the start of the consumer's view range): one contiguous read. The
  // Future's value is the bytes read, fewer than asked where the section
  // ends (as a read of the source through the view ends at end of file);
  // memory past them is left untouched. `buffer` is borrowed until the
  // Future is ready. Throws UsageError for a consumer out of range, a
  // negative position or count, or an invalid datatype.
  Future<std::size_t> iread(std::size_t consumer, MPI_Offset position, void* buffer,
                            MPI_Count count, MPI_Datatype datatype);
  // Blocking form: what iread(...).get() returns, read through the blocking
  // File::read_at where the request lies in the section.
  std::size_t read(std::size_t consumer, MPI_Offset position, void* buffer, MPI_Count count,
                   MPI_Datatype datatype);

  // Collective: waits for this process's reads and closes the file.
  void close();

  // The underlying file (opened read-only, default view), for statistics
  // and hints.
  const File& file() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flowio
