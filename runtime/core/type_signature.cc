#include "runtime/core/type_signature.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "flowio/error.h"
#include "runtime/core/checked_arithmetic.h"
#include "runtime/core/type_arguments.h"

namespace flowio::core {
namespace {

enum Metric { kElements, kNative, kFile };

std::int64_t measure(const SignaturePosition& p, int metric) {
  return metric == kElements ? p.element : metric == kNative ? p.native : p.file;
}

SignaturePosition plus(const SignaturePosition& a, const SignaturePosition& b) {
  return {a.element + b.element, a.native + b.native, a.file + b.file};
}

SignaturePosition times(const SignaturePosition& a, std::int64_t k) {
  return {checked_multiply(a.element, k), checked_multiply(a.native, k),
          checked_multiply(a.file, k)};
}

bool is_empty(const SignatureNode& node) { return node.parts.empty() && node.element.count == 0; }

bool same_element(const SignatureNodePtr& a, const SignatureNodePtr& b) {
  return a == b || (a->is_element() && b->is_element() && a->element.type == b->element.type);
}

// Normalizes as it goes: empty parts dropped, a part whose child is a
// single run (or group) folded into it, neighbours of one element type
// merged; a lone part of count 1 is its child.
SignatureNodePtr make_node(const std::vector<SignaturePart>& given, std::int64_t repeat = 1) {
  std::vector<SignaturePart> parts;
  for (SignaturePart part : given) {
    if (part.count == 0 || is_empty(*part.child)) continue;
    const SignatureNode& child = *part.child;
    if (!child.is_element() && child.parts.size() == 1) {
      part = {child.parts[0].child,
              checked_multiply(part.count, checked_multiply(child.repeat, child.parts[0].count))};
    }
    if (!parts.empty() && same_element(parts.back().child, part.child)) {
      parts.back().count = checked_add(parts.back().count, part.count);
    } else {
      parts.push_back(std::move(part));
    }
  }
  if (parts.empty() || repeat == 0) return std::make_shared<SignatureNode>();
  if (repeat == 1 && parts.size() == 1 && parts[0].count == 1) return parts[0].child;
  auto node = std::make_shared<SignatureNode>();
  node->repeat = repeat;
  node->parts = std::move(parts);
  SignaturePosition end;
  for (const SignaturePart& part : node->parts) {
    end = plus(end, times(part.child->total(), part.count));
    node->part_end.push_back(end);
  }
  node->per_repeat = end;
  return node;
}

// Walks a datatype's constructor tree like the flattener, keeping only the
// order of predefined elements: every constructor but struct repeats one
// old type (size / old size times); struct lists its types in order.
class SignatureBuilder {
 public:
  explicit SignatureBuilder(const FileExtentOf& file_extent) : file_extent_(file_extent) {}
  SignatureBuilder(const SignatureBuilder&) = delete;
  SignatureBuilder& operator=(const SignatureBuilder&) = delete;
  ~SignatureBuilder() {
    for (MPI_Datatype& type : returned_) MPI_Type_free(&type);
  }

  SignatureNodePtr node(MPI_Datatype type) {
    const auto cached = cache_.find(type);
    if (cached != cache_.end()) return cached->second;
    SignatureNodePtr built = build(type);
    cache_.emplace(type, built);
    return built;
  }

 private:
  static std::int64_t native_size(MPI_Datatype type) {
    MPI_Count size = 0;
    check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
    return size;
  }

  SignatureNodePtr element(MPI_Datatype type) {
    auto node = std::make_shared<SignatureNode>();
    const std::int64_t file = file_extent_(type);
    if (file < 0) bad_type("a negative extent in the file's data representation");
    node->element = ElementRun{type, 1, native_size(type), file};
    node->per_repeat = SignaturePosition{1, node->element.native_size, file};
    return node;
  }

  SignatureNodePtr build(MPI_Datatype type) {
    TypeArguments arguments = read_type_arguments(type);
    returned_.insert(returned_.end(), arguments.to_free.begin(), arguments.to_free.end());
    switch (arguments.combiner) {
      case MPI_COMBINER_NAMED:
      case MPI_COMBINER_F90_REAL:
      case MPI_COMBINER_F90_COMPLEX:
      case MPI_COMBINER_F90_INTEGER: {
        MPI_Datatype value = MPI_DATATYPE_NULL, index = MPI_DATATYPE_NULL;
        if (split_pair_type(type, value, index)) {
          return make_node({{element(value), 1}, {element(index), 1}});
        }
        return element(type);
      }
      case MPI_COMBINER_STRUCT:
      case MPI_COMBINER_STRUCT_INTEGER: {
        const auto count = static_cast<std::size_t>(arguments.integers[0]);
        std::vector<SignaturePart> parts;
        for (std::size_t i = 0; i < count; ++i) {
          parts.push_back({node(arguments.types[i]), arguments.integers[1 + i]});
        }
        return make_node(parts);
      }
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:
      case MPI_COMBINER_CONTIGUOUS:
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_HVECTOR:
      case MPI_COMBINER_HVECTOR_INTEGER:
      case MPI_COMBINER_INDEXED:
      case MPI_COMBINER_HINDEXED:
      case MPI_COMBINER_HINDEXED_INTEGER:
      case MPI_COMBINER_INDEXED_BLOCK:
      case MPI_COMBINER_HINDEXED_BLOCK:
      case MPI_COMBINER_SUBARRAY:
      case MPI_COMBINER_DARRAY: {
        const MPI_Datatype old_type = arguments.types[0];
        const std::int64_t old_size = native_size(old_type);
        const std::int64_t copies = old_size == 0 ? 0 : native_size(type) / old_size;
        return make_node({{node(old_type), copies}});
      }
      default:
        bad_type("unsupported combiner " + std::to_string(arguments.combiner));
    }
  }

