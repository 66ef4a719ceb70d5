// Random call sequences run through flowio and through MPICH's MPI-IO, for
// the differential tests (differential_test.cc: independent calls;
// collective_differential_test.cc: collective calls mixed with independent
// ones).
//
// A case is everything a user can vary: the open mode (read-write,
// write-only, create, exclusive create, append, delete on close), the file
// state at open, a shared etype, each rank's random monotone filetype (the
// ranks' tiles interleave, each with its own holes), collective hints, and
// a sequence of steps on the open file: groups of reads or writes
// (collective or independent, blocking or several nonblocking in flight,
// at explicit offsets or through the file pointer, each with its own
// random memory type and count per rank), set_view, set_size (shrinking
// the file before a write, growing it back before a read), sync, and
// closing and reopening the file in another mode. Both implementations run
// the same steps on their own file, which starts from the same background
// bytes, and must end with byte-identical files, the same byte counts, file
// pointers and read buffers.
//
// ROMIO (MPICH 4.0.2) disagrees with MPI in places; the case leaves out
// what it gets wrong:
// - MPICH is given the data packed by MPI_Pack, as MPI_BYTE through the
//   same view, because ROMIO places data wrongly for some nested resized
//   memory types; MPI_Pack defines the memory type's order.
// - Reads never reach past end of file (the background reaches past every
//   access, and a shrunk file is grown back before a read): ROMIO reports
//   full counts for noncontiguous reads past end of file.
// - After a shrink, MPICH writes without data sieving or two-phase I/O:
//   ROMIO writes garbage into the holes of a sieved extent past end of
//   file, where MPI and POSIX say zeros.
// - romio_cb_pfr goes to flowio only (MPICH 4.0.2 hangs with it), and so
//   do ROMIO's realm datatype hint romio_cb_fr_type (read under
//   romio_cb_pfr only) and realms described by datatypes.
// - Every pointer-form call of MPICH is preceded by an absolute seek (its
//   read_all through the pointer left by a previous read_all can start
//   inside a hole of the filetype).
// - A case at scale (below) has MPICH write without two-phase I/O (its
//   collective buffer steps through the gigabytes between the ranks'
//   accesses, minutes per call), and its reads are checked against the
//   file's own bytes at the view's offsets (view_layout.h), not against
//   MPICH's reads: MPICH 4.0.2 returns bytes that are not in the file when
//   a filetype of extent past 2^34 is read at file offsets past 2^33.
//
// Now and then (CaseShape::scale_one_in) a case draws a view at scale:
// its filetype's extent passes 2^31 or 2^32 bytes (the ranks' tiles, then
// a gap of that size), or its size does (a vector of blocks of 1 to 32 KiB
// interleaved between the ranks: few pieces, since ROMIO lists every piece
// of a view). Its calls touch a few KiB at a time far into the view: the
// same copy of the filetype on every rank, or the same place of the data
// stream (across 2^31, across 2^32, across into the filetype's second
// copy). Such a file is sparse, tens of GiB long: its background is zeros
// (holes), it is opened only in modes that need no background written,
// and the two files are compared where either holds data
// (tests/support/sparse_file.h) rather than read whole.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/view_layout.h"

