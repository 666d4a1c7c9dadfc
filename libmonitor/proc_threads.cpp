// proc_threads.cpp - what the kernel says about this process's threads
// (/proc/self/task and the per-thread CPU clocks): used where the monitor
// must know whether the program's own threads still run.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "monitor_internal.h"

namespace mri::monitor {

// The state letter of a thread of this process ('R', 'S', 'Z', ...), from
// /proc/self/task/TID/stat; 0 when it cannot be read (the thread is gone).
char task_state(pid_t tid) {
  char path[64], text[512];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  FILE* f = std::fopen(path, "re");
  if (!f) return 0;
  const size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  const char* paren = std::strrchr(text, ')');  // the name may hold anything
  return paren && paren[1] == ' ' ? paren[2] : 0;
}

// Whether every thread of the program has ended and only the monitor's
// own (this control thread, the simulation thread) keep the process
// alive: its main thread called pthread_exit() (it stays a zombie while
// the process lives), and the others have ended too. Without the monitor
// the process would have ended then, as by exit(0).
bool program_threads_gone(pid_t control_tid) {
  if (task_state(getpid()) != 'Z') return false;  // one file read while main runs
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return false;
  bool gone = true;
  while (const dirent* e = readdir(dir)) {
    const pid_t tid = pid_t(std::atoi(e->d_name));
    if (tid <= 0 || tid == control_tid || sources_own_thread(tid)) continue;
    const char state = task_state(tid);
    if (state != 0 && state != 'Z' && state != 'X') {
      gone = false;
      break;
    }
  }
  closedir(dir);
  return gone;
}

// The CPU time thread `tid` of this process has used, ns (its clock, as
// glibc's pthread_getcpuclockid makes it: the kernel's per-thread
// CPUCLOCK_SCHED); 0 when it cannot be read (the thread is gone).
uint64_t thread_cpu_ns(pid_t tid) {
  const clockid_t clock = clockid_t((~uint32_t(tid) << 3) | 6u);
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return 0;
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}

}  // namespace mri::monitor
