#include "tests/api/kept_outcome.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include "tests/support/sparse_file.h"

namespace flowio::testing {
namespace {

// The outcome as one flat string of bytes: every field length-prefixed,
// so that two outcomes are equal exactly when their strings are.
class Flattened {
 public:
  template <typename T>
  void scalar(T value) {
    text_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  template <typename Range>
  void bytes(const Range& range) {
    scalar(static_cast<std::uint64_t>(range.size()));
    text_.append(reinterpret_cast<const char*>(range.data()), range.size() * sizeof range[0]);
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

// Field by field, each framed with its name (so that a mismatch can say
// which), in the order a kept outcome holds them.
std::vector<std::pair<std::string, std::string>> framed_fields(const CaseOutcome& outcome) {
  std::vector<std::pair<std::string, std::string>> framed;
  auto add = [&](const std::string& name, auto&& fill) {
    Flattened value;
    fill(value);
    Flattened field;
    field.bytes(name);
    field.bytes(value.take());
    framed.emplace_back(name, field.take());
  };
  add("counts", [&](Flattened& f) { f.bytes(outcome.bytes); });
  add("pointers", [&](Flattened& f) { f.bytes(outcome.positions); });
  add("read buffers", [&](Flattened& f) {
    for (const auto& read : outcome.reads) {
      f.scalar(read.has_value());
      if (!read) continue;
      f.scalar(read->low);
      f.bytes(read->bytes);
    }
  });
  add("file image", [&](Flattened& f) {
    // A sparse case's file (rank 0's) by its written blocks, not whole.
    if (outcome.kept_file.empty()) {
      f.bytes(outcome.image);
    } else {
      f.bytes(nonzero_blocks(outcome.kept_file));
    }
  });
  add("removal at close", [&](Flattened& f) { f.scalar(outcome.removed_at_close); });
  add("failure", [&](Flattened& f) { f.bytes(outcome.failure); });
  return framed;
}

}  // namespace

void keep_outcome(const std::string& path, const CaseOutcome& outcome) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& [name, field] : framed_fields(outcome)) out << field;
}

bool same_as_kept(const std::string& path, const CaseOutcome& outcome, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  const std::string kept{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::size_t at = 0;
  for (const auto& [name, field] : framed_fields(outcome)) {
    if (kept.compare(at, field.size(), field) != 0) {
      why = kept.empty()
                ? "nothing was kept at " + path
                : "it differs from the long run's in its " + name + " (kept at " + path + ")";
      return false;
    }
    at += field.size();
  }
  if (kept.size() != at) {
    why = "the kept outcome at " + path + " is longer than this one";
    return false;
  }
  return true;
}

}  // namespace flowio::testing
