// Kept whole (over 500 lines): one random-piece model (PieceSet) and the tests that check by it.
// Window I/O: write_window leaves the file as the background with the
// pieces laid over it (holes unchanged, which is what makes sieving
// correct); read_window fills each piece with the file's bytes and zeros
// past end of file; each chooses the method its settings call for; runs
// of more than IOV_MAX touching pieces work. Over both backends.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "io/mapped_sieve.h"
#include "io/window_io.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// Pieces of one window, their memory back to back in one buffer, each
// followed by a guard byte.
class PieceSet {
 public:
  void add(std::int64_t offset, std::int64_t length) {
    offsets_.push_back(offset);
    lengths_.push_back(length);
    memory_offsets_.push_back(memory_.size());
    memory_.resize(memory_.size() + static_cast<std::size_t>(length) + 1, guard);
  }

  std::size_t size() const { return offsets_.size(); }
  std::int64_t begin() const { return offsets_.front(); }
  std::int64_t end() const { return offsets_.back() + lengths_.back(); }
  std::int64_t data() const {
    std::int64_t bytes = 0;
    for (std::int64_t length : lengths_) bytes += length;
    return bytes;
  }

  // Runs of touching pieces, the number of requests a vectored transfer
  // needs when no run is longer than IOV_MAX pieces.
  std::int64_t runs() const {
    std::int64_t runs = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      if (i == 0 || offsets_[i - 1] + lengths_[i - 1] != offsets_[i]) ++runs;
    }
    return runs;
  }

  std::vector<WindowPiece> pieces() {
    std::vector<WindowPiece> out;
    for (std::size_t i = 0; i < size(); ++i) {
      out.push_back(WindowPiece{offsets_[i], lengths_[i], memory_.data() + memory_offsets_[i]});
    }
    return out;
  }

  void fill_random(std::mt19937_64& rng) {
    for (std::size_t i = 0; i < size(); ++i) {
      char* data = memory_.data() + memory_offsets_[i];
      for (std::int64_t b = 0; b < lengths_[i]; ++b) data[b] = static_cast<char>(rng());
    }
  }

  void fill(char value) {
    for (std::size_t i = 0; i < size(); ++i) {
      std::fill_n(memory_.data() + memory_offsets_[i], lengths_[i], value);
    }
  }

  // Lays the pieces' bytes over `image`, growing it (with zeros) as needed.
  void overlay(std::vector<char>& image) const {
    if (static_cast<std::int64_t>(image.size()) < end()) image.resize(end(), 0);
    for (std::size_t i = 0; i < size(); ++i) {
      std::copy_n(memory_.data() + memory_offsets_[i], lengths_[i], image.begin() + offsets_[i]);
    }
  }

  // After a read of a file holding `image`: each piece holds the image's
  // bytes, zeros past its end, and every guard is intact. Returns the first
  // mismatch, or "".
  std::string check_read(const std::vector<char>& image) const {
    const auto file_size = static_cast<std::int64_t>(image.size());
    for (std::size_t i = 0; i < size(); ++i) {
      const char* data = memory_.data() + memory_offsets_[i];
      for (std::int64_t b = 0; b <= lengths_[i]; ++b) {
        const std::int64_t x = offsets_[i] + b;
        const char expected = b == lengths_[i] ? guard : x < file_size ? image[x] : '\0';
        if (data[b] != expected) {
          return "piece " + std::to_string(i) + " [" + std::to_string(offsets_[i]) + "+" +
                 std::to_string(lengths_[i]) + ") byte " + std::to_string(b) +
                 (b == lengths_[i] ? " (guard)"
                  : x < file_size  ? ""
                                   : " (past end of file)") +
                 ": " + std::to_string(data[b]) + ", expected " + std::to_string(expected);
        }
      }
    }
    return "";
  }

  // Bytes of the pieces that lie before `file_size`.
  std::int64_t bytes_before(std::int64_t file_size) const {
    std::int64_t bytes = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      bytes += std::clamp<std::int64_t>(file_size - offsets_[i], 0, lengths_[i]);
    }
    return bytes;
  }

  std::string describe() const {
    std::string text = std::to_string(size()) + " pieces:";
    for (std::size_t i = 0; i < std::min<std::size_t>(size(), 20); ++i) {
      text += " [" + std::to_string(offsets_[i]) + "+" + std::to_string(lengths_[i]) + ")";
    }
    return text + (size() > 20 ? " ..." : "");
  }

 private:
  static constexpr char guard = '\x3c';
  std::vector<std::int64_t> offsets_, lengths_;
  std::vector<std::size_t> memory_offsets_;
  std::vector<char> memory_;
};

