#!/usr/bin/env bash
# NLI throughput through Triton Inference Server next to the local model, on this machine:
# `uqd bench selfcheck` (unit-response scorers, --samples 5) with the original model.onnx run
# locally, through one Triton endpoint and through two (scripts/triton_nli.py, ONNX Runtime on the
# CPU inside Triton, THREADS intra-op threads per server). Prints one JSON line per setting
# (`setting`, `nli_pairs_per_s`, `raw_nli_pairs_per_s`, `path_vs_raw`, AUROCs). Needs `make setup`.
#   scripts/bench-triton.sh [LIMIT_PASSAGES] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${1:-60}
THREADS=${2:-1}
DATA=../shared/data/selfcheck_wikibio_dev.jsonl
bash scripts/triton-server.sh
PY=.cache/triton-venv/bin/python
LOG=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || true; done; rm -rf "$LOG"; }
trap cleanup EXIT
ports=(18300 18310)
for p in "${ports[@]}"; do
  setsid "$PY" scripts/triton_nli.py --model-dir dist/models/nli --port "$p" --threads "$THREADS" >"$LOG/$p.log" 2>&1 &
  pids+=($!)
done
for p in "${ports[@]}"; do
  for _ in $(seq 240); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/v2/models/nli/ready")" = 200 ] && break
    sleep 1
  done
done
run() { # run SETTING FLAGS...
  local setting=$1; shift
  dist/uqd bench selfcheck --data "$DATA" --samples 5 --limit "$LIMIT" \
    --scorers entailment,noncontradiction,contrasted_entailment --precision original "$@" 2>/dev/null |
    python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
s = next(l for l in lines if l.get("summary"))
out = {"setting": sys.argv[1], **{k: s.get(k) for k in ["nli_pairs", "nli_pairs_per_s", "raw_nli_pairs_per_s", "path_vs_raw", "device", "nli_file", "peak_rss_mb"]}}
out["auroc"] = {l["scorer"]: l["auroc"] for l in lines if "scorer" in l}
print(json.dumps(out))' "$setting"
}
run local
run "triton x1 ($THREADS thread)" --nli-backend "http://127.0.0.1:${ports[0]}"
run "triton x2 ($THREADS thread each)" --nli-backend "http://127.0.0.1:${ports[0]},http://127.0.0.1:${ports[1]}"
