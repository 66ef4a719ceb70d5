// bench/tiles: the MPI-tile-reader benchmark of Logan and Dickens
// ("Improving I/O Performance through the Dynamic Remapping of Object
// Sets"). Tile writers produce a 2-D image of 32-bit pixels, each writing a
// band of whole rows; a grid of R x R tile readers (one per rank) then each
// reads one tile, the tiles overlapping their neighbours by --overlap_x
// pixels across and --overlap_y down (280 and 150 in the paper, whose tiles
// were 1920 x 1650 pixels, the defaults here). Measured in one run,
// repetitions interleaved, medians, the time of the slowest reader:
//   mpich_read_all     MPICH's MPI-IO, MPI_File_read_all through a
//                      subarray view of the original file;
//   mpich_read         MPICH's MPI-IO, independent MPI_File_read (data
//                      sieving) through the same view;
//   flowio_read_all    flowio's read_at_all through the same view;
//   remapped_flowio    flowio::ObjectFile::read of the reader's section of
//                      the object file (one contiguous read);
//   remapped_mpich     MPICH's MPI_File_read_at of the same section;
// and what remapping costs: the offline translation (flowio::remap_file on
// all ranks, the page-cached original to a new object file), the
// producer's write with and without the online translation
// (ObjectFileWriter beside File::write_at_all), and the extra storage.
// Every read is checked against the pixels' known values.
//
// Usage: mpiexec -n R*R bazel-bin/bench/tiles [--tile_width=1920]
//   [--tile_height=1650] [--overlap_x=280] [--overlap_y=150] [--reps=5]
//   [--dir=$TMPDIR]
// --save=PREFIX instead writes PREFIX.dat (the image, any number of
// writers) and PREFIX.views (the R x R readers' views, --grid=R), for
// tools/flowio_remap; --image_width/--image_height then set the image and
// the tiles follow from it.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_support.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/object_file.h"
#include "flowio/remap.h"

namespace {

using bench::Fields;
using flowio::check_mpi;

constexpr double kMiB = 1024.0 * 1024.0;

// The overlaps' descriptions, for both modes.
constexpr const char* kOverlapX = "pixels a tile shares with its neighbour across";
constexpr const char* kOverlapY = "pixels a tile shares with its neighbour down";

// The image and its R x R tiles.
struct TileGrid {
  int readers_across = 1;
  std::int64_t tile_width = 0, tile_height = 0;
  std::int64_t overlap_x = 0, overlap_y = 0;
  std::int64_t width = 0, height = 0;

  // From the tile size: the image is what R tiles cover.
  static TileGrid from_tiles(int r, std::int64_t tw, std::int64_t th, std::int64_t ox,
                             std::int64_t oy) {
    return TileGrid{r, tw, th, ox, oy, r * tw - (r - 1) * ox, r * th - (r - 1) * oy};
  }
  // From the image size: tiles as equal as the overlaps allow.
  static TileGrid from_image(int r, std::int64_t w, std::int64_t h, std::int64_t ox,
                             std::int64_t oy) {
    return TileGrid{r, (w + (r - 1) * ox) / r, (h + (r - 1) * oy) / r, ox, oy, w, h};
  }

  // Reader k's tile: corner and size; the last row and column of tiles
  // reach the image's edge.
  void tile(int k, std::int64_t& x, std::int64_t& y, std::int64_t& w, std::int64_t& h) const {
    const int column = k % readers_across, row = k / readers_across;
    x = column * (tile_width - overlap_x);
    y = row * (tile_height - overlap_y);
    w = column == readers_across - 1 ? width - x : tile_width;
    h = row == readers_across - 1 ? height - y : tile_height;
  }

  std::int64_t image_bytes() const { return width * height * 4; }

  bench::Datatype tile_type(int k) const {
    std::int64_t x, y, w, h;
    tile(k, x, y, w, h);
    const int sizes[2] = {static_cast<int>(height), static_cast<int>(width)};
    const int subsizes[2] = {static_cast<int>(h), static_cast<int>(w)};
    const int starts[2] = {static_cast<int>(y), static_cast<int>(x)};
    MPI_Datatype type;
    check_mpi(
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_UINT32_T, &type),
        "MPI_Type_create_subarray");
    return bench::Datatype(type);
  }

