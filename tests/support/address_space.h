// AddressSpace: a private anonymous mapping made without reserving swap
// (MAP_NORESERVE), for tests of memory types whose extent passes 2^31 or
// 2^32 bytes: its pages cost memory only once touched, so a test spans
// GiBs and pays for the pieces its types touch.
#pragma once

#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace flowio::testing {

class AddressSpace {
 public:
  // `bytes` of zeros; fails the test case when the mapping cannot be made.
  explicit AddressSpace(std::int64_t bytes) : bytes_(static_cast<std::size_t>(bytes)) {
    void* address = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(address != MAP_FAILED);
    base_ = static_cast<unsigned char*>(address);
  }
  ~AddressSpace() { ::munmap(base_, bytes_); }
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  unsigned char* data() const { return base_; }

 private:
  std::size_t bytes_;
  unsigned char* base_ = nullptr;
};

}  // namespace flowio::testing
