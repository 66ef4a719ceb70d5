// The data, the routes and the checks shared by the fault tests
// (fault_test.cc: injected faults; file_system_fault_test.cc: real ones):
// each rank's bytes interleaved with the others' (interleaved_view.h).
// The tests take this namespace whole (using namespace), with the test
// helpers it names.
#pragma once

#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/rank_outcomes.h"
#include "tests/support/world.h"

namespace flowio::testing::faults {

// A using-directive is transitive: the tests that take this namespace
// whole take the test helpers with it.
using flowio::ErrorCode;
using namespace flowio::testing;

// A failure must reach every rank well within this (measured: well under
// a second; the margin is for a loaded machine and the sanitizers).
inline constexpr double kBoundSeconds = 20.0;

// Each rank's bytes interleave with the others' in blocks of this size,
// so that collective calls gather (two-phase I/O).
inline constexpr int kBlock = 512;
inline constexpr std::int64_t kBytesPerRank = 64 * kBlock;

inline char pattern(std::int64_t file_offset, int salt = 0) {
  return static_cast<char>((file_offset * 131 + 7 + salt) % 251);
}

// File offset of this rank's stream byte `i` under the interleaved view.
inline std::int64_t file_offset_of(std::int64_t i) {
  return interleaved_offset(kBlock, world_rank(), i);
}

inline std::vector<char> my_data(int salt = 0) {
  std::vector<char> data(kBytesPerRank);
  for (std::int64_t i = 0; i < kBytesPerRank; ++i) data[i] = pattern(file_offset_of(i), salt);
  return data;
}

// How the collective calls run: gathered by aggregators, or each process
// on its own. Mapping the file for sieving is off, so that every byte
// goes through the (fault-injecting) backend.
struct Route {
  const char* name;
  flowio::Hints hints;
};

inline const std::vector<Route>& routes() {
  static const std::vector<Route> all = {
      {"two-phase",
       {{"romio_cb_write", "enable"},
        {"romio_cb_read", "enable"},
        {"flowio_ds_mapping", "disable"}}},
      {"direct", {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}}},
  };
  return all;
}

// Writes this rank's data collectively and checks every rank succeeded;
// then reads it back and compares.
inline void write_and_verify(flowio::File& file, const std::vector<char>& data,
                             const std::string& what) {
  const Outcome wrote = observe_future(what + ": write after the fault", [&] {
    return file.iwrite_at_all(0, data.data(), kBytesPerRank, MPI_CHAR);
  });
  CHECK_MESSAGE(all_ranks(wrote.ok()), what << ": the file is not usable after the fault: "
                                            << flowio::testing::describe(wrote));
  std::vector<char> back(kBytesPerRank, '#');
  const Outcome read = observe_future(what + ": read back", [&] {
    return file.iread_at_all(0, back.data(), kBytesPerRank, MPI_CHAR);
  });
  CHECK(read.ok());
  CHECK_MESSAGE(back == data, what << ": data read back differs");
}

inline ErrorCode expected_code(const std::string& fault) {
  return fault == "eio" ? ErrorCode::io : ErrorCode::no_space;
}

}  // namespace flowio::testing::faults
