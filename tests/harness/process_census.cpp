// process_census.cpp - process_census.h.
#include "process_census.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mri::testing {

std::vector<GroupMember> group_members(pid_t group) {
  std::vector<GroupMember> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const pid_t pid = pid_t(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    // The command name, in parentheses, may hold blanks and parentheses:
    // the fields after it start after the last ')'.
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (std::sscanf(line.c_str() + line.rfind(')') + 2, "%c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == group)
      out.push_back({pid, state});
  }
  closedir(d);
  return out;
}

std::vector<int> segments_created_by(pid_t creator) {
  std::ifstream f("/proc/sysvipc/shm");
  std::string line;
  std::getline(f, line);  // the header
  std::vector<int> ids;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    long long key, id, perms, size, cpid;
    if ((in >> key >> id >> perms >> size >> cpid) && cpid == creator) ids.push_back(int(id));
  }
  return ids;
}

}  // namespace mri::testing
