// The realms of a differential case described through
// File::set_file_realms (differential_case.h: describe_realms).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/api/differential_case.h"

namespace flowio::testing {

namespace {

// The realms drawn for the case, described through File::set_file_realms.
void describe_drawn_realms(const CaseHints& hints, flowio::File& file) {
  if (!hints.realms) return;
  const int slots = std::stoi(file.hints().at("cb_nodes"));
  std::mt19937_64 draw(hints.realms->seed);
  const MPI_Offset displacement = pick(draw, -5000, 5000);
  if (hints.realms->one_for_all) {
    // Round-robin stripes: one stripe per extent of `slots` stripes.
    const int stripe = 16 << pick(draw, 0, 7);
    MPI_Datatype run = MPI_DATATYPE_NULL, spaced = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(stripe, MPI_BYTE, &run);
    MPI_Type_create_resized(run, 0, MPI_Aint{stripe} * slots, &spaced);
    MPI_Type_commit(&spaced);
    TypeHandle owned_run(run), owned_spaced(spaced);
    file.set_file_realms(flowio::FileRealm{displacement, spaced});
    return;
  }
  // A period cut into runs of random length, each dealt to a slot (every
  // slot at least one), each slot's runs one hindexed type of the period's
  // extent.
  std::vector<int> owners(static_cast<std::size_t>(slots));
  std::iota(owners.begin(), owners.end(), 0);
  for (int extra = pick(draw, 0, 2 * slots); extra > 0; --extra) {
    owners.push_back(pick(draw, 0, slots - 1));
  }
  std::shuffle(owners.begin(), owners.end(), draw);
  std::vector<std::vector<int>> lengths(static_cast<std::size_t>(slots));
  std::vector<std::vector<MPI_Aint>> starts(static_cast<std::size_t>(slots));
  MPI_Aint period = 0;
  for (int owner : owners) {
    const int length = pick(draw, 1, 700);
    lengths[static_cast<std::size_t>(owner)].push_back(length);
    starts[static_cast<std::size_t>(owner)].push_back(period);
    period += length;
  }
  std::vector<TypeHandle> kept;
  std::vector<flowio::FileRealm> realms;
  for (int slot = 0; slot < slots; ++slot) {
    const auto index = static_cast<std::size_t>(slot);
    MPI_Datatype runs = MPI_DATATYPE_NULL, realm = MPI_DATATYPE_NULL;
    MPI_Type_create_hindexed(static_cast<int>(lengths[index].size()), lengths[index].data(),
                             starts[index].data(), MPI_BYTE, &runs);
    MPI_Type_create_resized(runs, 0, period, &realm);
    MPI_Type_commit(&realm);
    kept.emplace_back(runs);
    kept.emplace_back(realm);
    realms.push_back(flowio::FileRealm{displacement, realm});
  }
  file.set_file_realms(realms);
}

}  // namespace

void describe_realms(const CaseHints& hints, flowio::File& file) {
  describe_drawn_realms(hints, file);
  // Datatype realms are in force wherever the case asked for them.
  const auto pfr = hints.flowio.find("romio_cb_pfr");
  const auto romio_stripe = hints.flowio.find("romio_cb_fr_type");
  const bool asked = hints.realms || hints.flowio.count("flowio_realm_stripe") != 0 ||
                     (pfr != hints.flowio.end() && pfr->second == "enable" &&
                      romio_stripe != hints.flowio.end() && romio_stripe->second != "0");
  if (asked) CHECK(file.hints().at("flowio_realm_policy") == "datatype");
}

}  // namespace flowio::testing