// Random sorted pieces that do not overlap. About one window in four has
// no holes; otherwise gaps and lengths come from scales drawn per window,
// so that mean distances fall on both sides of the thresholds.
PieceSet random_pieces(std::mt19937_64& rng) {
  const std::int64_t gap_scales[] = {1, 10, 200, 5000};
  const std::int64_t length_scales[] = {1, 8, 300, 5000};
  const std::int64_t max_gap = gap_scales[rng() % 4];
  const std::int64_t max_length = length_scales[rng() % 4];
  const bool touching = rng() % 4 == 0;
  const int count = static_cast<int>(rng() % 60) + 1;
  PieceSet set;
  std::int64_t offset = static_cast<std::int64_t>(rng() % 3000);
  for (int i = 0; i < count; ++i) {
    if (i > 0 && !touching && rng() % 3 != 0) {
      offset += static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_gap)) + 1;
    }
    const std::int64_t length =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_length)) + 1;
    set.add(offset, length);
    offset += length;
  }
  return set;
}

// The file's bytes, read with plain pread.
std::vector<char> file_image(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  REQUIRE(size >= 0);
  std::vector<char> image(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t got = ::pread(fd, image.data() + done, image.size() - done, done);
    REQUIRE(got > 0);
    done += static_cast<std::size_t>(got);
  }
  return image;
}

// Makes the file `size` bytes of the test pattern; returns its image.
std::vector<char> reset_background(ScratchFile& file, std::int64_t size) {
  REQUIRE(::ftruncate(file.fd(), 0) == 0);
  write_pattern_file(file.fd(), size);
  std::vector<char> image(static_cast<std::size_t>(size));
  fill_pattern(reinterpret_cast<unsigned char*>(image.data()), 0, image.size());
  return image;
}

std::string first_difference(const std::vector<char>& got, const std::vector<char>& expected) {
  if (got.size() != expected.size()) {
    return "file size " + std::to_string(got.size()) + ", expected " +
           std::to_string(expected.size());
  }
  const auto at = std::mismatch(got.begin(), got.end(), expected.begin());
  if (at.first == got.end()) return "";
  const auto x = at.first - got.begin();
  return "file byte " + std::to_string(x) + ": " + std::to_string(*at.first) + ", expected " +
         std::to_string(*at.second);
}

// The method the header's rules give.
WindowMethod expected_method(const PieceSet& set, const WindowIoSettings& settings) {
  const std::int64_t extent = set.end() - set.begin();
  if (set.data() == extent) return WindowMethod::contiguous;
  switch (settings.sieve) {
    case SieveMode::enable:
      return WindowMethod::sieve;
    case SieveMode::disable:
      return WindowMethod::vectored;
    case SieveMode::automatic:
      break;
  }
  // Mean distance extent / pieces below the threshold, without rounding.
  return extent < settings.sieve_threshold * static_cast<std::int64_t>(set.size())
             ? WindowMethod::sieve
             : WindowMethod::vectored;
}

const char* name(WindowMethod method) { return window_method_name(method); }

// A background size: none, ending inside the window, or past it.
std::int64_t random_file_size(std::mt19937_64& rng, const PieceSet& set) {
  switch (rng() % 4) {
    case 0:
      return 0;
    case 1:
      return set.end() + static_cast<std::int64_t>(rng() % 5000);
    default:
      return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(set.end() + 1));
  }
}

// The windows of these tests are their files' only writers: each holds a
// lock of its own, as an aggregator holds its file's.
WindowIoResult write_window_locked(StorageBackend& backend, int fd,
                                   std::span<const WindowPiece> pieces,
                                   const WindowIoSettings& settings, std::vector<char>& staging) {
  SieveLock lock(fd);
  return write_window(backend, fd, pieces, settings, staging, &lock);
}

