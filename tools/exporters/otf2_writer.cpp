// OTF2 writer through the OTF2 library (Debian: libopen-trace-format2-dev).
//
// An OTF2 archive is "<dir>/<name>.otf2" (anchor), "<dir>/<name>.def"
// (global definitions) and "<dir>/<name>/" (one .evt and one .def file per
// location). The anchor does not contain the archive name, so the writer
// builds the archive inside a private temporary directory next to the
// target and moves the three parts into place at finish(), the anchor last:
// an interrupted run leaves no anchor that looks complete.
#include "mri_export.h"

#ifdef MRI_HAVE_OTF2

#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <otf2/otf2.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include "atomic_file.h"
#include "definitions.h"

namespace mri::exporters {
namespace {

// The OTF2 library reports errors through one process-wide callback, which
// prints to stderr by default. We record them per thread instead (a writer
// is used by one thread), and treat any reported error as a failure: some
// library calls return OTF2_SUCCESS after a failed write(2) (3.0.2 closes an
// event writer whose last buffer could not be written without an error
// code), so the callback is the only reliable signal.
struct Otf2ErrorLog {
  bool reported = false;
  OTF2_ErrorCode first_code = OTF2_SUCCESS;
  std::string first_message;  // the first error since the last reset: the cause, not the consequences
};
thread_local Otf2ErrorLog otf2_errors;

OTF2_ErrorCode remember_otf2_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                                   const char* format, va_list args) {
  if (!otf2_errors.reported) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    otf2_errors.reported = true;
    otf2_errors.first_code = code;
    otf2_errors.first_message = text;
  }
  return code;
}

void install_otf2_error_callback() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(remember_otf2_error, nullptr); });
}

// OTF2 mirrors errno values in its own codes; give the usual strerror text
// for the ones a file system produces.
int errno_of(OTF2_ErrorCode code) {
  switch (code) {
    case OTF2_ERROR_ENOSPC: return ENOSPC;
    case OTF2_ERROR_EFBIG: return EFBIG;
    case OTF2_ERROR_EDQUOT: return EDQUOT;
    case OTF2_ERROR_EIO: return EIO;
    case OTF2_ERROR_EACCES: return EACCES;
    case OTF2_ERROR_EPERM: return EPERM;
    case OTF2_ERROR_ENOENT: return ENOENT;
    case OTF2_ERROR_ENOTDIR: return ENOTDIR;
    case OTF2_ERROR_EISDIR: return EISDIR;
    case OTF2_ERROR_EMFILE: return EMFILE;
    case OTF2_ERROR_ENFILE: return ENFILE;
    case OTF2_ERROR_ENAMETOOLONG: return ENAMETOOLONG;
    case OTF2_ERROR_ENOMEM: return ENOMEM;
    default: return 0;
  }
}

std::string describe_otf2_error(OTF2_ErrorCode code, const std::string& detail) {
  const int err = errno_of(code);
  std::string text = err != 0 ? std::string(std::strerror(err)) : std::string(OTF2_Error_GetDescription(code));
  if (!detail.empty()) text += " (OTF2: " + detail + ")";
  return text;
}

OTF2_FlushType always_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
// No post-flush callback: OTF2 then writes no BufferFlush records, which
// would describe the exporter's flushes, not the measured program.
OTF2_FlushCallbacks flush_callbacks = {always_flush, nullptr};

// Chunk memory. OTF2's own pool holds up to 128 MiB per location before it
// flushes, i.e. a whole trace of 10 M events per thread stays in memory
// (a 20 M event, 220 MB archive of one location: 139 MB resident, 12 MB
// with these callbacks). We give each location's event buffer at most
// kEventChunksPerLocation chunks; when we refuse one, OTF2 flushes the
// buffer to its file (through the pre-flush callback) and frees its chunks.
constexpr size_t kEventChunksPerLocation = 4;  // of OTF2_CHUNK_SIZE_EVENTS_DEFAULT (1 MiB)

struct BufferChunks {
  std::vector<void*> chunks;
};

