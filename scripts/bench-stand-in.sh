#!/usr/bin/env bash
# The NLI path's host side with the stand-in model in place of the NLI model (docs/reference.md,
# "The stand-in NLI model"): `bench selfcheck` (whole samples and the default premise) and
# `bench table`, each at 0 ms per batch (the host side alone) and at MS ms per batch (default
# 27.5: MiniLM fp16 at batch 128 on an H200), with the CUDA defaults and the overlap off (1) and
# on (the default, 2). Then one table: pairs/s, the stand-in's bound, path / bound, process CPU µs
# per pair and the stages' host µs per pair. Runs on the CPU; needs `make setup` (the tokenizer).
#   scripts/bench-stand-in.sh [PASSAGES] [SAMPLES] [MS]      (defaults 60, 20, 27.5)
#   UQD=path/to/uqd scripts/bench-stand-in.sh …              (another build, e.g. an older one)
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${1:-60}
SAMPLES=${2:-20}
MS=${3:-27.5}
UQD=${UQD:-dist/uqd}
DATA=../shared/data/selfcheck_wikibio_dev.jsonl
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SCORERS=entailment,noncontradiction,contrasted_entailment

for ms in 0 "$MS"; do
  for overlap in 1 2; do
    run="$ms $overlap"
    UQ_NLI_STAND_IN_MS=$ms UQ_NLI_OVERLAP=$overlap "$UQD" bench selfcheck --data "$DATA" \
      --samples "$SAMPLES" --limit "$LIMIT" --scorers "$SCORERS" --premise whole,top3 \
      --raw-pairs 2000 2>/dev/null | grep '"summary":true' | sed "s/^/selfcheck $run /" >> "$OUT/lines"
    UQ_NLI_STAND_IN_MS=$ms UQ_NLI_OVERLAP=$overlap "$UQD" bench table --data "$DATA" \
      --samples "$SAMPLES" --limit "$LIMIT" 2>/dev/null | sed "s/^/table $run /" >> "$OUT/lines"
  done
done
python3 - "$OUT/lines" <<'PY'
import json, sys
print(f"{'run':<16} {'ms':>5} {'overlap':>7} {'premise':<7} {'pairs/s':>8} {'bound':>7} {'path/bound':>10} "
      f"{'batch':>6} {'in flight':>9} {'cpu us/pair':>11}  host us/pair per stage")
for line in open(sys.argv[1]):
    bench, ms, overlap, text = line.split(" ", 3)
    d = json.loads(text)
    rate, bound = d["nli_pairs_per_s"], d.get("stand_in_pairs_per_s")
    ratio = f"{rate / bound:>10.2f}" if bound else f"{'-':>10}"
    stages = " ".join(f"{k} {v}" for k, v in (d.get("host_us_per_pair") or {}).items()
                      if k not in ("device", "queue_wait"))
    print(f"{bench:<16} {ms:>5} {overlap:>7} {d.get('premise', ''):<7} {rate:>8.0f} "
          f"{bound or '-':>7} {ratio} {d.get('mean_batch') or 0:>6.1f} "
          f"{d.get('max_batches_in_flight', '-'):>9} {d.get('process_cpu_us_per_pair') or 0:>11.1f}  {stages}")
PY
