#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

constexpr std::int64_t file_size = 10000;

}  // namespace

// Requests that cross end of file, start at it or lie past it read what is
// there, report it in bytes_read, and leave the memory past it untouched.
TEST_CASE("Io.ReadPastEof.CrossingAndBeyond") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("past-eof-") + backend.name());
    write_pattern_file(file.fd(), file_size);
    RequestSet set;
    set.add(0, {100});                          // inside
    set.add(file_size - 150, {100, 100, 100});  // end of file inside the second piece
    set.add(file_size - 100, {100, 100});       // end of file on a piece boundary
    set.add(file_size - 1, {1, 1});             // last byte, then nothing
    set.add(file_size, {64});                   // starts at end of file
    set.add(file_size + 5000, {64, 64});        // far past it
    set.add(1000, {10});                        // inside, after the others
    set.fill_untouched();
    std::vector<std::size_t> bytes_read(set.size(), 12345);
    backend.read(file.fd(), set.requests(), bytes_read);
    CHECK(bytes_read[1] == 150);
    CHECK(bytes_read[4] == 0);
    CHECK(set.check_read(bytes_read, file_size) == "");
  });
}

// Every read of an empty file reads nothing and writes no memory.
TEST_CASE("Io.ReadPastEof.EmptyFile") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("empty-file-") + backend.name());
    RequestSet set;
    for (int i = 0; i < 300; ++i) set.add(i * 100, {50, 50});
    set.fill_untouched();
    std::vector<std::size_t> bytes_read(set.size(), 12345);
    backend.read(file.fd(), set.requests(), bytes_read);
    CHECK(set.check_read(bytes_read, 0) == "");
  });
}

}  // namespace flowio::io::testing
