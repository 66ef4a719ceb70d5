// verify_checkpoints(): the analysis pass's check that every checkpoint
// reads back as it was written.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint_buffer.h"

namespace insitu {

// Reads checkpoint k with read(buffer, k) for each k of `checksums` and
// compares the buffer's checksum with checksums[k] (this rank's, taken
// when it was written); `inspect`, unless empty, sees each buffer read
// (collectively: every rank calls it equally often). Returns, per
// checkpoint, the number of ranks whose part differs. Collective over
// MPI_COMM_WORLD.
std::vector<int> verify_checkpoints(
    const std::function<void(CheckpointBuffer&, std::int64_t)>& read,
    const std::vector<std::uint64_t>& checksums, CheckpointBuffer& buffer,
    const std::function<void(const CheckpointBuffer&)>& inspect);

}  // namespace insitu
