// flowio::ObjectSet: which parts of a file a group of processes share.
//
// The file views of a group of processes cut a file into objects (Logan and
// Dickens, "Improving I/O Performance through the Dynamic Remapping of
// Object Sets"): an object is a maximal run of bytes held by the same set
// of views. An object held by one process is private: no other process can
// read or write it through its view, so accesses to it never conflict. An
// object held by several is shared. The set tells an application where its
// data is shared and with whom (to place halo exchanges, or to see that a
// decomposition has no overlap), and tells atomic mode which accesses need
// a lock.
//
//   flowio::ObjectSet objects = flowio::ObjectSet::gather(
//       MPI_COMM_WORLD, 0, MPI_FLOAT, my_tile, 0, image_bytes);
//   for (const flowio::FileObject& shared : objects.shared_with_others(rank))
//     ...  // bytes [shared.begin, shared.end) are also read by shared.ranks
//
// Cost: gathering sends each process's flattened filetype (a few words for
// a subarray, whatever its number of rows), not its pieces; building takes
// O(N log P) for N pieces of P processes, and about 52 bytes per object
// (measured for 10^6 objects by bench/object_set). Queries cost O(log n + r)
// through a balanced interval tree.
//
// Threads: a built ObjectSet is immutable; its queries may run on any
// number of threads. It describes the views it was built from: rebuild it
// after set_view.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace flowio {

// One object: the bytes [begin, end) of the file and the ranks (in the
// communicator given to gather) whose views hold them, ascending.
struct FileObject {
  MPI_Offset begin = 0;
  MPI_Offset end = 0;
  std::vector<int> ranks;

  bool shared() const { return ranks.size() > 1; }
  friend bool operator==(const FileObject&, const FileObject&) = default;
};

class ObjectSet {
 public:
  // Collective over `comm`: every process gives its view, as File::set_view
  // takes it (displacement in bytes, etype, filetype), and the same file
  // range [begin, end); the objects of that range are built on every
  // process. Throws UsageError on every process when any process's view is
  // invalid or the ranges differ; MpiError when MPI fails.
  static ObjectSet gather(MPI_Comm comm, MPI_Offset displacement, MPI_Datatype etype,
                          MPI_Datatype filetype, MPI_Offset begin, MPI_Offset end);

  // Collective over `comm`: the objects of the whole views, without end.
  // Views repeat their filetypes, so past some offset all of them together
  // repeat with a period (the least common multiple of the filetypes'
  // extents); the set holds the objects up to the end of the first full
  // period, end(), and period() says how bytes past it repeat: byte x >=
  // end() is shared exactly as byte end() - period() + (x - end()) %
  // period() is. touches_shared answers for any bytes. When that range
  // would hold more than `piece_budget` pieces of all views together
  // (extents with a huge least common multiple; the set's memory is about
  // 52 bytes per piece at most), the set covers what the budget allows,
  // period() is 0, and touches_shared is conservative (true) past end().
  // Throws as the range form does.
  static ObjectSet gather(MPI_Comm comm, MPI_Offset displacement, MPI_Datatype etype,
                          MPI_Datatype filetype, std::int64_t piece_budget = std::int64_t{1} << 22);

  // An empty set (no objects).
  ObjectSet();
  ~ObjectSet();
  ObjectSet(ObjectSet&&) noexcept;
  ObjectSet& operator=(ObjectSet&&) noexcept;
  // Copies share the (immutable) objects.
  ObjectSet(const ObjectSet&);
  ObjectSet& operator=(const ObjectSet&);

  // The range the set describes.
  MPI_Offset begin() const;
  MPI_Offset end() const;
  // For a set of whole views, the period that repeats past end(); else 0.
  MPI_Offset period() const;

  // Objects are numbered 0 .. size() - 1 in file order.
  std::size_t size() const;
  FileObject object(std::size_t index) const;
  std::size_t shared_count() const;

  // The objects sharing a byte with [begin, end), in file order.
  std::vector<FileObject> overlapping(MPI_Offset begin, MPI_Offset end) const;

  // The shared objects `rank`'s view holds, in file order: where its data
  // is also some other process's, and (in FileObject::ranks) whose.
  std::vector<FileObject> shared_with_others(int rank) const;

  // Whether some byte of [begin, end) lies in a shared object, or outside
  // the range the set describes (about which it knows nothing; past end()
  // a set of whole views answers through its period). An access for which
  // this is false cannot conflict with another process's.
  bool touches_shared(MPI_Offset begin, MPI_Offset end) const;

  // Bytes the set holds in memory.
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  explicit ObjectSet(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace flowio
