// The Perfetto / Chrome trace (FLOWIO_TRACE): after a collective write of
// several buffer iterations and close, rank 0's trace file is one JSON
// document (parsed here by nlohmann-json) holding complete events of every
// rank, for the stages that ran, with track names, and an open event per
// rank naming the file and its hints, whatever characters they hold.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"

namespace {

using nlohmann::json;

// A filetype of `bytes` bytes every `bytes * ranks`: ranks interleave
// pieces of that size, so collective calls go through two-phase I/O.
MPI_Datatype interleaved_tile(int bytes, int ranks) {
  MPI_Datatype piece, tile;
  MPI_Type_contiguous(bytes, MPI_BYTE, &piece);
  MPI_Type_create_resized(piece, 0, static_cast<MPI_Aint>(bytes) * ranks, &tile);
  MPI_Type_commit(&tile);
  MPI_Type_free(&piece);
  return tile;
}

// Points FLOWIO_TRACE at this test's trace file, before any flowio call
// (flowio reads it once, at the first trace event), and returns its path.
std::string start_trace() {
  const std::string trace = flowio::testing::scratch_path(MPI_COMM_WORLD, "trace.json");
  setenv("FLOWIO_TRACE", trace.c_str(), 1);
  return trace;
}

// The trace's events; fails the test unless the file is one JSON document
// of the Chrome trace format.
std::vector<json> trace_events(const std::string& path) {
  std::ifstream in(path);
  json document;
  REQUIRE_NOTHROW(document = json::parse(in));
  REQUIRE(document.is_object());
  REQUIRE(document["traceEvents"].is_array());
  return document["traceEvents"].get<std::vector<json>>();
}

std::size_t count_events(const std::vector<json>& events, const json& wanted) {
  std::size_t count = 0;
  for (const json& event : events) {
    bool matches = true;
    for (const auto& [key, value] : wanted.items()) {
      matches = matches && event.contains(key) && event[key] == value;
    }
    count += matches ? 1 : 0;
  }
  return count;
}

}  // namespace

// Every rank's spans and every stage's track reach rank 0's file.
TEST_CASE("Api.Trace.EveryRankAndStage") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string trace = start_trace();

  // Ranks interleave 8-byte pieces, so the write goes through two-phase
  // I/O; 4 KiB windows make several iterations.
  constexpr int kPieces = 2048;
  MPI_Datatype tile = interleaved_tile(8, ranks);
  std::vector<char> data(8 * kPieces, static_cast<char>('a' + rank));
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, flowio::testing::scratch_path(MPI_COMM_WORLD, "trace.dat"),
                         flowio::Mode::create | flowio::Mode::wronly,
                         {{"cb_buffer_size", "4096"}, {"romio_cb_write", "enable"}});
  file.set_view(8 * rank, MPI_BYTE, tile);
  CHECK(file.write_all(data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) == data.size());
  file.close();
  MPI_Type_free(&tile);

  if (rank != 0) return;
  const std::vector<json> events = trace_events(trace);
  for (int r = 0; r < ranks; ++r) {
    CAPTURE(r);
    CHECK(count_events(events, {{"ph", "X"}, {"pid", r}}) > 0);
  }
  for (const char* stage : {"offsets", "realms", "metadata", "exchange", "io", "agree"}) {
    CAPTURE(stage);
    CHECK(count_events(events, {{"ph", "X"}, {"cat", stage}}) > 0);
    CHECK(count_events(events, {{"ph", "M"}, {"args", {{"name", stage}}}}) >=
          static_cast<std::size_t>(ranks));
  }
  // 16 KiB of data per rank in 4 KiB windows: several io spans per write.
  CHECK(count_events(events, {{"ph", "X"}, {"cat", "io"}}) >= 4);
}

// With compression on, the compress and decompress spans say what went on
// the wire: "bytes" of data as "wire_bytes" of frames, labelled "lzo" when
// the frames are smaller. Zeros compress, so every such span of the write
// (client compress, aggregator decompress) and of the read (aggregator
// compress, client decompress) is "lzo", with fewer wire bytes.
TEST_CASE("Api.Trace.CompressionSpansSayWhatWentOnTheWire") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string trace = start_trace();

  constexpr int kPieces = 8192;
  MPI_Datatype tile = interleaved_tile(64, ranks);
  std::vector<char> data(64 * kPieces, 0);
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, flowio::testing::scratch_path(MPI_COMM_WORLD, "trace_compressed.dat"),
      flowio::Mode::create | flowio::Mode::rdwr,
      {{"cb_buffer_size", "65536"},
       {"romio_cb_write", "enable"},
       {"romio_cb_read", "enable"},
       {"flowio_exchange", "point_to_point"},
       {"flowio_compress", "on"},
       {"flowio_compress_min_bytes", "1024"}});
  file.set_view(64 * rank, MPI_BYTE, tile);
  CHECK(file.write_all(data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) == data.size());
  CHECK(file.read_at_all(0, data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) ==
        data.size());
  file.close();
  MPI_Type_free(&tile);

  if (rank != 0 || ranks == 1) return;  // one process exchanges nothing
  const std::vector<json> events = trace_events(trace);
  for (const char* stage : {"compress", "decompress"}) {
    CAPTURE(stage);
    int compressed_spans = 0;
    for (const json& event : events) {
      if (event.value("cat", "") != stage) continue;
      const std::string label = event.value("name", "");
      if (!label.ends_with(" lzo")) continue;
      ++compressed_spans;
      CHECK(event["args"]["wire_bytes"].get<std::int64_t>() <
            event["args"]["bytes"].get<std::int64_t>());
    }
    CHECK(compressed_spans >= 2);
  }
}

// A file name and a hint value holding the characters JSON must escape (a
// quote, a backslash, a tab) still give a valid document, in which they
// read back exactly.
TEST_CASE("Api.Trace.AnyFileNameAndHintIsValidJson") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string trace = start_trace();

  const std::string path = flowio::testing::fresh_path("a\"b\\c.dat");
  const std::string odd_value = "say \"cheese\"\t\\ done";
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly,
                         {{"flowio_note", odd_value}, {"cb_buffer_size", "4096"}});
  std::vector<char> data(4096, 'x');
  CHECK(file.write_at_all(4096 * rank, data.data(), static_cast<MPI_Count>(data.size()),
                          MPI_BYTE) == data.size());
  file.close();

  if (rank != 0) return;
  const std::vector<json> events = trace_events(trace);
  for (int r = 0; r < ranks; ++r) {
    CAPTURE(r);
    std::size_t opens = 0;
    for (const json& event : events) {
      if (event.value("name", "") != "open" || event.value("pid", -1) != r ||
          event["args"].value("file", "") != path) {
        continue;
      }
      ++opens;
      CHECK(event["args"]["hints"].value("flowio_note", "") == odd_value);
      CHECK(event["args"]["hints"].value("cb_buffer_size", "") == "4096");
    }
    CHECK(opens == 1);
  }
}