  flowio::ConsumerViews views() const {
    std::vector<bench::Datatype> types;
    std::vector<flowio::ConsumerView> views;
    for (int k = 0; k < readers_across * readers_across; ++k) {
      std::int64_t x, y, w, h;
      tile(k, x, y, w, h);
      types.push_back(tile_type(k));
      views.push_back({0, MPI_BYTE, types.back().get(), 0, w * h * 4});
    }
    return flowio::ConsumerViews::describe(views);
  }
};

std::uint32_t pixel(const TileGrid& grid, std::int64_t x, std::int64_t y) {
  return static_cast<std::uint32_t>(y * grid.width + x);
}

// Writer `rank` of `writers`: its band of rows, [first_row, last_row).
std::vector<std::uint32_t> band(const TileGrid& grid, int rank, int writers,
                                std::int64_t& first_row) {
  first_row = grid.height * rank / writers;
  const std::int64_t last_row = grid.height * (rank + 1) / writers;
  std::vector<std::uint32_t> pixels(static_cast<std::size_t>((last_row - first_row) * grid.width));
  for (std::int64_t y = first_row; y < last_row; ++y) {
    for (std::int64_t x = 0; x < grid.width; ++x) {
      pixels[static_cast<std::size_t>((y - first_row) * grid.width + x)] = pixel(grid, x, y);
    }
  }
  return pixels;
}

std::vector<std::uint32_t> expected_tile(const TileGrid& grid, int k) {
  std::int64_t x0, y0, w, h;
  grid.tile(k, x0, y0, w, h);
  std::vector<std::uint32_t> pixels;
  pixels.reserve(static_cast<std::size_t>(w * h));
  for (std::int64_t y = y0; y < y0 + h; ++y) {
    for (std::int64_t x = x0; x < x0 + w; ++x) pixels.push_back(pixel(grid, x, y));
  }
  return pixels;
}

void write_image(const TileGrid& grid, const std::string& path, int rank, int writers) {
  std::int64_t first_row = 0;
  const std::vector<std::uint32_t> pixels = band(grid, rank, writers, first_row);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
  file.set_size(0);
  file.write_at_all(first_row * grid.width * 4, pixels.data(),
                    static_cast<MPI_Count>(pixels.size()), MPI_UINT32_T);
  file.close();
}

int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  check_mpi(query(MPI_COMM_WORLD, &value), "MPI_Comm_rank/size");
  return value;
}

