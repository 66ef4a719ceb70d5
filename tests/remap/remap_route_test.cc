// WindowRoute and plan_runs: routing a random source through random
// consumers' object sets, window by window (the offline translator) or
// piece by piece of random producers (the online one), fills every
// consumer's section with exactly the source bytes at its view's file
// offsets; runs are contiguous and joined copies equal the raw ones.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/access.h"
#include "runtime/object_file_index.h"
#include "runtime/remap_route.h"
#include "tests/core/access_checks.h"

namespace {

using flowio::core::Access;
using flowio::core::Piece;
using flowio::core::testing::random_view;
using flowio::core::testing::view_pieces;
using namespace flowio::runtime;

struct Scenario {
  std::vector<Access> consumers;
  std::vector<std::vector<Piece>> pieces;  // the consumers', for the model
  std::vector<unsigned char> source;
};

Scenario random_scenario(std::mt19937_64& rng) {
  Scenario out;
  const int count = 1 + static_cast<int>(rng() % 5);
  std::int64_t extent = 1;
  for (int c = 0; c < count; ++c) {
    const auto view = random_view(rng, 500);
    const std::int64_t begin = static_cast<std::int64_t>(rng() % (view.filetype_size + 1));
    const std::int64_t end = begin + static_cast<std::int64_t>(rng() % (3 * view.filetype_size));
    out.pieces.push_back(view_pieces(*view.view, begin, end));
    out.consumers.emplace_back(view.view, begin, end);
    extent = std::max(extent, out.consumers.back().file_end());
  }
  out.source.resize(static_cast<std::size_t>(rng() % (extent + 20)));
  for (unsigned char& byte : out.source) byte = static_cast<unsigned char>(rng());
  return out;
}

// The object file the model expects: consumer c's section is the source
// bytes at its pieces' offsets, in order, up to the source's end.
std::vector<unsigned char> expected_file(const Scenario& scenario, const ObjectFileIndex& index) {
  std::vector<unsigned char> file(static_cast<std::size_t>(index.file_size()), 0);
  for (std::size_t c = 0; c < scenario.consumers.size(); ++c) {
    std::int64_t at = index.section(c).offset;
    for (const Piece& piece : scenario.pieces[c]) {
      for (std::int64_t x = piece.offset; x < piece.offset + piece.length; ++x) {
        if (x < static_cast<std::int64_t>(scenario.source.size())) {
          file[static_cast<std::size_t>(at++)] = scenario.source[static_cast<std::size_t>(x)];
        }
      }
    }
    CHECK(at == index.section(c).offset + index.section(c).bytes);
  }
  return file;
}

// Applies the runs' copies from `memory` to `file`, checking the runs.
std::string apply(std::vector<Copy>& copies, const unsigned char* memory,
                  std::vector<unsigned char>& file) {
  std::vector<Copy> raw = copies;
  const std::vector<TargetRun> runs = flowio::runtime::plan_runs(copies);
  std::vector<unsigned char> by_raw = file;
  for (const Copy& copy : raw) {
    std::copy_n(memory + copy.source, copy.length, by_raw.begin() + copy.target);
  }
  for (const TargetRun& run : runs) {
    std::int64_t at = run.target;
    for (std::size_t k = run.first_copy; k < run.first_copy + run.copy_count; ++k) {
      if (copies[k].target != at) return "run not contiguous";
      std::copy_n(memory + copies[k].source, copies[k].length, file.begin() + copies[k].target);
      at += copies[k].length;
    }
    if (at != run.target + run.length) return "run length wrong";
  }
  return file == by_raw ? "" : "joined copies differ from the raw ones";
}

}  // namespace

// The offline translator's use: windows of random size cover the source.
TEST_CASE("Remap.Route.WindowsOfTheSource") {
  std::mt19937_64 rng(303);
  for (int round = 0; round < 150; ++round) {
    const Scenario scenario = random_scenario(rng);
    const ObjectFileIndex index = ObjectFileIndex::plan(
        scenario.consumers, static_cast<std::int64_t>(scenario.source.size()));
    std::vector<unsigned char> file(static_cast<std::size_t>(index.file_size()), 0);
    const std::int64_t window = 1 + static_cast<std::int64_t>(rng() % 300);
    std::int64_t routed = 0;
    std::vector<Copy> copies;
    for (std::int64_t begin = 0; begin < static_cast<std::int64_t>(scenario.source.size());
         begin += window) {
      const std::int64_t end =
          std::min<std::int64_t>(begin + window, static_cast<std::int64_t>(scenario.source.size()));
      const WindowRoute route(index, begin, end);
      copies.clear();
      route.route(Piece{begin, end - begin}, 0, copies);
      std::int64_t copied = 0;
      for (const Copy& copy : copies) copied += copy.length;
      CHECK(copied == route.routed_bytes());
      routed += copied;
      INFO("round " << round << " window [" << begin << ", " << end << ")");
      REQUIRE(apply(copies, scenario.source.data() + begin, file) == "");
    }
    INFO("round " << round << " window " << window);
    CHECK(routed == index.data_bytes());
    CHECK(file == expected_file(scenario, index));
  }
}

// The producer-side use: producers hold the pieces of random views in
// memory (in stream order) and route each piece through the tree of one
// window over their extent.
TEST_CASE("Remap.Route.ProducerPieces") {
  std::mt19937_64 rng(304);
  for (int round = 0; round < 150; ++round) {
    const Scenario scenario = random_scenario(rng);
    const auto size = static_cast<std::int64_t>(scenario.source.size());
    const ObjectFileIndex index = ObjectFileIndex::plan(scenario.consumers, size);
    std::vector<unsigned char> file(static_cast<std::size_t>(index.file_size()), 0);
    // Producers partition the source byte by byte at random; each one's
    // bytes, joined into pieces, are its view.
    const int producers = 1 + static_cast<int>(rng() % 4);
    std::vector<std::vector<Piece>> owned(static_cast<std::size_t>(producers));
    for (std::int64_t x = 0; x < size; ++x) {
      auto& mine = owned[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(producers))];
      if (!mine.empty() && mine.back().offset + mine.back().length == x) {
        ++mine.back().length;
      } else {
        mine.push_back(Piece{x, 1});
      }
    }
    for (const std::vector<Piece>& pieces : owned) {
      if (pieces.empty()) continue;
      std::vector<unsigned char> memory;
      for (const Piece& piece : pieces) {
        memory.insert(memory.end(), scenario.source.begin() + piece.offset,
                      scenario.source.begin() + piece.offset + piece.length);
      }
      const WindowRoute route(index, pieces.front().offset,
                              pieces.back().offset + pieces.back().length);
      std::vector<Copy> copies;
      std::int64_t position = 0;
      for (const Piece& piece : pieces) {
        route.route(piece, position, copies);
        position += piece.length;
      }
      INFO("round " << round);
      REQUIRE(apply(copies, memory.data(), file) == "");
    }
    INFO("round " << round);
    CHECK(file == expected_file(scenario, index));
  }
}
