#!/usr/bin/env bash
# The GPU figures in one run (docs/reference.md, GPU): on whatever device `--device auto` picks
# (UQ_DEVICE=cpu gives a dry run on the CPU), with the device's default clients, batch and rows in
# flight:
#   1. MiniLM (dist/models/nli) through the whole path and raw, whole samples and the default
#      premise selection: comparisons/s, path / raw, the batch used, pad_ratio;
#   2. the deberta-large-shaped throughput model (scripts/make_throughput_model.py, random
#      weights; made once into $TM when a python3 with torch and transformers is at $TORCH_PY),
#      whole and default premise, twice: its variants with the attention unfused ($TM, made with
#      UQ_FUSE_ATTENTION=0) and fused (`large-fused`: $TM-fused, the same model.onnx, variants
#      made by `uqd models optimize` as it is);
#   3. a `bench table` job over the same passages;
#   4. the stand-in figures (scripts/bench-stand-in.sh): the same benches with the stand-in NLI
#      model at 0 ms and 27.5 ms per batch, the overlap off and on: the host side of this machine.
# Then one table of the figures (`fused`: the NLI file's attention_fused), and the stand-in's.
# Needs `make setup`.
#   scripts/bench-gpu.sh [PASSAGES] [SAMPLES]    (defaults 60 and 20; a dry run: 2 5)
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${1:-60}
SAMPLES=${2:-20}
DATA=../shared/data/selfcheck_wikibio_dev.jsonl
TM=${TM:-.cache/throughput-model}
TORCH_PY=${TORCH_PY:-$(command -v python3)}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SCORERS=entailment,noncontradiction,contrasted_entailment

dist/uqd bench selfcheck --data "$DATA" --samples "$SAMPLES" --limit "$LIMIT" --scorers "$SCORERS" \
  --premise whole,top3 --raw-pairs 2000 > "$OUT/minilm.jsonl"
TMF=$TM-fused
if [ ! -f "$TM/model.onnx" ] && "$TORCH_PY" -c 'import torch, transformers' 2>/dev/null; then
  "$TORCH_PY" scripts/make_throughput_model.py "$TM" >&2
fi
fused_in() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("attention_fused"))' "$1/variants.json" 2>/dev/null; }
if [ -f "$TM/model.onnx" ]; then
  # The variants (made by the environment `make setup` makes, .cache/model-tools): unfused in
  # $TM, fused in $TMF (links to $TM's files; the daemon takes the variants in the model's own
  # directory first).
  if [ "$(fused_in "$TM")" != False ] || ! dist/uqd models optimize "$TM" --check >/dev/null 2>&1; then
    UQ_FUSE_ATTENTION=0 dist/uqd models optimize "$TM" --out "$TM" >&2 || true
  fi
  mkdir -p "$TMF"
  for f in model.onnx config.json tokenizer.json; do ln -sfn "$(realpath "$TM/$f")" "$TMF/$f"; done
  if [ "$(fused_in "$TMF")" != True ] || ! dist/uqd models optimize "$TMF" --check >/dev/null 2>&1; then
    dist/uqd models optimize "$TMF" --out "$TMF" >&2 || true
  fi
  dist/uqd bench selfcheck --data "$DATA" --samples "$SAMPLES" --limit "$LIMIT" --scorers "$SCORERS" \
    --premise whole,top3 --raw-pairs 1000 --nli-model "$TM" > "$OUT/large.jsonl"
  # The fused graph has not run on CUDA before the first GPU task: a failure is reported, not fatal.
  dist/uqd bench selfcheck --data "$DATA" --samples "$SAMPLES" --limit "$LIMIT" --scorers "$SCORERS" \
    --premise whole,top3 --raw-pairs 1000 --nli-model "$TMF" > "$OUT/large-fused.jsonl" || {
    echo "bench-gpu: the fused throughput model ($TMF) failed (above); its row is left out" >&2
    : > "$OUT/large-fused.jsonl"
  }
else
  echo "bench-gpu: no throughput model at $TM (needs torch and transformers at TORCH_PY): skipped" >&2
  : > "$OUT/large.jsonl"
  : > "$OUT/large-fused.jsonl"
fi
dist/uqd bench table --data "$DATA" --samples "$SAMPLES" --limit "$LIMIT" > "$OUT/table.jsonl"
cat "$OUT"/*.jsonl | grep -E '"summary":true|"bench":"table"'
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
print(f"{'run':<24} {'device':<6} {'precision':<9} {'fused':<5} {'pairs/s':>8} {'raw':>8} {'path/raw':>8} "
      f"{'batch':>5} {'clients':>7} {'pad':>6} {'tokens':>7}")
for name in ("minilm", "large", "large-fused", "table"):
    for line in open(os.path.join(out, name + ".jsonl")):
        d = json.loads(line)
        if not (d.get("summary") or d.get("bench") == "table"):
            continue
        run = f"{name} {d.get('premise', '')}"
        fmt = lambda k, f="{:>8.1f}": f.format(d[k]) if d.get(k) is not None else f"{'-':>8}"
        fused = {True: "yes", False: "no"}.get(d.get("attention_fused"), "-")
        print(f"{run:<24} {d.get('device', ''):<6} {str(d.get('precision', '')):<9} {fused:<5} "
              f"{fmt('nli_pairs_per_s')} {fmt('raw_nli_pairs_per_s')} {fmt('path_vs_raw', '{:>8.2f}')} "
              f"{d.get('max_batch', '-'):>5} {d.get('clients', d.get('concurrency', '-')):>7} "
              f"{fmt('pad_ratio', '{:>6.3f}')} {fmt('tokens_per_comparison', '{:>7.1f}')}")
PY
echo
echo "stand-in NLI model (docs/reference.md, The stand-in NLI model):"
scripts/bench-stand-in.sh "$LIMIT" "$SAMPLES"
