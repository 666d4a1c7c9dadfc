// session.cpp - the lifetime of the session and of its runs: what MRI_Init,
// MRI_Finalize and a load start over.
#include "session.h"

#include "counters.h"
#include "launch.h"

namespace mri::tool {

void open_session(Session& s) {
  s.initialized = true;
  s.next_id = 1;
  s.rotation = false;
  s.cache_config.clear();
  s.cache_config_set = false;
  s.iteration = 0;
}

void close_session(Session& s) {
  release_segment(s);
  s.loaded = false;
  s.requests.clear();
  s.regions.clear();
  s.files.clear();
  forget_registered_events();
  s.initialized = false;
}

void end_previous_run(Session& s) {
  if (s.loaded) {
    finish_application(s);
    release_segment(s);
    s.loaded = false;
  }
  s.iteration = 0;
  for (auto& [id, r] : s.requests) {  // iterations count per run
    r.measured.clear();
    r.measured_restarted = true;
  }
}

void start_run(Session& s, const proto::View& view, int shmid) {
  s.shmid = shmid;
  ++s.run;
  s.view = view;
  s.last_cmd_seq = 0;
  s.last_cmd = proto::Command::kNone;
  s.status_stuck = false;
  s.slot_busy.assign(view.g.max_requests, 0);
  s.next_slot = 0;
  s.trace_draining.clear();  // a new segment: its rings hold no record yet
  s.slice_busy.assign(view.g.max_profile_slices, 0);
  s.histogram_busy.assign(proto::kMaxHistograms, 0);
}

}  // namespace mri::tool
