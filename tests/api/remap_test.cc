// Remapping: over random producer/consumer view pairs, every consumer's
// read of the object file (written offline by remap_file, from a saved
// and reloaded description, and online by an ObjectFileWriter) returns
// exactly what its read of the original file through its view returns,
// byte count included. Producers write disjoint interleaved views of one
// random datatype; consumers read random views that overlap each other
// and may run past the end of the file. FLOWIO_REMAP_CASES sets the number
// of cases (default 30); case i uses seed 1400 + i, printed on failure.
// Each case opens about ten files collectively, which costs tenths of a
// second on an oversubscribed machine: keep the counts small on 2 and 4
// ranks.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/object_file.h"
#include "flowio/remap.h"
#include "tests/api/test_paths.h"
#include "tests/core/access_checks.h"

namespace {

using flowio::core::testing::accepted_filetype;

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

// A committed datatype freed at scope exit.
struct Type {
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  Type() = default;
  explicit Type(MPI_Datatype type) : handle(type) {}
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  ~Type() {
    if (handle != MPI_DATATYPE_NULL) MPI_Type_free(&handle);
  }
};

// The producers' layout: one random type T, made to tile with period
// ranks * E (E covers T's data), rank r displaced by r * E: disjoint views
// that interleave.
struct Producer {
  Type filetype;
  MPI_Offset displacement = 0;
  std::vector<unsigned char> data;
  std::string description;
};

void make_producer(std::uint64_t seed, MPI_Comm comm, Producer& out) {
  std::mt19937_64 shared(seed);  // the same on every rank
  MPI_Datatype type = accepted_filetype(shared, 400, out.description);
  MPI_Count true_lb = 0, true_extent = 0, lb = 0, extent = 0;
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  MPI_Type_get_extent_x(type, &lb, &extent);
  const std::int64_t period = std::max<std::int64_t>(true_lb + true_extent, extent);
  MPI_Datatype tiled;
  MPI_Type_create_resized(type, 0, period * size_of(comm), &tiled);
  MPI_Type_commit(&tiled);
  MPI_Type_free(&type);
  out.filetype.handle = tiled;
  out.displacement = static_cast<MPI_Offset>(shared() % 64) + rank_of(comm) * period;
  MPI_Count size = 0;
  MPI_Type_size_x(tiled, &size);
  std::mt19937_64 own(seed * 31 + static_cast<std::uint64_t>(rank_of(comm)));
  out.data.resize(static_cast<std::size_t>(own() % (3 * size + 1)));
  for (unsigned char& byte : out.data) byte = static_cast<unsigned char>(own());
  out.description += " period " + std::to_string(period);
}

// A consumer: its own random view and a stream range that may run past the
// data written.
struct Consumer {
  Type filetype;
  flowio::ConsumerView view;
  std::string description;
};

void make_consumer(std::uint64_t seed, MPI_Comm comm, Consumer& out) {
  std::mt19937_64 own(seed * 7919 + static_cast<std::uint64_t>(rank_of(comm)));
  out.filetype.handle = accepted_filetype(own, 500, out.description);
  MPI_Count size = 0;
  MPI_Type_size_x(out.filetype.handle, &size);
  // MPI requires the same etype size on every process of a set_view: INT
  // only where every process's filetype holds whole ints, by a shared draw.
  int whole_ints = size % 4 == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &whole_ints, 1, MPI_INT, MPI_MIN, comm);
  std::mt19937_64 shared(seed * 104729);
  const bool ints = whole_ints == 1 && shared() % 2 == 0;
  const std::int64_t etype_size = ints ? 4 : 1;
  out.view.displacement = static_cast<MPI_Offset>(own() % 100);
  out.view.etype = ints ? MPI_INT : MPI_BYTE;
  out.view.filetype = out.filetype.handle;
  out.view.offset = static_cast<MPI_Offset>(own() % (2 * size / etype_size + 1));
  out.view.bytes = static_cast<MPI_Offset>(own() % (4 * size / etype_size + 1)) * etype_size;
  out.description += " displacement " + std::to_string(out.view.displacement) +
                     (ints ? " etype INT" : " etype BYTE") + " offset " +
                     std::to_string(out.view.offset) + " bytes " + std::to_string(out.view.bytes);
}

