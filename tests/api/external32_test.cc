// The external32 data representation against the MPI standard's rules
// (MPI 4.1, 14.5.2), encoded here independently of flowio: big-endian,
// Table 14.2's sizes (MPI_LONG 4 bytes, MPI_WCHAR 2), IEEE quad for
// MPI_LONG_DOUBLE, value-index pairs packed, complex types as two parts.
// Covers the types MPICH 4.0.2 gets wrong, which tests/mpiio/external32.c
// cannot compare with MPICH, and derived types of mixed elements written
// collectively with windows so small that they split elements.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/record_types.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;
using Bytes = std::vector<unsigned char>;

enum class Kind { integer, floating, long_double };

// One predefined element type: its external32 size (Table 14.2) and how
// its value is encoded; complex types have two parts.
struct Element {
  MPI_Datatype type;
  const char* name;
  int native_part;
  int external_part;
  int parts;
  Kind kind;
};

const Element kElements[] = {
    {MPI_CHAR, "char", 1, 1, 1, Kind::integer},
    {MPI_WCHAR, "wchar", 4, 2, 1, Kind::integer},
    {MPI_SHORT, "short", 2, 2, 1, Kind::integer},
    {MPI_INT, "int", 4, 4, 1, Kind::integer},
    {MPI_LONG, "long", 8, 4, 1, Kind::integer},
    {MPI_UNSIGNED_LONG, "unsigned_long", 8, 4, 1, Kind::integer},
    {MPI_LONG_LONG, "long_long", 8, 8, 1, Kind::integer},
    {MPI_FLOAT, "float", 4, 4, 1, Kind::floating},
    {MPI_DOUBLE, "double", 8, 8, 1, Kind::floating},
    {MPI_LONG_DOUBLE, "long_double", 16, 16, 1, Kind::long_double},
    {MPI_C_BOOL, "c_bool", 1, 1, 1, Kind::integer},
    {MPI_UINT16_T, "uint16", 2, 2, 1, Kind::integer},
    {MPI_AINT, "aint", 8, 8, 1, Kind::integer},
    {MPI_OFFSET, "offset", 8, 8, 1, Kind::integer},
    {MPI_C_DOUBLE_COMPLEX, "c_double_complex", 8, 8, 2, Kind::floating},
    {MPI_C_LONG_DOUBLE_COMPLEX, "c_long_double_complex", 16, 16, 2, Kind::long_double},
    {MPI_COMPLEX, "complex", 4, 4, 2, Kind::floating},
    {MPI_DOUBLE_COMPLEX, "double_complex", 8, 8, 2, Kind::floating},
    {MPI_INTEGER, "integer", 4, 4, 1, Kind::integer},
    {MPI_LOGICAL, "logical", 4, 4, 1, Kind::integer},
};

const Element& element_of(MPI_Datatype type) {
  for (const Element& element : kElements) {
    if (element.type == type) return element;
  }
  FAIL("no element entry");
  return kElements[0];
}

// The x87 extended value in 16 native bytes as an IEEE quad, big-endian:
// same sign and biased exponent, the 63 fraction bits below the explicit
// integer bit on top of the quad's 112.
void quad_of_x87(const unsigned char* native, unsigned char* out) {
  std::uint64_t significand = 0;
  std::memcpy(&significand, native, 8);
  std::uint16_t sign_exponent = 0;
  std::memcpy(&sign_exponent, native + 8, 2);
  unsigned __int128 quad = static_cast<unsigned __int128>(sign_exponent) << 112;
  quad |= static_cast<unsigned __int128>(significand & ~(std::uint64_t{1} << 63)) << 49;
  for (int b = 0; b < 16; ++b) out[b] = static_cast<unsigned char>(quad >> (8 * (15 - b)));
}

// Appends the external32 bytes of one element.
void encode(const Element& element, const unsigned char* native, Bytes& out) {
  for (int part = 0; part < element.parts; ++part) {
    const unsigned char* value = native + part * element.native_part;
    if (element.kind == Kind::long_double) {
      unsigned char quad[16];
      quad_of_x87(value, quad);
      out.insert(out.end(), quad, quad + 16);
      continue;
    }
    // Integers keep their low external_part bytes; the most significant
    // first (floating point: the same, with equal sizes).
    for (int b = element.external_part - 1; b >= 0; --b) out.push_back(value[b]);
  }
}

