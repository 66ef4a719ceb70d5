#include "tests/stages/stage_harness.h"

#include <cstdint>

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "runtime/core/file_view.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/plan/collective_settings.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace flowio::testing {
namespace {

// The request of StageHarness::request without its memory.
runtime::CollectiveRequest interleaved_request(bool writing, std::int64_t length, int blocks,
                                               const Hints& hints) {
  const int rank = world_rank();
  const int ranks = world_size();
  MPI_Datatype block = MPI_DATATYPE_NULL;
  MPI_Datatype filetype = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(length), MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, length * ranks, &filetype);
  MPI_Type_commit(&filetype);
  auto view = std::make_shared<const core::FileView>(rank * length, MPI_BYTE, filetype);
  MPI_Type_free(&filetype);
  MPI_Type_free(&block);

  runtime::CollectiveRequest request;
  request.writing = writing;
  request.blocking = true;
  request.settings = std::make_shared<const runtime::CollectiveSettings>(
      runtime::CollectiveSettings::from_hints(hints, ranks, writing));
  request.access = core::Access(view, 0, length * blocks);
  return request;
}

}  // namespace

const char* stage_name(runtime::StageBody stage) {
  struct Named {
    runtime::StageBody stage;
    const char* name;
  };
  static const Named kNames[] = {
      {runtime::offsets_stage, "offsets"},
      {runtime::gather_stage, "gather"},
      {runtime::realms_stage, "realms"},
      {runtime::metadata_stage, "metadata"},
      {runtime::plan_stage, "plan"},
      {runtime::plan_check_stage, "plan_check"},
      {runtime::pack_stage, "pack"},
      {runtime::convert_stage, "convert"},
      {runtime::client_compress_stage, "client_compress"},
      {runtime::client_exchange_stage, "client_exchange"},
      {runtime::client_decompress_stage, "client_decompress"},
      {runtime::unpack_stage, "unpack"},
      {runtime::convert_back_stage, "convert_back"},
      {runtime::window_read_stage, "window_read"},
      {runtime::window_compress_stage, "window_compress"},
      {runtime::window_exchange_stage, "window_exchange"},
      {runtime::window_decompress_stage, "window_decompress"},
      {runtime::window_write_stage, "window_write"},
      {runtime::round_prepare_stage, "round_prepare"},
      {runtime::round_exchange_stage, "round_exchange"},
      {runtime::round_finish_stage, "round_finish"},
      {runtime::direct_lock_stage, "direct_lock"},
      {runtime::direct_io_stage, "direct_io"},
      {runtime::persist_stage, "persist"},
      {runtime::agree_stage, "agree"},
  };
  for (const Named& named : kNames) {
    if (named.stage == stage) return named.name;
  }
  return "?";
}

StageHarness::StageHarness(const std::string& name) : path_(scratch_path(MPI_COMM_WORLD, name)) {
  if (world_rank() == 0) {
    ::unlink(path_.c_str());
    io::FileDescriptor::open(path_, O_RDWR | O_CREAT).close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fd_ = io::FileDescriptor::open(path_, O_RDWR);
  sieve_lock_ = std::make_unique<io::SieveLock>(fd_.get());
  backend_ = io::make_storage_backend(io::BackendKind::posix);
  context_ = std::make_unique<runtime::FileContext>(MPI_COMM_WORLD, fd_, *sieve_lock_, *backend_,
                                                    workers_);
}

StageHarness::~StageHarness() {
  context_.reset();
  fd_.close();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) ::unlink(path_.c_str());
}

runtime::CollectiveRequest StageHarness::request(bool writing, std::int64_t length, int blocks,
                                                 void* buffer, const Hints& hints) const {
  runtime::CollectiveRequest request = interleaved_request(writing, length, blocks, hints);
  request.memory_type = core::flatten_cached(MPI_BYTE);
  request.memory = core::MemoryLayout{request.memory_type.get(), length * blocks,
                                      reinterpret_cast<std::int64_t>(buffer)};
  return request;
}

runtime::CollectiveRequest StageHarness::strided_request(bool writing, std::int64_t length,
                                                         int blocks, void* buffer,
                                                         const Hints& hints) const {
  runtime::CollectiveRequest request = interleaved_request(writing, length, blocks, hints);
  MPI_Datatype every_other = MPI_DATATYPE_NULL;
  MPI_Type_vector(blocks, static_cast<int>(length), static_cast<int>(2 * length), MPI_BYTE,
                  &every_other);
  MPI_Type_commit(&every_other);
  request.memory_type = std::make_shared<const core::FlatType>(core::flatten(every_other));
  MPI_Type_free(&every_other);
  request.memory =
      core::MemoryLayout{request.memory_type.get(), 1, reinterpret_cast<std::int64_t>(buffer)};
  return request;
}

std::unique_ptr<runtime::Operation> StageHarness::operation(runtime::CollectiveRequest request,
                                                            bool runs_inline) {
  const auto started = std::chrono::steady_clock::now().time_since_epoch();
  return std::make_unique<runtime::Operation>(
      *context_, std::move(request), sequence_++, runs_inline, executor_,
      std::chrono::duration_cast<std::chrono::nanoseconds>(started).count());
}

StageHarness::Finished StageHarness::start(runtime::StageBody stage, runtime::Operation& op,
                                           std::size_t item) {
  auto finished = std::make_shared<Started>(Started{stage, item, false});
  stage(op, item,
        runtime::Next(
            [](void* started, std::uintptr_t) { static_cast<Started*>(started)->done = true; },
            finished.get()));
  return finished;
}

