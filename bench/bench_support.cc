#include "bench/bench_support.h"

#include <sched.h>

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "flowio/error.h"
#include "flowio/file.h"
#include "runtime/core/hash.h"
#include "tests/support/world.h"

namespace bench {
namespace {

using flowio::check_mpi;

constexpr double kMiB = 1024.0 * 1024.0;

using flowio::testing::world_rank;
using flowio::testing::world_size;

bool all_ranks(bool ok) {
  int local = ok ? 1 : 0, all = 0;
  check_mpi(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return all == 1;
}

// The items of "a,b,c"; empty items are dropped.
std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// A value of comma-separated integers, at least one.
CLI::Validator integer_list() {
  return CLI::Validator(
      [](const std::string& value) {
        const std::vector<std::string> items = comma_separated(value);
        for (std::string item : items) {
          if (!CLI::TypeValidator<std::int64_t>()(item).empty()) return "not an integer: " + item;
        }
        return items.empty() ? std::string("an empty list") : std::string();
      },
      "");
}

// `text` broken at spaces into lines of at most `width` characters (a
// longer word keeps a line of its own), a number kept with the word after
// it ("1 MiB"). CLI11 indents a description's lines under its first but
// does not wrap them.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string lines, line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const bool number = std::all_of(word.begin(), word.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (std::string unit; number && words >> unit) word += " " + unit;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return lines + line;
}

// Columns of a terminal --help is laid out for.
constexpr std::size_t kHelpColumns = 80;

std::int64_t file_size(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) flowio::throw_errno(errno, "stat " + path);
  return info.st_size;
}

}  // namespace

struct Options::Parser {
  explicit Parser(const std::string& program) : app("", program) {}

  CLI::App app;
  std::vector<std::string> arguments;         // in the reversed order CLI::App::parse reads
  std::map<std::string, std::string> values;  // bound to app's options: nodes never move
  bool help = false;

  void read_arguments() {
    std::vector<std::string> copy = arguments;  // parse() consumes what it reads
    app.parse(copy);
  }
};

Options::Options(int argc, char** argv)
    : parser_(std::make_unique<Parser>(std::filesystem::path(argv[0]).filename())) {
  for (int i = argc - 1; i > 0; --i) parser_->arguments.push_back(argv[i]);
  // Until finish(), arguments of keys not declared yet are expected, and
  // --help waits for every key.
  parser_->app.allow_extras();
  parser_->app.set_help_flag();
  parser_->app.add_flag("--help", parser_->help, "list the options and exit");
}

Options::~Options() = default;

std::string Options::value_of(const std::string& key, const std::string& fallback,
                              const std::string& description, Form form,
                              const std::vector<std::string>& allowed) {
  const std::string name = "--" + key;
  CLI::App& app = parser_->app;
  if (const CLI::Option* declared = app.get_option_no_throw(name)) {
    if (declared->get_default_str() != fallback) {
      throw std::logic_error(name + " asked for with the default " + fallback + ", declared with " +
                             declared->get_default_str());
    }
  } else {
    const std::size_t width = kHelpColumns - app.get_formatter()->get_column_width();
    CLI::Option* option = app.add_option(name, parser_->values[key], wrapped(description, width))
                              ->default_str(fallback);
    // The type name says what the value must be; the validators' own
    // names are cleared, since CLI11 would append them (TEXT:INTEGER).
    switch (form) {
      case Form::text:
        option->type_name("TEXT");
        break;
      case Form::list:
        option->type_name("TEXT,...");
        break;
      case Form::integer:
        option->type_name("INTEGER")->check(CLI::TypeValidator<std::int64_t>().description(""));
        break;
      case Form::integers:
        option->type_name("INTEGER,...")->check(integer_list());
        break;
      case Form::choice: {
        std::string names;
        for (const std::string& value : allowed) names += (names.empty() ? "" : "|") + value;
        option->type_name(names)->check(CLI::IsMember(allowed).description(""));
        break;
      }
    }
  }
  parser_->read_arguments();
  return app.count(name) > 0 ? parser_->values[key] : fallback;
}

