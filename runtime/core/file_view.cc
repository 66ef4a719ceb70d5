#include "runtime/core/file_view.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "flowio/error.h"

namespace flowio::core {
namespace {

[[noreturn]] void bad_view(const std::string& why) {
  throw UsageError(ErrorCode::invalid_datatype, "set_view: " + why);
}

// Enough copies of the filetype to stand for "without end".
std::int64_t unbounded_count(const FlatType& filetype) {
  if (filetype.size() == 0) return 0;
  const std::int64_t by_stream = std::numeric_limits<std::int64_t>::max() / 2 / filetype.size();
  const std::int64_t by_extent =
      filetype.extent() > 0 ? std::numeric_limits<std::int64_t>::max() / 2 / filetype.extent()
                            : by_stream;
  return std::min(by_stream, by_extent);
}

}  // namespace

FileView::FileView() : filetype_(make_run(1), 0, 1) {}

FileView::FileView(std::int64_t displacement, MPI_Datatype etype, MPI_Datatype filetype,
                   const ViewRules& rules)
    : displacement_(displacement) {
  if (displacement < 0) bad_view("negative displacement " + std::to_string(displacement));
  if (displacement >= kFileOffsetLimit) {
    bad_view("displacement " + std::to_string(displacement) + " at or past 2^62");
  }
  auto flatten_here = [&rules](MPI_Datatype type) {
    return rules.file_extent != nullptr ? flatten_in_representation(type, *rules.file_extent)
                                        : flatten(type);
  };
  const FlatType flat_etype = flatten_here(etype);
  etype_size_ = flat_etype.size();
  if (etype_size_ <= 0) bad_view("the etype holds no data");
  if (flat_etype.true_lb() < 0) bad_view("the etype has negative displacements");
  if (!flat_etype.root().ordered) bad_view("the etype's displacements decrease");
  if (!rules.allow_overlap && !flat_etype.root().monotone) {
    bad_view("the etype's pieces overlap (MPI forbids it on a file open for writing)");
  }
  filetype_ = flatten_here(filetype);
  if (filetype_.size() % etype_size_ != 0) {
    bad_view("filetype size " + std::to_string(filetype_.size()) +
             " is not a multiple of the etype size " + std::to_string(etype_size_));
  }
  if (filetype_.size() == 0) return;
  if (filetype_.true_lb() < 0) bad_view("the filetype has negative displacements");
  if (!filetype_.root().ordered || !filetype_.tiles_in_order()) {
    bad_view(
        "the filetype's displacements decrease (MPI requires them monotonically "
        "nondecreasing, also from one filetype tile to the next)");
  }
  overlaps_ = !filetype_.root().monotone || !filetype_.tiles_monotonically();
  if (overlaps_ && !rules.allow_overlap) {
    bad_view(
        "the filetype's pieces overlap, within a tile or from one tile to the next (MPI "
        "forbids it on a file open for writing)");
  }
}

PieceCursor FileView::file_pieces(std::int64_t stream_position) const {
  return PieceCursor(filetype_, unbounded_count(filetype_), displacement_, stream_position);
}

FileView::FileView(std::int64_t displacement, std::int64_t etype_size, FlatType filetype)
    : displacement_(displacement), etype_size_(etype_size), filetype_(std::move(filetype)) {}

std::int64_t FileView::file_offset_of(std::int64_t stream_position) const {
  // The common view (and the default one): no walk needed.
  if (is_contiguous()) return displacement_ + filetype_.true_lb() + stream_position;
  PieceCursor cursor = file_pieces(stream_position);
  Piece piece;
  if (!cursor.next_piece(piece, 1)) {
    throw UsageError(ErrorCode::invalid_argument, "the view's filetype holds no data");
  }
  return piece.offset;
}

std::int64_t FileView::stream_reach() const {
  const std::int64_t room = kFileOffsetLimit - displacement_;
  if (filetype_.size() == 0 || room <= 0) return 0;
  if (is_contiguous()) return std::max<std::int64_t>(room - filetype_.true_lb(), 0);
  const std::int64_t copy_reach = filetype_.true_lb() + filetype_.true_extent();
  if (room < copy_reach) return 0;
  // Copies all at one place (a read-only view may overlap): any stream.
  if (filetype_.extent() <= 0) return kFileOffsetLimit;
  const std::int64_t copies = (room - copy_reach) / filetype_.extent() + 1;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(copies, filetype_.size(), &bytes)) return kFileOffsetLimit;
  return bytes;
}

std::int64_t FileView::stream_bytes_before(std::int64_t file_offset) const {
  const std::int64_t relative = file_offset - displacement_;
  if (filetype_.size() == 0 || relative <= filetype_.true_lb()) return 0;
  std::int64_t tile = 0;
  if (filetype_.extent() > 0) tile = (relative - filetype_.true_lb()) / filetype_.extent();
  return tile * filetype_.size() +
         bytes_before(filetype_.root(), relative - tile * filetype_.extent());
}

}  // namespace flowio::core
