// CollectiveSettings: the realm hints. flowio_realm_stripe and ROMIO's
// romio_cb_fr_type (under romio_cb_pfr, as ROMIO reads it) give datatype
// realms of round-robin stripes; realms the program described win over
// every realm hint; values flowio cannot use are refused naming the hint.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/realm_policy.h"
#include "runtime/core/realm_tiling.h"
#include "runtime/plan/collective_settings.h"

namespace {

using flowio::Hints;
using flowio::core::RealmPolicy;
using flowio::core::RealmTiling;
using flowio::runtime::CollectiveSettings;

CollectiveSettings settings_of(const Hints& hints, int ranks = 4,
                               const flowio::core::RealmDescription* realms = nullptr) {
  return CollectiveSettings::from_hints(hints, ranks, true, realms);
}

std::string refusal(const Hints& hints, flowio::ErrorCode expected) {
  try {
    settings_of(hints);
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == expected);
    return error.what();
  }
  return "";
}

}  // namespace

// Stripes by flowio's hint, and by ROMIO's under romio_cb_pfr (rounded up
// to the realm alignment); without romio_cb_pfr ROMIO ignores its hint,
// and so does flowio.
TEST_CASE("Runtime.CollectiveSettings.RealmStripes") {
  const CollectiveSettings striped =
      settings_of({{"flowio_realm_stripe", "4096"}, {"cb_nodes", "2"}});
  CHECK(striped.realms.policy == RealmPolicy::datatype);
  REQUIRE(striped.realms.tiling != nullptr);
  CHECK(striped.realms.tiling->key() == RealmTiling::stripes(2, 4096).key());

  const CollectiveSettings romio = settings_of(
      {{"romio_cb_pfr", "enable"}, {"romio_cb_fr_type", "1000"}, {"romio_cb_fr_alignment", "512"}});
  CHECK(romio.realms.policy == RealmPolicy::datatype);
  REQUIRE(romio.realms.tiling != nullptr);
  CHECK(romio.realms.tiling->key() == RealmTiling::stripes(4, 1024).key());

  CHECK(settings_of({{"romio_cb_fr_type", "1000"}}).realms.policy == RealmPolicy::even);
  CHECK(settings_of({{"romio_cb_pfr", "enable"}, {"romio_cb_fr_type", "0"}}).realms.policy ==
        RealmPolicy::persistent);
  CHECK(settings_of({{"romio_cb_pfr", "enable"}, {"romio_cb_fr_type", "-2"}}).realms.policy ==
        RealmPolicy::persistent);
  CHECK(settings_of({{"romio_cb_pfr", "enable"}, {"romio_cb_fr_type", "aar"}}).realms.policy ==
        RealmPolicy::persistent);
  CHECK(settings_of({{"flowio_realm_policy", "datatype"}, {"flowio_realm_stripe", "10"}})
            .realms.policy == RealmPolicy::datatype);
  CHECK(settings_of({}).realms.tiling == nullptr);
  const CollectiveSettings named = settings_of({{"flowio_realm_policy", "datatype"},
                                                {"romio_cb_pfr", "enable"},
                                                {"romio_cb_fr_type", "77"}});
  REQUIRE(named.realms.tiling != nullptr);
  CHECK(named.realms.tiling->key() == RealmTiling::stripes(4, 77).key());

  // The layout of a call: whatever the access, stripe k is slot k % 2's.
  std::optional<std::int64_t> unit;
  std::vector<flowio::core::AccessSummary> summaries(2);
  summaries[0].file_begin = 5000;
  summaries[0].file_end = 30000;
  summaries[0].bytes = 100;
  const flowio::core::RealmLayout layout =
      flowio::core::plan_realms(striped.realms, summaries, unit);
  for (std::int64_t x = 5000; x < 30000; x += 97) CHECK(layout.window_at(x).slot == (x / 4096) % 2);
}

TEST_CASE("Runtime.CollectiveSettings.RealmHintsRefused") {
  using flowio::ErrorCode;
  CHECK(refusal({{"flowio_realm_stripe", "0"}}, ErrorCode::invalid_hint)
            .find("hint flowio_realm_stripe") != std::string::npos);
  CHECK(refusal({{"flowio_realm_stripe", "4k"}}, ErrorCode::invalid_hint)
            .find("hint flowio_realm_stripe") != std::string::npos);
  CHECK(refusal({{"flowio_realm_stripe", "1099511627776"}}, ErrorCode::invalid_hint)
            .find("hint flowio_realm_stripe") != std::string::npos);
  CHECK(refusal({{"flowio_realm_stripe", "64"}, {"flowio_realm_policy", "even"}},
                ErrorCode::invalid_hint)
            .find("flowio_realm_policy asks for even") != std::string::npos);
  CHECK(refusal({{"flowio_realm_policy", "datatype"}}, ErrorCode::invalid_hint)
            .find("need flowio_realm_stripe or File::set_file_realms") != std::string::npos);
  CHECK(refusal({{"romio_cb_fr_type", "-3"}}, ErrorCode::invalid_hint)
            .find("hint romio_cb_fr_type") != std::string::npos);
}

// Described realms take the place of the realm hints, and must fit the
// aggregator count the hints give.
TEST_CASE("Runtime.CollectiveSettings.DescribedRealms") {
  flowio::core::RealmDescription realms;
  const auto half = std::make_shared<const flowio::core::FlatType>(
      flowio::core::make_blocks({flowio::core::FlatBlock{0, 1, 0, flowio::core::make_run(8)}}), 0,
      16);
  realms.displacements = {8, 0};
  realms.types = {half, half};
  const CollectiveSettings two = settings_of(
      {{"cb_nodes", "2"}, {"flowio_realm_policy", "load_balanced"}, {"romio_cb_pfr", "enable"}}, 4,
      &realms);
  CHECK(two.realms.policy == RealmPolicy::datatype);
  REQUIRE(two.realms.tiling != nullptr);
  CHECK(two.realms.tiling->segments()[two.realms.tiling->segment_at(0)].slot == 1);
  CHECK(two.realms.tiling->segments()[two.realms.tiling->segment_at(8)].slot == 0);
  CHECK_THROWS_AS(settings_of({{"cb_nodes", "3"}}, 4, &realms), flowio::UsageError);
}