// Element `index` of rank `rank`: a value that survives the round trip
// (integers within the external size, long doubles with zero padding).
void make_value(const Element& element, int rank, int index, unsigned char* out) {
  std::memset(out, 0, static_cast<std::size_t>(element.native_part * element.parts));
  for (int part = 0; part < element.parts; ++part) {
    unsigned char* at = out + part * element.native_part;
    const double value = rank * 1000 + index * 7 + part * 0.5 + 0.25;
    if (element.kind == Kind::floating && element.native_part == 4) {
      const float f = static_cast<float>(value);
      std::memcpy(at, &f, 4);
    } else if (element.kind == Kind::floating) {
      std::memcpy(at, &value, 8);
    } else if (element.kind == Kind::long_double) {
      const long double l = value;
      std::memcpy(at, &l, 10);
    } else if (element.type == MPI_C_BOOL) {
      at[0] = static_cast<unsigned char>((rank + index) & 1);
    } else {
      // Negative numbers too, sign-extended in memory, for the narrowed types.
      const std::int64_t number = (index % 2 ? -1 : 1) * (rank * 4099 + index * 131 + 5);
      const std::int64_t narrowed =
          element.external_part < element.native_part && element.type != MPI_LONG
              ? number & ((std::int64_t{1} << (8 * element.external_part)) - 1)
              : number;
      std::memcpy(at, &narrowed, static_cast<std::size_t>(element.native_part));
    }
  }
}