std::string Options::text(const std::string& key, const std::string& fallback,
                          const std::string& description) {
  return value_of(key, fallback, description, Form::text);
}

std::int64_t Options::integer(const std::string& key, std::int64_t fallback,
                              const std::string& description) {
  return std::stoll(value_of(key, std::to_string(fallback), description, Form::integer));
}

std::vector<std::string> Options::list(const std::string& key, const std::string& fallback,
                                       const std::string& description) {
  return comma_separated(value_of(key, fallback, description, Form::list));
}

std::vector<std::int64_t> Options::integers(const std::string& key, const std::string& fallback,
                                            const std::string& description) {
  std::vector<std::int64_t> values;
  for (const std::string& item :
       comma_separated(value_of(key, fallback, description, Form::integers))) {
    values.push_back(std::stoll(item));
  }
  return values;
}

std::string Options::choice(const std::string& key, const std::string& fallback,
                            const std::vector<std::string>& allowed,
                            const std::string& description) {
  return value_of(key, fallback, description, Form::choice, allowed);
}

void Options::finish() {
  parser_->app.allow_extras(false);
  parser_->read_arguments();
  if (!parser_->help) return;
  if (world_rank() == 0) std::printf("%s", parser_->app.help().c_str());
  throw HelpRequested();
}

std::string scratch_dir(Options& options) {
  return options.text("dir", std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp",
                      "directory of the scratch files (removed at the end; kept after a failed "
                      "check)");
}

Common::Common(Options& options, int default_reps)
    : reps(static_cast<int>(
          options.integer("reps", default_reps,
                          "timed repetitions of each measurement; the figures are their medians"))),
      dir(scratch_dir(options)) {
  if (reps < 1) throw std::invalid_argument("--reps must be at least 1");
}

AccessSettings access_settings(Options& options) {
  const Common common(options);
  const std::string op = options.choice(
      "op", "both", {"both", "write", "read"},
      "which operations are timed; the other one still runs once, untimed, to check the data");
  const bool sync =
      options.choice("sync", "0", {"0", "1"},
                     "1: sync the file after every timed write, inside the timing; 0: no sync") ==
      "1";
  const std::string datarep = options.choice(
      "datarep", "native", {"native", "external32"},
      "data representation of both sides' views; other than native, flowio in native is timed "
      "too (vs_native)");
  return AccessSettings{common.reps, common.dir, op != "read", op != "write", sync, datarep};
}

