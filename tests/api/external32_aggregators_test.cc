// Collective external32 writes whose aggregators convert the clients'
// native bytes (runtime/stages/aggregator_conversion.h), and the cases that
// fall back to the clients converting: the file must hold the standard's
// encoding (big-endian, here every element a double or an int) either
// way, and the data must read back. Which side converted shows in the
// statistics: a client that converts records its conversion as the pack
// stage, one whose aggregator converts sends from contiguous memory and
// packs nothing.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/record_types.h"
#include "tests/api/test_paths.h"
#include "tests/support/with_hint.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;
using Bytes = std::vector<unsigned char>;

// One rank's part of a case: `count` elements of `type` (a double or an
// int, `size` bytes), their stream in the file laid into `blocks` (byte
// offset and length, in file order), and the view that says so.
struct Part {
  MPI_Datatype type = MPI_DOUBLE;
  int size = 8;
  int count = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
  MPI_Offset displacement = 0;
  MPI_Datatype etype = MPI_DOUBLE;
  MPI_Datatype filetype = MPI_DATATYPE_NULL;  // committed; freed by the case
};

// Element i of rank r, in memory.
void value_of(const Part& part, int rank, int i, unsigned char* out) {
  if (part.size == 8) {
    const double value = rank * 1000.5 + i * 0.125 - 7;
    std::memcpy(out, &value, 8);
  } else {
    const std::int32_t value = (i % 2 ? -1 : 1) * (rank * 70001 + i * 3 + 1);
    std::memcpy(out, &value, 4);
  }
}

// The file's image of every rank's part: each one's elements big-endian,
// laid into its blocks; bytes no block covers are zero.
Bytes expected_image(const std::function<Part(int)>& part_of, int ranks) {
  Bytes image;
  for (int r = 0; r < ranks; ++r) {
    Part part = part_of(r);
    Bytes stream;
    for (int i = 0; i < part.count; ++i) {
      unsigned char value[8];
      value_of(part, r, i, value);
      for (int b = part.size - 1; b >= 0; --b) stream.push_back(value[b]);
    }
    std::size_t at = 0;
    for (const auto& [offset, length] : part.blocks) {
      if (image.size() < static_cast<std::size_t>(offset + length)) {
        image.resize(static_cast<std::size_t>(offset + length), 0);
      }
      for (std::int64_t b = 0; b < length && at < stream.size(); ++b) {
        image[static_cast<std::size_t>(offset + b)] = stream[at++];
      }
    }
    MPI_Type_free(&part.filetype);
  }
  return image;
}

std::int64_t packed_bytes(const flowio::OperationStatistics& statistics) {
  for (const flowio::StageStatistics& stage : statistics.stages) {
    if (stage.name == "pack") return stage.bytes;
  }
  return 0;
}

enum class Packing { none_anywhere, somewhere, everywhere, any };