void* allocate_chunk(void*, OTF2_FileType file_type, OTF2_LocationRef, void** per_buffer, uint64_t chunk_size) {
  auto*& owned = reinterpret_cast<BufferChunks*&>(*per_buffer);
  if (owned == nullptr) owned = new (std::nothrow) BufferChunks;
  if (owned == nullptr) return nullptr;
  if (file_type == OTF2_FILETYPE_EVENTS && owned->chunks.size() >= kEventChunksPerLocation) return nullptr;
  void* chunk = std::malloc(chunk_size);
  if (chunk != nullptr) owned->chunks.push_back(chunk);
  return chunk;
}

void free_all_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto*& owned = reinterpret_cast<BufferChunks*&>(*per_buffer);
  if (owned == nullptr) return;
  for (void* chunk : owned->chunks) std::free(chunk);
  owned->chunks.clear();
  if (final) {
    delete owned;
    owned = nullptr;
  }
}

OTF2_MemoryCallbacks memory_callbacks = {allocate_chunk, free_all_chunks};

// An MPI call's role by its name (MPI_Send, MPI_Iallreduce, ...), as
// Score-P gives it: point-to-point, the collectives by their pattern,
// else a function (MPI_Init, MPI_Wait).
OTF2_RegionRole role_of_mpi_call(const std::string& name) {
  std::string call = name.rfind("MPI_", 0) == 0 ? name.substr(4) : name;
  if (call.size() > 1 && call[0] == 'I' && std::isupper(static_cast<unsigned char>(call[1]))) call = call.substr(1);
  static const std::pair<const char*, OTF2_RegionRole> kCalls[] = {
      {"Barrier", OTF2_REGION_ROLE_BARRIER},        {"Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL},   {"Scatterv", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE},    {"Gather", OTF2_REGION_ROLE_COLL_ALL2ONE},
      {"Gatherv", OTF2_REGION_ROLE_COLL_ALL2ONE},   {"Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"Allgather", OTF2_REGION_ROLE_COLL_ALL2ALL}, {"Allgatherv", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL},  {"Alltoallv", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"Reduce_scatter", OTF2_REGION_ROLE_COLL_ALL2ALL}, {"Scan", OTF2_REGION_ROLE_COLL_OTHER},
      {"Exscan", OTF2_REGION_ROLE_COLL_OTHER}};
  for (const auto& [c, role] : kCalls)
    if (call == c) return role;
  for (const char* p2p : {"send", "Send", "recv", "Recv", "robe"})
    if (call.find(p2p) != std::string::npos) return OTF2_REGION_ROLE_POINT2POINT;
  return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_RegionRole role_of_region(const std::string& kind, const std::string& name) {
  if (kind == "MPI") return role_of_mpi_call(name);
  if (kind == "PROGRAM" || kind == "ROUTINE") return OTF2_REGION_ROLE_FUNCTION;
  if (kind == "LOOP" || kind == "PARALLEL_LOOP") return OTF2_REGION_ROLE_LOOP;
  if (kind == "BLOCK") return OTF2_REGION_ROLE_CODE;
  if (kind == "PARALLEL") return OTF2_REGION_ROLE_PARALLEL;
  if (kind == "PARALLEL_SECTIONS") return OTF2_REGION_ROLE_SECTIONS;
  if (kind == "MASTER") return OTF2_REGION_ROLE_MASTER;
  return OTF2_REGION_ROLE_UNKNOWN;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Removes `dir` and what our archive put into it: regular files in it and
// in its subdirectories (one level). Only used on our own temporary dir.
void remove_temporary_archive(const std::string& dir) {
  if (dir.empty()) return;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string path = dir + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        if (DIR* sub = ::opendir(path.c_str())) {
          while (const dirent* e = ::readdir(sub)) {
            const std::string n = e->d_name;
            if (n != "." && n != "..") ::unlink((path + "/" + n).c_str());
          }
          ::closedir(sub);
        }
        ::rmdir(path.c_str());
      } else {
        ::unlink(path.c_str());
      }
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

// Makes the files durable; 0 or errno. One fsync per file in a row costs a
// journal commit each (about 3 ms here, 0.4 s for 64 threads), so write-back
// of all files is started first and the fsyncs then mostly find it done.
int sync_files(const std::vector<std::string>& paths) {
  std::vector<int> fds;
  int err = 0;
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      break;
    }
    fds.push_back(fd);
    ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // a hint: errors show up in fsync
  }
  for (const int fd : fds) {
    if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
    ::close(fd);
  }
  return err;
}

class Otf2Writer final : public TraceWriter {
 public:
  Otf2Writer() { install_otf2_error_callback(); }
  ~Otf2Writer() override {
    discard();
    if (synthetic_list_ != nullptr) OTF2_AttributeList_Delete(synthetic_list_);
  }

  bool begin(const std::string& path, const TraceDefinitions& defs, std::string& error) override {
    if (state_ != State::Fresh) {
      error = "begin() was already called on this writer";
      return false;
    }
    if (is_stream_output(path)) {
      error = "cannot write " + path + ": an OTF2 archive is two files and a directory (<name>.otf2, <name>.def, "
              "<name>/), it cannot go to standard output, a descriptor or another stream; give '<dir>/<name>.otf2' "
              "(or write VTF3, one file, to the stream)";
      return false;
    }
    const std::string base = detail::base_name_of(path);
    if (base.size() <= 5 || base.compare(base.size() - 5, 5, ".otf2") != 0) {
      error = "OTF2 output path '" + path + "' must name the anchor file, '<dir>/<name>.otf2'";
      return false;
    }
    if (!defs_.reset(defs, error)) return false;
    directory_ = detail::directory_of(path);
    name_ = base.substr(0, base.size() - 5);
    anchor_path_ = path;
    struct stat st;
    if (::stat(directory_.c_str(), &st) != 0) {
      error = detail::io_error("cannot write OTF2 archive into", directory_, errno);
      return false;
    }
    if (!S_ISDIR(st.st_mode)) {
      error = "cannot write OTF2 archive into " + directory_ + ": not a directory";
      return false;
    }
    for (const std::string& part : final_parts()) {
      if (exists(part)) {
        error = "OTF2 archive part " + part + " already exists; remove the old archive (" + anchor_path_ + ", " +
                directory_ + "/" + name_ + ".def and " + directory_ + "/" + name_ +
                "/) first: the writer does not delete directories";
        return false;
      }
    }
    std::string pattern = directory_ + "/." + name_ + ".otf2-tmp-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      error = detail::io_error("cannot create a directory in", directory_, errno);
      return false;
    }
    temp_dir_ = pattern;
    otf2_errors = Otf2ErrorLog{};
    archive_ = OTF2_Archive_Open(temp_dir_.c_str(), name_.c_str(), OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                                 OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (archive_ == nullptr) {
      error = otf2_failure("cannot open the OTF2 archive", OTF2_ERROR_INVALID);
      discard();
      return false;
    }
    OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(archive_, &flush_callbacks, nullptr);
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetMemoryCallbacks(archive_, &memory_callbacks, nullptr);
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetSerialCollectiveCallbacks(archive_);
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetCreator(archive_, "MRI exporters");
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetMachineName(archive_, host_name().c_str());
    if (rc == OTF2_SUCCESS && !defs_.program().empty()) rc = OTF2_Archive_SetDescription(archive_, defs_.program().c_str());
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenEvtFiles(archive_);
    if (went_wrong(rc)) {
      error = otf2_failure("cannot set up the OTF2 archive", rc);
      discard();
      return false;
    }
    state_ = State::Open;
    return true;
  }

  bool add_location(const Location& location, std::string& error) override {
    return usable(error) && defs_.add_location(location, error);
  }
  bool add_region(const Region& region, std::string& error) override {
    return usable(error) && defs_.add_region(region, error);
  }
  bool add_metric(const MetricDefinition& metric, std::string& error) override {
    return usable(error) && defs_.add_metric(metric, error);
  }

  bool write(const TraceEvent* events, size_t n, std::string& error) override {
    if (!usable(error)) return false;
    if (!checker_.accept(defs_, events, n, error)) return false;
    otf2_errors = Otf2ErrorLog{};
    for (size_t i = 0; i < n; ++i) {
      const TraceEvent& e = events[i];
      OTF2_EvtWriter* w = writer_of(e.location);
      if (w == nullptr) return fail("cannot create the OTF2 event writer", OTF2_ERROR_INVALID, error);
      OTF2_ErrorCode rc;
      switch (e.kind) {
        case EventKind::Enter: rc = OTF2_EvtWriter_Enter(w, nullptr, e.timestamp, e.region); break;
        case EventKind::Leave: {
          // A leave the program never ran carries the attribute
          // kSyntheticLeave (docs/formats.md); the list empties itself at
          // each event.
          OTF2_AttributeList* attributes = nullptr;
          if (e.synthetic) {
            if (synthetic_list_ == nullptr) synthetic_list_ = OTF2_AttributeList_New();
            if (synthetic_list_ == nullptr) return fail("cannot create an OTF2 attribute list", OTF2_ERROR_INVALID, error);
            OTF2_AttributeValue one;
            one.uint8 = 1;
            rc = OTF2_AttributeList_AddAttribute(synthetic_list_, kSyntheticLeaveAttribute, OTF2_TYPE_UINT8, one);
            if (rc != OTF2_SUCCESS) return fail("cannot write an OTF2 event", rc, error);
            attributes = synthetic_list_;
            any_synthetic_ = true;
          }
          rc = OTF2_EvtWriter_Leave(w, attributes, e.timestamp, e.region);
          break;
        }
        default: {
          const OTF2_Type type = OTF2_TYPE_UINT64;
          OTF2_MetricValue value;
          value.unsigned_int = e.value;
          rc = OTF2_EvtWriter_Metric(w, nullptr, e.timestamp, e.metric, 1, &type, &value);
          break;
        }
      }
      if (rc != OTF2_SUCCESS) return fail("cannot write an OTF2 event", rc, error);
    }
    // A chunk flushed during this batch may have failed without an error code.
    if (otf2_errors.reported) return fail("cannot write OTF2 events to", OTF2_ERROR_INVALID, error);
    return true;
  }

  bool finish(std::string& error) override {
    if (!usable(error)) return false;
    otf2_errors = Otf2ErrorLog{};
    // Every defined location gets its event file (possibly empty): readers
    // open one per location definition.
    for (uint32_t id = 0; id < defs_.locations().size(); ++id) {
      if (defs_.has_location(id) && writer_of(id) == nullptr) {
        return fail("cannot create the OTF2 event writer", OTF2_ERROR_INVALID, error);
      }
    }
    std::vector<uint64_t> event_counts(writers_.size(), 0);
    for (uint32_t id = 0; id < writers_.size(); ++id) {
      if (writers_[id] == nullptr) continue;
      OTF2_ErrorCode rc = OTF2_EvtWriter_GetNumberOfEvents(writers_[id], &event_counts[id]);
      if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseEvtWriter(archive_, writers_[id]);
      writers_[id] = nullptr;
      if (went_wrong(rc)) return fail("cannot complete the OTF2 event file of a location", rc, error);
    }
    OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(archive_);
    if (went_wrong(rc)) return fail("cannot close the OTF2 event files", rc, error);

    // Local definition files stay empty (global ids are used in the events)
    // but readers expect one per location.
    rc = OTF2_Archive_OpenDefFiles(archive_);
    if (went_wrong(rc)) return fail("cannot open the OTF2 local definition files", rc, error);
    for (uint32_t id = 0; id < defs_.locations().size(); ++id) {
      if (!defs_.has_location(id)) continue;
      OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive_, id);
      if (dw == nullptr) return fail("cannot create an OTF2 local definition writer", OTF2_ERROR_INVALID, error);
      rc = OTF2_Archive_CloseDefWriter(archive_, dw);
      if (went_wrong(rc)) return fail("cannot write an OTF2 local definition file", rc, error);
    }
    rc = OTF2_Archive_CloseDefFiles(archive_);
    if (went_wrong(rc)) return fail("cannot close the OTF2 local definition files", rc, error);

    if (!write_global_definitions(event_counts, error)) return false;
    rc = OTF2_Archive_Close(archive_);
    archive_ = nullptr;
    if (went_wrong(rc)) return fail("cannot close the OTF2 archive", rc, error);
    if (!publish(error)) {
      discard();
      state_ = State::Failed;
      failure_ = error;
      return false;
    }
    state_ = State::Finished;
    return true;
  }

  uint64_t events_written() const override { return checker_.total_events(); }

 private:
  enum class State { Fresh, Open, Finished, Failed };

  std::vector<std::string> final_parts() const {
    // Order of publication: the anchor last.
    return {directory_ + "/" + name_, directory_ + "/" + name_ + ".def", anchor_path_};
  }
  std::vector<std::string> temporary_parts() const {
    return {temp_dir_ + "/" + name_, temp_dir_ + "/" + name_ + ".def", temp_dir_ + "/" + name_ + ".otf2"};
  }

  bool usable(std::string& error) const {
    switch (state_) {
      case State::Open: return true;
      case State::Fresh: error = "begin() has not been called"; return false;
      case State::Finished: error = "the trace is already finished"; return false;
      case State::Failed: error = failure_; return false;
    }
    return false;
  }

  std::string otf2_failure(const std::string& what, OTF2_ErrorCode rc) const {
    const std::string reason = otf2_errors.reported
                                   ? describe_otf2_error(otf2_errors.first_code, otf2_errors.first_message)
                                   : describe_otf2_error(rc, "");
    return what + " " + anchor_path_ + ": " + reason;
  }

  bool fail(const std::string& what, OTF2_ErrorCode rc, std::string& error) {
    failure_ = otf2_failure(what, rc);
    error = failure_;
    discard();
    state_ = State::Failed;
    return false;
  }

  // A library call went wrong when it says so or when it reported an error
  // through the callback.
  static bool went_wrong(OTF2_ErrorCode rc) { return rc != OTF2_SUCCESS || otf2_errors.reported; }

  // Drops the archive under construction and its temporary directory.
  void discard() {
    if (archive_ != nullptr) {
      OTF2_Archive_Close(archive_);
      archive_ = nullptr;
    }
    writers_.clear();
    remove_temporary_archive(temp_dir_);
    temp_dir_.clear();
  }

  OTF2_EvtWriter* writer_of(uint32_t location) {
    if (location >= writers_.size()) writers_.resize(location + 1, nullptr);
    if (writers_[location] == nullptr) writers_[location] = OTF2_Archive_GetEvtWriter(archive_, location);
    return writers_[location];
  }

  bool write_global_definitions(const std::vector<uint64_t>& event_counts, std::string& error) {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    if (g == nullptr) return fail("cannot create the OTF2 global definition writer", OTF2_ERROR_INVALID, error);

    std::unordered_map<std::string, OTF2_StringRef> string_ids;
    std::vector<const std::string*> strings;
    auto string_ref = [&](const std::string& s) {
      const auto [it, added] = string_ids.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
      if (added) strings.push_back(&it->first);
      return it->second;
    };
    const std::string host = host_name();
    const std::string node_class = "node";
    const std::string process_name = defs_.program().empty() ? std::string("process") : defs_.program();
    const std::string os_tid_property = "OS_TID";
    const OTF2_StringRef empty_ref = string_ref("");
    const OTF2_StringRef host_ref = string_ref(host);
    const OTF2_StringRef node_class_ref = string_ref(node_class);
    const OTF2_StringRef process_ref = string_ref(process_name);
    const OTF2_StringRef os_tid_ref = string_ref(os_tid_property);
    const std::string synthetic_name = kSyntheticLeave, synthetic_description = kSyntheticLeaveDescription;
    const OTF2_StringRef synthetic_name_ref = any_synthetic_ ? string_ref(synthetic_name) : 0;
    const OTF2_StringRef synthetic_description_ref = any_synthetic_ ? string_ref(synthetic_description) : 0;
    std::vector<OTF2_StringRef> location_names(defs_.locations().size());
    for (const auto& l : defs_.locations())
      if (l) location_names[l->id] = string_ref(l->name);
    struct RegionStrings {
      OTF2_StringRef name, file, description;
    };
    std::vector<RegionStrings> region_strings(defs_.regions().size());
    for (const auto& r : defs_.regions()) {
      if (r) region_strings[r->id] = {string_ref(r->name), string_ref(r->file), string_ref(r->kind)};
    }
    std::vector<std::pair<OTF2_StringRef, OTF2_StringRef>> metric_strings(defs_.metrics().size());
    for (const auto& m : defs_.metrics())
      if (m) metric_strings[m->id] = {string_ref(m->name), string_ref(m->unit)};

    // The clock first, as OTF2 readers expect it before everything else.
    const uint64_t offset = checker_.any_events() ? checker_.first_timestamp() : 0;
    const uint64_t length = checker_.any_events() ? checker_.last_timestamp() - offset : 0;
    OTF2_ErrorCode rc = OTF2_GlobalDefWriter_WriteClockProperties(g, defs_.timer_resolution(), offset, length,
                                                                  OTF2_UNDEFINED_TIMESTAMP);
    for (OTF2_StringRef id = 0; rc == OTF2_SUCCESS && id < strings.size(); ++id) {
      rc = OTF2_GlobalDefWriter_WriteString(g, id, strings[id]->c_str());
    }
    if (rc == OTF2_SUCCESS) {
      rc = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, host_ref, node_class_ref, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    }
    if (rc == OTF2_SUCCESS) {
      rc = OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, process_ref, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                   OTF2_UNDEFINED_LOCATION_GROUP);
    }
    for (const auto& r : defs_.regions()) {
      if (rc != OTF2_SUCCESS) break;
      if (!r) continue;
      const RegionStrings& s = region_strings[r->id];
      const uint32_t line = r->line > 0 ? static_cast<uint32_t>(r->line) : 0;
      rc = OTF2_GlobalDefWriter_WriteRegion(g, r->id, s.name, s.name, s.description, role_of_region(r->kind, r->name),
                                            r->kind == "MPI" ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                            r->file.empty() ? empty_ref : s.file, line, line);
    }
    for (const auto& m : defs_.metrics()) {
      if (rc != OTF2_SUCCESS) break;
      if (!m) continue;
      // A value per region instance, attached where the instance ends:
      // an absolute value at that point, not a running counter.
      const auto [name, unit] = metric_strings[m->id];
      rc = OTF2_GlobalDefWriter_WriteMetricMember(g, m->id, name, name, OTF2_METRIC_TYPE_USER,
                                                  OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                                  unit);
      const OTF2_MetricMemberRef member = m->id;
      if (rc == OTF2_SUCCESS) {
        rc = OTF2_GlobalDefWriter_WriteMetricClass(g, m->id, 1, &member, OTF2_METRIC_ASYNCHRONOUS,
                                                   OTF2_RECORDER_KIND_ABSTRACT);
      }
    }
    if (rc == OTF2_SUCCESS && any_synthetic_) {
      rc = OTF2_GlobalDefWriter_WriteAttribute(g, kSyntheticLeaveAttribute, synthetic_name_ref,
                                               synthetic_description_ref, OTF2_TYPE_UINT8);
    }
    for (const auto& l : defs_.locations()) {
      if (rc != OTF2_SUCCESS) break;
      if (!l) continue;
      const uint64_t count = l->id < event_counts.size() ? event_counts[l->id] : 0;
      rc = OTF2_GlobalDefWriter_WriteLocation(g, l->id, location_names[l->id], OTF2_LOCATION_TYPE_CPU_THREAD, count, 0);
      if (rc == OTF2_SUCCESS) {
        OTF2_AttributeValue tid;
        tid.int64 = l->os_tid;
        rc = OTF2_GlobalDefWriter_WriteLocationProperty(g, l->id, os_tid_ref, OTF2_TYPE_INT64, tid);
      }
    }
    if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseGlobalDefWriter(archive_, g);
    if (went_wrong(rc)) return fail("cannot write the OTF2 global definitions", rc, error);
    return true;
  }

  // Syncs the finished parts and moves them from the temporary directory
  // to their final names, the anchor last.
  bool publish(std::string& error) {
    const std::vector<std::string> from = temporary_parts();
    const std::vector<std::string> to = final_parts();
    // Data first: the files of the location directory, the directory, then
    // the two top-level files.
    std::vector<std::string> files;
    if (DIR* d = ::opendir(from[0].c_str())) {
      while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") files.push_back(from[0] + "/" + n);
      }
      ::closedir(d);
    }
    files.insert(files.end(), from.begin(), from.end());
    if (const int err = sync_files(files); err != 0) {
      error = detail::io_error("cannot sync OTF2 archive", anchor_path_, err);
      return false;
    }
    for (size_t i = 0; i < from.size(); ++i) {
      if (exists(to[i])) {
        error = "OTF2 archive part " + to[i] + " appeared while writing; not replacing it";
        undo_publish(i);
        return false;
      }
      if (::rename(from[i].c_str(), to[i].c_str()) != 0) {
        error = detail::io_error("cannot move the finished OTF2 archive to", to[i], errno);
        undo_publish(i);
        return false;
      }
    }
    ::rmdir(temp_dir_.c_str());
    temp_dir_.clear();
    return true;
  }

  // Moves the first `count` parts back into the temporary directory, so the
  // cleanup removes them.
  void undo_publish(size_t count) {
    const std::vector<std::string> from = temporary_parts();
    const std::vector<std::string> to = final_parts();
    for (size_t i = 0; i < count; ++i) ::rename(to[i].c_str(), from[i].c_str());
  }

  State state_ = State::Fresh;
  detail::DefinitionSet defs_;
  detail::EventChecker checker_;
  std::string directory_, name_, anchor_path_, temp_dir_;
  OTF2_Archive* archive_ = nullptr;
  std::vector<OTF2_EvtWriter*> writers_;  // per location id
  std::string failure_;
  // Leaves the program never ran (TraceEvent::synthetic): an attribute
  // defined only in archives that have one.
  static constexpr OTF2_AttributeRef kSyntheticLeaveAttribute = 0;
  OTF2_AttributeList* synthetic_list_ = nullptr;
  bool any_synthetic_ = false;
};

}  // namespace

