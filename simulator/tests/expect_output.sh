#!/usr/bin/env bash
# expect_output.sh STATUS [-l LINE]... [-s TEXT]... [-c N REGEX]... -- COMMAND [ARG...]
# Runs COMMAND and passes when it exits with STATUS and its output (stdout
# and stderr together) has every LINE as a whole line, every TEXT
# somewhere, and exactly N lines that match each extended REGEX. Prints
# the output and what was wrong otherwise.
set -u
status=$1
shift
lines=()
texts=()
counts=()   # N and REGEX, in pairs
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    -l) lines+=("$2"); shift 2 ;;
    -s) texts+=("$2"); shift 2 ;;
    -c) counts+=("$2" "$3"); shift 3 ;;
    *) echo "expect_output.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
shift  # --
output=$("$@" 2>&1)
actual=$?
ok=1
if [ "$actual" -ne "$status" ]; then
  echo "exit status $actual, expected $status"
  ok=0
fi
for l in ${lines[@]+"${lines[@]}"}; do
  if ! grep -qxF -- "$l" <<<"$output"; then echo "missing line: $l"; ok=0; fi
done
for t in ${texts[@]+"${texts[@]}"}; do
  if ! grep -qF -- "$t" <<<"$output"; then echo "missing text: $t"; ok=0; fi
done
for ((i = 0; i < ${#counts[@]}; i += 2)); do
  n=$(grep -cE -- "${counts[i + 1]}" <<<"$output")
  if [ "$n" -ne "${counts[i]}" ]; then echo "$n lines match ${counts[i + 1]}, expected ${counts[i]}"; ok=0; fi
done
if [ $ok -eq 0 ]; then
  echo "---- output of: $*"
  echo "$output"
  exit 1
fi
echo "ok: $*"