// Writes `set` over a background of `file_size` bytes and checks file,
// memory, method and counts.
void check_write(StorageBackend& backend, ScratchFile& file, PieceSet& set, std::int64_t file_size,
                 const WindowIoSettings& settings, std::vector<char>& staging) {
  std::vector<char> expected = reset_background(file, file_size);
  set.overlay(expected);
  std::vector<char> memory_before;
  set.overlay(memory_before);
  std::fill(staging.begin(), staging.end(), '\x77');
  const auto pieces = set.pieces();
  const WindowIoResult result = write_window_locked(backend, file.fd(), pieces, settings, staging);
  CHECK(first_difference(file_image(file.fd()), expected) == "");
  std::vector<char> memory_after;
  set.overlay(memory_after);
  CHECK(memory_after == memory_before);
  const WindowMethod method = expected_method(set, settings);
  CHECK(name(result.method) == std::string(name(method)));
  const std::int64_t extent = set.end() - set.begin();
  if (method == WindowMethod::sieve) {
    CHECK(result.requests == 2);
    CHECK(result.file_bytes == 2 * extent);
  } else {
    CHECK(result.file_bytes == set.data());
    // One request per run, and one more each time a run passes IOV_MAX.
    CHECK(result.requests >= set.runs());
    CHECK(result.requests <= set.runs() + static_cast<std::int64_t>(set.size()) / 1024);
    if (set.size() <= 1024) CHECK(result.requests == set.runs());
  }
}

// Reads `set` from a background of `file_size` bytes and checks memory,
// bytes_read, method and counts.
WindowMethod check_read(StorageBackend& backend, ScratchFile& file, PieceSet& set,
                        std::int64_t file_size, const WindowIoSettings& settings,
                        std::vector<char>& staging) {
  const std::vector<char> image = reset_background(file, file_size);
  set.fill('\x5a');
  std::fill(staging.begin(), staging.end(), '\x77');
  const auto pieces = set.pieces();
  const WindowIoResult result = read_window(backend, file.fd(), pieces, settings, staging);
  CHECK(set.check_read(image) == "");
  CHECK(result.bytes_read == set.bytes_before(file_size));
  CHECK(::lseek(file.fd(), 0, SEEK_END) == file_size);
  const WindowMethod method = expected_method(set, settings);
  CHECK(name(result.method) == std::string(name(method)));
  if (method == WindowMethod::sieve) {
    CHECK(result.requests == 1);
    CHECK(result.file_bytes == set.end() - set.begin());
  } else {
    CHECK(result.file_bytes == result.bytes_read);
    CHECK(result.requests >= set.runs());
    if (set.size() <= 1024) CHECK(result.requests == set.runs());
  }
  return result.method;
}

const SieveMode modes[] = {SieveMode::automatic, SieveMode::enable, SieveMode::disable};

// Calls check(settings) once per sieve mode, each with a threshold drawn
// from `rng`, the case captured for a failure's report.
template <typename Check>
void for_each_mode(std::mt19937_64& rng, const PieceSet& set, std::int64_t file_size, Check check) {
  constexpr std::int64_t kThresholds[] = {1, 16, 512, 8192, 1 << 20};
  for (SieveMode mode : modes) {
    const WindowIoSettings settings{mode, kThresholds[rng() % std::size(kThresholds)]};
    CAPTURE(set.describe());
    CAPTURE(file_size);
    CAPTURE(static_cast<int>(mode));
    CAPTURE(settings.sieve_threshold);
    check(settings);
  }
}

}  // namespace

// Sieve modes parse from ROMIO's values; methods have names.
TEST_CASE("Io.WindowIo.Names") {
  CHECK(parse_sieve_mode("automatic") == SieveMode::automatic);
  CHECK(parse_sieve_mode("enable") == SieveMode::enable);
  CHECK(parse_sieve_mode("disable") == SieveMode::disable);
  for (const char* bad : {"", "auto", "Enable", "disabled", "true"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_sieve_mode(bad), flowio::UsageError);
  }
  CHECK(std::string(window_method_name(WindowMethod::none)) == "none");
  CHECK(std::string(window_method_name(WindowMethod::contiguous)) == "contiguous");
  CHECK(std::string(window_method_name(WindowMethod::sieve)) == "sieve");
  CHECK(std::string(window_method_name(WindowMethod::mapped)) == "mapped");
  CHECK(std::string(window_method_name(WindowMethod::vectored)) == "vectored");
}

