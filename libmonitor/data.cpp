// data.cpp - the data-structure table (Monitor_Register_Data): what the
// application registers is published to the tool as DataRecords, with the
// static information when it comes before the first monitored event, at
// once afterwards.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {
namespace {

constexpr size_t kMaxNameBytes = 255;

struct Entry {
  std::string name;
  uint64_t address;
  uint64_t bytes;
  std::string file;
  int32_t line;  // first line of the declaring unit, 0: file scope
  int32_t record = -1;  // its index in the published table, -1 while pending (or not published)
  bool ended = false;   // Monitor_Unregister_Data
};

// Guarded by g.registry_mutex. Registered before the publication and not
// yet in the segment; then every published record (the MCC's trusted copy).
std::vector<Entry>* g_pending = nullptr;
std::vector<Entry>* g_known = nullptr;  // every accepted registration (duplicate check, ends)
std::vector<proto::DataRecord>* g_records = nullptr;

proto::AppControl& app() { return g.view.header()->app; }

// The file id of `file`, publishing a file record when it is new (the same
// table publish_region() fills); -1 when the file table is full.
int64_t file_id_for(const std::string& file) {
  auto it = g.file_ids->find(file);
  if (it != g.file_ids->end()) return it->second;
  if (g.file_ids->size() >= g.view.g.max_files) return -1;
  const uint32_t id = uint32_t(g.file_ids->size());
  proto::FileRecord* fr = g.view.file(id);
  if (!intern(file, fr->name_offset, fr->name_len)) return -1;
  g.file_ids->emplace(file, id);
  sync::store(app().file_count, id + 1);
  return id;
}

// Writes one record into the segment; the release store of data_count
// makes it visible complete. Notes the record's index in the matching
// g_known entry (the last one with e's address, name and unit), and ends
// the record at once if that entry ended while pending.
bool publish_record(const Entry& e);
bool publish(const Entry& e) {
  if (!publish_record(e)) return false;
  const int32_t index = int32_t(g_records->size() - 1);
  if (g_known)
    for (auto it = g_known->rbegin(); it != g_known->rend(); ++it)
      if (it->record < 0 && it->address == e.address && it->name == e.name && it->file == e.file &&
          it->line == e.line) {
        it->record = index;
        if (it->ended) sources_data_ended(uint32_t(index));
        break;
      }
  return true;
}
bool publish_record(const Entry& e) {
  const uint32_t index = uint32_t(g_records->size());
  if (index >= proto::kMaxDataStructures) {
    note_error("data structure \"%s\" not published: more than %u data structures", e.name.c_str(),
               proto::kMaxDataStructures);
    return false;
  }
  const int64_t file = file_id_for(e.file);
  proto::DataRecord rec{e.address, e.bytes, 0, 0, 0, e.line};
  if (file < 0 || !intern(e.name, rec.name_offset, rec.name_len)) {
    note_error("data structure \"%s\" not published: the file table or the name pool is full", e.name.c_str());
    return false;
  }
  rec.file_id = uint32_t(file);
  *g.view.data_record(index) = rec;
  g_records->push_back(rec);
  sync::store(app().data_count, index + 1);
  return true;
}

bool attached() {
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  return (m == kRunning || m == kStopped) && g.view.base;
}

}  // namespace

void data_publish_pending() {
  if (!g_records) g_records = new std::vector<proto::DataRecord>;
  if (!g_pending) return;
  for (const Entry& e : *g_pending) publish(e);
  g_pending->clear();
}

const std::vector<proto::DataRecord>& data_records() {
  static const std::vector<proto::DataRecord> none;
  return g_records ? *g_records : none;
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" int Monitor_Register_Data(const char* name, const void* address, unsigned long long bytes,
                                     const Monitor_Region_Descriptor* unit, const char* file) {
  // No data structure starts at address 0 (and Monitor_Unregister_Data
  // could not end one there: NULL is refused).
  if (!name || !*name || std::strlen(name) > kMaxNameBytes || bytes == 0 || !address) return -1;
  const uint64_t begin = uint64_t(reinterpret_cast<uintptr_t>(address));
  // A size no address space holds is a negative size cast to unsigned (or
  // garbage): refused, as its histogram layout would be (mri_histogram.h).
  const char* bad_size = bytes > mri::proto::kMaxDataStructureBytes ? "is above 2^56, the largest address space"
                         : begin + bytes < begin                    ? "runs past the end of the address space"
                                                                    : nullptr;
  if (!attached()) return bad_size ? -1 : 0;  // dormant: nothing to tell anybody
  Entry e{name, begin, bytes, unit && unit->file ? unit->file : file ? file : "?", unit ? unit->line : 0};
  std::lock_guard<std::mutex> control(g.control_mutex);  // keeps a detach from unmapping the segment
  std::lock_guard<std::mutex> lock(g.registry_mutex);
  if (!attached()) return bad_size ? -1 : 0;
  if (bad_size) {
    note_error("data structure \"%s\" not registered: its size of %llu bytes %s", name, bytes, bad_size);
    return -1;
  }
  if (!g_known) g_known = new std::vector<Entry>;
  for (const Entry& k : *g_known)
    if (!k.ended && k.name == e.name && k.file == e.file && k.line == e.line) {
      note_error("data structure \"%s\" registered twice in the same program unit (%s:%d): the second is ignored "
                 "(end the first with Monitor_Unregister_Data)",
                 name, e.file.c_str(), e.line);
      return -1;
    }
  if (!g.published) {
    if (!g_pending) g_pending = new std::vector<Entry>;
    if (g_pending->size() >= mri::proto::kMaxDataStructures) {
      // As after the publication (publish()): said, not only returned.
      note_error("data structure \"%s\" not published: more than %u data structures", name,
                 mri::proto::kMaxDataStructures);
      return -1;
    }
    g_pending->push_back(e);
    g_known->push_back(e);
    return 0;
  }
  g_known->push_back(e);
  if (!publish(e)) {
    g_known->pop_back();
    return -1;
  }
  return 0;
}

extern "C" int Monitor_Unregister_Data(const void* address) {
  if (!address) return -1;
  if (!attached()) return 0;  // dormant: nothing was recorded
  const uint64_t begin = uint64_t(reinterpret_cast<uintptr_t>(address));
  // The calling thread's references so far still count for it (before the
  // locks: simulating waits for the simulator, never for them).
  sources_sync_thread();
  std::lock_guard<std::mutex> control(g.control_mutex);
  std::lock_guard<std::mutex> lock(g.registry_mutex);
  if (!attached()) return 0;
  if (g_known)
    for (auto it = g_known->rbegin(); it != g_known->rend(); ++it)
      if (it->address == begin && !it->ended) {
        it->ended = true;
        if (it->record >= 0) sources_data_ended(uint32_t(it->record));
        return 0;
      }
  note_error("Monitor_Unregister_Data(%p): no registered data structure starts there (or it has ended)", address);
  return -1;
}
