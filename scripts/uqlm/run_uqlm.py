"""Throughput / peak-RSS of uqlm 0.6.7's NLI path (LongTextUQ, unit-response mode) on SelfCheckGPT WikiBio.

Uses uqlm's own UnitResponseScorer (the object LongTextUQ builds for granularity="sentence" /
mode="unit_response", see uqlm/scorers/longform/longtext.py) -> ClaimScorer._compute_claim_level_nli_scores
-> uqlm.nli.NLI.predict_batch (batch_size 32, padding=True, truncation="longest_first", max_length 512),
with premise = sampled response, hypothesis = sentence.

usage: python run_uqlm.py --model HF_DIR [--limit N] [--m 5] [--threads 2] [--compare-reference PATH]
Prints one JSON line.
"""
import argparse, json, resource, time
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--limit", type=int, default=None, help="number of passages (default: all 60)")
ap.add_argument("--data", default="../shared/data/selfcheck_wikibio_dev.jsonl")
ap.add_argument("--model", required=True, help="HF dir written by convert_onnx_to_hf.py")
ap.add_argument("--m", type=int, default=5, help="number of sampled responses per passage")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--no-warmup", action="store_true")
ap.add_argument("--compare-reference", default=None,
                help="uqlm_0.6.7_reference_scores.jsonl (only meaningful with the v1 model converted)")
a = ap.parse_args()

import torch
torch.set_num_threads(a.threads)
from uqlm.longform.luq.unit_response import UnitResponseScorer
import uqlm

rows = [json.loads(l) for l in open(a.data)]
if a.limit is not None:
    rows = rows[: a.limit]
claim_sets = [r["gpt3_sentences"] for r in rows]
sampled = [r["gpt3_text_samples"][: a.m] for r in rows]
n_pairs = sum(len(c) * len(s) for c, s in zip(claim_sets, sampled))

t0 = time.perf_counter()
scorer = UnitResponseScorer(nli_model_name=a.model, device="cpu")  # same ctor call LongTextUQ makes
load_s = time.perf_counter() - t0
assert scorer.nli.label_mapping == ["contradiction", "neutral", "entailment"]
assert [scorer.nli.model.config.id2label[i] for i in range(3)] == scorer.nli.label_mapping

# thin wrapper to record the probabilities and the time spent inside NLI.predict_batch
_orig = scorer.nli.predict_batch
captured, fwd = [], [0.0]
def _wrapped(pairs):
    t = time.perf_counter(); p = _orig(pairs); fwd[0] += time.perf_counter() - t
    captured.append(p); return p
if not a.no_warmup:
    _orig([(sampled[0][0], claim_sets[0][0])])  # one-pair warm-up, not timed
scorer.nli.predict_batch = _wrapped

t0 = time.perf_counter()
scores = scorer.evaluate(claim_sets=claim_sets, sampled_responses=sampled)  # what LongTextUQ calls
seconds = time.perf_counter() - t0
peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

out = {"tool": f"uqlm {uqlm.__version__}" if hasattr(uqlm, "__version__") else "uqlm 0.6.7",
       "pairs": n_pairs, "seconds": round(seconds, 4), "pairs_per_s": round(n_pairs / seconds, 2),
       "peak_rss_mb": round(peak_rss_mb, 1),
       "passages": len(rows), "sentences": sum(map(len, claim_sets)), "m": a.m, "threads": a.threads,
       "nli_predict_batch_seconds": round(fwd[0], 4), "includes_uqlm_sleep_s": 0.1,
       "model_load_seconds": round(load_s, 3), "model": a.model}

# entailment AUROC (mean entailment per sentence; positive = "accurate")
d = scores.to_dict()
ent = [x for lst in d["entailment"] for x in lst]
labels = [1 if lab == "accurate" else 0 for r in rows for lab in r["annotation"]]
if len(set(labels)) == 2:
    from sklearn.metrics import roc_auc_score
    for k in ("entailment", "noncontradiction", "contrasted_entailment"):
        out[f"auroc_{k}"] = round(float(roc_auc_score(labels, [x for lst in d[k] for x in lst])), 4)

if a.compare_reference:
    probs = np.concatenate(captured, axis=0)  # one predict_batch call per passage, order: sentence-major, sample-minor
    ref = {(r["dataset_idx"], r["sent_idx"]): r for r in map(json.loads, open(a.compare_reference))}
    k, dmax, smax = 0, 0.0, 0.0
    for r, cs, ss in zip(rows, claim_sets, sampled):
        for i, _ in enumerate(cs):
            rr = ref[(r["dataset_idx"], i)]
            p = probs[k : k + len(ss)]; k += len(ss)
            dmax = max(dmax, float(np.abs(p - np.array(rr["probs_contradiction_neutral_entailment"])).max()))
            smax = max(smax, abs(float(p[:, 2].mean()) - rr["entailment"]))
    out["ref_max_abs_prob_diff"] = dmax
    out["ref_max_abs_entailment_diff"] = smax

print(json.dumps(out))
