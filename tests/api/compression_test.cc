// Compression of the collective exchange (flowio_compress) on 1, 2 and 4
// ranks: every mode writes and reads the same bytes, from contiguous and
// from noncontiguous memory, up to and past end of file; the statistics
// show what was compressed and why; a bad hint is a usage error.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

constexpr int kBlock = 4096;    // bytes of each rank's blocks in the file
constexpr int kBlocks = 64;     // blocks per rank
constexpr int kBuffer = 65536;  // cb_buffer_size: several windows
constexpr std::int64_t kBytes = std::int64_t{kBlock} * kBlocks;

// 8-byte words at file offset `offset`: every other one zero (LZO halves
// them), the others a hash of the offset; or all a hash (`random`).
void fill(char* out, std::int64_t file_offset, std::int64_t bytes, bool random) {
  for (std::int64_t at = 0; at < bytes; at += 8) {
    const std::uint64_t word_index = static_cast<std::uint64_t>(file_offset + at) / 8;
    std::uint64_t value = word_index * 0x9E3779B97F4A7C15ull;
    value ^= value >> 29;
    if (!random && word_index % 2 == 0) value = 0;
    std::memcpy(out + at, &value, 8);
  }
}

// The file offset of byte `i` of `rank`'s stream: its blocks interleave.
std::int64_t file_offset(int rank, std::int64_t i) { return interleaved_offset(kBlock, rank, i); }

// This rank's stream: its blocks' bytes, in order.
std::vector<char> stream(bool random) {
  std::vector<char> data(static_cast<std::size_t>(kBytes));
  for (std::int64_t i = 0; i < kBytes; i += kBlock) {
    fill(data.data() + i, file_offset(world_rank(), i), kBlock, random);
  }
  return data;
}

// Memory holding `count` 8-byte words each followed by an 8-byte gap, so
// that packing and unpacking go through a staging buffer.
MPI_Datatype spaced_words() {
  MPI_Datatype spaced;
  MPI_Type_vector(static_cast<int>(kBytes / 8), 8, 16, MPI_BYTE, &spaced);
  MPI_Type_commit(&spaced);
  return spaced;
}

flowio::Hints hints(const std::string& mode) {
  return {{"flowio_compress", mode},
          {"flowio_compress_min_bytes", "1024"},
          {"romio_cb_write", "enable"},
          {"romio_cb_read", "enable"},
          {"cb_buffer_size", std::to_string(kBuffer)},
          {"flowio_exchange", "point_to_point"}};
}

// Writes this rank's stream in `mode` (from spaced memory if `spaced`),
// reads it back, checks it, and returns the file's bytes (rank 0) and the
// statistics of the write and the read.
struct Outcome {
  std::vector<char> file;
  flowio::OperationStatistics write;
  flowio::OperationStatistics read;
};

Outcome round_trip(const std::string& mode, bool spaced, bool random) {
  const std::string path = flowio::testing::scratch_path(
      MPI_COMM_WORLD,
      "compression_" + mode + (spaced ? "_spaced" : "") + (random ? "_random" : ""));
  const std::vector<char> data = stream(random);
  const InterleavedView view(kBlock);
  MPI_Datatype memory = spaced ? spaced_words() : MPI_BYTE;
  const MPI_Count count = spaced ? 1 : kBytes;
  std::vector<char> buffer(spaced ? 2 * data.size() : data.size(), '\x55');
  for (std::int64_t i = 0; i < kBytes; i += 8) {
    std::memcpy(buffer.data() + (spaced ? 2 * i : i), data.data() + i, 8);
  }
  Outcome outcome;
  {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                           flowio::Mode::create | flowio::Mode::rdwr, hints(mode));
    view.apply(file);
    CHECK(file.write_at_all(0, buffer.data(), count, memory) == static_cast<std::size_t>(kBytes));
    std::vector<char> back(buffer.size(), '\x55');
    CHECK(file.read_at_all(0, back.data(), count, memory) == static_cast<std::size_t>(kBytes));
    CHECK(back == buffer);  // the gaps of spaced memory untouched too
    const std::vector<flowio::OperationStatistics> statistics = file.statistics();
    REQUIRE(statistics.size() == 2);
    outcome.write = statistics[0];
    outcome.read = statistics[1];
    file.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) outcome.file = read_whole_file(path);
  if (spaced) MPI_Type_free(&memory);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path.c_str());
  return outcome;
}

std::int64_t sum(std::int64_t mine) {
  std::int64_t all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

}  // namespace

// Every mode writes the same file and reads the same data, from contiguous and noncontiguous
// memory.
TEST_CASE("Api.Compression.ModesAgree") {
  for (const bool spaced : {false, true}) {
    const Outcome off = round_trip("off", spaced, false);
    const Outcome on = round_trip("on", spaced, false);
    const Outcome automatic = round_trip("auto", spaced, false);
    if (world_rank() == 0) {
      CHECK(off.file.size() == static_cast<std::size_t>(kBytes * world_size()));
      CHECK(on.file == off.file);
      CHECK(automatic.file == off.file);
      // And it holds what the ranks wrote, where they wrote it.
      std::vector<char> expected(off.file.size());
      fill(expected.data(), 0, static_cast<std::int64_t>(expected.size()), false);
      CHECK(off.file == expected);
    }
  }
}

