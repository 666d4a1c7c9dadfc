// header_check.h - what the application checks in the segment header the
// tool wrote before it uses anything else in the segment (attach.cpp).
// Pure and header-only, so that its fuzz target (fuzz/fuzz_segment_header.cpp)
// calls exactly the checks the program makes.
#pragma once

#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

#include "mri_protocol.h"
#include "mri_sync.h"

namespace mri::monitor {

// What an accepted header gives the application: copies, which the tool
// can no longer change under it.
struct AcceptedHeader {
  proto::Geometry geometry{};
  proto::Layout layout{};
  uint32_t tool_pid = 0;
};

// Whether the segment starts with the protocol's magic. Checked before the
// application claims the segment: one that fails is left untouched (it may
// not be an MRI segment at all). Thread-safe (one load).
inline bool has_mri_magic(const proto::Header& h) { return sync::load(h.magic) == proto::kMagic; }

// The rest of the header, after the claim: the protocol version, the
// geometry (hard limits), the layout it implies against the kernel's size
// of the segment (`segment_bytes`, from IPC_STAT), the header's size and
// its own idea of the segment's size, and the tool pid against the one the
// environment named (`env_tool_pid`: 0 or less when it named none). Each
// field is read once (the tool can change them meanwhile) and the copies
// are checked. Returns "" and fills `out`, or the one-line reason to refuse
// (`out` then undefined). Thread-safe; allocates only the message.
inline std::string check_header(const proto::Header& h, uint64_t segment_bytes, long env_tool_pid,
                                AcceptedHeader& out) {
  const uint32_t version = sync::load(h.protocol_version);
  if (version != proto::kProtocolVersion) {
    char why[proto::kMessageBytes];
    std::snprintf(why, sizeof why,
                  "protocol version mismatch: the tool speaks version %u, this application's "
                  "libmonitor speaks version %u",
                  version, proto::kProtocolVersion);
    return why;
  }
  const proto::Geometry geo = h.geometry;
  if (const char* bad = proto::validate_geometry(geo)) return bad;
  const proto::Layout layout = proto::compute_layout(geo);
  if (layout.total > segment_bytes) return "segment smaller than its geometry needs";
  if (sync::load(h.header_size) != sizeof(proto::Header)) return "header size mismatch";
  const uint64_t claimed = sync::load(h.segment_size);
  if (claimed < layout.total || claimed > segment_bytes) return "segment size in the header disagrees with the segment";
  // A pid is positive as a pid_t, and compared whole: cut to 32 bits, an
  // environment's 2^32 named the header's pid 0, and 2^32 - 1 its pid -1
  // (pid_t), which pidfd_open refuses and kill(pid, 0), the fallback,
  // takes for the process group or every process, so the tool was taken
  // for alive.
  const uint32_t header_tool = sync::load(h.tool.tool_pid);
  if (env_tool_pid <= 0 || env_tool_pid > INT32_MAX || uint64_t(env_tool_pid) != header_tool)
    return "tool pid in the environment and the segment disagree";
  out.geometry = geo;
  out.layout = layout;
  out.tool_pid = header_tool;
  return "";
}

}  // namespace mri::monitor
