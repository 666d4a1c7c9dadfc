#!/usr/bin/env bash
# The test suite must leave no System V shared-memory segment behind.
#
#   shm_check.sh record FILE    (before the suite: the segments that exist now)
#   shm_check.sh compare FILE   (after it)
#
# Other programs of the same user may create and remove segments while the
# suite runs (another test suite among them), so the comparison flags only
# segments this suite can have leaked: new since the recording, owned by
# this user, not marked for removal, and whose creating process has ended
# (a live creator still owns its segment; every segment MRI creates is
# marked for removal once both sides are attached, or removed by the tool).
set -euo pipefail
mode=$1 file=$2
uid=$(id -u)
# shmid, cpid and mode of this user's segments (/proc/sysvipc/shm: key
# shmid perms size cpid lpid nattch uid ...; perms holds SHM_DEST, 01000).
segments() { awk -v u="$uid" 'NR > 1 && $8 == u { print $2, $5, $3 }' /proc/sysvipc/shm; }
case $mode in
  record)
    segments | awk '{ print $1 }' | sort > "$file"
    echo "segments before the suite: $(wc -l < "$file")" ;;
  compare)
    leaked=0
    while read -r id cpid perms; do
      grep -qx "$id" "$file" && continue
      (( (8#$perms & 8#1000) != 0 )) && continue   # marked for removal: goes with its last detach
      kill -0 "$cpid" 2>/dev/null && continue       # its creator lives: not left behind (yet)
      echo "segment $id (created by pid $cpid, mode $perms) was left behind"
      leaked=$((leaked + 1))
    done < <(segments)
    if ((leaked)); then ipcs -m; exit 1; fi
    echo "no segment left behind" ;;
  *) echo "usage: $0 record|compare FILE" >&2; exit 2 ;;
esac