std::unique_ptr<TraceWriter> make_otf2_writer() { return std::make_unique<Otf2Writer>(); }
bool otf2_supported() { return true; }

}  // namespace mri::exporters

#else  // !MRI_HAVE_OTF2

namespace mri::exporters {
namespace {

// Stands in when the build has no OTF2 library: every call explains why.
class UnavailableOtf2Writer final : public TraceWriter {
 public:
  bool begin(const std::string&, const TraceDefinitions&, std::string& error) override { return no(error); }
  bool add_location(const Location&, std::string& error) override { return no(error); }
  bool add_region(const Region&, std::string& error) override { return no(error); }
  bool add_metric(const MetricDefinition&, std::string& error) override { return no(error); }
  bool write(const TraceEvent*, size_t, std::string& error) override { return no(error); }
  bool finish(std::string& error) override { return no(error); }
  uint64_t events_written() const override { return 0; }

 private:
  static bool no(std::string& error) {
    error = "built without OTF2 (configure with libopen-trace-format2-dev installed and MRI_USE_OTF2=ON)";
    return false;
  }
};

}  // namespace

std::unique_ptr<TraceWriter> make_otf2_writer() { return std::make_unique<UnavailableOtf2Writer>(); }
bool otf2_supported() { return false; }

}  // namespace mri::exporters

#endif  // MRI_HAVE_OTF2
