// segment_peer.cpp - the test's own view of the segment libmri attached
// (segment_peer.h), through the protocol's layout.
#include "segment_peer.h"

#include <cstdio>
#include <cstring>

#include "mri_protocol.h"

namespace {

using namespace mri::proto;

// The first System V mapping ("/SYSV" in /proc/self/maps) with the
// protocol's magic and version at its start.
Header* find_header() {
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return nullptr;
  char line[512];
  Header* found = nullptr;
  while (!found && std::fgets(line, sizeof line, maps)) {
    unsigned long begin = 0, end = 0;
    if (!std::strstr(line, "/SYSV") || std::sscanf(line, "%lx-%lx", &begin, &end) != 2) continue;
    if (end - begin < sizeof(Header)) continue;
    auto* h = reinterpret_cast<Header*>(begin);
    if (h->magic == kMagic && h->protocol_version == kProtocolVersion) found = h;
  }
  std::fclose(maps);
  return found;
}

View view() {
  View v;
  Header* h = find_header();
  if (!h || validate_geometry(h->geometry)) return v;
  v.base = reinterpret_cast<unsigned char*>(h);
  v.g = h->geometry;
  v.l = compute_layout(v.g);
  return v;
}

}  // namespace

extern "C" {

void* mri_test_segment(void) { return find_header(); }

char* mri_test_cache_config(void) {
  const View v = view();
  return v.base ? v.cache_config() : nullptr;
}

unsigned mri_test_cache_config_bytes(void) { return kCacheConfigBytes; }

unsigned long long* mri_test_trace_head(unsigned thread) {
  const View v = view();
  if (!v.base || thread >= v.g.max_threads) return nullptr;
  return reinterpret_cast<unsigned long long*>(&v.trace_head(thread)->head);
}

unsigned long long mri_test_trace_ring_records(void) {
  const View v = view();
  return v.base ? v.g.trace_records : 0;
}

unsigned* mri_test_status_seq(void) {
  Header* h = find_header();
  return h ? &h->app.status_seq : nullptr;
}

char* mri_test_last_error(void) {
  Header* h = find_header();
  return h ? h->app.last_error : nullptr;
}

unsigned mri_test_message_bytes(void) { return kMessageBytes; }

}  // extern "C"
