// The Perfetto / Chrome trace (FLOWIO_TRACE): after a collective write of
// several buffer iterations and close, rank 0's trace file holds complete
// events of every rank, for the stages that ran, with track names.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

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

std::string whole_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("Api.Trace.EveryRankAndStage") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string trace = flowio::testing::scratch_path(MPI_COMM_WORLD, "trace.json");
  // Read once, at the first trace event: set before any flowio call.
  setenv("FLOWIO_TRACE", trace.c_str(), 1);

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
  const std::string text = whole_file(trace);
  CHECK(text.rfind("{\"traceEvents\":[", 0) == 0);
  CHECK(text.find("]}") != std::string::npos);
  for (int r = 0; r < ranks; ++r) {
    CAPTURE(r);
    CHECK(occurrences(text, "\"ph\":\"X\",\"pid\":" + std::to_string(r) + ",") > 0);
  }
  for (const char* stage : {"offsets", "realms", "metadata", "exchange", "io", "agree"}) {
    CAPTURE(stage);
    CHECK(occurrences(text, std::string("\"cat\":\"") + stage + "\"") > 0);
    CHECK(occurrences(text, std::string("\"args\":{\"name\":\"") + stage + "\"}") >=
          static_cast<std::size_t>(ranks));
  }
  // 16 KiB of data per rank in 4 KiB windows: several io spans per write.
  CHECK(occurrences(text, "\"cat\":\"io\"") >= 4);
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
  const std::string trace = flowio::testing::scratch_path(MPI_COMM_WORLD, "trace.json");
  setenv("FLOWIO_TRACE", trace.c_str(), 1);

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
  const std::string text = whole_file(trace);
  const auto number_after = [&](std::size_t at, const std::string& key) {
    const std::size_t found = text.find("\"" + key + "\":", at);
    REQUIRE(found != std::string::npos);
    return std::stoll(text.substr(found + key.size() + 3));
  };
  for (const char* stage : {"compress", "decompress"}) {
    CAPTURE(stage);
    int compressed_spans = 0;
    const std::string category = std::string("\"cat\":\"") + stage + "\"";
    for (std::size_t at = text.find(category); at != std::string::npos;
         at = text.find(category, at + 1)) {
      const std::size_t event = text.rfind('{', at);
      const std::string label = text.substr(event, at - event);
      if (label.find(" lzo\"") == std::string::npos) continue;
      ++compressed_spans;
      CHECK(number_after(at, "wire_bytes") < number_after(at, "bytes"));
    }
    CHECK(compressed_spans >= 2);
  }
}