// A window without pieces moves nothing.
TEST_CASE("Io.WindowIo.NoPieces") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-none-") + backend.name());
    const std::vector<char> image = reset_background(file, 100);
    std::vector<char> staging;
    for (SieveMode mode : modes) {
      const WindowIoSettings settings{mode, 8192};
      const WindowIoResult written =
          write_window(backend, file.fd(), {}, settings, staging, nullptr);
      const WindowIoResult read = read_window(backend, file.fd(), {}, settings, staging);
      for (const WindowIoResult& result : {written, read}) {
        CHECK(result.method == WindowMethod::none);
        CHECK(result.requests == 0);
        CHECK(result.file_bytes == 0);
        CHECK(result.bytes_read == 0);
      }
      CHECK(file_image(file.fd()) == image);
    }
  });
}

// Holes between pieces keep the background (or read as zero past its end)
// whichever method writes the window; the method follows the settings.
TEST_CASE("Io.WindowIo.RandomWrites") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-write-") + backend.name());
    std::mt19937_64 rng(61);
    std::vector<char> staging;
    for (int trial = 0; trial < 150; ++trial) {
      PieceSet set = random_pieces(rng);
      set.fill_random(rng);
      const std::int64_t file_size = random_file_size(rng, set);
      for_each_mode(rng, set, file_size, [&](const WindowIoSettings& settings) {
        check_write(backend, file, set, file_size, settings, staging);
      });
    }
  });
}

// Reads fill every piece with the file's bytes and zeros past its end and
// count the bytes before it, whichever method reads the window.
TEST_CASE("Io.WindowIo.RandomReads") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-read-") + backend.name());
    std::mt19937_64 rng(62);
    std::vector<char> staging;
    int chosen[5] = {};  // by WindowMethod
    for (int trial = 0; trial < 150; ++trial) {
      PieceSet set = random_pieces(rng);
      const std::int64_t file_size = random_file_size(rng, set);
      for_each_mode(rng, set, file_size, [&](const WindowIoSettings& settings) {
        ++chosen[static_cast<int>(check_read(backend, file, set, file_size, settings, staging))];
      });
    }
    // Every method was exercised.
    CHECK(chosen[static_cast<int>(WindowMethod::contiguous)] > 20);
    CHECK(chosen[static_cast<int>(WindowMethod::sieve)] > 20);
    CHECK(chosen[static_cast<int>(WindowMethod::vectored)] > 20);
  });
}

// Pieces of different clients may overlap (a collective read of the same
// bytes): a piece sorted last need not end last, and overlaps may add up to
// the extent while a gap remains. Every method still fills every piece with
// the file's bytes.
TEST_CASE("Io.WindowIo.OverlappingReadPieces") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-overlap-") + backend.name());
    std::vector<char> staging;
    const std::vector<char> image = reset_background(file, 4096);
    for (SieveMode mode : modes) {
      for (SieveMode mapping : {SieveMode::disable, SieveMode::enable}) {
        // [100, 400) then [150, 200) (inside it, sorted after it), then a
        // gap [400, 450) that the overlap's 50 bytes make up in the sum,
        // then [450, 500).
        PieceSet set;
        set.add(100, 300);
        set.add(150, 50);
        set.add(450, 50);
        set.fill('\x5a');
        WindowIoSettings settings{mode, 8192};
        settings.mapping = mapping;
        CAPTURE(static_cast<int>(mode));
        CAPTURE(static_cast<int>(mapping));
        const auto pieces = set.pieces();
        const WindowIoResult result = read_window(backend, file.fd(), pieces, settings, staging);
        CHECK(set.check_read(image) == "");
        CHECK(result.bytes_read == set.data());
        CHECK(result.method != WindowMethod::contiguous);
      }
    }
  });
}