// What the consumer reads from the original file through its view, with
// an independent read (flowio's naive method: one request per piece). Not
// the collective read: seed 1424 on 2 ranks finds a byte that read_at_all
// misses (reported to the lead with a reproducer); nor MPICH's MPI-IO,
// which reads the value-index pair types the generator draws differently
// from their typemap.
std::vector<unsigned char> read_original(MPI_Comm comm, const std::string& path,
                                         const Consumer& consumer, std::size_t& got) {
  flowio::File file = flowio::File::open(comm, path, flowio::Mode::rdonly);
  file.set_view(consumer.view.displacement, consumer.view.etype, consumer.view.filetype);
  std::vector<unsigned char> out(static_cast<std::size_t>(consumer.view.bytes), 0xAB);
  got = file.read_at(consumer.view.offset, out.data(), consumer.view.bytes, MPI_BYTE);
  file.close();
  return out;
}

// What the consumer reads from the object file, its own section.
std::vector<unsigned char> read_objects(MPI_Comm comm, const std::string& path,
                                        const Consumer& consumer, std::size_t& got) {
  flowio::ObjectFile objects = flowio::ObjectFile::open(comm, path);
  REQUIRE(objects.consumers() == static_cast<std::size_t>(size_of(comm)));
  std::vector<unsigned char> out(static_cast<std::size_t>(consumer.view.bytes), 0xAB);
  got = objects.read(static_cast<std::size_t>(rank_of(comm)), 0, out.data(), consumer.view.bytes,
                     MPI_BYTE);
  objects.close();
  return out;
}

// "" when equal, else where the first difference lies.
std::string first_difference(const std::vector<unsigned char>& got,
                             const std::vector<unsigned char>& expected) {
  for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    if (got[i] != expected[i]) {
      return "byte " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " +
             std::to_string(expected[i]);
    }
  }
  return got.size() == expected.size() ? "" : "sizes differ";
}

int cases() {
  const char* text = std::getenv("FLOWIO_REMAP_CASES");
  return text != nullptr ? std::atoi(text) : 30;
}

}  // namespace

// Random producer/consumer pairs: offline translation (from the gathered
// and from a saved description) and online translation both give every
// consumer exactly its original read.
TEST_CASE("Remap.Translate.RandomViewPairs") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const std::string original = flowio::testing::scratch_path(comm, "remap_original");
  const std::string offline = flowio::testing::scratch_path(comm, "remap_offline");
  const std::string reloaded = flowio::testing::scratch_path(comm, "remap_reloaded");
  const std::string online = flowio::testing::scratch_path(comm, "remap_online");
  const std::string views_path = flowio::testing::scratch_path(comm, "remap_views");
  for (int i = 0; i < cases(); ++i) {
    const std::uint64_t seed = 1400 + static_cast<std::uint64_t>(i);
    Producer producer;
    make_producer(seed, comm, producer);
    Consumer consumer;
    make_consumer(seed, comm, consumer);
    INFO("case " << i << " (seed " << seed << ") rank " << rank_of(comm) << "\n  producer "
                 << producer.description << " writes " << producer.data.size()
                 << " bytes at displacement " << producer.displacement << "\n  consumer "
                 << consumer.description);

    flowio::File file =
        flowio::File::open(comm, original, flowio::Mode::create | flowio::Mode::rdwr);
    file.set_size(0);
    file.set_view(producer.displacement, MPI_BYTE, producer.filetype.handle);
    file.write_at_all(0, producer.data.data(), static_cast<MPI_Count>(producer.data.size()),
                      MPI_BYTE);
    const MPI_Offset source_size = file.size();
    file.close();

    const flowio::ConsumerViews views = flowio::ConsumerViews::gather(comm, consumer.view);
    REQUIRE(views.size() == static_cast<std::size_t>(size_of(comm)));
    CHECK(views.bytes(static_cast<std::size_t>(rank_of(comm))) == consumer.view.bytes);
    // Small windows, so that translations cross several of them.
    const flowio::RemapReport report =
        flowio::remap_file(comm, original, views, offline, {{"flowio_remap_window", "4096"}});
    CHECK(report.source_bytes == source_size);
    // Every third case also goes through a saved and reloaded description.
    const bool reload = i % 3 == 0;
    if (reload) {
      if (rank_of(comm) == 0) views.save(views_path);
      MPI_Barrier(comm);
      flowio::remap_file(comm, original, flowio::ConsumerViews::load(views_path), reloaded);
    }

    flowio::ObjectFileWriter writer =
        flowio::ObjectFileWriter::create(comm, online, views, source_size);
    writer.write(producer.displacement, MPI_BYTE, producer.filetype.handle, 0, producer.data.data(),
                 static_cast<MPI_Count>(producer.data.size()), MPI_BYTE);
    writer.close();

    std::size_t expected_bytes = 0;
    const std::vector<unsigned char> expected =
        read_original(comm, original, consumer, expected_bytes);
    for (const std::string& path : {offline, reloaded, online}) {
      if (path == reloaded && !reload) continue;
      std::size_t got_bytes = 0;
      const std::vector<unsigned char> got = read_objects(comm, path, consumer, got_bytes);
      CHECK_MESSAGE(got_bytes == expected_bytes, path);
      CHECK_MESSAGE(first_difference(got, expected) == "", path);
    }
  }
}

