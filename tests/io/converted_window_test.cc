// Window writes that convert (WindowPiece::reversed_unit): an aggregator
// holding clients' native bytes, each client's part a run of units cut
// into pieces anywhere (a unit may straddle two pieces, far apart in the
// file), writes each piece with its units' bytes reversed, whichever
// method writes the window: sieving, mapped stores, a covered window
// staged or through the cache-sized buffer, vectored. Parts that are not
// converted, or converted in another unit, share the window. Over both
// backends.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/sieve_lock.h"
#include "io/window_io.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// One client's part: its bytes as the aggregator received them, whole
// units of `unit` (0: not converted).
struct Part {
  std::int32_t unit = 0;
  std::vector<char> bytes;
  std::int64_t used = 0;  // bytes handed to pieces so far

  // The byte the file must hold for byte `i` of the part.
  char file_byte(std::int64_t i) const {
    if (unit <= 1) return bytes[static_cast<std::size_t>(i)];
    const std::int64_t start = i / unit * unit;
    return bytes[static_cast<std::size_t>(start + unit - 1 - (i - start))];
  }
};

struct Window {
  std::vector<Part> parts;
  std::vector<WindowPiece> pieces;
  std::vector<std::pair<std::size_t, std::int64_t>> origins;  // per piece: part, position
  std::int64_t end = 0;
};

// `count` pieces of `min_length` to `max_length` bytes laid from `offset`
// on, each given to a part drawn at random and taking that part's next
// bytes; touching, or with gaps below `max_gap`.
// The parts are filled up to whole units afterwards.
Window make_window(std::mt19937_64& rng, const std::vector<std::int32_t>& units,
                   std::int64_t offset, int count, std::int64_t min_length, std::int64_t max_length,
                   std::int64_t max_gap) {
  Window window;
  for (std::int32_t unit : units) window.parts.push_back(Part{unit, {}, 0});
  // Room first: pieces point into the parts' bytes, which must not move.
  for (Part& part : window.parts)
    part.bytes.resize(static_cast<std::size_t>(count * max_length + 16));
  for (int i = 0; i < count; ++i) {
    const std::size_t p = static_cast<std::size_t>(rng() % window.parts.size());
    Part& part = window.parts[p];
    const std::int64_t length =
        min_length +
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_length - min_length + 1));
    const std::int32_t phase = part.unit > 1 ? static_cast<std::int32_t>(part.used % part.unit) : 0;
    window.pieces.push_back(WindowPiece{offset, length, part.bytes.data() + part.used,
                                        part.unit > 1 ? part.unit : 0, phase});
    window.origins.emplace_back(p, part.used);
    part.used += length;
    window.end = offset + length;
    offset +=
        length +
        (max_gap > 0 ? static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_gap)) : 0);
  }
  for (Part& part : window.parts) {
    for (char& byte : part.bytes) byte = static_cast<char>(rng());
  }
  return window;
}

std::vector<char> file_image(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  REQUIRE(size >= 0);
  std::vector<char> image(static_cast<std::size_t>(size));
  REQUIRE(::pread(fd, image.data(), image.size(), 0) == static_cast<ssize_t>(image.size()));
  return image;
}

// Writes the window over `background` bytes of the test pattern and
// checks the file and that memory is unchanged; returns the method.
WindowMethod check(StorageBackend& backend, ScratchFile& file, const Window& window,
                   std::int64_t background, const WindowIoSettings& settings) {
  REQUIRE(::ftruncate(file.fd(), 0) == 0);
  write_pattern_file(file.fd(), background);
  std::vector<char> expected(static_cast<std::size_t>(std::max(background, window.end)), 0);
  fill_pattern(reinterpret_cast<unsigned char*>(expected.data()), 0,
               static_cast<std::size_t>(background));
  for (std::size_t i = 0; i < window.pieces.size(); ++i) {
    const WindowPiece& piece = window.pieces[i];
    const Part& part = window.parts[window.origins[i].first];
    for (std::int64_t b = 0; b < piece.length; ++b) {
      expected[static_cast<std::size_t>(piece.offset + b)] =
          part.file_byte(window.origins[i].second + b);
    }
  }
  std::vector<std::vector<char>> before;
  for (const Part& part : window.parts) before.push_back(part.bytes);
  std::vector<char> staging;
  SieveLock lock(file.fd());
  const WindowIoResult result =
      write_window(backend, file.fd(), window.pieces, settings, staging, &lock);
  const std::vector<char> image = file_image(file.fd());
  const auto at = std::mismatch(image.begin(), image.end(), expected.begin(), expected.end());
  CHECK(image.size() == expected.size());
  CHECK(at.first - image.begin() == static_cast<std::ptrdiff_t>(image.size()));
  for (std::size_t p = 0; p < window.parts.size(); ++p) CHECK(window.parts[p].bytes == before[p]);
  return result.method;
}

}  // namespace

TEST_CASE("Io.ConvertedWindow.EveryMethod") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("converted-window-") + backend.name());
    std::mt19937_64 rng(161);
    const std::vector<std::vector<std::int32_t>> unit_sets = {{8},  {2},    {4, 4},
                                                              {16}, {8, 0}, {8, 4, 0}};
    struct Shape {
      const char* name;
      int count;
      std::int64_t min_length;
      std::int64_t max_length;
      std::int64_t max_gap;
      SieveMode sieve;
      SieveMode mapping;
      bool inside_file;  // the background covers the window (mapped stores need it)
      WindowMethod method;
    };
    const Shape shapes[] = {
        {"sieved", 60, 1, 40, 30, SieveMode::enable, SieveMode::disable, false,
         WindowMethod::sieve},
        {"vectored", 60, 1, 40, 30, SieveMode::disable, SieveMode::disable, false,
         WindowMethod::vectored},
        {"mapped", 3000, 1, 700, 300, SieveMode::enable, SieveMode::enable, true,
         WindowMethod::mapped},
        {"covered, staged", 80, 1, 50, 0, SieveMode::automatic, SieveMode::disable, false,
         WindowMethod::contiguous},
        // Pieces of 64 KiB and more: written from the cache-sized buffer,
        // several times over, its boundaries inside pieces and units.
        {"covered, large pieces", 12, 65537, 200001, 0, SieveMode::automatic, SieveMode::disable,
         false, WindowMethod::contiguous},
        {"vectored, large pieces", 6, 1, 400001, 70000, SieveMode::disable, SieveMode::disable,
         false, WindowMethod::vectored},
    };
    for (const Shape& shape : shapes) {
      for (const std::vector<std::int32_t>& units : unit_sets) {
        const std::string shape_name = shape.name;
        CAPTURE(shape_name);
        CAPTURE(units.size());
        CAPTURE(units.front());
        const std::int64_t start = static_cast<std::int64_t>(rng() % 5000);
        const Window window = make_window(rng, units, start, shape.count, shape.min_length,
                                          shape.max_length, shape.max_gap);
        WindowIoSettings settings{shape.sieve, 16384};
        settings.mapping = shape.mapping;
        const std::int64_t background =
            shape.inside_file ? window.end + 100 : static_cast<std::int64_t>(rng() % 3000);
        CHECK(window_method_name(check(backend, file, window, background, settings)) ==
              std::string(window_method_name(shape.method)));
      }
    }
  });
}

}  // namespace flowio::io::testing
