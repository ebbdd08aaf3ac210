#!/usr/bin/env bash
# uqlm 0.6.7 side by side with uqd on the same machine, pairs and NLI weights: uqlm's own
# UnitResponseScorer (what LongTextUQ runs at sentence granularity, unit-response mode) on the
# SelfCheckGPT WikiBio (sample, sentence) pairs, m = 5, torch with 2 threads, then `uqd bench
# selfcheck` with the original model.onnx, the fused fp32 graph and int8, each with the whole
# sample as premise (as uqlm) and with the default premise selection (top3). Prints uqlm's line,
# uqd's summary lines, and a table: comparisons/s, ratio to uqlm, NLI tokens per comparison and
# AUROC (and its change against uqlm's) per setting. Needs `make setup`; makes .cache/uqlm-venv once (uqlm, torch,
# transformers from PyPI: about 6 GB) and converts the NLI model's ONNX weights into a Hugging Face
# directory (.cache/uqlm-models/<name>, checked against ONNX Runtime to 1e-4) in uqlm's label order.
# When the 3-layer student of `make nli-fast` exists (UQ_NLI_FAST, default .cache/nli-build/fast),
# `uqd bench selfcheck` runs it too (fp32 and int8, whole and top3) and the table adds its rows
# ("fast ..."), against the same uqlm line (uqlm with NLI_MODEL_DIR).
#   scripts/bench-uqlm.sh [NLI_MODEL_DIR]   (default dist/models/nli)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$(cd "${1:-dist/models/nli}" && pwd -P)
VENV=.cache/uqlm-venv
HF=.cache/uqlm-models/$(basename "$MODEL")
export PIP_CACHE_DIR=$PWD/.cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1
if ! "$VENV/bin/python" -c 'import uqlm, onnx, onnxruntime' 2>/dev/null; then
  rm -rf "$VENV" && /usr/bin/python3 -m venv "$VENV"
  # The pins keep pip from backtracking into ancient httpx; numpy 1.26 as uqlm was tested with.
  "$VENV/bin/pip" install -q uqlm==0.6.7 "httpx>=0.27,<1" "datasets>=3.3.2,<4" "pyarrow<22" "numpy<2" onnx onnxruntime==1.31.1
fi
[ -f "$HF/config.json" ] || "$VENV/bin/python" scripts/uqlm/convert_onnx_to_hf.py "$MODEL" "$HF" >&2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$VENV/bin/python" scripts/uqlm/run_uqlm.py --model "$HF" --threads 2 | tee "$OUT/uqlm.json"
dist/uqd bench selfcheck --data ../shared/data/selfcheck_wikibio_dev.jsonl --samples 5 \
  --scorers entailment,noncontradiction,contrasted_entailment --precision original,fp32,int8 \
  --premise whole,top3 --raw-pairs 500 --nli-model "$MODEL" 2>/dev/null > "$OUT/uqd.jsonl"
grep '"summary":true' "$OUT/uqd.jsonl"
FAST=${UQ_NLI_FAST:-.cache/nli-build/fast}
: > "$OUT/fast.jsonl"
if [ -f "$FAST/model.onnx" ] && [ "$(cd "$FAST" && pwd -P)" != "$MODEL" ]; then
  dist/uqd models optimize "$FAST" --check >/dev/null 2>&1 || dist/uqd models optimize "$FAST" >/dev/null
  dist/uqd bench selfcheck --data ../shared/data/selfcheck_wikibio_dev.jsonl --samples 5 \
    --scorers entailment,noncontradiction,contrasted_entailment --precision fp32,int8 \
    --premise whole,top3 --raw-pairs 500 --nli-model "$FAST" 2>/dev/null > "$OUT/fast.jsonl"
  echo "student ($FAST):"
  grep '"summary":true' "$OUT/fast.jsonl"
fi
python3 - "$OUT/uqlm.json" "$OUT/uqd.jsonl" "$OUT/fast.jsonl" <<'PY'
import json, sys
uqlm = json.load(open(sys.argv[1]))
base, base_auroc = uqlm["pairs_per_s"], uqlm.get("auroc_entailment")
print(f"{'setting':<16} {'pairs/s':>8} {'vs uqlm':>8} {'tokens':>7} {'AUROC ent':>9} {'vs uqlm':>8}")
print(f"{'uqlm 0.6.7':<16} {base:>8.1f} {1:>7.2f}x {'':>7} {base_auroc:>9.4f} {'':>8}")
for path, prefix in ((sys.argv[2], ""), (sys.argv[3], "fast ")):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    for s in (l for l in lines if l.get("summary")):
        ent = next(l["auroc"] for l in lines if l.get("scorer") == "entailment"
                   and l["premise"] == s["premise"] and l["precision"] == s["precision"])
        name = f"{prefix}{s['precision']} {s['premise']}"
        print(f"{name:<16} {s['nli_pairs_per_s']:>8.1f} {s['nli_pairs_per_s'] / base:>7.2f}x "
              f"{s['tokens_per_comparison']:>7.1f} {ent:>9.4f} {ent - base_auroc:>+8.4f}")
PY
