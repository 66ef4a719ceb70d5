// TypeSignature: the sequence of predefined datatypes a datatype's data is
// made of (its type signature, MPI 4.1, 5.1), with the bytes each element
// takes in memory (native) and in a file of some data representation.
// Data conversion between representations works element by element and
// needs the type of each, which FlatType (bytes only) does not keep.
//
// The sequence is kept compact: runs of one type and repeated groups, so a
// vector of 10^6 doubles is one run and a struct {int; double} repeated
// 10^6 times is one group with a repeat count, whatever the displacements
// (a signature has none). Value-index pairs (MPI_DOUBLE_INT, ...) are their
// two elements.
//
// Built only for accesses in a representation other than native: the
// native path never pays for it. Immutable; may be shared across threads.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/core/flat_type.h"

namespace flowio::core {

// A place in a stream of elements, counted three ways.
struct SignaturePosition {
  std::int64_t element = 0;
  std::int64_t native = 0;  // bytes in memory (packed)
  std::int64_t file = 0;    // bytes in the file

  friend bool operator==(const SignaturePosition&, const SignaturePosition&) = default;
};

// A run of `count` consecutive elements of one predefined type.
struct ElementRun {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t count = 0;
  std::int64_t native_size = 0;  // bytes of one element in memory
  std::int64_t file_size = 0;    // bytes of one element in the file
};

struct SignatureNode;
using SignatureNodePtr = std::shared_ptr<const SignatureNode>;

// `count` consecutive copies of `child`.
struct SignaturePart {
  SignatureNodePtr child;
  std::int64_t count = 0;
};

// A node is one element (`parts` empty) or `repeat` copies of its parts in
// order. `per_repeat` counts one copy; `part_end[i]` parts 0..i of one copy.
struct SignatureNode {
  ElementRun element;  // for an element: its type and sizes, count 1
  std::int64_t repeat = 1;
  std::vector<SignaturePart> parts;
  SignaturePosition per_repeat;
  std::vector<SignaturePosition> part_end;

  bool is_element() const { return parts.empty() && element.count == 1; }
  SignaturePosition total() const;
};

class TypeSignature {
 public:
  // The empty signature.
  TypeSignature();

  // The signature of `count` copies of `type`, each predefined element
  // sized natively (MPI_Type_size) and in the file by `file_extent`.
  // Throws UsageError(invalid_datatype) for MPI_DATATYPE_NULL, an unknown
  // combiner, or a negative file extent.
  static TypeSignature of(MPI_Datatype type, std::int64_t count, const FileExtentOf& file_extent);

  SignaturePosition total() const { return root_->total(); }

  // The start of the element that holds byte `file_byte` of the file form
  // (total() when file_byte is at or past the end).
  SignaturePosition element_at_file_byte(std::int64_t file_byte) const;
  // The same for byte `native_byte` of the memory form.
  SignaturePosition element_at_native_byte(std::int64_t native_byte) const;
  // The start of element `element` (total() at or past the end).
  SignaturePosition element_start(std::int64_t element) const;

  // Calls visit(run) for the elements [first, last), in order, as runs of
  // one type each (consecutive runs may have the same type).
  void for_each_run(std::int64_t first, std::int64_t last,
                    const std::function<void(const ElementRun&)>& visit) const;

  // The distinct predefined types of the elements, in no particular order.
  // O(distinct nodes).
  std::vector<ElementRun> element_types() const;

  // Distinct nodes: the memory the compact form costs, for tests.
  std::size_t node_count() const;

 private:
  explicit TypeSignature(SignatureNodePtr root) : root_(std::move(root)) {}
  SignaturePosition locate(int metric, std::int64_t value) const;

  SignatureNodePtr root_;
};

}  // namespace flowio::core