namespace flowio::testing {

int pick(std::mt19937_64& rng, int low, int high);
bool one_in(std::mt19937_64& rng, int n);

// A datatype owned by the test: derived types are freed with the handle,
// named ones never.
class TypeHandle {
 public:
  TypeHandle() = default;
  explicit TypeHandle(MPI_Datatype type) : type_(type) {}
  TypeHandle(TypeHandle&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  TypeHandle& operator=(TypeHandle&& other) noexcept {
    std::swap(type_, other.type_);
    return *this;
  }
  TypeHandle(const TypeHandle&) = delete;
  TypeHandle& operator=(const TypeHandle&) = delete;
  ~TypeHandle();

  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A buffer for `count` copies of a memory type, addressed from its origin,
// with every byte set to `fill` (so that bytes a read must not touch show).
struct TypedBuffer {
  std::vector<unsigned char> bytes;
  std::int64_t low = 0;  // origin = bytes.data() - low

  TypedBuffer(MPI_Datatype type, std::int64_t count, unsigned char fill);
  unsigned char* origin() { return bytes.data() - low; }
  const unsigned char* origin() const { return bytes.data() - low; }
};

// The open modes a case draws, as MPI names them.
enum class OpenMode {
  rdwr,
  create_rdwr,
  wronly,
  create_wronly,
  append_wronly,  // the file exists with part of the background; rank 0 appends the rest
  excl_wronly,    // the file does not exist; rank 0 writes the background after open
  excl_rdwr,
  rdwr_delete_on_close,
  rdonly,
};

struct OpenModeInfo {
  flowio::Mode flowio_mode;
  int mpi_mode;
  const char* name;
  bool readable;
  bool writable;
};
const OpenModeInfo& info(OpenMode mode);

// The hints of a case: all go to flowio; those ROMIO also knows go to MPICH.
struct CaseHints {
  flowio::Hints flowio;
  std::map<std::string, std::string> romio;
  // Where cb_buffer_size lies between its least and greatest value, on a
  // log scale; none: not given.
  std::optional<double> buffer_position;
  // Realms described to flowio by File::set_file_realms after each open
  // (describe_realms), drawn from this seed once the aggregator count is
  // known: one type for all aggregators (stripes) or one per aggregator (a
  // random partition of a random period). None: the hints' realms.
  struct RealmDraw {
    bool one_for_all = false;
    std::uint64_t seed = 0;
  };
  std::optional<RealmDraw> realms;

  std::string text() const;
};

// One call of this rank.
struct CaseCall {
  TypeHandle memory_type;
  MPI_Count count = 0;
  std::int64_t bytes = 0;           // data bytes, a whole number of etypes
  MPI_Offset offset = 0;            // where the access starts in the view, in etypes
  std::optional<TypedBuffer> data;  // what a write writes
  int sequence = 0;                 // index among all the case's operations
  bool collective = true;           // the same on every rank
  std::string text;
};

// Operations of one direction, called one after another; a nonblocking
// group has all of them in flight before any is waited for, so they touch
// disjoint parts of each rank's view.
struct Group {
  bool writing = true;
  bool through_pointer = false;  // write_all/write rather than the _at forms
  bool nonblocking = false;
  std::vector<CaseCall> operations;  // in call order
  std::vector<int> wait_order;       // nonblocking: the order of get(), per rank
};

struct Step {
  enum class Kind { group, set_view, set_size, sync, reopen };
  Kind kind = Kind::group;
  Group group;                     // group
  std::int64_t view_shift = 0;     // set_view: bytes added to the case's displacement
  long long size = 0;              // set_size
  OpenMode mode = OpenMode::rdwr;  // reopen
};

struct Case {
  std::int64_t etype_size = 1;
  TypeHandle etype;
  TypeHandle filetype;
  ViewLayout layout;  // where the filetype's data lies (the oracle of a sparse case's reads)
  std::int64_t displacement = 0;
  CaseHints hints;
  OpenMode first_mode = OpenMode::rdwr;
  long long appended_from = 0;  // append_wronly: background bytes present at open
  std::vector<Step> steps;
  int operation_count = 0;
  long long file_end = 0;  // background bytes: past every rank's accesses
  bool shrinks = false;    // a set_size step makes the file smaller
  bool sparse = false;     // a view at scale: zero background, sparse file
  std::string description;
};

// What the generator draws.
struct CaseShape {
  // Share of operations that are collective, in percent (the same draw on
  // every rank).
  int collective_percent = 100;
  // Largest data size of a random filetype tile.
  std::int64_t tile_bytes = 2048;
  // One case in this many draws a view at scale (see above); 0: none.
  int scale_one_in = 0;
};

// Plans a case. Decisions every rank must share (hints, etype, steps, call
// forms, open modes) come from `shared`; this rank's types, counts, offsets
// and data from `rng`. Collective over MPI_COMM_WORLD.
void make_case(std::mt19937_64& shared, std::mt19937_64& rng, std::uint64_t case_seed,
               const CaseShape& shape, Case& c);

// What one implementation returned, per operation (by sequence number),
// and the file as it was before the last close (rank 0 only).
struct CaseOutcome {
  std::vector<std::int64_t> bytes;
  std::vector<MPI_Offset> positions;  // file pointer after a pointer-form call, else -1
  std::vector<std::optional<TypedBuffer>> reads;
  std::vector<char> image;
  std::string kept_file;          // a sparse case's file, compared in place of an image
  bool removed_at_close = false;  // the file was gone after the last close
  std::string failure;            // an exception flowio threw, if any
  bool layout_disagreed = false;  // MPICH read other bytes than the view layout holds

  explicit CaseOutcome(int operations)
      : bytes(static_cast<std::size_t>(operations), -1),
        positions(static_cast<std::size_t>(operations), -1),
        reads(static_cast<std::size_t>(operations)) {}
};

// Describes the case's drawn realms (CaseHints::realms) to `file`, if any.
// Collective.
void describe_realms(const CaseHints& hints, flowio::File& file);

// Runs the case through flowio::File on `path`, which the caller prepared
// with prepare_file(). Exceptions are recorded in out.failure.
void run_flowio(const Case& c, std::uint64_t case_seed, const std::string& path, CaseOutcome& out);
// Runs the case through MPICH's MPI-IO on `path`.
void run_mpich(const Case& c, std::uint64_t case_seed, const std::string& path, CaseOutcome& out);

// Puts the file a case starts from at `path` (rank 0 writes; collective).
void prepare_file(const Case& c, std::uint64_t case_seed, const std::string& path);

// Checks (doctest) that flowio's outcome equals MPICH's, and returns
// whether it did on every rank. On a file mismatch it writes a third
// witness (each rank's writes done independently by MPICH) to say which
// side strayed; on any failure it prints a one-line replay command.
bool compare_outcomes(const Case& c, std::uint64_t case_seed, long index,
                      const std::string& scratch, CaseOutcome& by_flowio, CaseOutcome& by_mpich);

}  // namespace flowio::testing
