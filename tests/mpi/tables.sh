# shellcheck shell=bash
# tables.sh - sourced by the MPI tests: reading the per-rank tables of
# `mri profile` (one rank's or several ranks' in one file).
#
# rank_rows FILE: "RANK REGION TYPE CALLS" for every row of each table's
# "all threads" part; RANK is the title's "rank R of N", "-" for a table
# of a process outside a job.
rank_rows() {
  awk '/^mri profile:/ { r = "-"; if (match($0, /rank [0-9]+ of/)) r = substr($0, RSTART + 5, RLENGTH - 8); on = 0 }
       /^all threads/ { on = 1; next } on && NF == 0 { on = 0 } on && $1 != "region" { print r, $1, $2, $4 }' "$1"
}
# calls FILE RANK REGION: the calls of REGION in RANK's table (0 when it
# has no row).
calls() { rank_rows "$1" | awk -v r="$2" -v g="$3" '$1 == r && $2 == g { c = $4 } END { print c + 0 }'; }
# calls_over_ranks FILE REGION: the calls of REGION summed over the tables.
calls_over_ranks() { rank_rows "$1" | awk -v g="$2" '$2 == g { s += $4 } END { print s + 0 }'; }