// Two consumers of a 4-byte-per-element file whose views run past its
// end, read with a noncontiguous memory type: the short section fills the
// leading elements and leaves the rest of the buffer untouched.
TEST_CASE("Remap.ObjectFile.ShortSectionNoncontiguousMemory") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const std::string original = flowio::testing::scratch_path(comm, "remap_short_original");
  const std::string objects_path = flowio::testing::scratch_path(comm, "remap_short_objects");
  const int rank = rank_of(comm);
  if (rank == 0) {
    flowio::File file =
        flowio::File::open(MPI_COMM_SELF, original, flowio::Mode::create | flowio::Mode::wronly);
    file.set_size(0);
    std::vector<int> values(100);
    for (int k = 0; k < 100; ++k) values[static_cast<std::size_t>(k)] = k;
    file.write_at(0, values.data(), 100, MPI_INT);
    file.close();
  }
  MPI_Barrier(comm);
  // Every rank reads ints 90.. onward, one in two, asking for 10 ints: the
  // file holds 5 of them (90, 92, 94, 96, 98).
  MPI_Datatype every_other;
  MPI_Type_vector(1, 1, 2, MPI_INT, &every_other);
  MPI_Datatype filetype;
  MPI_Type_create_resized(every_other, 0, 8, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_free(&every_other);
  const flowio::ConsumerViews views =
      flowio::ConsumerViews::gather(comm, {360, MPI_INT, filetype, 0, 40});
  MPI_Type_free(&filetype);
  flowio::remap_file(comm, original, views, objects_path);

  flowio::ObjectFile objects = flowio::ObjectFile::open(comm, objects_path);
  CHECK(objects.section_bytes(static_cast<std::size_t>(rank)) == 20);
  CHECK(objects.requested_bytes(static_cast<std::size_t>(rank)) == 40);
  MPI_Datatype spaced;  // an int then a 4-byte gap
  MPI_Type_create_resized(MPI_INT, 0, 8, &spaced);
  MPI_Type_commit(&spaced);
  std::vector<int> memory(20, -1);
  CHECK(objects.read(static_cast<std::size_t>(rank), 0, memory.data(), 10, spaced) == 20);
  MPI_Type_free(&spaced);
  const std::vector<int> expected = {90, -1, 92, -1, 94, -1, 96, -1, 98, -1,
                                     -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  CHECK(memory == expected);
  // From position 8: 94, 96, 98.
  std::vector<int> tail(10, -1);
  CHECK(objects.read(static_cast<std::size_t>(rank), 8, tail.data(), 10, MPI_INT) == 12);
  CHECK(tail[0] == 94);
  CHECK(tail[2] == 98);
  CHECK(tail[3] == -1);
  objects.close();
}

// A file that is not an object file, and bad arguments (a negative offset,
// a tiny window, a consumer out of range, the source as the target), are
// refused with UsageError on every process; a missing source is an
// IoError.
TEST_CASE("Remap.ObjectFile.BadInput") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const std::string plain = flowio::testing::scratch_path(comm, "remap_plain");
  flowio::File file = flowio::File::open(comm, plain, flowio::Mode::create | flowio::Mode::wronly);
  file.set_size(0);
  if (rank_of(comm) == 0) file.write_at(0, "not an object file, just text", 29, MPI_CHAR);
  file.close();
  CHECK_THROWS_AS(flowio::ObjectFile::open(comm, plain), flowio::UsageError);
  CHECK_THROWS_AS(flowio::ConsumerViews::load(plain), flowio::UsageError);
  CHECK_THROWS_AS(flowio::ConsumerViews::gather(comm, {0, MPI_BYTE, MPI_BYTE, -1, 10}),
                  flowio::UsageError);

  const std::string objects_path = flowio::testing::scratch_path(comm, "remap_bad_objects");
  const flowio::ConsumerViews views =
      flowio::ConsumerViews::gather(comm, {0, MPI_BYTE, MPI_BYTE, 0, 10});
  flowio::remap_file(comm, plain, views, objects_path);
  CHECK_THROWS_AS(
      flowio::remap_file(comm, plain, views, objects_path, {{"flowio_remap_window", "12"}}),
      flowio::UsageError);
  flowio::ObjectFile objects = flowio::ObjectFile::open(comm, objects_path);
  char buffer[10];
  CHECK_THROWS_AS(objects.read(objects.consumers(), 0, buffer, 10, MPI_CHAR), flowio::UsageError);
  CHECK_THROWS_AS(objects.read(0, -1, buffer, 10, MPI_CHAR), flowio::UsageError);
  CHECK(objects.read(0, 0, buffer, 10, MPI_CHAR) == 10);
  CHECK(std::string(buffer, 10) == "not an obj");
  objects.close();
  CHECK_THROWS_AS(flowio::remap_file(comm, plain + ".missing", views, objects_path),
                  flowio::IoError);
  CHECK_THROWS_AS(flowio::remap_file(comm, plain, views, plain), flowio::UsageError);
}

