#!/usr/bin/env bash
# Issue 45's check of the Ctrl-C tests: run tests/cli/test_interrupt.py N times in a row, on an
# idle machine or with a busy loop on the other core, and count the runs that fail.
#   tests/cli/stress_interrupt.sh LABEL N [busy]     (from the repository, after `make build`)
# Each run's output is kept in $TMPDIR/stress-LABEL-K.log; a summary line per run, then a total.
set -u
label=${1:?label}; runs=${2:?runs}; load=${3:-idle}
cd "$(dirname "$0")/../.."
busy=
if [ "$load" = busy ]; then
  (while :; do :; done) & busy=$!
  trap 'kill $busy 2>/dev/null' EXIT
fi
failed=0
for k in $(seq 1 "$runs"); do
  log="${TMPDIR:-/tmp}/stress-$label-$k.log"
  if .venv/bin/python -m pytest -q -p no:cacheprovider tests/cli/test_interrupt.py >"$log" 2>&1; then
    echo "$label $k/$runs ($load): pass ($(tail -1 "$log"))"
  else
    failed=$((failed + 1))
    echo "$label $k/$runs ($load): FAIL: $(grep -E '^FAILED' "$log" | tr '\n' ' ')"
  fi
done
echo "$label: $failed of $runs runs failed ($load)"
[ "$failed" = 0 ]
