// process_census.h - what the campaign harnesses (kill/, rogue/) look for
// after each run: the processes left in a run's process group and the
// System V segments its tool created that still exist. Both read /proc.
#pragma once

#include <sys/types.h>

#include <vector>

namespace mri::testing {

struct GroupMember {
  pid_t pid;
  char state;  // as /proc/PID/stat gives it: 'Z' for a zombie
};

// The processes of process group `group`, alive or zombies.
std::vector<GroupMember> group_members(pid_t group);

// The ids of the System V segments process `creator` created that still
// exist (/proc/sysvipc/shm).
std::vector<int> segments_created_by(pid_t creator);

}  // namespace mri::testing
