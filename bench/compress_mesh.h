// The BIPS3D-like mesh of bench/compress (the seed paper's benchmark): a
// mesh of `nodes` nodes whose data structure holds `load` words per node
// (4-byte integers or 8-byte floats), written to a file in node order.
// Each rank owns an irregular, scattered set of node ids, as a partitioner
// leaves them: runs of 1 to 15 consecutive ids, each run given to a random
// rank. A value is zero with probability zero_percent/100 (each value on
// its own, the hardest case for LZO), otherwise random: integers uniform
// over 32 bits, floats uniform in [0, 1), neither of which LZO compresses.
//
// Two-phase layout used by the exchange: the file is split into one realm
// per rank (aggregator), of whole nodes; each realm into windows of at
// most `window_bytes` (whole nodes, at least one). A client's data for one
// window is a contiguous range of its local data, since its nodes are kept
// in id order.
//
// Everything is computed from the settings alone, identically on every
// rank, so that receivers know what each sender sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bench::compress {

struct MeshSettings {
  std::int64_t nodes = 4096;
  std::int64_t load = 500;  // words per node
  bool floating = true;     // 8-byte floats, else 4-byte integers
  int zero_percent = 0;
  std::uint64_t seed = 1;
};

// One buffer iteration of one aggregator: the nodes [first_node, end_node).
struct Window {
  int aggregator = 0;
  std::int64_t first_node = 0;
  std::int64_t end_node = 0;
};

class Mesh {
 public:
  Mesh(const MeshSettings& settings, int ranks, std::int64_t window_bytes);

  const MeshSettings& settings() const { return settings_; }
  int ranks() const { return ranks_; }
  std::int64_t word_bytes() const { return settings_.floating ? 8 : 4; }
  std::int64_t node_bytes() const { return settings_.load * word_bytes(); }
  std::int64_t file_bytes() const { return settings_.nodes * node_bytes(); }

  // Node ids owned by `rank`, ascending.
  const std::vector<std::int64_t>& nodes_of(int rank) const;
  // The values of `rank`'s nodes, in id order (what it writes).
  std::vector<std::byte> local_data(int rank) const;
  // Writes node `node`'s node_bytes() bytes to `out`.
  void node_values(std::int64_t node, std::byte* out) const;

  // The nodes of `aggregator`'s realm, [first, end).
  std::int64_t realm_first(int aggregator) const;
  std::int64_t realm_end(int aggregator) const;
  // Windows of every realm, realm by realm.
  const std::vector<Window>& windows() const { return windows_; }
  // The positions [first, end) in nodes_of(rank) of its nodes in `window`.
  std::pair<std::size_t, std::size_t> local_range(int rank, const Window& window) const;

 private:
  MeshSettings settings_;
  int ranks_;
  std::vector<std::vector<std::int64_t>> owned_;
  std::vector<Window> windows_;
};

}  // namespace bench::compress
