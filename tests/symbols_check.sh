#!/usr/bin/env bash
# What the two shared libraries export (docs/architecture.md, "Components"):
# libmri.so exactly the functions include/mri.h declares; libmonitor.so the
# functions of include/mri_monitor.h and the calls it interposes on; neither
# any symbol of the project's C++ namespaces (its internals, the simulator,
# the backends), which a program with code of the same names would bind to.
#
#   symbols_check.sh LIBMRI.so LIBMONITOR.so MRI_H MRI_MONITOR_H
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 LIBMRI.so LIBMONITOR.so MRI_H MRI_MONITOR_H" >&2; exit 2; }
libmri=$1 libmonitor=$2 mri_h=$3 monitor_h=$4
command -v nm > /dev/null && command -v c++filt > /dev/null || { echo "nm and c++filt (binutils) are needed" >&2; exit 1; }
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# Defined dynamic symbols, without the linker's and the sanitizers' own (__*).
exports() { nm -D --defined-only "$1" | awk '{ print $NF }' | grep -v -E '^(__|_init$|_fini$|_edata$|_end$)' | sort -u; }

# The project's C++ symbols: mri::..., and their typeinfo and vtables.
internal() { grep '^_Z' | c++filt | grep -E '^((typeinfo|typeinfo name|vtable|VTT|guard variable) for )?mri::' || true; }

for lib in "$libmri" "$libmonitor"; do
  leaked=$(exports "$lib" | internal)
  [ -z "$leaked" ] || fail "$(basename "$lib") exports $(wc -l <<<"$leaked") internal C++ symbols, e.g. $(head -3 <<<"$leaked" | tr '\n' ';')"
done

# libmri: the C functions of mri.h, no more and no fewer.
declared=$(grep -oE '\b(MRI|Get_Available)_[A-Za-z_]+\(' "$mri_h" | tr -d '(' | sort -u)
exported=$(exports "$libmri" | grep -v '^_Z' || true)
[ -n "$declared" ] || fail "no function found in $mri_h"
if [ "$declared" != "$exported" ]; then
  fail "libmri exports differ from mri.h (< declared only, > exported only):"
  diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' || true
fi

# libmonitor: every MONITOR_API function, and besides those only the
# interposed calls.
api=$(grep -oE 'MONITOR_API[^(]*\b(Monitor_[A-Za-z_]+)\(' "$monitor_h" | grep -oE 'Monitor_[A-Za-z_]+\($' | tr -d '(' | sort -u)
exported=$(exports "$libmonitor" | grep -v '^_Z' || true)
[ -n "$api" ] || fail "no MONITOR_API function found in $monitor_h"
missing=$(comm -23 <(echo "$api") <(echo "$exported"))
[ -z "$missing" ] || fail "libmonitor does not export: $(tr '\n' ' ' <<<"$missing")"
interposed='^(pthread_create|pthread_join|pthread_barrier_init|pthread_barrier_destroy|pthread_barrier_wait|execl|execle|execlp|execv|execve|execvp|execvpe|fexecve)$'
extra=$(comm -13 <(echo "$api") <(echo "$exported") | grep -v -E "$interposed" || true)
[ -z "$extra" ] || fail "libmonitor exports more than mri_monitor.h and the interposed calls: $(tr '\n' ' ' <<<"$extra")"

if [ $failed -ne 0 ]; then exit 1; fi
echo "libmri.so: the $(wc -l <<<"$declared") functions of mri.h; libmonitor.so: the $(wc -l <<<"$api") of mri_monitor.h and the interposed calls; no internal C++ symbol"