void verify(bool ok, const std::string& why) {
  if (all_ranks(ok)) return;
  if (!ok) std::fprintf(stderr, "rank %d: verification FAILED: %s\n", world_rank(), why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

Fields& Fields::append(const Fields& other) {
  pairs_.insert(pairs_.end(), other.pairs_.begin(), other.pairs_.end());
  return *this;
}

std::string Fields::text() const {
  std::string line;
  for (const auto& [key, value] : pairs_) line += (line.empty() ? "" : " ") + key + "=" + value;
  return line;
}

std::string Fields::format_double(double value) {
  char text[32];
  std::snprintf(text, sizeof text, std::abs(value) >= 1000 ? "%.0f" : "%.4g", value);
  return text;
}

Report::Report(std::string bench, int ranks) { prefix_.add("bench", bench).add("ranks", ranks); }

void Report::line(const Fields& fields) {
  Fields full = prefix_;
  full.append(fields);
  lines_.push_back(full);
  if (world_rank() != 0) return;
  std::printf("%s\n", full.text().c_str());
  std::fflush(stdout);
}

void Report::note(const std::string& text) const {
  if (world_rank() != 0) return;
  std::printf("# %s\n", text.c_str());
  std::fflush(stdout);
}

// Keys whose value is the same on every line go above the table, so that
// its columns are only what varies.
void Report::print_table() const {
  if (world_rank() != 0 || lines_.empty()) return;
  std::vector<std::string> keys;
  std::vector<std::map<std::string, std::string>> rows;
  for (const Fields& fields : lines_) {
    rows.emplace_back();
    for (const auto& [key, value] : fields.pairs()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      rows.back()[key] = value;
    }
  }
  std::vector<std::string> columns;
  std::string constant;
  for (const std::string& key : keys) {
    const auto first = rows.front().find(key);
    const bool same = first != rows.front().end() && rows.size() > 1 &&
                      std::all_of(rows.begin(), rows.end(), [&](const auto& row) {
                        const auto found = row.find(key);
                        return found != row.end() && found->second == first->second;
                      });
    if (same) {
      constant += " " + key + "=" + first->second;
    } else {
      columns.push_back(key);
    }
  }
  std::vector<std::size_t> widths;
  for (const std::string& column : columns) {
    std::size_t width = column.size();
    for (const auto& row : rows) {
      const auto found = row.find(column);
      if (found != row.end()) width = std::max(width, found->second.size());
    }
    widths.push_back(width);
  }
  std::printf("\n#%s\n", constant.c_str());
  const auto print_row = [&](const auto& cell) {
    std::string text;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string value = cell(i);
      text += value + std::string(widths[i] + 2 - value.size(), ' ');
    }
    std::printf("%s\n", text.substr(0, text.find_last_not_of(' ') + 1).c_str());
  };
  print_row([&](std::size_t i) { return columns[i]; });
  for (const auto& row : rows) {
    print_row([&](std::size_t i) {
      const auto found = row.find(columns[i]);
      return found == row.end() ? std::string() : found->second;
    });
  }
  std::fflush(stdout);
}

int run_benchmark(int argc, char** argv, const std::string& name,
                  const std::function<void(Options&, Report&)>& body) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  try {
    if (provided < MPI_THREAD_MULTIPLE) throw std::runtime_error("no MPI_THREAD_MULTIPLE");
    Options options(argc, argv);
    Report report(name, world_size());
    body(options, report);
    report.print_table();
  } catch (const Options::HelpRequested&) {
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench/%s: rank %d: %s\n", name.c_str(), world_rank(), error.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

void report_pair(Report& report, const Fields& fields, const std::string& op, double bytes,
                 const std::vector<double>& flowio_seconds,
                 const std::vector<double>& mpich_seconds) {
  if (flowio_seconds.empty() || flowio_seconds.size() != mpich_seconds.size()) {
    throw std::logic_error("report_pair: repetitions missing or unpaired");
  }
  for (const auto& [impl, seconds] :
       {std::pair{"flowio", &flowio_seconds}, {"mpich", &mpich_seconds}}) {
    const double typical = median(*seconds);
    const auto [fastest, slowest] = std::minmax_element(seconds->begin(), seconds->end());
    report.line(Fields(fields)
                    .add("impl", impl)
                    .add("op", op)
                    .add("MiBps", bytes / kMiB / typical)
                    .add("seconds", typical)
                    .add("seconds_min", *fastest)
                    .add("seconds_max", *slowest));
  }
  report_ratio(report, fields, op, flowio_seconds, mpich_seconds);
}

void report_ratio(Report& report, const Fields& fields, const std::string& op,
                  const std::vector<double>& side_seconds,
                  const std::vector<double>& mpich_seconds) {
  if (side_seconds.empty() || side_seconds.size() != mpich_seconds.size()) {
    throw std::logic_error("report_ratio: repetitions missing or unpaired");
  }
  std::vector<double> ratios;
  for (std::size_t rep = 0; rep < side_seconds.size(); ++rep) {
    ratios.push_back(mpich_seconds[rep] / side_seconds[rep]);
  }
  const auto [lowest, highest] = std::minmax_element(ratios.begin(), ratios.end());
  report.line(Fields(fields)
                  .add("op", op)
                  .add("ratio", median(mpich_seconds) / median(side_seconds))
                  .add("ratio_min", *lowest)
                  .add("ratio_max", *highest));
}

void report_native(Report& report, const Fields& fields, const std::string& op, double bytes,
                   double flowio_seconds, double native_seconds) {
  report.line(Fields(fields)
                  .add("impl", "flowio_native")
                  .add("op", op)
                  .add("MiBps", bytes / kMiB / native_seconds)
                  .add("seconds", native_seconds));
  report.line(Fields(fields).add("op", op).add("vs_native", native_seconds / flowio_seconds));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2;
}

namespace {

// Waits for `request`, giving the core away between tests. Where ranks
// outnumber cores (4 on the 2-core machines here), MPICH's blocking
// MPI_Barrier and MPI_Allreduce poll without yielding, for whole 4 ms
// time slices, while a rank sharing the core is still inside the timed
// operation: 16 MiB writes on 4 ranks were timed anywhere from 2.6 to
// 12 ms, with most repetitions at 4.4 or 8.0 (one or two slices lost);
// with this wait, 2.5 to 3.9 ms, for MPICH's operations and flowio's
// alike. Where every rank has a core, sched_yield returns at once.
void wait_yielding(MPI_Request& request, const char* what) {
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    sched_yield();
  }
}

}  // namespace

double time_collective(const std::function<void()>& operation) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
  wait_yielding(request, "MPI_Ibarrier");
  const double start = MPI_Wtime();
  operation();
  double elapsed = MPI_Wtime() - start, slowest = 0;
  check_mpi(MPI_Iallreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &request),
            "MPI_Iallreduce");
  wait_yielding(request, "MPI_Iallreduce");
  return slowest;
}

