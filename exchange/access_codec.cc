#include "exchange/access_codec.h"

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

core::Access decode_access(std::span<const std::int64_t> words) {
  WordReader in(words);
  const std::int64_t kind = in.next();
  if (kind == kEmpty) return core::Access();
  if (kind == kPieces) {
    std::vector<core::Piece> pieces(in.next_count(2));
    for (core::Piece& piece : pieces) {
      piece.offset = in.next();
      piece.length = in.next();
    }
    return core::Access(std::move(pieces));
  }
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
  if (nodes.empty()) throw_malformed();
  auto view = std::make_shared<const core::FileView>(displacement, etype_size,
                                                     core::FlatType(nodes.back(), lb, extent));
  return core::Access(std::move(view), stream_begin, stream_end);
}

}  // namespace flowio::exchange