// The automatic rule at its edge: sieve while extent / pieces is below the
// threshold, vectored from it on.
TEST_CASE("Io.WindowIo.AutomaticThreshold") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-threshold-") + backend.name());
    std::vector<char> staging;
    // 10 pieces of 10 bytes, 100 apart: extent 910, mean distance 91.
    PieceSet set;
    for (int i = 0; i < 10; ++i) set.add(1000 + 100 * i, 10);
    for (std::int64_t threshold : {91, 92}) {
      CAPTURE(threshold);
      const WindowIoSettings settings{SieveMode::automatic, threshold};
      set.fill('\x11');
      const WindowIoResult written =
          write_window_locked(backend, file.fd(), set.pieces(), settings, staging);
      CHECK(written.method == (threshold == 92 ? WindowMethod::sieve : WindowMethod::vectored));
      const WindowMethod read = check_read(backend, file, set, 1500, settings, staging);
      CHECK(read == written.method);
    }
  });
}

// More than IOV_MAX (1024) touching pieces, with and without a hole, with
// end of file inside them: still one correct transfer.
TEST_CASE("Io.WindowIo.ManyTouchingPieces") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-many-") + backend.name());
    std::mt19937_64 rng(63);
    std::vector<char> staging;
    for (bool hole : {false, true}) {
      PieceSet set;
      std::int64_t offset = 777;
      for (int i = 0; i < 3000; ++i) {
        if (hole && i == 1500) offset += 5;
        const std::int64_t length = static_cast<std::int64_t>(rng() % 4) + 1;
        set.add(offset, length);
        offset += length;
      }
      CHECK(set.runs() == (hole ? 2 : 1));
      for (SieveMode mode : modes) {
        const WindowIoSettings settings{mode, 8192};
        CAPTURE(hole);
        CAPTURE(static_cast<int>(mode));
        set.fill_random(rng);
        check_write(backend, file, set, 0, settings, staging);
        check_write(backend, file, set, set.end() + 100, settings, staging);
        check_read(backend, file, set, set.end() + 100, settings, staging);
        // End of file in the middle of the pieces.
        check_read(backend, file, set, set.begin() + (set.end() - set.begin()) / 3, settings,
                   staging);
      }
    }
  });
}

// A covered window goes through the staging buffer in one request while
// its pieces average under 512 bytes (reads) or 64 KiB (writes); from
// there on as iovecs, one request per IOV_MAX pieces.
TEST_CASE("Io.WindowIo.CoveredWindowsStageSmallPieces") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-covered-") + backend.name());
    std::mt19937_64 rng(64);
    std::vector<char> staging;
    for (const std::int64_t length : {16, 511, 512, 1288, 8192}) {
      PieceSet set;
      for (std::int64_t i = 0; i < 1100; ++i) set.add(4096 + i * length, length);
      set.fill_random(rng);
      CAPTURE(length);
      const WindowIoSettings settings;
      const auto pieces = set.pieces();
      const WindowIoResult written =
          write_window_locked(backend, file.fd(), pieces, settings, staging);
      CHECK(written.method == WindowMethod::contiguous);
      CHECK(written.requests == 1);
      const WindowIoResult read = read_window(backend, file.fd(), pieces, settings, staging);
      CHECK(read.method == WindowMethod::contiguous);
      CHECK(read.requests == (length < 512 ? 1 : 2));
      check_write(backend, file, set, 0, settings, staging);
      check_read(backend, file, set, set.end(), settings, staging);
    }
  });
}

