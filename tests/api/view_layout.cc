#include "tests/api/view_layout.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace flowio::testing {

std::int64_t ViewLayout::file_offset(std::int64_t displacement, std::int64_t stream_byte) const {
  const std::int64_t copy = stream_byte / copy_bytes;
  const std::int64_t within_copy = stream_byte % copy_bytes;
  const auto k = static_cast<std::size_t>(
      std::upper_bound(piece_starts.begin(), piece_starts.end(), within_copy) -
      piece_starts.begin() - 1);
  const LayoutPiece& piece = pieces[k];
  const std::int64_t within = within_copy - piece_starts[k];
  return displacement + copy * period + piece.offset + within / piece.length * piece.stride +
         within % piece.length;
}

namespace {

// Notes where each piece starts in a copy's data.
void index_pieces(ViewLayout& layout) {
  std::int64_t start = 0;
  for (const LayoutPiece& piece : layout.pieces) {
    layout.piece_starts.push_back(start);
    start += piece.length * piece.repeat;
  }
  if (start != layout.copy_bytes)
    throw std::logic_error("view layout: pieces miss the type's size");
}

}  // namespace

ViewLayout layout_by_packing(MPI_Datatype filetype, std::int64_t period) {
  MPI_Count true_lb = 0, true_extent = 0, size = 0;
  MPI_Type_get_true_extent_x(filetype, &true_lb, &true_extent);
  MPI_Type_size_x(filetype, &size);
  ViewLayout layout;
  layout.copy_bytes = size;
  layout.period = period;
  if (size == 0) return layout;
  if (true_extent > (MPI_Count{1} << 24)) {
    throw std::logic_error("view layout: a type too wide to lay out by packing");
  }
  // Three packs, of the low, middle and high byte of every byte's offset
  // from the true lower bound: stream byte j came from offset(j).
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(size), 0);
  std::vector<unsigned char> source(static_cast<std::size_t>(true_extent));
  std::vector<unsigned char> packed(static_cast<std::size_t>(size));
  for (int shift = 0; shift < 24; shift += 8) {
    for (std::size_t i = 0; i < source.size(); ++i) {
      source[i] = static_cast<unsigned char>(i >> shift);
    }
    int position = 0;
    MPI_Pack(source.data() - true_lb, 1, filetype, packed.data(), static_cast<int>(size), &position,
             MPI_COMM_SELF);
    for (std::size_t j = 0; j < packed.size(); ++j) {
      offsets[j] |= std::int64_t{packed[j]} << shift;
    }
  }
  for (std::size_t j = 0; j < offsets.size(); ++j) {
    const std::int64_t at = offsets[j] + true_lb;
    if (!layout.pieces.empty()) {
      LayoutPiece& last = layout.pieces.back();
      if (last.offset + last.length == at) {
        ++last.length;
        continue;
      }
    }
    layout.pieces.push_back({at, 1, 1, 0});
  }
  index_pieces(layout);
  return layout;
}

ViewLayout vector_layout(std::int64_t blocks, std::int64_t block_bytes, std::int64_t stride_bytes,
                         std::int64_t period) {
  ViewLayout layout;
  layout.pieces.push_back({0, block_bytes, blocks, stride_bytes});
  layout.copy_bytes = blocks * block_bytes;
  layout.period = period;
  index_pieces(layout);
  return layout;
}

std::vector<unsigned char> read_through_layout(int fd, const ViewLayout& layout,
                                               std::int64_t displacement, std::int64_t stream_byte,
                                               std::int64_t bytes) {
  std::vector<unsigned char> out(static_cast<std::size_t>(bytes), 0);
  std::int64_t done = 0;
  while (done < bytes) {
    // The run holding stream byte `stream_byte + done` goes on contiguously
    // in the file for as long as the next byte's offset is one further.
    const std::int64_t begin = layout.file_offset(displacement, stream_byte + done);
    std::int64_t run = 1;
    while (done + run < bytes &&
           layout.file_offset(displacement, stream_byte + done + run) == begin + run) {
      ++run;
    }
    const ssize_t got = ::pread(fd, out.data() + done, static_cast<std::size_t>(run), begin);
    if (got < 0) throw std::runtime_error("view layout: pread failed");
    done += run;  // a short read is past the end of the file: zeros
  }
  return out;
}

}  // namespace flowio::testing