std::vector<std::byte> pattern(int rank, std::int64_t bytes) {
  std::vector<std::byte> stream(static_cast<std::size_t>(bytes));
  const std::uint64_t base = static_cast<std::uint64_t>(rank) << 40;
  for (std::int64_t offset = 0; offset < bytes; offset += 8) {
    const std::uint64_t word = flowio::core::mix64(base + static_cast<std::uint64_t>(offset / 8));
    std::memcpy(stream.data() + offset, &word,
                static_cast<std::size_t>(std::min<std::int64_t>(8, bytes - offset)));
  }
  return stream;
}

std::vector<std::byte> typed_buffer(MPI_Datatype memtype, MPI_Count count,
                                    const std::vector<std::byte>& stream) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  check_mpi(MPI_Type_get_extent_c(memtype, &lb, &extent), "MPI_Type_get_extent_c");
  check_mpi(MPI_Type_get_true_extent_c(memtype, &true_lb, &true_extent),
            "MPI_Type_get_true_extent_c");
  const MPI_Count size = count == 0 ? 0 : (count - 1) * extent + true_lb + true_extent;
  std::vector<std::byte> buffer(static_cast<std::size_t>(size), kGapByte);
  MPI_Count position = 0;
  check_mpi(MPI_Unpack_c(stream.data(), static_cast<MPI_Count>(stream.size()), &position,
                         buffer.data(), count, memtype, MPI_COMM_SELF),
            "MPI_Unpack_c");
  if (position != static_cast<MPI_Count>(stream.size())) {
    throw std::logic_error("pattern length differs from the memory type's size");
  }
  return buffer;
}

Datatype::Datatype(MPI_Datatype uncommitted) : type_(uncommitted) {
  check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
}

Datatype::Datatype(Datatype&& other) noexcept
    : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}

Datatype::~Datatype() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

Info::Info(const flowio::Hints& hints) {
  check_mpi(MPI_Info_create(&info_), "MPI_Info_create");
  for (const auto& [key, value] : hints) {
    check_mpi(MPI_Info_set(info_, key.c_str(), value.c_str()), "MPI_Info_set");
  }
}

Info::~Info() { MPI_Info_free(&info_); }

