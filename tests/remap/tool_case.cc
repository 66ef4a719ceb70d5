// The two ends of the flowio_remap tool test (flowio_remap_tool_test.sh):
//   tool_case make DIR   writes DIR/input, a 4-byte-pixel image written by
//                        bands of rows, and DIR/views, the views of a grid
//                        of overlapping tile readers (one per rank);
//   tool_case check DIR  has every reader read its tile from DIR/output
//                        (the tool's object file) and from DIR/input
//                        through its view, and compares both with the
//                        pixels' known values.
// Exit status 0 when all agree, 1 otherwise (every rank reports).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "flowio/file.h"
#include "flowio/object_file.h"
#include "flowio/remap.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

constexpr int kWidth = 100, kHeight = 60;
constexpr int kOverlapX = 7, kOverlapY = 5;

std::uint32_t pixel(int x, int y) {
  return static_cast<std::uint32_t>(y) * 1000u + static_cast<std::uint32_t>(x);
}

// Reader `rank` of a grid of `ranks` (2 columns when even, else 1): its
// tile's corner and size, overlapping its neighbours.
struct Tile {
  int x = 0, y = 0, width = 0, height = 0;
};

Tile tile_of(int rank, int ranks) {
  const int columns = ranks % 2 == 0 ? 2 : 1;
  const int rows = ranks / columns;
  const int column = rank % columns, row = rank / columns;
  const auto span = [](int index, int count, int length, int overlap, int& start, int& size) {
    const int stride = (length + (count - 1) * overlap) / count - overlap;
    start = index * stride;
    size = index == count - 1 ? length - start : stride + overlap;
  };
  Tile tile;
  span(column, columns, kWidth, kOverlapX, tile.x, tile.width);
  span(row, rows, kHeight, kOverlapY, tile.y, tile.height);
  return tile;
}

MPI_Datatype tile_type(const Tile& tile) {
  const int sizes[2] = {kHeight, kWidth};
  const int subsizes[2] = {tile.height, tile.width};
  const int starts[2] = {tile.y, tile.x};
  MPI_Datatype type;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_UINT32_T, &type);
  MPI_Type_commit(&type);
  return type;
}

bool make(const std::string& dir) {
  const int rank = world_rank(), ranks = world_size();
  const int first = kHeight * rank / ranks, last = kHeight * (rank + 1) / ranks;
  std::vector<std::uint32_t> band;
  for (int y = first; y < last; ++y) {
    for (int x = 0; x < kWidth; ++x) band.push_back(pixel(x, y));
  }
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, dir + "/input",
                                         flowio::Mode::create | flowio::Mode::wronly);
  file.set_size(0);
  file.write_at_all(static_cast<MPI_Offset>(first) * kWidth * 4, band.data(),
                    static_cast<MPI_Count>(band.size()), MPI_UINT32_T);
  file.close();
  const Tile tile = tile_of(rank, ranks);
  MPI_Datatype type = tile_type(tile);
  const flowio::ConsumerViews views = flowio::ConsumerViews::gather(
      MPI_COMM_WORLD,
      {0, MPI_BYTE, type, 0, static_cast<MPI_Offset>(tile.width) * tile.height * 4});
  MPI_Type_free(&type);
  if (rank == 0) views.save(dir + "/views");
  return true;
}

bool check(const std::string& dir) {
  const int rank = world_rank(), ranks = world_size();
  const Tile tile = tile_of(rank, ranks);
  const std::size_t pixels = static_cast<std::size_t>(tile.width) * tile.height;
  std::vector<std::uint32_t> expected;
  for (int y = tile.y; y < tile.y + tile.height; ++y) {
    for (int x = tile.x; x < tile.x + tile.width; ++x) expected.push_back(pixel(x, y));
  }
  flowio::ObjectFile objects = flowio::ObjectFile::open(MPI_COMM_WORLD, dir + "/output");
  std::vector<std::uint32_t> remapped(pixels, 0);
  const std::size_t got = objects.read(static_cast<std::size_t>(rank), 0, remapped.data(),
                                       static_cast<MPI_Count>(pixels), MPI_UINT32_T);
  const bool consumers_ok = objects.consumers() == static_cast<std::size_t>(ranks);
  objects.close();

  flowio::File file = flowio::File::open(MPI_COMM_WORLD, dir + "/input", flowio::Mode::rdonly);
  MPI_Datatype type = tile_type(tile);
  file.set_view(0, MPI_UINT32_T, type);
  MPI_Type_free(&type);
  std::vector<std::uint32_t> original(pixels, 0);
  file.read_at(0, original.data(), static_cast<MPI_Count>(pixels), MPI_UINT32_T);
  file.close();

  const bool ok = consumers_ok && got == pixels * 4 && remapped == expected && original == expected;
  if (!ok) {
    std::fprintf(stderr, "tool_case: rank %d: tile %dx%d at (%d,%d): %s\n", rank, tile.width,
                 tile.height, tile.x, tile.y,
                 !consumers_ok          ? "wrong consumer count"
                 : got != pixels * 4    ? "short read of the object file"
                 : remapped != expected ? "object file differs from the pixels"
                                        : "original read differs from the pixels");
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The two ends of the flowio_remap tool test.", "tool_case");
  std::string dir;
  CLI::App* make_step = app.add_subcommand("make", "write DIR/input and DIR/views");
  make_step->add_option("DIR", dir)->required();
  CLI::App* check_step = app.add_subcommand("check", "read every tile from DIR/output");
  check_step->add_option("DIR", dir)->required();
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  bool ok = false;
  try {
    ok = make_step->parsed() ? make(dir) : check(dir);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tool_case: rank %d: %s\n", world_rank(), error.what());
  }
  const bool all_ok = all_ranks(ok);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
