# shellcheck shell=bash
# ladder_processes.sh - sourced by run_ladder.sh and compare_ladder.sh: the
# processes of one round of the hot-path cost ladder, and how one runs.
#
# A round is eight processes: plain (ladder_app alone), attached,
# aggregate, profile, callpath, counter (ladder_app under ladder_tool with
# the rung's request), trace1 and trace2 (the trace rung at 1 and at 2
# threads, each a process of its own so that ladder_tool's count of the
# waits for ring room is that thread count's).
#
# ladder_processes MODE: prints the process names of a round, one a line.
# ladder_filter MODE NAME: the --benchmark_filter of process NAME. MODE
#   "table" (run_ladder.sh) adds the timer context to plain and the
#   uninstrumented control to the tool processes; "compare"
#   (compare_ladder.sh) runs the rungs only.
# ladder_level NAME: ladder_tool's level for NAME; empty for plain.
# ladder_run BUILD MODE NAME OUT [LIBDIR]: runs process NAME of BUILD
#   (BUILD/bench/ladder_app, BUILD/bench/ladder_tool), writing OUT.json
#   (Google Benchmark's) and OUT.log (everything it printed, with
#   ladder_tool's line). LIBDIR, when given and not empty, goes first on
#   LD_LIBRARY_PATH (another libmonitor.so for the same ladder_app, whose
#   RUNPATH LD_LIBRARY_PATH overrides). LADDER_REPETITIONS and
#   LADDER_MIN_TIME set the repetitions and their length (the caller's
#   defaults). Returns the process's status (1 from ladder_tool: its
#   request saw nothing).

ladder_processes() {
  printf '%s\n' plain attached aggregate profile callpath counter trace1 trace2
}

ladder_level() {
  case $1 in
    plain) echo "" ;;
    trace1 | trace2) echo trace ;;
    *) echo "$1" ;;
  esac
}

ladder_filter() {
  local mode=$1 name=$2
  case $name in
    plain)
      if [[ $mode == table ]]; then
        echo '^BM_(uninstrumented|dormant|rdtsc|clock_gettime|rdtsc_pair|perf_read|papi_pair)/'
      else
        echo '^BM_(uninstrumented|dormant)/'
      fi ;;
    trace1) echo '^BM_trace/threads:1$' ;;
    trace2) echo '^BM_trace/threads:2$' ;;
    *)
      if [[ $mode == table ]]; then
        echo "^BM_(uninstrumented|$name)/"
      else
        echo "^BM_$name/"
      fi ;;
  esac
}

ladder_run() {
  local build=$1 mode=$2 name=$3 out=$4 libdir=${5:-} level cmd=()
  level=$(ladder_level "$name")
  [[ -n $level ]] && cmd=("$build/bench/ladder_tool" "$level" --)
  cmd+=("$build/bench/ladder_app" --benchmark_filter="$(ladder_filter "$mode" "$name")"
        --benchmark_repetitions="$LADDER_REPETITIONS" --benchmark_min_time="$LADDER_MIN_TIME"
        --benchmark_report_aggregates_only=true --benchmark_out_format=json --benchmark_out="$out.json")
  if [[ -n $libdir ]]; then
    env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${cmd[@]}" >"$out.log" 2>&1
  else
    "${cmd[@]}" >"$out.log" 2>&1
  fi
}

# ladder_check_build BUILD: both binaries there, or a message and status 2.
ladder_check_build() {
  local f
  for f in "$1/bench/ladder_app" "$1/bench/ladder_tool"; do
    if [[ ! -x $f ]]; then
      echo "$f not found; build it first (cmake --build $1 --target ladder_app ladder_tool)" >&2
      return 2
    fi
  done
}
