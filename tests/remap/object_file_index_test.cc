// ObjectFileIndex: sections hold each consumer's stream prefix below the
// source's size, start on 4096-byte boundaries in consumer order without
// overlapping; the index survives encoding; damaged indexes are refused.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/access.h"
#include "runtime/object_file_index.h"
#include "tests/core/access_checks.h"

namespace {

using namespace flowio::core;
using namespace flowio::core::testing;
using flowio::runtime::ObjectFileIndex;

std::vector<Access> random_consumers(std::mt19937_64& rng, std::int64_t& extent) {
  std::vector<Access> consumers;
  const int count = static_cast<int>(rng() % 6);
  for (int c = 0; c < count; ++c) {
    if (rng() % 5 == 0) {
      consumers.emplace_back();
      continue;
    }
    const auto view = random_view(rng, 400);
    const std::int64_t begin = static_cast<std::int64_t>(rng() % (view.filetype_size + 1));
    const std::int64_t end = begin + static_cast<std::int64_t>(rng() % (3 * view.filetype_size));
    if (rng() % 3 == 0) {
      consumers.emplace_back(view_pieces(*view.view, begin, end));
    } else {
      consumers.emplace_back(view.view, begin, end);
    }
    extent = std::max(extent, consumers.back().file_end());
  }
  return consumers;
}

}  // namespace

// Random consumers and source sizes: section sizes, alignment, order, and
// a decode of the encoding that answers alike.
TEST_CASE("Remap.ObjectFileIndex.PlanAndRoundTrip") {
  std::mt19937_64 rng(77);
  for (int round = 0; round < 200; ++round) {
    std::int64_t extent = 1;
    const std::vector<Access> consumers = random_consumers(rng, extent);
    const std::int64_t source_size = static_cast<std::int64_t>(rng() % (extent + 10));
    const ObjectFileIndex index = ObjectFileIndex::plan(consumers, source_size);
    INFO("round " << round);
    REQUIRE(index.consumer_count() == consumers.size());
    std::int64_t previous_end = index.index_bytes();
    for (std::size_t c = 0; c < consumers.size(); ++c) {
      const auto& section = index.section(c);
      CHECK(section.bytes == consumers[c].bytes_before(source_size));
      CHECK(section.offset % ObjectFileIndex::kSectionAlignment == 0);
      CHECK(section.offset >= previous_end);
      previous_end = section.offset + section.bytes;
    }
    CHECK(index.file_size() == previous_end);

    const std::vector<std::byte> bytes = index.encode();
    CHECK(static_cast<std::int64_t>(bytes.size()) == index.index_bytes());
    CHECK(ObjectFileIndex::index_bytes_in(bytes, "x") == index.index_bytes());
    const ObjectFileIndex decoded = ObjectFileIndex::decode(bytes, "x");
    CHECK(decoded.source_size() == source_size);
    CHECK(decoded.file_size() == index.file_size());
    REQUIRE(decoded.consumer_count() == consumers.size());
    for (std::size_t c = 0; c < consumers.size(); ++c) {
      CHECK(decoded.section(c).offset == index.section(c).offset);
      CHECK(decoded.section(c).bytes == index.section(c).bytes);
      CHECK(decoded.consumer(c).bytes() == consumers[c].bytes());
      CHECK(decoded.consumer(c).file_begin() == consumers[c].file_begin());
      CHECK(decoded.consumer(c).bytes_before(source_size) == index.section(c).bytes);
    }
  }
}

// A view with a million pieces costs the index a few dozen words.
TEST_CASE("Remap.ObjectFileIndex.CompactViews") {
  MPI_Datatype rows;
  MPI_Type_vector(1000000, 4, 16, MPI_BYTE, &rows);
  MPI_Type_commit(&rows);
  const auto view = std::make_shared<const flowio::core::FileView>(0, MPI_BYTE, rows);
  MPI_Type_free(&rows);
  const ObjectFileIndex index = ObjectFileIndex::plan({Access(view, 0, 4000000)}, 16000000);
  CHECK(index.index_bytes() < 256);
  CHECK(index.section(0).bytes == 4000000);
}

// Damaged indexes: wrong magic, wrong version, cut short, trailing words.
TEST_CASE("Remap.ObjectFileIndex.Damaged") {
  std::mt19937_64 rng(5);
  std::int64_t extent = 1;
  std::vector<Access> consumers;
  while (consumers.size() < 2) consumers = random_consumers(rng, extent);
  const std::vector<std::byte> good = ObjectFileIndex::plan(consumers, extent).encode();
  std::vector<std::byte> bad = good;
  bad[0] = std::byte{0};
  CHECK_THROWS_AS(ObjectFileIndex::index_bytes_in(bad, "x"), flowio::UsageError);
  bad = good;
  bad[8] = std::byte{9};
  CHECK_THROWS_AS(ObjectFileIndex::decode(bad, "x"), flowio::UsageError);
  bad.assign(good.begin(), good.end() - 8);
  CHECK_THROWS_AS(ObjectFileIndex::decode(bad, "x"), flowio::UsageError);
  CHECK_THROWS_AS(ObjectFileIndex::index_bytes_in(std::vector<std::byte>(16), "x"),
                  flowio::UsageError);
  // One consumer fewer announced: the last one's words are left over.
  bad = good;
  std::int64_t count = 0;
  std::memcpy(&count, bad.data() + 32, 8);
  --count;
  std::memcpy(bad.data() + 32, &count, 8);
  CHECK_THROWS_AS(ObjectFileIndex::decode(bad, "x"), flowio::UsageError);
}