// With compression on, the data exchanged shrink and the statistics say how and where.
TEST_CASE("Api.Compression.StatisticsShowCompression") {
  const Outcome on = round_trip("on", false, false);
  for (const flowio::OperationStatistics* s : {&on.write, &on.read}) {
    CHECK(s->compression.mode == "on");
    bool has_stages = false;
    for (const flowio::StageStatistics& stage : s->stages) {
      has_stages = has_stages || stage.name == "compress" || stage.name == "decompress";
    }
    CHECK(has_stages);
  }
  // Over all ranks: every message sent was compressed, to about half.
  for (const flowio::OperationStatistics* s : {&on.write, &on.read}) {
    const flowio::CompressionStatistics& c = s->compression;
    const std::int64_t in = sum(c.data_bytes_in);
    const std::int64_t out = sum(c.data_bytes_out);
    CHECK(in == kBytes * world_size());
    CHECK(out < in * 7 / 10);
    CHECK(sum(c.decisions.compressed) > 0);
    CHECK(sum(c.decisions.not_shrinking) == 0);
    // Every frame sent was received: data and metadata (the access
    // descriptions, framed too).
    const std::int64_t metadata_in = sum(c.metadata_bytes_in);
    const std::int64_t metadata_out = sum(c.metadata_bytes_out);
    CHECK(metadata_in > 0);
    CHECK(sum(c.received_bytes_out) == in + metadata_in);
    CHECK(sum(c.received_bytes_in) == out + metadata_out);
    CHECK(sum(c.received_bytes_in > 0 ? 1 : 0) > 0);
  }
  // Off: no frames at all.
  const Outcome off = round_trip("off", false, false);
  CHECK(off.write.compression.mode == "off");
  CHECK(sum(off.write.compression.data_bytes_in) == 0);
  CHECK(sum(off.write.compression.decisions.compressed) == 0);
}

// Data that do not compress go raw, counted as not shrinking, and arrive intact.
TEST_CASE("Api.Compression.IncompressibleGoesRaw") {
  const Outcome on = round_trip("on", true, true);
  const flowio::CompressionStatistics& c = on.write.compression;
  CHECK(sum(c.decisions.compressed) == 0);
  CHECK(sum(c.decisions.not_shrinking) > 0);
  CHECK(sum(c.data_bytes_out) > sum(c.data_bytes_in));  // the headers
}

// A compressed read that runs past end of file returns what is there and leaves the rest of memory
// alone.
TEST_CASE("Api.Compression.ReadPastEndOfFile") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "compression_eof");
  std::vector<char> whole(static_cast<std::size_t>(kBytes * world_size()));
  fill(whole.data(), 0, static_cast<std::int64_t>(whole.size()), false);
  const std::int64_t file_bytes = static_cast<std::int64_t>(whole.size()) - 3 * kBlock / 2;
  {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                           flowio::Mode::create | flowio::Mode::rdwr, hints("on"));
    if (world_rank() == 0) file.write_at(0, whole.data(), file_bytes, MPI_BYTE);
    file.sync();
    const InterleavedView view(kBlock);
    view.apply(file);
    std::vector<char> back(static_cast<std::size_t>(kBytes), '\x55');
    const std::size_t got = file.read_at_all(0, back.data(), kBytes, MPI_BYTE);
    // This rank's bytes before end of file, and nothing of memory after them.
    std::int64_t expected = 0;
    while (expected < kBytes && file_offset(world_rank(), expected) < file_bytes) ++expected;
    CHECK(got == static_cast<std::size_t>(expected));
    for (std::int64_t i = 0; i < kBytes; ++i) {
      const char want =
          i < expected ? whole[static_cast<std::size_t>(file_offset(world_rank(), i))] : '\x55';
      if (back[static_cast<std::size_t>(i)] != want) {
        FAIL_CHECK("byte " << i << " of rank " << world_rank() << " differs");
        break;
      }
    }
    file.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path.c_str());
}

// A value of flowio_compress that is not auto, on or off is a usage error at the call.
TEST_CASE("Api.Compression.BadHint") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "compression_bad_hint");
  flowio::Hints bad = hints("on");
  bad["flowio_compress"] = "sometimes";
  bool refused = false;
  try {
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path,
        flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, bad);
    std::vector<char> data(kBlock);
    try {
      file.write_at_all(world_rank() * kBlock, data.data(), kBlock, MPI_BYTE);
    } catch (const flowio::UsageError& error) {
      refused = error.code() == flowio::ErrorCode::invalid_argument;
    }
    file.close();
  } catch (const flowio::UsageError& error) {
    refused = error.code() == flowio::ErrorCode::invalid_argument;
  }
  CHECK(refused);
}

// The compression hints in force are reported, defaults included.
TEST_CASE("Api.Compression.HintsInForce") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "compression_hints");
  flowio::File given = flowio::File::open(
      MPI_COMM_WORLD, path,
      flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, hints("on"));
  CHECK(given.hints().at("flowio_compress") == "on");
  CHECK(given.hints().at("flowio_compress_min_bytes") == "1024");
  given.close();
  flowio::File defaults =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close);
  CHECK(defaults.hints().at("flowio_compress") == "auto");
  CHECK(defaults.hints().at("flowio_compress_min_bytes") == "65536");
  defaults.close();
}