void StageHarness::finish(const Finished& finished) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!finished->done) {
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("stage " << std::string(stage_name(finished->stage)) << " (item " << finished->item
                    << ") still waits after 60 s");
    }
    executor_.test();
  }
}

StageWalk::StageWalk(StageHarness& harness, runtime::CollectiveRequest request, bool runs_inline)
    : harness_(harness),
      op_(harness.operation(std::move(request), runs_inline)),
      steps_{{{runtime::offsets_stage, 1}}, {{runtime::gather_stage, 1}},
             {{runtime::realms_stage, 1}},  {{runtime::metadata_stage, 1}},
             {{runtime::plan_stage, 1}},    {{runtime::plan_check_stage, 1}}} {}

void StageWalk::run_for_all_items(const Step& step) {
  std::vector<StageHarness::Finished> started;
  for (const auto& [stage, items] : step) {
    for (std::size_t item = 0; item < items; ++item) {
      started.push_back(harness_.start(stage, *op_, item));
    }
  }
  for (const StageHarness::Finished& finished : started) harness_.finish(finished);
}

bool StageWalk::step(std::vector<runtime::StageBody>& ran) {
  ran.clear();
  if (next_ == steps_.size() && !data_begun_) {
    // Leaving the control stages: the data phase's route and items, and
    // its stages, as the runner would enqueue them.
    data_begun_ = true;
    if (op_->phase<runtime::Planning>().gather == runtime::GatherOutcome::settled) {
      // As the runner: a call its gather settled completes leaving the
      // control stages (engine/pipelines.cc), with no data phase and no
      // agreement.
      op_->begin_phase<runtime::Agreeing, runtime::Planning>();
      agreement_begun_ = true;
      return true;
    }
    const runtime::DataRoute route = runtime::data_route(*op_);
    op_->begin_phase<runtime::Moving, runtime::Planning>(route);
    items_ = runtime::prepare_data_phase(*op_);
    if (route == runtime::DataRoute::direct) {
      steps_.push_back({{runtime::direct_lock_stage, 1}});
      steps_.push_back({{runtime::direct_io_stage, 1}});
    } else if (route == runtime::DataRoute::two_phase && items_.round > 0) {
      steps_.push_back({{runtime::round_prepare_stage, items_.round}});
    } else if (route == runtime::DataRoute::two_phase) {
      const runtime::StageBody window[] = {
          runtime::window_read_stage, runtime::window_compress_stage,
          runtime::window_exchange_stage, runtime::window_decompress_stage,
          runtime::window_write_stage};
      const runtime::StageBody client[] = {runtime::pack_stage, runtime::client_compress_stage,
                                           runtime::client_exchange_stage,
                                           runtime::client_decompress_stage, runtime::unpack_stage};
      for (std::size_t stage = 0; stage < 5; ++stage) {
        steps_.push_back({{window[stage], items_.window}, {client[stage], items_.client}});
      }
    }
    return true;
  }
  if (next_ == steps_.size() && !agreement_begun_) {
    agreement_begun_ = true;
    op_->begin_phase<runtime::Agreeing, runtime::Moving>();
    steps_.push_back({{runtime::persist_stage, 1}});
    steps_.push_back({{runtime::agree_stage, 1}});
    return true;
  }
  if (next_ == steps_.size()) return false;
  const Step& step = steps_[next_++];
  // Rounds are serial: each passes all three of its stages before the
  // next begins (their Alltoallw calls are posted in round order).
  if (step.front().first == runtime::round_prepare_stage) {
    const std::size_t items = step.front().second;
    const runtime::StageBody round_stages[] = {
        runtime::round_prepare_stage, runtime::round_exchange_stage, runtime::round_finish_stage};
    for (std::size_t round = 0; round < items; ++round) {
      for (runtime::StageBody round_stage : round_stages) {
        harness_.finish(harness_.start(round_stage, *op_, round));
      }
    }
    ran.assign(std::begin(round_stages), std::end(round_stages));
    return true;
  }
  run_for_all_items(step);
  for (const auto& [stage, items] : step) ran.push_back(stage);
  return true;
}

void StageWalk::through(runtime::StageBody stage) {
  std::vector<runtime::StageBody> ran;
  while (step(ran)) {
    if (std::find(ran.begin(), ran.end(), stage) != ran.end()) return;
  }
  FAIL("the call's stages do not include the stage asked for");
}

std::exception_ptr StageWalk::to_end() {
  std::vector<runtime::StageBody> ran;
  while (step(ran)) {
  }
  return op_->phase<runtime::Agreeing>().outcome;
}

std::vector<std::byte> StageHarness::file_bytes() const {
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::byte> bytes(static_cast<std::size_t>(fd_.size()));
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t got =
        ::pread(fd_.get(), bytes.data() + at, bytes.size() - at, static_cast<off_t>(at));
    REQUIRE(got > 0);
    at += static_cast<std::size_t>(got);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return bytes;
}

std::vector<std::byte> StageHarness::read_here(std::int64_t offset, std::int64_t bytes) const {
  std::vector<std::byte> data(static_cast<std::size_t>(bytes));
  const ssize_t got = ::pread(fd_.get(), data.data(), data.size(), static_cast<off_t>(offset));
  data.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return data;
}

std::vector<std::byte> pattern(int rank, std::int64_t bytes) {
  std::vector<std::byte> data(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(rank) * 31 + 1) % 251);
  }
  return data;
}

}  // namespace flowio::testing
