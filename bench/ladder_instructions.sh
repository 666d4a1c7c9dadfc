#!/usr/bin/env bash
# ladder_instructions.sh - instructions per enter/exit pair of ladder rungs,
# counted by Valgrind's callgrind: the same count on every run of the same
# binary, whatever else the machine is doing, where a timing A/B on a shared
# virtual machine moves by more than the change it is meant to show.
#
#   bench/ladder_instructions.sh BUILD_DIR [RUNG...]
#
# RUNG: profile, callpath, aggregate or trace (default: profile callpath).
# For each rung, ladder_tool RUNG runs ladder_app under callgrind, counting
# only inside the rung's pair function (--toggle-collect=*pair_RUNG*, the
# monitor's enter and exit included), and the count is divided by the
# instances the tool's request saw. LADDER_MIN_TIME (default 0.3 s of
# benchmark time under callgrind, about 300 000 pairs) sets the run length;
# the first pairs' one-off costs (symbol binding, first-touch) are then below
# 0.1 instruction a pair. Prints one line per rung; exit status 1 when a run
# failed or saw no instances.
#
# To compare two builds of libmonitor with one ladder_app, point
# LD_LIBRARY_PATH at the other libmonitor.so (ladder_app has a RUNPATH, which
# LD_LIBRARY_PATH overrides).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [profile|callpath|aggregate|trace ...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
rungs=("$@")
[[ ${#rungs[@]} -gt 0 ]] || rungs=(profile callpath)
app=$build/bench/ladder_app
tool=$build/bench/ladder_tool
for f in "$app" "$tool"; do
  [[ -x $f ]] || { echo "ladder_instructions: $f not found; build it first" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "ladder_instructions: valgrind not found" >&2; exit 2; }
min_time=${LADDER_MIN_TIME:-0.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
for rung in "${rungs[@]}"; do
  case $rung in
    profile|callpath|aggregate|trace) ;;
    *) echo "ladder_instructions: unknown rung '$rung' (profile, callpath, aggregate, trace)" >&2; exit 2 ;;
  esac
  out=$tmp/$rung.callgrind
  if ! "$tool" "$rung" -- valgrind --tool=callgrind --toggle-collect="*pair_${rung}*" \
      --callgrind-out-file="$out" "$app" --benchmark_filter="^BM_${rung}/threads:1\$" \
      --benchmark_min_time="$min_time" >"$tmp/$rung.log" 2>&1; then
    echo "ladder_instructions: $rung: the run failed:" >&2
    tail -5 "$tmp/$rung.log" >&2
    status=1
    continue
  fi
  # The tool's line names the instances its request saw: "... N instances ...".
  # A trace sees records (two a pair), so its count comes from the program.
  if [[ $rung == trace ]]; then
    pairs=$(grep -oE '[0-9]+ records emitted' "$tmp/$rung.log" | awk '{print $1 / 2}')
  else
    pairs=$(grep -m1 -oE '[0-9]+ instances' "$tmp/$rung.log" | awk '{print $1}')
  fi
  total=$(awk '/^totals:/{print $2}' "$out")
  if [[ -z ${pairs:-} || ${pairs:-0} == 0 || -z ${total:-} ]]; then
    echo "ladder_instructions: $rung: no pairs seen" >&2
    status=1
    continue
  fi
  awk -v r="$rung" -v t="$total" -v n="$pairs" \
    'BEGIN { printf "%-9s %8.1f instructions a pair (%d instructions over %d pairs)\n", r, t / n, t, n }'
done
exit $status
