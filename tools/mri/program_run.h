// The run of PROGRAM under mri: loading it, releasing it to its end, the
// signals passed on to it meanwhile, and its end as mri's exit status and
// words (killed, exec(), ended before monitoring).
//
// Exit statuses (docs/user-guide.md): the program's own (128 + signal when
// it was killed); 1 when an MRI call fails (die()) or nothing was
// measured (ended_before_monitoring(), when the program's status was 0).
//
// Thread safety: main thread only; the signal handler installed by
// load_program() touches only atomics and async-signal-safe calls.
#pragma once

#include "mri.h"

#include <string>

namespace mri::cli {

// Ends mri with status 1: "mri: WHAT: " and MRI's reason on stderr, after
// MRI_Finalize() (which ends a loaded program).
[[noreturn]] void die(const char* what);
[[noreturn]] inline void die(const std::string& what) { die(what.c_str()); }

// MRI_Application_Load() of `prog` (argv of the program, null-terminated),
// with the stop signals passed on to it from then on (a signal that arrived
// during the load is passed on once it is done). Dies when it fails.
void load_program(char** prog);

// MRI_Start() for the first release; when it fails because the program has
// already ended, says so (ended_before_monitoring()). Dies otherwise.
void start(const char* program);

// Releases the program until it has ended (a stop by someone else is
// continued). Dies when an MRI call fails.
void run_to_end();

// The program's end as a status for ours and as words (`how`): its exit
// status, or 128 + signal.
int program_end(const MRI_Application_Status_Info& st, std::string& how);

// Whether the program was killed by a signal (it has ended).
bool killed();

// Says on stderr what the monitor could not monitor: threads and regions
// beyond its limits.
void warn_unmonitored(const MRI_Application_Status_Info& st);

// What the results of a profile or histogram hold when the program was
// killed by a signal (final_status()).
extern const char* const kKilledProfileNote;
// The same when the monitor caught the signal and ended monitoring first.
extern const char* const kCaughtProfileNote;

// The program's exit status for ours, once it has ended. Warns about what
// was not monitored and passes the monitor's messages on; says when the
// program replaced itself with exec(), or was killed by a signal, with
// `killed_note` (what the results hold then; "" for nothing more) or, when
// the monitor caught the signal, `caught_note`.
int final_status(const char* program, const char* killed_note = kKilledProfileNote,
                 const char* caught_note = kCaughtProfileNote);

// The program ended before the requests took effect (it ended before its
// first region, e.g. on bad arguments, or declares none), or, `applied`,
// exited with them in place before any instance of a requested region
// ended: says so with the program's own exit status, and ends mri with that
// status (1 when the program's was 0: nothing was measured).
[[noreturn]] void ended_before_monitoring(const char* program, bool applied = false);

}  // namespace mri::cli
