// Memory types whose extent passes 2^31 and 2^32 bytes, over address space
// of which only their pieces are ever touched: blocks of 64 KiB 2 GiB
// apart, blocks past 4 GiB, and copies of a resized type 2 GiB + 8 apart.
// Written and read back collectively and independently through an
// interleaved view: the file must be byte for byte MPICH's (given the same
// data, packed), and every read must put back exactly what was written.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/address_space.h"
#include "tests/support/sparse_file.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::AddressSpace;
using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kBlock = 64 << 10;
constexpr std::int64_t kTile = 4096;  // each rank's tile of the view

struct MemoryCase {
  const char* name;
  MPI_Datatype type;
  MPI_Count count;
};

// The three memory types (committed), each with the count a call uses.
std::vector<MemoryCase> memory_cases() {
  std::vector<MemoryCase> cases;
  MPI_Datatype apart;  // two blocks 2 GiB + 4 KiB apart
  MPI_Type_create_hvector_c(2, kBlock, 2 * kGiB + 4096, MPI_BYTE, &apart);
  cases.push_back({"hvector 2 GiB apart", apart, 1});
  MPI_Datatype beyond;  // blocks at 0, past 4 GiB, and near 5 GiB
  const MPI_Count lengths[] = {kBlock, kBlock, kBlock};
  const MPI_Count displacements[] = {0, 4 * kGiB + 12345, 5 * kGiB - kBlock};
  MPI_Type_create_hindexed_c(3, lengths, displacements, MPI_BYTE, &beyond);
  cases.push_back({"hindexed past 4 GiB", beyond, 1});
  MPI_Datatype block, spread;  // copies 2 GiB + 8 apart: 3 reach past 4 GiB
  MPI_Type_contiguous_c(kBlock, MPI_BYTE, &block);
  MPI_Type_create_resized_c(block, 0, 2 * kGiB + 8, &spread);
  MPI_Type_free(&block);
  cases.push_back({"resized to 2 GiB + 8, 3 copies", spread, 3});
  for (MemoryCase& c : cases) MPI_Type_commit(&c.type);
  return cases;
}

// `bytes` of `count` copies of `type` at `origin`, packed.
std::vector<char> packed(const void* origin, MPI_Count count, MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Type_size_c(type, &size);
  std::vector<char> out(static_cast<std::size_t>(size * count));
  MPI_Count position = 0;
  MPI_Pack_c(origin, count, type, out.data(), static_cast<MPI_Count>(out.size()), &position,
             MPI_COMM_SELF);
  return out;
}

// Fills the pieces of the call's memory with bytes of this rank and case.
void fill(void* origin, const MemoryCase& c, int which) {
  std::vector<char> data = packed(origin, c.count, c.type);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(1 + (world_rank() * 37 + which * 11 + i * 7 + i / 4093) % 251);
  }
  MPI_Count position = 0;
  MPI_Unpack_c(data.data(), static_cast<MPI_Count>(data.size()), &position, origin, c.count, c.type,
               MPI_COMM_SELF);
}

// Each rank's tiles of kTile bytes, interleaved with the others'.
MPI_Datatype tiles() {
  MPI_Datatype tile, type;
  MPI_Type_contiguous(kTile, MPI_BYTE, &tile);
  MPI_Type_create_resized(tile, 0, kTile * world_size(), &type);
  MPI_Type_free(&tile);
  MPI_Type_commit(&type);
  return type;
}

MPI_Offset displacement() { return 512 + world_rank() * kTile; }

// Where case `which` goes in the view: collective calls first, then
// independent ones, each after the last.
MPI_Offset view_offset(int which, bool collective, std::int64_t call_bytes) {
  return (collective ? 0 : 3 * call_bytes) + which * call_bytes;
}

}  // namespace

TEST_CASE("Scale.HugeMemoryType.ExtentsPast2To31And2To32") {
  const std::vector<MemoryCase> cases = memory_cases();
  const AddressSpace source(6 * kGiB), target(6 * kGiB);
  MPI_Datatype filetype = tiles();
  const std::string flowio_path = flowio::testing::fresh_path("huge_memory_flowio");
  const std::string mpich_path = flowio::testing::fresh_path("huge_memory_mpich");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, flowio_path, flowio::Mode::create | flowio::Mode::rdwr);
  file.set_view(displacement(), MPI_BYTE, filetype);
  MPI_File reference;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, mpich_path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &reference) == MPI_SUCCESS);
  MPI_File_set_view(reference, displacement(), MPI_BYTE, filetype, "native", MPI_INFO_NULL);
  for (const bool collective : {true, false}) {
    for (int which = 0; which < static_cast<int>(cases.size()); ++which) {
      const MemoryCase& c = cases[static_cast<std::size_t>(which)];
      CAPTURE(c.name);
      CAPTURE(collective);
      fill(source.data(), c, which);
      const std::vector<char> data = packed(source.data(), c.count, c.type);
      const auto bytes = static_cast<std::int64_t>(data.size());
      const MPI_Offset at = view_offset(which, collective, bytes);
      const std::size_t wrote = collective ? file.write_at_all(at, source.data(), c.count, c.type)
                                           : file.write_at(at, source.data(), c.count, c.type);
      CHECK(wrote == static_cast<std::size_t>(bytes));
      const int status =
          collective ? MPI_File_write_at_all(reference, at, data.data(), static_cast<int>(bytes),
                                             MPI_BYTE, MPI_STATUS_IGNORE)
                     : MPI_File_write_at(reference, at, data.data(), static_cast<int>(bytes),
                                         MPI_BYTE, MPI_STATUS_IGNORE);
      REQUIRE(status == MPI_SUCCESS);
      file.sync();
      MPI_Barrier(MPI_COMM_WORLD);
      const std::size_t read = collective ? file.read_at_all(at, target.data(), c.count, c.type)
                                          : file.read_at(at, target.data(), c.count, c.type);
      CHECK(read == static_cast<std::size_t>(bytes));
      CHECK(packed(target.data(), c.count, c.type) == data);
    }
  }
  file.close();
  MPI_File_close(&reference);
  if (world_rank() == 0) {
    std::string why;
    CHECK_MESSAGE(flowio::testing::same_sparse_files(flowio_path, mpich_path, why), why);
    ::unlink(flowio_path.c_str());
    ::unlink(mpich_path.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&filetype);
  for (MemoryCase c : cases) MPI_Type_free(&c.type);
}