  const FileExtentOf& file_extent_;
  std::unordered_map<MPI_Datatype, SignatureNodePtr> cache_;
  std::vector<MPI_Datatype> returned_;
};

void walk(const SignatureNode& node, std::int64_t first, std::int64_t last,
          const std::function<void(const ElementRun&)>& visit) {
  if (first >= last) return;
  if (node.is_element()) {
    ElementRun run = node.element;
    run.count = last - first;
    visit(run);
    return;
  }
  const std::int64_t per = node.per_repeat.element;
  for (std::int64_t base = first / per * per; base < last; base += per) {
    const std::int64_t low = std::max<std::int64_t>(first - base, 0);
    const std::int64_t high = std::min(last - base, per);
    auto part = std::upper_bound(
        node.part_end.begin(), node.part_end.end(), low,
        [](std::int64_t value, const SignaturePosition& end) { return value < end.element; });
    for (auto i = static_cast<std::size_t>(part - node.part_end.begin()); i < node.parts.size();
         ++i) {
      const std::int64_t start = i == 0 ? 0 : node.part_end[i - 1].element;
      if (start >= high) break;
      const SignaturePart& current = node.parts[i];
      const std::int64_t from = std::max(low, start) - start;
      const std::int64_t to = std::min(high, node.part_end[i].element) - start;
      if (current.child->is_element()) {
        ElementRun run = current.child->element;
        run.count = to - from;
        visit(run);
        continue;
      }
      const std::int64_t child_elements = current.child->total().element;
      for (std::int64_t copy = from / child_elements; copy * child_elements < to; ++copy) {
        const std::int64_t copy_start = copy * child_elements;
        walk(*current.child, std::max(from - copy_start, std::int64_t{0}),
             std::min(to - copy_start, child_elements), visit);
      }
    }
  }
}

void count_nodes(const SignatureNode& node, std::unordered_set<const SignatureNode*>& seen) {
  if (!seen.insert(&node).second) return;
  for (const SignaturePart& part : node.parts) count_nodes(*part.child, seen);
}

}  // namespace

SignaturePosition SignatureNode::total() const { return times(per_repeat, repeat); }

TypeSignature::TypeSignature() : root_(std::make_shared<SignatureNode>()) {}

TypeSignature TypeSignature::of(MPI_Datatype type, std::int64_t count,
                                const FileExtentOf& file_extent) {
  if (type == MPI_DATATYPE_NULL) bad_type("MPI_DATATYPE_NULL");
  if (count < 0) throw UsageError(ErrorCode::invalid_count, "negative count");
  SignatureBuilder builder(file_extent);
  return TypeSignature(make_node({{builder.node(type), count}}));
}

SignaturePosition TypeSignature::locate(int metric, std::int64_t value) const {
  const SignaturePosition total = root_->total();
  if (value >= measure(total, metric)) return total;
  SignaturePosition at;
  const SignatureNode* node = root_.get();
  while (!node->is_element()) {
    const std::int64_t per = measure(node->per_repeat, metric);
    const std::int64_t copy = value / per;
    at = plus(at, times(node->per_repeat, copy));
    value -= copy * per;
    const auto part = std::upper_bound(node->part_end.begin(), node->part_end.end(), value,
                                       [metric](std::int64_t v, const SignaturePosition& end) {
                                         return v < measure(end, metric);
                                       });
    const auto index = static_cast<std::size_t>(part - node->part_end.begin());
    if (index > 0) {
      at = plus(at, node->part_end[index - 1]);
      value -= measure(node->part_end[index - 1], metric);
    }
    const SignatureNode& child = *node->parts[index].child;
    const SignaturePosition child_total = child.total();
    const std::int64_t child_copy = value / measure(child_total, metric);
    at = plus(at, times(child_total, child_copy));
    value -= child_copy * measure(child_total, metric);
    node = &child;
  }
  return at;
}

SignaturePosition TypeSignature::element_at_file_byte(std::int64_t file_byte) const {
  return locate(kFile, file_byte);
}

SignaturePosition TypeSignature::element_at_native_byte(std::int64_t native_byte) const {
  return locate(kNative, native_byte);
}

SignaturePosition TypeSignature::element_start(std::int64_t element) const {
  return locate(kElements, element);
}

void TypeSignature::for_each_run(std::int64_t first, std::int64_t last,
                                 const std::function<void(const ElementRun&)>& visit) const {
  walk(*root_, std::max<std::int64_t>(first, 0), std::min(last, root_->total().element), visit);
}

std::vector<ElementRun> TypeSignature::element_types() const {
  std::unordered_set<const SignatureNode*> seen;
  count_nodes(*root_, seen);
  std::vector<ElementRun> types;
  for (const SignatureNode* node : seen) {
    if (!node->is_element()) continue;
    const bool known = std::any_of(types.begin(), types.end(), [node](const ElementRun& run) {
      return run.type == node->element.type;
    });
    if (!known) types.push_back(node->element);
  }
  return types;
}

std::size_t TypeSignature::node_count() const {
  std::unordered_set<const SignatureNode*> seen;
  count_nodes(*root_, seen);
  return seen.size();
}

}  // namespace flowio::core
