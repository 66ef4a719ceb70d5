#include "exchange/access_codec.h"

#include <limits>
#include <unordered_map>

#include "flowio/error.h"

namespace flowio::exchange {
namespace {

[[noreturn]] void throw_malformed() { throw MpiError("malformed access metadata received", 0); }

enum Kind : std::int64_t { kEmpty = 0, kView = 1, kPieces = 2 };
enum NodeKind : std::int64_t { kRun = 0, kBlocks = 1 };

// Nodes are written children first, each once, so a decoder can rebuild
// them in order; blocks name their child by its position in that order.
class NodeWriter {
 public:
  explicit NodeWriter(std::vector<std::int64_t>& out) : out_(out) {}

  std::int64_t write(const core::FlatNode& node) {
    if (const auto found = index_.find(&node); found != index_.end()) return found->second;
    std::vector<std::int64_t> children;
    for (const core::FlatBlock& block : node.blocks) children.push_back(write(*block.child));
    if (node.is_run()) {
      out_.insert(out_.end(), {kRun, node.size});
    } else {
      out_.insert(out_.end(), {kBlocks, node.repeat, node.repeat_stride,
                               static_cast<std::int64_t>(node.blocks.size())});
      for (std::size_t i = 0; i < node.blocks.size(); ++i) {
        const core::FlatBlock& block = node.blocks[i];
        out_.insert(out_.end(), {block.displacement, block.count, block.stride, children[i]});
      }
    }
    const std::int64_t index = next_++;
    index_.emplace(&node, index);
    return index;
  }

  std::int64_t nodes() const { return next_; }

 private:
  std::vector<std::int64_t>& out_;
  std::unordered_map<const core::FlatNode*, std::int64_t> index_;
  std::int64_t next_ = 0;
};

class WordReader {
 public:
  explicit WordReader(std::span<const std::int64_t> words) : words_(words) {}
  std::int64_t next() {
    if (position_ >= words_.size()) throw_malformed();
    return words_[position_++];
  }
  // Reads a count of items of `words_each` words that must all follow.
  std::size_t next_count(std::size_t words_each) {
    const std::int64_t count = next();
    if (count < 0 || static_cast<std::uint64_t>(count) > (words_.size() - position_) / words_each) {
      throw_malformed();
    }
    return static_cast<std::size_t>(count);
  }

 private:
  std::span<const std::int64_t> words_;
  std::size_t position_ = 0;
};

}  // namespace

std::vector<std::int64_t> encode_view_access(const core::Access& access) {
  if (access.empty()) return {kEmpty};
  const core::FileView& view = *access.view();
  std::vector<std::int64_t> words = {kView,
                                     access.stream_begin(),
                                     access.stream_begin() + access.bytes(),
                                     view.displacement(),
                                     view.etype_size(),
                                     view.filetype().lb(),
                                     view.filetype().extent(),
                                     0};  // node count, known once written
  NodeWriter writer(words);
  writer.write(view.filetype().root());
  words[7] = writer.nodes();
  return words;
}

std::vector<std::int64_t> encode_pieces(std::span<const core::Piece> pieces) {
  std::vector<std::int64_t> words;
  words.reserve(2 + 2 * pieces.size());
  words.push_back(kPieces);
  words.push_back(static_cast<std::int64_t>(pieces.size()));
  for (const core::Piece& piece : pieces) {
    words.push_back(piece.offset);
    words.push_back(piece.length);
  }
  return words;
}

namespace {

// The largest file offset a decoded access may reach. Far beyond any file,
// and low enough that sums of two offsets cannot overflow.
constexpr std::int64_t kLargestOffset = std::numeric_limits<std::int64_t>::max() / 4;

void require(bool condition) {
  if (!condition) throw_malformed();
}

// Explicit pieces must be what a client sends: non-empty, at non-negative
// offsets, in increasing order without overlap, within kLargestOffset.
core::Access decode_pieces(WordReader& in) {
  std::vector<core::Piece> pieces(in.next_count(2));
  std::int64_t end = 0;
  for (core::Piece& piece : pieces) {
    piece.offset = in.next();
    piece.length = in.next();
    require(piece.offset >= end && piece.length > 0 &&
            piece.length <= kLargestOffset - piece.offset);
    end = piece.offset + piece.length;
  }
  return core::Access(std::move(pieces));
}

// A view must be one set_view would have accepted (core::FileView), over a
// stream range whose file offsets stay below kLargestOffset: the rest of
// flowio relies on exactly that.
void check_view(std::int64_t stream_begin, std::int64_t stream_end, std::int64_t displacement,
                std::int64_t etype_size, const core::FlatType& filetype) {
  require(stream_begin >= 0 && stream_end >= stream_begin);
  require(displacement >= 0 && displacement <= kLargestOffset);
  require(etype_size > 0);
  if (stream_end == stream_begin) return;
  const std::int64_t size = filetype.size();
  require(size > 0 && size % etype_size == 0 && filetype.true_lb() >= 0);
  require(filetype.root().monotone && filetype.tiles_monotonically());
  require(filetype.extent() > 0 || stream_end <= size);
  // The tile of the last byte, and how far into the file it reaches.
  const std::int64_t tiles = (stream_end - 1) / size;
  std::int64_t reach = 0;
  require(!__builtin_mul_overflow(tiles, filetype.extent(), &reach) &&
          !__builtin_add_overflow(reach, filetype.root().true_ub, &reach) &&
          !__builtin_add_overflow(reach, displacement, &reach) && reach <= kLargestOffset);
}

}  // namespace

core::Access decode_access(std::span<const std::int64_t> words) {
  WordReader in(words);
  const std::int64_t kind = in.next();
  if (kind == kEmpty) return core::Access();
  if (kind == kPieces) return decode_pieces(in);
  if (kind != kView) throw_malformed();
  const std::int64_t stream_begin = in.next(), stream_end = in.next();
  const std::int64_t displacement = in.next(), etype_size = in.next();
  const std::int64_t lb = in.next(), extent = in.next();
  const std::size_t node_count = in.next_count(2);
  std::vector<core::FlatNodePtr> nodes;
  for (std::size_t n = 0; n < node_count; ++n) {
    const std::int64_t node_kind = in.next();
    if (node_kind == kRun) {
      const std::int64_t size = in.next();
      if (size < 0) throw_malformed();
      nodes.push_back(core::make_run(size));
      continue;
    }
    if (node_kind != kBlocks) throw_malformed();
    const std::int64_t repeat = in.next(), repeat_stride = in.next();
    if (repeat < 0) throw_malformed();
    std::vector<core::FlatBlock> blocks(in.next_count(4));
    for (core::FlatBlock& block : blocks) {
      block.displacement = in.next();
      block.count = in.next();
      block.stride = in.next();
      if (block.count < 0) throw_malformed();
      const std::int64_t child = in.next();
      if (child < 0 || child >= static_cast<std::int64_t>(nodes.size())) {
        throw_malformed();
      }
      block.child = nodes[static_cast<std::size_t>(child)];
    }
    nodes.push_back(core::make_blocks(std::move(blocks), repeat, repeat_stride));
  }
  require(!nodes.empty() && lb >= -kLargestOffset && lb <= kLargestOffset);
  core::FlatType filetype(nodes.back(), lb, extent);
  check_view(stream_begin, stream_end, displacement, etype_size, filetype);
  auto view = std::make_shared<const core::FileView>(displacement, etype_size, std::move(filetype));
  return core::Access(std::move(view), stream_begin, stream_end);
}

}  // namespace flowio::exchange
