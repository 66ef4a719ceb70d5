#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include "api/consumer_views_access.h"
#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "io/file_descriptor.h"
#include "runtime/access_gather.h"
#include "runtime/core/file_view.h"
#include "runtime/engine/collective_error.h"

namespace flowio {
namespace {

// The description file: 64-bit words in the machine's byte order: magic
// ("FLOWIOVW"), version, consumer count, then per consumer the length of
// its access encoding (exchange/access_codec) and the encoding.
constexpr std::int64_t kMagic = 0x57564f4f49574f4c;
constexpr std::int64_t kVersion = 1;

[[noreturn]] void not_a_description(const std::string& path, const std::string& why) {
  throw UsageError(ErrorCode::invalid_argument,
                   "consumer views " + path + ": not a flowio view description (" + why + ")");
}

// The access `view` describes; throws UsageError for a bad one.
core::Access access_of(const ConsumerView& view, const char* caller) {
  if (view.offset < 0 || view.bytes < 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(caller) + ": negative offset or byte count");
  }
  auto file_view =
      std::make_shared<const core::FileView>(view.displacement, view.etype, view.filetype);
  const std::int64_t first = view.offset * file_view->etype_size();
  if (view.bytes > 0 && file_view->filetype().size() == 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(caller) + ": bytes asked of a view that holds no data");
  }
  return core::Access(std::move(file_view), first, first + view.bytes);
}

}  // namespace

ConsumerViews ConsumerViews::gather(MPI_Comm comm, const ConsumerView& mine) {
  core::Access access;
  runtime::run_collectively(comm, "ConsumerViews::gather",
                            [&] { access = access_of(mine, "ConsumerViews::gather"); });
  return ConsumerViewsAccess::make(runtime::allgather_accesses(comm, access));
}

ConsumerViews ConsumerViews::describe(const std::vector<ConsumerView>& views) {
  std::vector<core::Access> accesses;
  accesses.reserve(views.size());
  for (const ConsumerView& view : views) {
    accesses.push_back(access_of(view, "ConsumerViews::describe"));
  }
  return ConsumerViewsAccess::make(std::move(accesses));
}

ConsumerViews ConsumerViews::load(const std::string& path) {
  io::FileDescriptor fd = io::FileDescriptor::open(path, O_RDONLY);
  std::vector<std::byte> bytes;
  std::byte chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd.get(), chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_errno(errno, "read " + path);
    if (got == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  if (bytes.size() % sizeof(std::int64_t) != 0 || bytes.size() < 3 * sizeof(std::int64_t)) {
    not_a_description(path, "size " + std::to_string(bytes.size()));
  }
  std::vector<std::int64_t> words(bytes.size() / sizeof(std::int64_t));
  std::memcpy(words.data(), bytes.data(), bytes.size());
  if (words[0] != kMagic) not_a_description(path, "no magic number");
  if (words[1] != kVersion) not_a_description(path, "version " + std::to_string(words[1]));
  std::vector<core::Access> accesses;
  std::size_t at = 3;
  for (std::int64_t c = 0; c < words[2]; ++c) {
    if (at >= words.size()) not_a_description(path, "cut short");
    const std::int64_t length = words[at++];
    if (length < 0 || static_cast<std::uint64_t>(length) > words.size() - at) {
      not_a_description(path, "cut short");
    }
    try {
      accesses.push_back(exchange::decode_access(
          std::span<const std::int64_t>(words).subspan(at, static_cast<std::size_t>(length))));
    } catch (const Error&) {
      not_a_description(path, "malformed view of consumer " + std::to_string(c));
    }
    at += static_cast<std::size_t>(length);
  }
  if (at != words.size()) not_a_description(path, "trailing words");
  return ConsumerViewsAccess::make(std::move(accesses));
}

void ConsumerViews::save(const std::string& path) const {
  std::vector<std::int64_t> words = {kMagic, kVersion,
                                     static_cast<std::int64_t>(impl_->accesses.size())};
  for (const core::Access& access : impl_->accesses) {
    const std::vector<std::int64_t> encoded = access.view() || access.empty()
                                                  ? exchange::encode_view_access(access)
                                                  : exchange::encode_pieces(access.pieces());
    words.push_back(static_cast<std::int64_t>(encoded.size()));
    words.insert(words.end(), encoded.begin(), encoded.end());
  }
  io::FileDescriptor fd = io::FileDescriptor::open(path, O_WRONLY | O_CREAT | O_TRUNC);
  const auto* data = reinterpret_cast<const char*>(words.data());
  std::size_t left = words.size() * sizeof(std::int64_t);
  while (left > 0) {
    const ssize_t put = ::write(fd.get(), data, left);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) throw_errno(errno, "write " + path);
    data += put;
    left -= static_cast<std::size_t>(put);
  }
  fd.close();
}

ConsumerViews::ConsumerViews() : impl_(std::make_shared<const Impl>()) {}
ConsumerViews::ConsumerViews(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
ConsumerViews::~ConsumerViews() = default;
ConsumerViews::ConsumerViews(const ConsumerViews&) = default;
ConsumerViews& ConsumerViews::operator=(const ConsumerViews&) = default;
ConsumerViews::ConsumerViews(ConsumerViews&&) noexcept = default;
ConsumerViews& ConsumerViews::operator=(ConsumerViews&&) noexcept = default;

std::size_t ConsumerViews::size() const { return impl_->accesses.size(); }

MPI_Offset ConsumerViews::bytes(std::size_t consumer) const {
  if (consumer >= size()) {
    throw UsageError(ErrorCode::invalid_argument, "ConsumerViews::bytes: consumer " +
                                                      std::to_string(consumer) + " of " +
                                                      std::to_string(size()));
  }
  return impl_->accesses[consumer].bytes();
}

}  // namespace flowio