// Each rank's `count` elements at rank * count (independent), then
// `count` more interleaved with the other ranks (collective, from every
// other element of memory); the file must hold the standard's encoding,
// and both reads must give the values back.
void check_element(const Element& element, const flowio::Hints& hints) {
  const std::string name = element.name;
  CAPTURE(name);
  const int rank = world_rank(), ranks = world_size();
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_" + name);
  const int size = element.native_part * element.parts;
  constexpr int kCount = 6;
  Bytes mine(static_cast<std::size_t>(kCount * size)), strided(2 * mine.size(), 0xEE);
  for (int i = 0; i < kCount; ++i) {
    make_value(element, rank, i, &mine[static_cast<std::size_t>(i * size)]);
    make_value(element, rank, 100 + i, &strided[static_cast<std::size_t>(2 * i * size)]);
  }
  MPI_Datatype every_other, interleave;
  MPI_Type_vector(kCount, 1, 2, element.type, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_vector(kCount, 1, ranks, element.type, &interleave);
  MPI_Type_commit(&interleave);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  file.set_view(0, element.type, element.type, {}, "external32");
  const MPI_Count extent = file.type_extent(element.type);
  CHECK(extent == element.external_part * element.parts);
  CHECK(file.write_at(rank * kCount, mine.data(), kCount, element.type) == mine.size());
  const MPI_Offset base = static_cast<MPI_Offset>(ranks) * kCount * extent;
  file.set_view(base + rank * extent, element.type, interleave, {}, "external32");
  CHECK(file.write_all(strided.data(), 1, every_other) == mine.size());
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    Bytes expected;
    for (int r = 0; r < ranks; ++r) {
      for (int i = 0; i < kCount; ++i) {
        Bytes value(static_cast<std::size_t>(size));
        make_value(element, r, i, value.data());
        encode(element, value.data(), expected);
      }
    }
    for (int i = 0; i < kCount; ++i) {
      for (int r = 0; r < ranks; ++r) {
        Bytes value(static_cast<std::size_t>(size));
        make_value(element, r, 100 + i, value.data());
        encode(element, value.data(), expected);
      }
    }
    CHECK(read_whole_file<unsigned char>(path) == expected);
  }
  Bytes back(strided.size(), 0xEE);
  CHECK(file.read_at_all(0, back.data(), 1, every_other) == mine.size());
  CHECK(back == strided);
  file.set_view(0, element.type, element.type, {}, "external32");
  Bytes contiguous(mine.size());
  CHECK(file.read_at(rank * kCount, contiguous.data(), kCount, element.type) == mine.size());
  CHECK(contiguous == mine);
  file.close();
  MPI_Type_free(&every_other);
  MPI_Type_free(&interleave);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

// Every element kind of Table 14.2 this platform changes or swaps, through
// explicit offsets and a collective write/read with a vector filetype.
TEST_CASE("Api.External32.PredefinedTypesFollowTheStandard") {
  for (const Element& element : kElements) check_element(element, {});
}

// A record of mixed elements with holes in memory (short, long, two
// doubles, long double, wchar), stored packed in the file: the file's
// record type gives its byte displacements in external32's sizes, as MPI
// requires of byte displacements (2 + 4 + 16 + 16 + 2 = 40 bytes), while
// memory uses the C layout. All ranks write interleaved, with windows of
// 7 bytes that cut elements and records at every place, over each exchange
// and direct; the file must hold the standard's encoding, record after
// record.
TEST_CASE("Api.External32.MixedRecordsSplitAcrossWindows") {
  struct Record {
    short a;
    long b;
    double c[2];
    long double d;
    wchar_t e;
  };
  const int lengths[] = {1, 1, 2, 1, 1};
  const MPI_Aint displacements[] = {offsetof(Record, a), offsetof(Record, b), offsetof(Record, c),
                                    offsetof(Record, d), offsetof(Record, e)};
  const MPI_Aint file_displacements[] = {0, 2, 6, 22, 38};
  const MPI_Datatype types[] = {MPI_SHORT, MPI_LONG, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR};
  const RecordTypes record(lengths, displacements, file_displacements, types, sizeof(Record));
  MPI_Datatype interleave;
  const int rank = world_rank(), ranks = world_size();
  constexpr int kRecords = 9;
  MPI_Type_vector(kRecords, 1, ranks, record.file(), &interleave);
  MPI_Type_commit(&interleave);
  // Filled in place: a copy of a Record need not keep the bytes of its holes.
  auto fill = [](int r, int i, Record& record) {
    std::memset(&record, 0x5A, sizeof record);  // the holes: must stay as they are
    record.a = static_cast<short>(r * 100 - i);
    record.b = -(r * 100000 + i);
    record.c[0] = r + i / 8.0;
    record.c[1] = -r - i / 16.0;
    // The x87 value's 10 bytes, then zero padding, as conversion leaves it
    // (an assignment may leave the padding as it was).
    const long double d = r * 3 + i * 0.125L;
    std::memset(&record.d, 0, sizeof record.d);
    std::memcpy(&record.d, &d, 10);
    record.e = static_cast<wchar_t>(0x263A + r + i);
  };
  std::vector<Record> mine(kRecords);
  for (int i = 0; i < kRecords; ++i) fill(rank, i, mine[static_cast<std::size_t>(i)]);
  Bytes expected;
  for (int i = 0; i < kRecords; ++i) {
    for (int r = 0; r < ranks; ++r) {
      Record record;
      fill(r, i, record);
      for (int field = 0; field < 5; ++field) {
        const Element& element = element_of(types[field]);
        for (int k = 0; k < lengths[field]; ++k) {
          encode(element,
                 reinterpret_cast<const unsigned char*>(&record) + displacements[field] +
                     k * element.native_part,
                 expected);
        }
      }
    }
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_records");
  for (const char* exchange : {"point_to_point", "alltoallw"}) {
    for (const char* buffering : {"enable", "disable"}) {
      const std::string variant = std::string(exchange) + "/" + buffering;
      CAPTURE(variant);
      const flowio::Hints hints = {{"cb_buffer_size", "7"},
                                   {"flowio_exchange", exchange},
                                   {"romio_cb_write", buffering},
                                   {"romio_cb_read", buffering}};
      flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                             flowio::Mode::create | flowio::Mode::rdwr, hints);
      file.set_view(0, record.file(), record.file(), {}, "external32");
      const MPI_Count extent = file.type_extent(record.file());
      CHECK(extent == 40);
      // Byte bounds are taken as they are: the C record's 64.
      CHECK(file.type_extent(record.memory()) == sizeof(Record));
      file.set_view(rank * extent, record.file(), interleave, {}, "external32");
      // Counts are memory bytes: 2 + 8 + 16 + 16 + 4 data bytes a record.
      CHECK(file.write_all(mine.data(), kRecords, record.memory()) == kRecords * 46);
      file.sync();
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) CHECK(read_whole_file<unsigned char>(path) == expected);
      std::vector<Record> back(kRecords);
      std::memset(back.data(), 0x5A, back.size() * sizeof(Record));
      CHECK(file.read_at_all(0, back.data(), kRecords, record.memory()) == kRecords * 46);
      const auto* got = reinterpret_cast<const unsigned char*>(back.data());
      const auto* want = reinterpret_cast<const unsigned char*>(mine.data());
      const std::size_t bytes = back.size() * sizeof(Record);
      const std::size_t first_difference =
          static_cast<std::size_t>(std::mismatch(got, got + bytes, want).first - got);
      CHECK(first_difference == bytes);
      file.close();
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  MPI_Type_free(&interleave);
}

// A read that stops at end of file inside an element delivers the whole
// elements before it and leaves the rest of memory alone; the count is in
// memory bytes.
TEST_CASE("Api.External32.ShortReadCountsWholeElements") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_short_read");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_read", "enable"}, {"cb_buffer_size", "5"}});
  if (world_rank() == 0) {
    const unsigned char bytes[10] = {0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFF};  // 2.5 ints
    file.write_at(0, bytes, 10, MPI_BYTE);
  }
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  file.set_view(0, MPI_LONG, MPI_LONG, {}, "external32");
  long values[4] = {-7, -7, -7, -7};
  CHECK(file.read_at_all(0, values, 4, MPI_LONG) == 2 * sizeof(long));
  CHECK(values[0] == 1);
  CHECK(values[1] == 2);
  CHECK(values[2] == -7);
  long independent[3] = {-7, -7, -7};
  CHECK(file.read_at(0, independent, 3, MPI_LONG) == 2 * sizeof(long));
  CHECK(independent[1] == 2);
  CHECK(independent[2] == -7);
  file.close();
}