// A description built locally from every consumer's view (describe) equals
// the gathered one, byte for byte once saved; a bad view is refused.
TEST_CASE("Remap.ConsumerViews.DescribeMatchesGather") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int ranks = size_of(comm);
  MPI_Datatype strided;
  MPI_Type_vector(3, 4, 10, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  std::vector<flowio::ConsumerView> all;
  for (int r = 0; r < ranks; ++r) all.push_back({r * 24, MPI_INT, strided, r, 40});
  const flowio::ConsumerViews gathered =
      flowio::ConsumerViews::gather(comm, all[static_cast<std::size_t>(rank_of(comm))]);
  const flowio::ConsumerViews described = flowio::ConsumerViews::describe(all);
  const std::string a =
      flowio::testing::scratch_path(comm, "remap_gathered") + std::to_string(rank_of(comm));
  const std::string b =
      flowio::testing::scratch_path(comm, "remap_described") + std::to_string(rank_of(comm));
  gathered.save(a);
  described.save(b);
  const auto contents = [](const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    std::vector<char> bytes;
    for (int c; file != nullptr && (c = std::fgetc(file)) != EOF;)
      bytes.push_back(static_cast<char>(c));
    if (file != nullptr) std::fclose(file);
    return bytes;
  };
  CHECK(!contents(a).empty());
  CHECK(contents(a) == contents(b));
  CHECK(described.bytes(static_cast<std::size_t>(ranks - 1)) == 40);
  all.push_back({-1, MPI_INT, strided, 0, 4});
  CHECK_THROWS_AS(flowio::ConsumerViews::describe(all), flowio::UsageError);
  MPI_Type_free(&strided);
}