void save(bench::Options& options, bench::Report& report, const std::string& prefix) {
  const int r = static_cast<int>(options.integer(
      "grid", 3, "tile readers per row and per column of the R x R grid whose views are saved"));
  const std::int64_t width = options.integer("image_width", 16384, "image width in pixels");
  const std::int64_t height = options.integer("image_height", 16384, "image height in pixels");
  const std::int64_t ox = options.integer("overlap_x", 280, kOverlapX);
  const std::int64_t oy = options.integer("overlap_y", 150, kOverlapY);
  options.finish();
  const TileGrid grid = TileGrid::from_image(r, width, height, ox, oy);
  write_image(grid, prefix + ".dat", world(MPI_Comm_rank), world(MPI_Comm_size));
  if (world(MPI_Comm_rank) == 0) grid.views().save(prefix + ".views");
  report.line(Fields()
                  .add("mode", "save")
                  .add("image", std::to_string(width) + "x" + std::to_string(height))
                  .add("image_MiB", grid.image_bytes() / kMiB)
                  .add("readers", std::to_string(r) + "x" + std::to_string(r))
                  .add("files", prefix + ".dat," + prefix + ".views"));
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const std::string prefix = options.text(
      "save", "",
      "PREFIX: write PREFIX.dat and PREFIX.views for tools/flowio_remap instead of measuring "
      "(its options: --save=PREFIX --help)");
  if (!prefix.empty()) return save(options, report, prefix);
  const bench::Common common(options);
  const std::int64_t tw = options.integer("tile_width", 1920, "tile width in pixels");
  const std::int64_t th = options.integer("tile_height", 1650, "tile height in pixels");
  const std::int64_t ox = options.integer("overlap_x", 280, kOverlapX);
  const std::int64_t oy = options.integer("overlap_y", 150, kOverlapY);
  options.finish();
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  int r = 1;
  while ((r + 1) * (r + 1) <= ranks) ++r;
  if (r * r != ranks) throw std::invalid_argument("run on R*R ranks (4 for 2x2, 9 for 3x3)");
  if (ox >= tw || oy >= th) throw std::invalid_argument("overlaps must be smaller than tiles");
  const TileGrid grid = TileGrid::from_tiles(r, tw, th, ox, oy);

  const bench::ScratchFile original(common.dir, "tiles_original");
  const bench::ScratchFile objects(common.dir, "tiles_objects");
  const bench::ScratchFile online(common.dir, "tiles_online");
  const flowio::ConsumerViews views = grid.views();
  const std::vector<std::uint32_t> expected = expected_tile(grid, rank);
  const MPI_Count pixels = static_cast<MPI_Count>(expected.size());
  std::vector<std::uint32_t> buffer(expected.size());
  const bench::Datatype tile = grid.tile_type(rank);
  std::int64_t first_row = 0;
  const std::vector<std::uint32_t> my_band = band(grid, rank, ranks, first_row);
  const MPI_Offset band_offset = first_row * grid.width * 4;

  const auto check = [&](const std::string& what) {
    bench::verify(std::memcmp(buffer.data(), expected.data(), expected.size() * 4) == 0,
                  what + ": the tile read differs from the image");
    std::fill(buffer.begin(), buffer.end(), 0u);
  };
  // The producer, plain and with the online translation beside it.
  const auto write_plain = [&] {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, original.path(),
                                           flowio::Mode::create | flowio::Mode::wronly);
    file.write_at_all(band_offset, my_band.data(), static_cast<MPI_Count>(my_band.size()),
                      MPI_UINT32_T);
    file.close();
  };
  const auto write_with_online = [&] {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, original.path(),
                                           flowio::Mode::create | flowio::Mode::wronly);
    flowio::Future<std::size_t> written = file.iwrite_at_all(
        band_offset, my_band.data(), static_cast<MPI_Count>(my_band.size()), MPI_UINT32_T);
    flowio::ObjectFileWriter writer =
        flowio::ObjectFileWriter::create(MPI_COMM_WORLD, online.path(), views, grid.image_bytes());
    writer.write(band_offset, MPI_BYTE, MPI_BYTE, 0, my_band.data(),
                 static_cast<MPI_Count>(my_band.size()), MPI_UINT32_T);
    written.get();
    writer.close();
    file.close();
  };
  write_plain();

  std::vector<double> plain_s, online_s, remap_s;
  std::vector<double> mpich_all_s, mpich_ind_s, flowio_all_s, remapped_s, remapped_mpich_s;
  flowio::RemapReport remap;
  for (int rep = 0; rep < common.reps; ++rep) {
    plain_s.push_back(bench::time_collective(write_plain));
    online_s.push_back(bench::time_collective(write_with_online));
    remap_s.push_back(bench::time_collective([&] {
      remap = flowio::remap_file(MPI_COMM_WORLD, original.path(), views, objects.path());
    }));

    MPI_File mpich = MPI_FILE_NULL;
    check_mpi(MPI_File_open(MPI_COMM_WORLD, original.path().c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL,
                            &mpich),
              "MPI_File_open");
    check_mpi(MPI_File_set_view(mpich, 0, MPI_UINT32_T, tile.get(), "native", MPI_INFO_NULL),
              "MPI_File_set_view");
    MPI_File sections = MPI_FILE_NULL;
    check_mpi(MPI_File_open(MPI_COMM_WORLD, objects.path().c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL,
                            &sections),
              "MPI_File_open");
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, original.path(), flowio::Mode::rdonly);
    file.set_view(0, MPI_UINT32_T, tile.get());
    flowio::ObjectFile remapped = flowio::ObjectFile::open(MPI_COMM_WORLD, objects.path());
    const MPI_Offset section = remapped.section_offset(static_cast<std::size_t>(rank));

    // The five reads, in a rotating order so that none always comes first.
    const std::vector<std::pair<std::vector<double>*, std::function<void()>>> reads = {
        {&mpich_all_s,
         [&] {
           check_mpi(MPI_File_read_at_all_c(mpich, 0, buffer.data(), pixels, MPI_UINT32_T,
                                            MPI_STATUS_IGNORE),
                     "MPI_File_read_at_all_c");
         }},
        {&mpich_ind_s,
         [&] {
           check_mpi(
               MPI_File_read_at_c(mpich, 0, buffer.data(), pixels, MPI_UINT32_T, MPI_STATUS_IGNORE),
               "MPI_File_read_at_c");
         }},
        {&flowio_all_s, [&] { file.read_at_all(0, buffer.data(), pixels, MPI_UINT32_T); }},
        {&remapped_s,
         [&] {
           remapped.read(static_cast<std::size_t>(rank), 0, buffer.data(), pixels, MPI_UINT32_T);
         }},
        {&remapped_mpich_s, [&] {
           check_mpi(MPI_File_read_at_c(sections, section, buffer.data(), pixels, MPI_UINT32_T,
                                        MPI_STATUS_IGNORE),
                     "MPI_File_read_at_c");
         }}};
    for (std::size_t k = 0; k < reads.size(); ++k) {
      const auto& [times, read] = reads[(k + static_cast<std::size_t>(rep)) % reads.size()];
      times->push_back(bench::time_collective(read));
      check("read " + std::to_string(k));
    }
    remapped.close();
    file.close();
    check_mpi(MPI_File_close(&sections), "MPI_File_close");
    check_mpi(MPI_File_close(&mpich), "MPI_File_close");
  }

  const std::string readers = std::to_string(r) + "x" + std::to_string(r);
  const Fields common_fields =
      Fields()
          .add("readers", readers)
          .add("tile", std::to_string(tw) + "x" + std::to_string(th))
          .add("image", std::to_string(grid.width) + "x" + std::to_string(grid.height))
          .add("image_MiB", grid.image_bytes() / kMiB);
  const double tile_mib = static_cast<double>(expected.size()) * 4 / kMiB;
  const double mpich_all = bench::median(mpich_all_s);
  for (const auto& [name, times] : {std::pair{"mpich_read_all", &mpich_all_s},
                                    {"mpich_read", &mpich_ind_s},
                                    {"flowio_read_all", &flowio_all_s},
                                    {"remapped_flowio", &remapped_s},
                                    {"remapped_mpich", &remapped_mpich_s}}) {
    const double seconds = bench::median(*times);
    report.line(Fields(common_fields)
                    .add("op", "read_tile")
                    .add("impl", name)
                    .add("seconds", seconds)
                    .add("tile_MiBps", tile_mib / seconds)
                    .add("vs_mpich_read_all", mpich_all / seconds)
                    .add("vs_mpich_read", bench::median(mpich_ind_s) / seconds));
  }
  const double remap_seconds = bench::median(remap_s);
  report.line(Fields(common_fields)
                  .add("op", "remap_offline")
                  .add("impl", "flowio")
                  .add("seconds", remap_seconds)
                  .add("GiBps", grid.image_bytes() / kMiB / 1024 / remap_seconds));
  for (const auto& [name, times] :
       {std::pair{"write", &plain_s}, {"write_with_online_remap", &online_s}}) {
    report.line(Fields(common_fields)
                    .add("op", name)
                    .add("impl", "flowio")
                    .add("seconds", bench::median(*times))
                    .add("GiBps", grid.image_bytes() / kMiB / 1024 / bench::median(*times)));
  }
  report.line(Fields(common_fields)
                  .add("op", "storage")
                  .add("original_bytes", grid.image_bytes())
                  .add("object_file_bytes", remap.object_file_bytes)
                  .add("index_bytes", remap.index_bytes)
                  .add("extra_percent",
                       100.0 * static_cast<double>(remap.object_file_bytes - grid.image_bytes()) /
                           static_cast<double>(grid.image_bytes())));
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "tiles", benchmark); }
