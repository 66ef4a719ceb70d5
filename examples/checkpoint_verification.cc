#include "checkpoint_verification.h"

#include <mpi.h>

#include <algorithm>

#include "flowio/flowio.h"

namespace insitu {

std::vector<int> verify_checkpoints(
    const std::function<void(CheckpointBuffer&, std::int64_t)>& read,
    const std::vector<std::uint64_t>& checksums, CheckpointBuffer& buffer,
    const std::function<void(const CheckpointBuffer&)>& inspect) {
  std::vector<int> bad(checksums.size());
  for (std::size_t step = 0; step < checksums.size(); ++step) {
    std::fill(buffer.begin(), buffer.end(), -1.0);
    read(buffer, static_cast<std::int64_t>(step));
    bad[step] = checksum(buffer) != checksums[step] ? 1 : 0;
    if (inspect) inspect(buffer);
  }
  flowio::check_mpi(MPI_Allreduce(MPI_IN_PLACE, bad.data(), static_cast<int>(bad.size()), MPI_INT,
                                  MPI_SUM, MPI_COMM_WORLD),
                    "MPI_Allreduce");
  return bad;
}

}  // namespace insitu
