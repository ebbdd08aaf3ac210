#!/usr/bin/env bash
# The first NLI calls of freshly started daemons, under CPU load (docs/reference.md, Benchmarks):
# STARTS times, start `dist/uqd serve` on its own socket while LOAD busy loops hold the cores,
# and as soon as it answers send CALLS concurrent first `uq_nli` calls through the extension
# (each a different pair, so every session runs its first pass at once). Prints one line per
# start and a summary; exits 1 when a call failed (a failure the daemon retried is only counted).
#   scripts/stress-first-call.sh [STARTS=30] [CALLS=8] [LOAD=2]
set -uo pipefail
cd "$(dirname "$0")/.."
STARTS=${1:-30}
CALLS=${2:-8}
LOAD=${3:-2}
DIR=$(mktemp -d)
BUSY=()
cleanup() {
  for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  BUSY+=($!)
done
failed=0
logged=0
retried=0
for s in $(seq "$STARTS"); do
  sock="$DIR/s$s.sock"
  UQ_SOCKET="$sock" dist/uqd serve 2>"$DIR/log$s" &
  daemon=$!
  for _ in $(seq 600); do
    [ -S "$sock" ] && break
    sleep 0.05
  done
  calls=()
  for c in $(seq "$CALLS"); do
    UQ_SOCKET="$sock" sqlite3 :memory: ".load dist/uq0" \
      "SELECT uq_nli('The museum in city $c opened in 19$c.', 'It opened in 19$((c + 1)).');" \
      >"$DIR/out$s.$c" 2>&1 &
    calls+=($!)
  done
  bad=0
  for i in "${!calls[@]}"; do
    wait "${calls[$i]}" || bad=$((bad + 1))
  done
  UQ_SOCKET="$sock" dist/uqd stop >/dev/null 2>&1 || kill "$daemon" 2>/dev/null
  wait "$daemon" 2>/dev/null
  ort=$(grep -c "Non-zero status code" "$DIR/log$s")
  again=$(grep -c "retrying once" "$DIR/log$s")
  failed=$((failed + bad))
  logged=$((logged + ort))
  retried=$((retried + again))
  echo "start $s: $bad of $CALLS first calls failed, $ort ONNX Runtime failures logged, $again retried"
  if [ "$bad" -gt 0 ] || [ "$ort" -gt 0 ]; then
    grep -h "" "$DIR"/out"$s".* | grep -iv '^{' | head -3
    grep -E "Non-zero|retrying" "$DIR/log$s" | head -3
  fi
done
echo "{\"starts\":$STARTS,\"calls_per_start\":$CALLS,\"busy_loops\":$LOAD,\"failed_calls\":$failed,\"ort_failures_logged\":$logged,\"retried\":$retried}"
[ "$failed" -eq 0 ]