MpiFile::MpiFile(const std::string& path, const flowio::Hints& hints) {
  const Info info(hints);
  check_mpi(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, info.get(),
                          &file_),
            "MPI_File_open");
}

void MpiFile::close() {
  if (file_ != MPI_FILE_NULL) check_mpi(MPI_File_close(&file_), "MPI_File_close");
}

MpiFile::~MpiFile() {
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
}

ScratchFile::ScratchFile(const std::string& dir, const std::string& name) {
  long long pid = ::getpid();
  check_mpi(MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  path_ = dir + "/flowio_bench_" + std::to_string(pid) + "_" + name;
  if (world_rank() == 0) ::unlink(path_.c_str());
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

ScratchFile::ScratchFile(ScratchFile&& other) noexcept : path_(std::exchange(other.path_, {})) {}

ScratchFile::~ScratchFile() {
  if (world_rank() == 0 && !path_.empty()) ::unlink(path_.c_str());
}

void verify_same_size(const std::string& a, const std::string& b, const std::string& what) {
  bool same = true;
  if (world_rank() == 0) same = file_size(a) == file_size(b);
  verify(same, "file sizes differ: " + what);
}

Read flowio_read(flowio::File& file, MPI_Count count, MPI_Datatype memtype) {
  return [&file, count, memtype](void* buffer) { file.read_at_all(0, buffer, count, memtype); };
}

Read mpich_read(MPI_File file, MPI_Count count, MPI_Datatype memtype) {
  return [file, count, memtype](void* buffer) {
    check_mpi(MPI_File_read_at_all_c(file, 0, buffer, count, memtype, MPI_STATUS_IGNORE),
              "MPI_File_read_at_all_c");
  };
}

double checked_read(const Read& read, const std::vector<std::byte>& expected,
                    const std::string& what) {
  std::vector<std::byte> buffer(expected.size(), kGapByte);
  const double seconds = time_collective([&] { read(buffer.data()); });
  verify(buffer == expected, "read back other data than written: " + what);
  return seconds;
}

void verify_file(const std::string& reader, const std::string& path, const Access& access,
                 const std::string& datarep, const std::vector<std::byte>& expected,
                 const std::string& what) {
  const std::string label = reader + " reading " + what;
  if (reader == "flowio") {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr);
    file.set_view(access.displacement, MPI_BYTE, access.filetype, {}, datarep);
    checked_read(flowio_read(file, access.count, access.memtype), expected, label);
    file.close();
  } else {
    MpiFile file(path, {});
    check_mpi(MPI_File_set_view(file.get(), access.displacement, MPI_BYTE, access.filetype,
                                datarep.c_str(), MPI_INFO_NULL),
              "MPI_File_set_view");
    checked_read(mpich_read(file.get(), access.count, access.memtype), expected, label);
    file.close();
  }
}

void verify_file(const std::string& reader, const std::string& path, const Access& access,
                 const std::vector<std::byte>& expected, const std::string& what) {
  verify_file(reader, path, access, "native", expected, what);
}

std::int64_t data_bytes(const Access& access) {
  MPI_Count type_size = 0;
  check_mpi(MPI_Type_size_c(access.memtype, &type_size), "MPI_Type_size_c");
  return type_size * access.count;
}

std::vector<std::byte> rank_data(const Access& access) {
  return typed_buffer(access.memtype, access.count, pattern(world_rank(), data_bytes(access)));
}

void compare_access(Report& report, const Fields& fields, const Access& access,
                    const AccessSettings& settings) {
  std::int64_t local_bytes = data_bytes(access), total_bytes = 0;
  check_mpi(MPI_Allreduce(&local_bytes, &total_bytes, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
  const std::vector<std::byte> expected = rank_data(access);

  const ScratchFile flowio_path(settings.dir, "flowio.dat"), mpich_path(settings.dir, "mpich.dat");
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, flowio_path.path(),
                                         flowio::Mode::create | flowio::Mode::rdwr);
  file.set_view(access.displacement, MPI_BYTE, access.filetype, {}, settings.datarep);
  MpiFile mpich(mpich_path.path(), {});
  check_mpi(MPI_File_set_view(mpich.get(), access.displacement, MPI_BYTE, access.filetype,
                              settings.datarep.c_str(), MPI_INFO_NULL),
            "MPI_File_set_view");
  // flowio in native too, for what conversion costs (only with a datarep).
  const bool against_native = settings.datarep != "native";
  std::optional<ScratchFile> native_path;
  flowio::File native;
  if (against_native) {
    native_path.emplace(settings.dir, "flowio_native.dat");
    native = flowio::File::open(MPI_COMM_WORLD, native_path->path(),
                                flowio::Mode::create | flowio::Mode::rdwr);
    native.set_view(access.displacement, MPI_BYTE, access.filetype);
  }

  const auto flowio_write = [&] {
    file.write_at_all(0, expected.data(), access.count, access.memtype);
    if (settings.sync) file.sync();
  };
  const auto native_write = [&] {
    native.write_at_all(0, expected.data(), access.count, access.memtype);
    if (settings.sync) native.sync();
  };
  const auto mpich_write = [&] {
    check_mpi(MPI_File_write_at_all_c(mpich.get(), 0, expected.data(), access.count, access.memtype,
                                      MPI_STATUS_IGNORE),
              "MPI_File_write_at_all_c");
    if (settings.sync) check_mpi(MPI_File_sync(mpich.get()), "MPI_File_sync");
  };
  // One untimed write each first: the first collective of a process pays
  // for thread start-up, first-touch page faults and the file's creation,
  // which would land on whichever case runs first.
  flowio_write();
  mpich_write();
  if (against_native) native_write();
  if (settings.write) {
    std::vector<double> flowio_seconds, mpich_seconds, native_seconds;
    for (int rep = 0; rep < settings.reps; ++rep) {
      flowio_seconds.push_back(time_collective(flowio_write));
      mpich_seconds.push_back(time_collective(mpich_write));
      if (against_native) native_seconds.push_back(time_collective(native_write));
    }
    report_pair(report, fields, "write", static_cast<double>(total_bytes), flowio_seconds,
                mpich_seconds);
    if (against_native) {
      report_native(report, fields, "write", static_cast<double>(total_bytes),
                    median(flowio_seconds), median(native_seconds));
    }
  }

  // Every read is checked; without timed reads one read each checks the
  // written data.
  const Read read_flowio = flowio_read(file, access.count, access.memtype);
  const Read read_mpich = mpich_read(mpich.get(), access.count, access.memtype);
  std::vector<double> flowio_seconds, mpich_seconds, native_seconds;
  for (int rep = 0; rep < (settings.read ? settings.reps : 1); ++rep) {
    flowio_seconds.push_back(checked_read(read_flowio, expected, "flowio " + fields.text()));
    mpich_seconds.push_back(checked_read(read_mpich, expected, "mpich " + fields.text()));
    if (against_native) {
      native_seconds.push_back(checked_read(flowio_read(native, access.count, access.memtype),
                                            expected, "flowio native " + fields.text()));
    }
  }
  if (settings.read) {
    report_pair(report, fields, "read", static_cast<double>(total_bytes), flowio_seconds,
                mpich_seconds);
    if (against_native) {
      report_native(report, fields, "read", static_cast<double>(total_bytes),
                    median(flowio_seconds), median(native_seconds));
    }
  }

  file.close();
  mpich.close();
  if (against_native) native.close();
  verify_same_size(flowio_path.path(), mpich_path.path(), fields.text());
  verify_file("mpich", flowio_path.path(), access, settings.datarep, expected,
              "flowio's file " + fields.text());
  verify_file("flowio", mpich_path.path(), access, settings.datarep, expected,
              "MPICH's file " + fields.text());
}

}  // namespace bench