// Names flowio does not know are refused at set_view, on every rank.
TEST_CASE("Api.External32.UnknownRepresentationIsRefused") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_unknown");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  try {
    file.set_view(0, MPI_INT, MPI_INT, {}, "big_endian_please");
    FAIL("set_view accepted an unknown representation");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::unsupported_representation);
  }
  CHECK(file.representation() == "native");
  file.set_view(0, MPI_INT, MPI_INT, {}, "internal");
  CHECK(file.type_extent(MPI_LONG_DOUBLE_INT) == 32);
  file.set_view(0, MPI_INT, MPI_INT, {}, "EXTERNAL32");
  CHECK(file.type_extent(MPI_LONG_DOUBLE_INT) == 20);
  CHECK(file.type_extent(MPI_LONG_INT) == 8);
  file.close();
}

// Records of a char and a double (9 bytes each in external32) moved in
// transfers of several conversion chunks, which split records at chunk
// boundaries: independent and direct collective writes leave each record
// big-endian in its place, and reads give every record back.
TEST_CASE("Api.External32.LargeTransfersSplitRecordsAtChunks") {
  struct Record {
    char tag;
    double value;
  };
  MPI_Datatype record = MPI_DATATYPE_NULL;
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {offsetof(Record, tag), offsetof(Record, value)};
  const MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Type_create_struct(2, lengths, displacements, types, &record);
  MPI_Type_commit(&record);
  constexpr int kRecords = 500000;  // 4.5 MB of stream per rank
  const int rank = world_rank();
  std::vector<Record> records(kRecords);
  for (int i = 0; i < kRecords; ++i) {
    records[static_cast<std::size_t>(i)] = Record{static_cast<char>(i % 127), rank + i * 0.5};
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_large");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}});
  // A byte view: the file holds the records back to back, 9 bytes each.
  file.set_view(0, MPI_BYTE, MPI_BYTE, {}, "external32");
  const MPI_Offset mine = static_cast<MPI_Offset>(rank) * kRecords * 9;
  for (const bool collective : {false, true}) {
    CAPTURE(collective);
    const std::size_t wrote = collective ? file.write_at_all(mine, records.data(), kRecords, record)
                                         : file.write_at(mine, records.data(), kRecords, record);
    CHECK(wrote == kRecords * (sizeof(char) + sizeof(double)));
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    file.sync();
    // Records around the first chunk boundaries, straight from the file.
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    for (const int i : {0, 116508, 116509, 233016, 233017, 349525, kRecords - 1}) {
      unsigned char stored[9];
      REQUIRE(::pread(fd, stored, 9, mine + static_cast<MPI_Offset>(i) * 9) == 9);
      const Record& expected = records[static_cast<std::size_t>(i)];
      CHECK(stored[0] == static_cast<unsigned char>(expected.tag));
      std::uint64_t bits = 0;
      std::memcpy(&bits, &expected.value, 8);
      for (int b = 0; b < 8; ++b) {
        CHECK(stored[1 + b] == static_cast<unsigned char>(bits >> (8 * (7 - b))));
      }
    }
    ::close(fd);
    std::vector<Record> back(kRecords, Record{0, -1.0});
    const std::size_t read = collective ? file.read_at_all(mine, back.data(), kRecords, record)
                                        : file.read_at(mine, back.data(), kRecords, record);
    CHECK(read == kRecords * (sizeof(char) + sizeof(double)));
    int wrong = 0;
    for (int i = 0; i < kRecords; ++i) {
      const Record& got = back[static_cast<std::size_t>(i)];
      const Record& expected = records[static_cast<std::size_t>(i)];
      if (got.tag != expected.tag || got.value != expected.value) ++wrong;
    }
    CHECK(wrong == 0);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  file.close();
  MPI_Type_free(&record);
}
