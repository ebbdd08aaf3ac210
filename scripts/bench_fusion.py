#!/usr/bin/env python3
"""Fused against unfused attention in one run (docs/reference.md, Model variants): the same
WikiBio (sample, sentence) pairs through two ONNX files of one model, batch by batch in turns
(the order swapped every batch), on the CPU with the same batch and threads. Prints one JSON
line: pairs, batch, threads, each file's pairs/s, the largest |logit difference| and the
largest |difference| of the encoder's first-token output (the classifier's input; with random
weights the logits themselves are tiny, so this is the sensitive check).

    PY scripts/bench_fusion.py --unfused DIR/model_opt.onnx --fused DIR2/model_opt.onnx \
        --tokenizer DIR/tokenizer.json [--pairs 1000] [--samples 2] [--batch 16] [--threads 2]

PY needs onnxruntime, onnx, numpy and tokenizers (e.g. .cache/nli-train/bin/python). Pairs:
for each annotated sentence of ../shared/data/selfcheck_wikibio_dev.jsonl in order, its first
`--samples` samples as premises (`[CLS] sample [SEP] sentence [SEP]`, the sample cut so the
pair fits `--max-tokens`), the first `--pairs` of them, sorted by length into batches as the
daemon's batcher does.
"""
import argparse
import json
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--unfused", required=True)
ap.add_argument("--fused", required=True)
ap.add_argument("--tokenizer", required=True)
ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data",
                                               "selfcheck_wikibio_dev.jsonl"))
ap.add_argument("--pairs", type=int, default=1000)
ap.add_argument("--samples", type=int, default=2)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--max-tokens", type=int, default=512)
ap.add_argument("--warmup", type=int, default=2, help="rows of the first batch each file runs before timing")
args = ap.parse_args()

import numpy as np
import onnx
import onnxruntime as ort
from tokenizers import Tokenizer

tok = Tokenizer.from_file(args.tokenizer)
tok.no_padding()
tok.enable_truncation(args.max_tokens, strategy="only_first")
pairs = []
with open(args.data) as f:
    for line in f:
        rec = json.loads(line)
        for sent in rec["gpt3_sentences"]:
            for s in rec["gpt3_text_samples"][: args.samples]:
                pairs.append((s, sent))
pairs = pairs[: args.pairs]
enc = tok.encode_batch(pairs)
seqs = [e.ids for e in enc]
order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]


def with_encoder_output(path):
    """The model with the first-token encoder output (the input of the pooler's Gather) as a
    second graph output, serialized; the plain path when it has no such Gather."""
    m = onnx.load(path)
    consts = {n.output[0]: n for n in m.graph.node if n.op_type == "Constant"}
    inits = {t.name: t for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type != "Gather" or not any(a.name == "axis" and a.i == 1 for a in n.attribute):
            continue
        idx = n.input[1]
        v = None
        if idx in inits:
            v = onnx.numpy_helper.to_array(inits[idx])
        elif idx in consts:
            v = onnx.numpy_helper.to_array(consts[idx].attribute[0].t)
        if v is not None and v.size == 1 and int(v.reshape(-1)[0]) == 0:
            m.graph.output.append(onnx.ValueInfoProto(name=n.output[0]))
            return m.SerializeToString(), True
    return path, False


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    model, has_hidden = with_encoder_output(path)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]), has_hidden


sessions = {"unfused": session(args.unfused), "fused": session(args.fused)}
names = list(sessions)


def feed(batch):
    n = max(len(seqs[i]) for i in batch)
    ids = np.zeros((len(batch), n), dtype=np.int64)
    mask = np.zeros((len(batch), n), dtype=np.int64)
    for r, i in enumerate(batch):
        ids[r, : len(seqs[i])] = seqs[i]
        mask[r, : len(seqs[i])] = 1
    return {"input_ids": ids, "attention_mask": mask}


for name in names:
    if args.warmup:
        sessions[name][0].run(None, feed(batches[0][: args.warmup]))
spent = {name: 0.0 for name in names}
max_logit, max_hidden, max_abs_logit = 0.0, 0.0, 0.0
for k, b in enumerate(batches):
    x = feed(b)
    outs = {}
    for name in (names if k % 2 == 0 else names[::-1]):
        t = time.perf_counter()
        outs[name] = sessions[name][0].run(None, x)
        spent[name] += time.perf_counter() - t
    max_logit = max(max_logit, float(np.max(np.abs(outs["unfused"][0] - outs["fused"][0]))))
    max_abs_logit = max(max_abs_logit, float(np.max(np.abs(outs["unfused"][0]))))
    if len(outs["unfused"]) > 1 and len(outs["fused"]) > 1:
        max_hidden = max(max_hidden, float(np.max(np.abs(outs["unfused"][1] - outs["fused"][1]))))
n = sum(len(b) for b in batches)
tokens = sum(len(s) for s in seqs)
print(json.dumps({
    "pairs": n, "batch": args.batch, "threads": args.threads, "tokens_per_pair": round(tokens / n, 1),
    "unfused_pairs_per_s": round(n / spent["unfused"], 2), "fused_pairs_per_s": round(n / spent["fused"], 2),
    "fused_vs_unfused": round(spent["unfused"] / spent["fused"], 3),
    "max_abs_logit_diff": max_logit, "max_abs_logit": max_abs_logit,
    "max_abs_first_token_hidden_diff": max_hidden if sessions["fused"][1] else None,
    "unfused": os.path.realpath(args.unfused), "fused": os.path.realpath(args.fused),
}))
