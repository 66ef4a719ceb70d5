// The MPI-IO layer's hooks into File (api/layer_hooks.h).
#include "api/layer_hooks.h"

#include "api/file_impl.h"

namespace flowio {
namespace {

// Carries `call` out through `independent` or `collective`, File::Impl's
// nonblocking (start_*) or blocking (run_*) pair, at the place its position
// names: the explicit offset; the individual pointer, which moves past the
// data at the call; or the place the shared pointer gives. (Impl is
// deduced: only File and its friends may name File::Impl.)
template <typename Impl, typename Carry>
auto carry_out(Impl& file, const LayerHooks::DataCall& call, Carry independent, Carry collective) {
  using Position = LayerHooks::Position;
  MPI_Offset offset = call.offset;
  if (call.position == Position::individual_pointer) offset = file.pointer;
  if (call.position == Position::shared_pointer) {
    offset = call.collective
                 ? file.claim_ordered(call.writing, call.buffer, call.count, call.datatype)
                 : file.claim_shared(call.writing, call.buffer, call.count, call.datatype);
  }
  const bool advance_pointer = call.position == Position::individual_pointer;
  return (file.*(call.collective ? collective : independent))(
      call.writing, offset, call.buffer, call.count, call.datatype, advance_pointer);
}

}  // namespace

Future<std::size_t> LayerHooks::start(File& file, const DataCall& call) {
  return carry_out(file.impl(), call, &File::Impl::start_transfer, &File::Impl::start_collective);
}

std::size_t LayerHooks::run(File& file, const DataCall& call) {
  return carry_out(file.impl(), call, &File::Impl::run_transfer, &File::Impl::run_collective);
}

void LayerHooks::refuse_collective(File& file, bool writing, ErrorCode code) {
  file.impl().refuse_collective(writing, code, false);
}

LayerHooks::WriteBehindCounts LayerHooks::write_behind_counts() {
  const WriteBehind::Counts counts = WriteBehind::process_counts();
  return WriteBehindCounts{static_cast<long>(counts.writes_behind),
                           static_cast<long>(counts.without_copy),
                           static_cast<long>(counts.waits_for_room)};
}

}  // namespace flowio