// Sieved windows of 1 MiB and more go through a mapping of the file where
// it pays: the file and the memory come out exactly as read-modify-write
// leaves them (holes kept, zeros past end of file on reads), and the
// method says which path ran.
TEST_CASE("Io.WindowIo.MappedSieve") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-mapped-") + backend.name());
    std::mt19937_64 rng(64);
    std::vector<char> staging;
    for (int trial = 0; trial < 12; ++trial) {
      PieceSet set;
      std::int64_t offset = static_cast<std::int64_t>(rng() % 10000);
      const std::int64_t extent = kMapAtLeastBytes + static_cast<std::int64_t>(rng() % (2 << 20));
      const std::int64_t end = offset + extent;
      while (offset < end) {
        const std::int64_t length =
            std::min<std::int64_t>(static_cast<std::int64_t>(rng() % 64) + 1, end - offset);
        set.add(offset, length);
        offset += length + static_cast<std::int64_t>(rng() % 300) + 1;
      }
      set.fill_random(rng);
      const std::int64_t file_size = random_file_size(rng, set);
      CAPTURE(trial);
      CAPTURE(set.describe());
      CAPTURE(file_size);
      for (bool mapping : {true, false}) {
        CAPTURE(mapping);
        WindowIoSettings settings{SieveMode::enable, 8192};
        settings.mapping = mapping ? SieveMode::automatic : SieveMode::disable;
        std::vector<char> expected = reset_background(file, file_size);
        set.overlay(expected);
        const WindowIoResult written =
            write_window_locked(backend, file.fd(), set.pieces(), settings, staging);
        // Only extents inside the file (here all cached) are mapped for
        // writing; past end of file, copying costs less.
        const bool mapped_write = mapping && set.end() <= file_size;
        CHECK(name(written.method) ==
              std::string(name(mapped_write ? WindowMethod::mapped : WindowMethod::sieve)));
        CHECK(first_difference(file_image(file.fd()), expected) == "");

        const std::vector<char> image = reset_background(file, file_size);
        set.fill('\x5a');
        const WindowIoResult read =
            read_window(backend, file.fd(), set.pieces(), settings, staging);
        CHECK(name(read.method) ==
              std::string(name(mapping ? WindowMethod::mapped : WindowMethod::sieve)));
        CHECK(set.check_read(image) == "");
        CHECK(read.bytes_read == set.bytes_before(file_size));
        CHECK(::lseek(file.fd(), 0, SEEK_END) == file_size);
      }
    }
  });
}

// Pieces too far apart for sieving with copies, but close enough for a
// mapping, are sieved through one when the file is cached; past
// mapped_threshold they go vectored.
TEST_CASE("Io.WindowIo.MappingReplacesVectored") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("window-mapped-far-") + backend.name());
    PieceSet set;
    for (std::int64_t offset = 100; offset < 4 * kMapAtLeastBytes; offset += 32768)
      set.add(offset, 8);
    std::mt19937_64 rng(65);
    set.fill_random(rng);
    std::vector<char> staging;
    const std::int64_t file_size = set.end() + 1000;
    for (const std::int64_t mapped_threshold : {std::int64_t{65536}, std::int64_t{16384}}) {
      CAPTURE(mapped_threshold);
      WindowIoSettings settings{SieveMode::automatic, 16384};
      settings.mapped_threshold = mapped_threshold;
      const WindowMethod expected =
          mapped_threshold > 32768 ? WindowMethod::mapped : WindowMethod::vectored;
      std::vector<char> expected_file = reset_background(file, file_size);
      set.overlay(expected_file);
      const WindowIoResult written =
          write_window_locked(backend, file.fd(), set.pieces(), settings, staging);
      CHECK(name(written.method) == std::string(name(expected)));
      CHECK(first_difference(file_image(file.fd()), expected_file) == "");
      const std::vector<char> image = reset_background(file, file_size);
      set.fill('\x5a');
      const WindowIoResult read = read_window(backend, file.fd(), set.pieces(), settings, staging);
      CHECK(name(read.method) == std::string(name(expected)));
      CHECK(set.check_read(image) == "");
      CHECK(read.bytes_read == set.data());
    }
  });
}

// What cannot be mapped is not: a sieved window written to a device that
// refuses space (/dev/full) fails with ENOSPC through the backend instead
// of ending the process with SIGBUS.
TEST_CASE("Io.WindowIo.MappingRefused") {
  for_each_backend([](StorageBackend& backend) {
    PieceSet set;
    for (std::int64_t offset = 0; offset < 2 * kMapAtLeastBytes; offset += 4096) set.add(offset, 8);
    set.fill('\x42');
    std::vector<char> staging;
    const WindowIoSettings settings{SieveMode::enable, 8192};
    const FileDescriptor full = FileDescriptor::open("/dev/full", O_RDWR);
    try {
      write_window_locked(backend, full.get(), set.pieces(), settings, staging);
      FAIL_CHECK("a window written to /dev/full did not fail");
    } catch (const IoError& error) {
      CHECK(error.code() == ErrorCode::no_space);
    }
  });
}

}  // namespace flowio::io::testing
