// Hints and MPI_Info both ways (flowio/info.h), on one process: every key
// and value survives the round trip, MPI_INFO_NULL is no hints, and an Info
// owns its handle until it is released.
#include <doctest/doctest.h>
#include <mpi.h>

#include <string>
#include <utility>

#include "flowio/info.h"

namespace {

// The value MPI holds for `key` in `info`, or "(absent)".
std::string value_in(MPI_Info info, const char* key) {
  char value[MPI_MAX_INFO_VAL + 1] = {};
  int present = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &present);
  return present ? std::string(value) : std::string("(absent)");
}

}  // namespace

// An MPI_Info made by MPI reads back as the same hints, and the hints make
// an MPI_Info that MPI reads as the same keys and values.
TEST_CASE("Api.Info.RoundTrip") {
  MPI_Info made = MPI_INFO_NULL;
  MPI_Info_create(&made);
  MPI_Info_set(made, "cb_buffer_size", "1048576");
  MPI_Info_set(made, "romio_cb_write", "enable");
  MPI_Info_set(made, "a_program_key", "a value with spaces");
  const flowio::Hints hints = flowio::hints_from_info(made);
  MPI_Info_free(&made);
  CHECK(hints == flowio::Hints{{"a_program_key", "a value with spaces"},
                               {"cb_buffer_size", "1048576"},
                               {"romio_cb_write", "enable"}});

  const flowio::Info info(hints);
  int keys = 0;
  MPI_Info_get_nkeys(info.get(), &keys);
  CHECK(keys == 3);
  CHECK(value_in(info.get(), "cb_buffer_size") == "1048576");
  CHECK(value_in(info.get(), "a_program_key") == "a value with spaces");
  CHECK(flowio::hints_from_info(info.get()) == hints);
}

// MPI_INFO_NULL holds no hints; an empty Info is MPI_INFO_NULL; release()
// hands the handle over, and a moved Info gives up its own.
TEST_CASE("Api.Info.NullAndOwnership") {
  CHECK(flowio::hints_from_info(MPI_INFO_NULL).empty());
  CHECK(flowio::Info().get() == MPI_INFO_NULL);

  flowio::Info first(flowio::Hints{{"cb_nodes", "1"}});
  const MPI_Info handle = first.get();
  REQUIRE(handle != MPI_INFO_NULL);
  flowio::Info second(std::move(first));
  CHECK(first.get() == MPI_INFO_NULL);
  CHECK(second.get() == handle);

  MPI_Info released = second.release();
  CHECK(second.get() == MPI_INFO_NULL);
  CHECK(released == handle);
  CHECK(value_in(released, "cb_nodes") == "1");
  MPI_Info_free(&released);
}
