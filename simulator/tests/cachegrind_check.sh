#!/usr/bin/env bash
# cachegrind_check.sh MRI_CACHESIM PROBE WORKDIR
#
# Runs PROBE under Valgrind twice with lackey (the address stream) and once
# per geometry with cachegrind, and requires `mri-cachesim
# --cachegrind-compat` with the same geometry to give exactly cachegrind's
# counts: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw. Exit 0 pass, 1 fail, 77
# skip (no valgrind).
set -euo pipefail
sim=$1
probe=$2
work=$3

if ! command -v valgrind >/dev/null 2>&1; then
  echo "SKIP: valgrind is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
mkdir -p "$work"
cd "$work"

# Address space randomisation off, so the stack and the loader's mappings
# are where they were last time (Valgrind places the client itself, but
# takes hints from the personality).
norand=(setarch "$(uname -m)" -R)
if ! "${norand[@]}" true 2>/dev/null; then
  echo "note: setarch -R is not permitted here; running with randomisation (the two-run check below still applies)"
  norand=()
fi

run_lackey() {
  "${norand[@]}" valgrind --tool=lackey --trace-mem=yes --log-file="$1" "$probe"
}
run_lackey trace1.txt
run_lackey trace2.txt
# Valgrind's own lines (==PID==) carry the pid; everything else must match.
if ! cmp -s <(grep -v '^==' trace1.txt) <(grep -v '^==' trace2.txt); then
  echo "FAIL: two lackey runs of $probe gave different address streams:"
  diff <(grep -v '^==' trace1.txt) <(grep -v '^==' trace2.txt) | head -20
  exit 1
fi
echo "two lackey runs agree: $(grep -vc '^==' trace1.txt) references"

fail=0
# geometry: I1 D1 LL, each SIZE,ASSOC,LINE in bytes as cachegrind takes them
check() {
  local i1=$1 d1=$2 ll=$3
  "${norand[@]}" valgrind --tool=cachegrind --cache-sim=yes --I1="$i1" --D1="$d1" --LL="$ll" \
    --cachegrind-out-file=cg.out --log-file=cg.log "$probe"
  local want got
  want=$(sed -n 's/^summary: //p' cg.out)
  [ "$(sed -n 's/^events: //p' cg.out | xargs)" = "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw" ] || {
    echo "FAIL: unexpected events line in cg.out: $(grep '^events:' cg.out)"; exit 1; }
  got=$("$sim" --cachegrind-compat --no-progress --I1="$i1" --D1="$d1" --LL="$ll" trace1.txt | sed -n 's/^summary: //p')
  echo "I1=$i1 D1=$d1 LL=$ll"
  echo "  Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
  echo "  cachegrind:   $want"
  echo "  mri-cachesim: $got"
  if [ "$want" != "$got" ]; then
    echo "  FAIL: the counts differ"
    fail=1
  fi
  # The comparison must be able to fail: half the D1 associativity (same
  # size) has to change the counts.
  local d1_size d1_ways d1_line other
  IFS=, read -r d1_size d1_ways d1_line <<<"$d1"
  other=$("$sim" --cachegrind-compat --no-progress --I1="$i1" --D1="$d1_size,$((d1_ways / 2)),$d1_line" \
    --LL="$ll" trace1.txt | sed -n 's/^summary: //p')
  if [ "$other" = "$want" ]; then
    echo "  FAIL: D1 with $((d1_ways / 2)) ways gives the same counts; this probe cannot tell geometries apart"
    fail=1
  fi
}
check 8192,2,64 8192,4,64 131072,8,64
check 4096,2,32 4096,2,32 65536,4,32

if [ $fail -ne 0 ]; then exit 1; fi
echo "PASS: mri-cachesim --cachegrind-compat matches cachegrind exactly"
