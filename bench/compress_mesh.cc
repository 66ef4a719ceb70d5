#include "bench/compress_mesh.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bench/bench_support.h"
#include "runtime/core/hash.h"

namespace bench::compress {

Mesh::Mesh(const MeshSettings& settings, int ranks, std::int64_t window_bytes)
    : settings_(settings), ranks_(ranks), owned_(static_cast<std::size_t>(ranks)) {
  if (settings.nodes < ranks || settings.load < 1 || settings.zero_percent < 0 ||
      settings.zero_percent > 100 || window_bytes < 1) {
    throw std::invalid_argument("mesh: need nodes >= ranks, load >= 1, zeros in 0..100");
  }
  std::mt19937_64 rng(settings.seed);
  std::uniform_int_distribution<std::int64_t> run_length(1, 15);
  std::uniform_int_distribution<int> owner(0, ranks - 1);
  for (std::int64_t node = 0; node < settings.nodes;) {
    const std::int64_t end = std::min(settings.nodes, node + run_length(rng));
    std::vector<std::int64_t>& list = owned_[static_cast<std::size_t>(owner(rng))];
    for (; node < end; ++node) list.push_back(node);
  }
  const std::int64_t per_window = std::max<std::int64_t>(1, window_bytes / node_bytes());
  for (int aggregator = 0; aggregator < ranks; ++aggregator) {
    for (std::int64_t first = realm_first(aggregator); first < realm_end(aggregator);
         first += per_window) {
      windows_.push_back({aggregator, first, std::min(realm_end(aggregator), first + per_window)});
    }
  }
}

const std::vector<std::int64_t>& Mesh::nodes_of(int rank) const {
  return owned_.at(static_cast<std::size_t>(rank));
}

void Mesh::node_values(std::int64_t node, std::byte* out) const {
  const std::uint64_t threshold = static_cast<std::uint64_t>(settings_.zero_percent) * 10000;
  for (std::int64_t word = 0; word < settings_.load; ++word) {
    const std::uint64_t hash =
        flowio::core::mix64(settings_.seed * 0x100000001B3ull ^
                            static_cast<std::uint64_t>(node * settings_.load + word));
    const bool zero = (hash >> 40) % 1000000 < threshold;
    std::byte* at = out + word * word_bytes();
    if (settings_.floating) {
      const double value =
          zero ? 0.0 : static_cast<double>(flowio::core::mix64(hash) >> 11) * 0x1.0p-53;
      std::memcpy(at, &value, sizeof value);
    } else {
      const std::uint32_t value = zero ? 0 : static_cast<std::uint32_t>(flowio::core::mix64(hash));
      std::memcpy(at, &value, sizeof value);
    }
  }
}

std::vector<std::byte> Mesh::local_data(int rank) const {
  const std::vector<std::int64_t>& nodes = nodes_of(rank);
  std::vector<std::byte> data(nodes.size() * static_cast<std::size_t>(node_bytes()));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    node_values(nodes[i], data.data() + i * static_cast<std::size_t>(node_bytes()));
  }
  return data;
}

std::int64_t Mesh::realm_first(int aggregator) const {
  return settings_.nodes * aggregator / ranks_;
}

std::int64_t Mesh::realm_end(int aggregator) const {
  return settings_.nodes * (aggregator + 1) / ranks_;
}

std::pair<std::size_t, std::size_t> Mesh::local_range(int rank, const Window& window) const {
  const std::vector<std::int64_t>& nodes = nodes_of(rank);
  const auto first = std::lower_bound(nodes.begin(), nodes.end(), window.first_node);
  const auto end = std::lower_bound(first, nodes.end(), window.end_node);
  return {static_cast<std::size_t>(first - nodes.begin()),
          static_cast<std::size_t>(end - nodes.begin())};
}

}  // namespace bench::compress
