#!/usr/bin/env bash
# Records the current user's System V shared memory segments, or compares
# the current set with a recording: the test suite must leave none behind.
set -euo pipefail
mode=$1 file=$2
list() { ipcs -m | awk -v u="$(id -un)" 'NR > 3 && $3 == u { print $2 }' | sort; }
case $mode in
  record) list > "$file"; echo "segments before the suite: $(wc -l < "$file")" ;;
  compare)
    now=$(mktemp)
    list > "$now"
    if ! diff -u "$file" "$now"; then
      echo "shared memory segments were left behind (see diff above)"; ipcs -m; exit 1
    fi
    echo "no segment left behind ($(wc -l < "$now") before and after)" ;;
  *) echo "usage: $0 record|compare FILE" >&2; exit 2 ;;
esac