// Writes this rank's part collectively (memory: its elements, every other
// one when `strided`), checks the file on rank 0 and which ranks packed,
// then reads the part back.
void check_case(const std::string& name, const std::function<Part(int)>& part_of,
                const flowio::Hints& hints, Packing packing, bool strided = false) {
  CAPTURE(name);
  const int rank = world_rank(), ranks = world_size();
  Part part = part_of(rank);
  const int stride = strided ? 2 : 1;
  Bytes memory(static_cast<std::size_t>(part.count * part.size * stride), 0xEE);
  for (int i = 0; i < part.count; ++i) {
    value_of(part, rank, i, &memory[static_cast<std::size_t>(i * part.size * stride)]);
  }
  MPI_Datatype memory_type = part.type;
  int memory_count = part.count;
  if (strided) {
    MPI_Type_vector(part.count, 1, 2, part.type, &memory_type);
    MPI_Type_commit(&memory_type);
    memory_count = 1;
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_agg_" + name);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  file.set_view(part.displacement, part.etype, part.filetype, {}, "external32");
  const std::size_t bytes = static_cast<std::size_t>(part.count * part.size);
  CHECK(file.write_all(memory.data(), memory_count, memory_type) == bytes);
  file.sync();
  const int packed = packed_bytes(file.statistics().back()) > 0 ? 1 : 0;
  int packing_ranks = 0;
  MPI_Allreduce(&packed, &packing_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  switch (packing) {
    case Packing::none_anywhere:
      CHECK(packing_ranks == 0);
      break;
    case Packing::somewhere:
      CHECK(packing_ranks > 0);
      break;
    case Packing::everywhere:
      CHECK(packing_ranks == ranks);
      break;
    case Packing::any:
      break;
  }
  if (rank == 0) CHECK(read_whole_file<unsigned char>(path) == expected_image(part_of, ranks));
  Bytes back(memory.size(), 0xEE);
  CHECK(file.read_at_all(0, back.data(), memory_count, memory_type) == bytes);
  CHECK(back == memory);
  file.close();
  if (strided) MPI_Type_free(&memory_type);
  MPI_Type_free(&part.filetype);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Rank r's blocks of `block` bytes, every ranks * block bytes from
// r * block (plus `gap` bytes between rounds), `rounds` of them.
std::vector<std::pair<std::int64_t, std::int64_t>> interleaved(int rank, int ranks,
                                                               std::int64_t block, int rounds,
                                                               std::int64_t gap = 0) {
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
  for (int k = 0; k < rounds; ++k)
    blocks.emplace_back(k * (ranks * block + gap) + rank * block, block);
  return blocks;
}

// Blocks of `elements` elements of `type` as above, as a view.
Part interleaved_part(MPI_Datatype type, int size, int rank, int ranks, int elements, int rounds,
                      std::int64_t gap = 0) {
  Part part;
  part.type = type;
  part.etype = type;
  part.size = size;
  part.count = elements * rounds;
  const std::int64_t block = static_cast<std::int64_t>(elements) * size;
  part.blocks = interleaved(rank, ranks, block, rounds, gap);
  MPI_Type_create_hvector(rounds, elements, ranks * block + gap, type, &part.filetype);
  MPI_Type_commit(&part.filetype);
  part.displacement = rank * block;
  return part;
}

const flowio::Hints kTwoPhase = {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}};

}  // namespace

// Doubles in blocks of three per rank: whole units everywhere, the
// aggregators convert; over covered windows (large and small pieces),
// windows with holes (sieved, vectored), and windows of 12 bytes, whose
// boundaries cut every other double (the messages of those fall back to
// the client).
TEST_CASE("Api.External32Aggregators.WholeUnitsConvertedByAggregators") {
  const int ranks = world_size();
  const auto blocks_of_three = [ranks](int r) {
    return interleaved_part(MPI_DOUBLE, 8, r, ranks, 3, 40);
  };
  check_case("covered", blocks_of_three, kTwoPhase, Packing::none_anywhere);
  const auto large = [ranks](int r) { return interleaved_part(MPI_DOUBLE, 8, r, ranks, 9000, 5); };
  check_case("covered_large", large, kTwoPhase, Packing::none_anywhere);
  const auto holes = [ranks](int r) {
    return interleaved_part(MPI_DOUBLE, 8, r, ranks, 3, 40, 20);
  };
  check_case("sieved", holes, with_hint(kTwoPhase, "romio_ds_write", "enable"),
             Packing::none_anywhere);
  check_case("vectored", holes, with_hint(kTwoPhase, "romio_ds_write", "disable"),
             Packing::none_anywhere);
  check_case("windows_cut_doubles", blocks_of_three, with_hint(kTwoPhase, "cb_buffer_size", "12"),
             Packing::somewhere);
  // Noncontiguous memory: packed natively, converted by the aggregators.
  check_case("strided_memory", blocks_of_three, kTwoPhase, Packing::any, true);
}

// A view of bytes whose blocks of 12 bytes hold a double and a half: a
// double straddles two pieces far apart in the file, and the aggregator
// still converts it whole.
TEST_CASE("Api.External32Aggregators.UnitsStraddlePieces") {
  const int ranks = world_size();
  const auto part_of = [ranks](int r) {
    Part part;
    part.count = 30;  // 240 bytes: 20 blocks
    part.blocks = interleaved(r, ranks, 12, 20);
    MPI_Type_create_hvector(20, 12, ranks * 12, MPI_BYTE, &part.filetype);
    MPI_Type_commit(&part.filetype);
    part.etype = MPI_BYTE;
    part.displacement = r * 12;
    return part;
  };
  // One aggregator: realms split among several may cut a double (its
  // messages then fall back to the clients).
  const flowio::Hints one = with_hint(kTwoPhase, "cb_nodes", "1");
  check_case("straddling", part_of, one, Packing::none_anywhere);
  check_case("straddling_sieved", part_of, with_hint(one, "romio_ds_write", "enable"),
             Packing::none_anywhere);
  check_case("straddling_realms", part_of, kTwoPhase, Packing::any);
}

// Ranks of doubles beside ranks of ints: one window holds parts converted
// in units of 8 and of 4.
TEST_CASE("Api.External32Aggregators.UnitsDifferByClient") {
  const int ranks = world_size();
  const auto part_of = [ranks](int r) {
    Part part = r % 2 == 0 ? interleaved_part(MPI_DOUBLE, 8, r, ranks, 3, 30)
                           : interleaved_part(MPI_INT, 4, r, ranks, 6, 30);
    part.etype = MPI_BYTE;  // the same size on every process, as MPI requires
    return part;
  };
  check_case("mixed_clients", part_of, kTwoPhase, Packing::none_anywhere);
}

// What the aggregators do not convert: a record of an int and a double
// (two units), and every message of an Alltoallw exchange. The clients
// convert; the file is the same.
TEST_CASE("Api.External32Aggregators.FallBackToClients") {
  const int ranks = world_size();
  const auto doubles = [ranks](int r) { return interleaved_part(MPI_DOUBLE, 8, r, ranks, 3, 40); };
  check_case("alltoallw", doubles, with_hint(kTwoPhase, "flowio_exchange", "alltoallw"),
             Packing::everywhere);

  // {int, double} records, packed in the file (12 bytes), two per block.
  const int rank = world_rank();
  struct Record {
    std::int32_t a;
    double b;
  };
  constexpr int kRecords = 20;
  const int lengths[] = {1, 1};
  const MPI_Aint memory_at[] = {offsetof(Record, a), offsetof(Record, b)};
  const MPI_Aint file_at[] = {0, 4};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  const RecordTypes record(lengths, memory_at, file_at, types, sizeof(Record));
  MPI_Datatype filetype;
  MPI_Type_create_hvector(kRecords / 2, 2, 24 * ranks, record.file(), &filetype);
  MPI_Type_commit(&filetype);
  std::vector<Record> mine(kRecords);
  for (int i = 0; i < kRecords; ++i)
    mine[static_cast<std::size_t>(i)] = {rank * 100 + i, rank + i / 4.0};
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_agg_records");
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                         flowio::Mode::create | flowio::Mode::rdwr, kTwoPhase);
  file.set_view(rank * 24, record.file(), filetype, {}, "external32");
  CHECK(file.write_all(mine.data(), kRecords, record.memory()) == kRecords * 12);
  file.sync();
  CHECK(packed_bytes(file.statistics().back()) == kRecords * 12);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    Bytes expected(static_cast<std::size_t>(24 * ranks * kRecords / 2), 0);
    for (int r = 0; r < ranks; ++r) {
      for (int i = 0; i < kRecords; ++i) {
        const std::int32_t a = r * 100 + i;
        const double b = r + i / 4.0;
        unsigned char* at =
            &expected[static_cast<std::size_t>((i / 2) * 24 * ranks + r * 24 + (i % 2) * 12)];
        for (int k = 0; k < 4; ++k) at[k] = reinterpret_cast<const unsigned char*>(&a)[3 - k];
        for (int k = 0; k < 8; ++k) at[4 + k] = reinterpret_cast<const unsigned char*>(&b)[7 - k];
      }
    }
    CHECK(read_whole_file<unsigned char>(path) == expected);
  }
  file.close();
  MPI_Type_free(&filetype);
  MPI_Barrier(MPI_COMM_WORLD);
}
