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
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;
using nlohmann::json;

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
  const int rank = world_rank(), ranks = world_size();
  const std::string trace = start_trace();

  // Ranks interleave 8-byte pieces, so the write goes through two-phase
  // I/O; 4 KiB windows make several iterations.
  constexpr int kPieces = 2048;
  const InterleavedView view(8);
  std::vector<char> data(8 * kPieces, static_cast<char>('a' + rank));
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, flowio::testing::scratch_path(MPI_COMM_WORLD, "trace.dat"),
                         flowio::Mode::create | flowio::Mode::wronly,
                         {{"cb_buffer_size", "4096"}, {"romio_cb_write", "enable"}});
  view.apply(file);
  CHECK(file.write_all(data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) == data.size());
  file.close();

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
  const int rank = world_rank(), ranks = world_size();
  const std::string trace = start_trace();

  constexpr int kPieces = 8192;
  const InterleavedView view(64);
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
  view.apply(file);
  CHECK(file.write_all(data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) == data.size());
  CHECK(file.read_at_all(0, data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) ==
        data.size());
  file.close();

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
  const int rank = world_rank(), ranks = world_size();
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
