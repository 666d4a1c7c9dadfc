# shellcheck shell=bash
# variants.sh - sourced by the bench scripts that time variants of one
# program in rounds (run_cachesim_slowdown.sh, run_thread_churn.sh,
# run_barrier_wait.sh, compare_sim.sh). The caller sets names=() and
# cmds=(): a variant's name and its command (no quoted words with spaces:
# it is split on blanks).
#
#   run_variants ROUND FIELDS CSV PREFIX CONTEXT ARG...
#
# Runs every variant once with ARG..., starting ROUND - 1 variants further
# along (each variant runs first in turn, so a host whose speed drifts
# moves them alike), takes the first FIELD=<number> of its output for each
# FIELD of the comma-separated FIELDS and appends
# "PREFIX<ROUND>,<variant index>,<number>[,<number>...]" to CSV. A variant
# that fails, or lacks one of the fields, ends the script, naming it and
# CONTEXT.
run_variants() {
  local round=$1 fields=$2 csv=$3 prefix=$4 context=$5 nv=${#cmds[@]} k i out value values field
  shift 5
  for ((k = 0; k < nv; k++)); do
    i=$(( (k + round - 1) % nv ))
    # shellcheck disable=SC2086
    out=$(${cmds[$i]} "$@" 2>/dev/null) || { echo "variant '${names[$i]}' failed ($context)" >&2; exit 1; }
    values=
    for field in ${fields//,/ }; do
      value=$(grep -o "\b$field=[0-9.]*" <<<"$out" | head -1 | cut -d= -f2 || true)
      [ -n "$value" ] || { echo "variant '${names[$i]}' printed no $field= ($context)" >&2; exit 1; }
      values+=",$value"
    done
    echo "$prefix$round,$i$values" >> "$csv"
  done
}
