#!/usr/bin/env bash
# compare_with_cachegrind.sh MRI_CACHESIM PROGRAM [ARG...]
#
# Runs PROGRAM once under cachegrind and once under lackey, and replays the
# lackey trace (through a pipe: it can be gigabytes) with mri-cachesim in
# three models at once:
#   compat     --cachegrind-compat with cachegrind's I1, D1 and LL
#   default    the default model, with the same I1, L1 = D1 and L2 = LL
#   data-only  the default model without I1: what an in-application
#              adapter sees (data references only)
# and prints cachegrind's miss counts, each model's, and the differences.
# The geometry comes from I1, D1 and LL in the environment (cachegrind's
# SIZE,ASSOC,LINE in bytes), default 32768,8,64 / 32768,8,64 / 1048576,16,64.
# docs/ACCURACY.md has the results.
set -euo pipefail
sim=$1
shift
I1=${I1:-32768,8,64}
D1=${D1:-32768,8,64}
LL=${LL:-1048576,16,64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
norand=(setarch "$(uname -m)" -R)

"${norand[@]}" valgrind --tool=cachegrind --cache-sim=yes --I1="$I1" --D1="$D1" --LL="$LL" \
  --cachegrind-out-file="$work/cg.out" --log-file="$work/cg.log" "$@" >/dev/null
cg=$(sed -n 's/^summary: //p' "$work/cg.out")

i1_size=${I1%%,*}; d1_size=${D1%%,*}; ll_size=${LL%%,*}
geom() { IFS=, read -r s a l <<<"$1"; echo "$s,$a,$l"; }
default_cfg="I1:$(geom "$I1");L1:$(geom "$D1");L2:$(geom "$LL")"
data_cfg="L1:$(geom "$D1");L2:$(geom "$LL")"
# lackey's trace goes to fd 3, the program's own output away.
"${norand[@]}" valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$@" 3>&1 1>/dev/null 2>/dev/null |
  tee >("$sim" --no-progress --config "$default_cfg" - >"$work/default.txt") \
      >("$sim" --no-progress --config "$data_cfg" - >"$work/data.txt") |
  "$sim" --no-progress --cachegrind-compat --I1="$I1" --D1="$D1" --LL="$LL" - >"$work/compat.txt"
# the two background replays finish after tee; wait for their files
for f in default data; do
  for _ in $(seq 600); do grep -q '^summary:' "$work/$f.txt" 2>/dev/null && break; sleep 0.1; done
done

echo "program: $*   I1=$I1 D1=$D1 LL=$LL (sizes in bytes: $i1_size $d1_size $ll_size)"
printf '%-12s %12s %10s %10s %12s %10s %10s %10s %10s %10s\n' model Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
printf '%-12s %12s %10s %10s %12s %10s %10s %10s %10s %10s\n' cachegrind $cg
for f in compat default data; do
  # shellcheck disable=SC2046
  printf '%-12s %12s %10s %10s %12s %10s %10s %10s %10s %10s\n' "$f" $(sed -n 's/^summary: //p' "$work/$f.txt")
done
echo "difference from cachegrind, percent (positive: more):"
for f in compat default data; do
  paste <(tr ' ' '\n' <<<"$cg") <(sed -n 's/^summary: //p' "$work/$f.txt" | tr ' ' '\n') |
    awk -v m="$f" 'BEGIN{split("Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw",n," "); printf "%-12s", m}
      {d = ($1 == 0) ? 0 : 100 * ($2 - $1) / $1; printf " %s=%+.4f", n[NR], d} END{print ""}'
done
