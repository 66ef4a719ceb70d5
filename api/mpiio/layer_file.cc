#include "api/mpiio/layer_file.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace flowio::mpiio {
namespace {

// Relaxed: a statistic, read once at MPI_Finalize after every file call.
std::atomic<long> kept_count{0};

bool is_predefined(MPI_Datatype type) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

// A kept duplicate of `type`, counted; named types are kept as they are.
MPI_Datatype keep_type(MPI_Datatype type) {
  if (is_predefined(type)) return type;
  kept_count.fetch_add(1, std::memory_order_relaxed);
  return duplicate_unless_named(type);
}

void release_type(MPI_Datatype& type) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && type != MPI_DATATYPE_NULL && !is_predefined(type)) {
    MPI_Type_free(&type);
    kept_count.fetch_sub(1, std::memory_order_relaxed);
  }
  type = MPI_DATATYPE_NULL;
}

// Slot i holds the file whose Fortran handle is i + 1; freed slots are
// reused so long-running programs do not grow the table.
struct Table {
  std::mutex mutex;
  std::unordered_map<const LayerFile*, std::unique_ptr<LayerFile>> files;
  std::vector<LayerFile*> by_fortran_handle;
};

Table& table() {
  static Table* instance = new Table();  // never destroyed: used until exit
  return *instance;
}

}  // namespace

LayerFile::~LayerFile() {
  release_type(etype);
  release_type(filetype);
}

void LayerFile::remember_view(MPI_Offset disp, MPI_Datatype new_etype, MPI_Datatype new_filetype,
                              const char* representation) {
  MPI_Datatype kept_etype = keep_type(new_etype);
  MPI_Datatype kept_filetype = keep_type(new_filetype);
  release_type(etype);
  release_type(filetype);
  displacement = disp;
  etype = kept_etype;
  filetype = kept_filetype;
  datarep = representation;
}

MPI_Datatype duplicate_unless_named(MPI_Datatype type) {
  if (is_predefined(type)) return type;
  MPI_Datatype copy = MPI_DATATYPE_NULL;
  MPI_Type_dup(type, &copy);
  return copy;
}

long kept_datatypes() { return kept_count.load(std::memory_order_relaxed); }

int LayerFile::etype_size() const {
  int size = 1;
  MPI_Type_size(etype, &size);
  return size;
}

MPI_File register_file(std::unique_ptr<LayerFile> file) {
  Table& files = table();
  std::lock_guard lock(files.mutex);
  LayerFile* raw = file.get();
  std::size_t slot = 0;
  while (slot < files.by_fortran_handle.size() && files.by_fortran_handle[slot] != nullptr) ++slot;
  if (slot == files.by_fortran_handle.size()) files.by_fortran_handle.push_back(nullptr);
  files.by_fortran_handle[slot] = raw;
  raw->fortran_handle = static_cast<int>(slot) + 1;
  files.files.emplace(raw, std::move(file));
  return reinterpret_cast<MPI_File>(raw);
}

LayerFile* find_file(MPI_File handle) {
  if (handle == MPI_FILE_NULL) return nullptr;
  Table& files = table();
  std::lock_guard lock(files.mutex);
  const auto found = files.files.find(reinterpret_cast<const LayerFile*>(handle));
  return found == files.files.end() ? nullptr : found->second.get();
}

std::unique_ptr<LayerFile> unregister_file(MPI_File handle) {
  Table& files = table();
  std::lock_guard lock(files.mutex);
  const auto found = files.files.find(reinterpret_cast<const LayerFile*>(handle));
  if (found == files.files.end()) return nullptr;
  std::unique_ptr<LayerFile> file = std::move(found->second);
  files.files.erase(found);
  files.by_fortran_handle[static_cast<std::size_t>(file->fortran_handle) - 1] = nullptr;
  return file;
}

std::vector<std::unique_ptr<LayerFile>> unregister_all_files() {
  Table& files = table();
  std::lock_guard lock(files.mutex);
  std::vector<std::unique_ptr<LayerFile>> open;
  // In Fortran-handle order, which is the order of the collective opens
  // on every process.
  for (LayerFile*& slot : files.by_fortran_handle) {
    if (slot == nullptr) continue;
    open.push_back(std::move(files.files.at(slot)));
    files.files.erase(slot);
    slot = nullptr;
  }
  return open;
}

MPI_Fint fortran_handle_of(MPI_File handle) {
  const LayerFile* file = find_file(handle);
  return file == nullptr ? 0 : file->fortran_handle;
}

MPI_File handle_of_fortran(MPI_Fint fortran) {
  Table& files = table();
  std::lock_guard lock(files.mutex);
  if (fortran <= 0 || static_cast<std::size_t>(fortran) > files.by_fortran_handle.size()) {
    return MPI_FILE_NULL;
  }
  LayerFile* file = files.by_fortran_handle[static_cast<std::size_t>(fortran) - 1];
  return file == nullptr ? MPI_FILE_NULL : reinterpret_cast<MPI_File>(file);
}

}  // namespace flowio::mpiio
