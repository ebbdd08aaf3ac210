#!/usr/bin/env python3
"""A throughput model: the architecture and size of microsoft/deberta-large-mnli (DeBERTa v1 large:
24 layers, hidden 1024, 16 heads, FFN 4096, vocabulary 50265, relative attention) with RANDOM
weights, exported to ONNX, to measure what the paper's NLI model would run at on a machine
(e.g. `uqd bench selfcheck --nli-model DIR --precision fp16 --device cuda`). Its scores are
meaningless: never use it for scores.

Needs PyTorch and transformers from PyPI (no model hub: the weights are random):
    python3 -m venv .cache/throughput && .cache/throughput/bin/pip install torch transformers onnx
    .cache/throughput/bin/python scripts/make_throughput_model.py OUT_DIR [--tokenizer-from DIR]
then optionally `dist/uqd models optimize OUT_DIR --out OUT_DIR` for the fused / fp16 variants.

OUT_DIR gets model.onnx (opset 17, inputs input_ids and attention_mask, output logits [batch, 3]),
config.json (deberta-large-mnli's, with its label order) and tokenizer.json, copied from
--tokenizer-from (default dist/models/nli: a WordPiece tokenizer whose ids all fall inside the
50265-entry vocabulary, so sequence lengths are realistic though the tokens are not DeBERTa's).
--layers, --hidden, --heads and --ffn make smaller models of the same architecture (tests, checks);
--sharpen F scales the attention and classifier weights (checks of the fused attention, below).
"""
import argparse
import json
import os
import shutil

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--tokenizer-from", default=os.path.join(os.path.dirname(__file__), "..", "dist", "models", "nli"))
ap.add_argument("--seed", type=int, default=0)
# Smaller models of the same architecture (tests, the fusion check): deberta-large's by default.
ap.add_argument("--layers", type=int, default=24)
ap.add_argument("--hidden", type=int, default=1024)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--ffn", type=int, default=4096)
# Random weights give near-uniform attention and logits of about 0.01, which hide a wrong attention
# bias or mask: --sharpen F multiplies the weights of the Q/K/V projections (in_proj), the
# position projections (pos_proj, pos_q_proj), the pooler and the classifier by F in the ONNX
# file (F = 8: peaked attention, logits in the tens), for checks of the fused attention.
ap.add_argument("--sharpen", type=float, default=None)
args = ap.parse_args()

import torch
from transformers import DebertaConfig, DebertaForSequenceClassification

torch.manual_seed(args.seed)
labels = {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}
config = DebertaConfig(
    vocab_size=50265, hidden_size=args.hidden, num_hidden_layers=args.layers, num_attention_heads=args.heads,
    intermediate_size=args.ffn,
    hidden_act="gelu", max_position_embeddings=512, type_vocab_size=0, relative_attention=True,
    max_relative_positions=-1, pos_att_type=["c2p", "p2c"], position_biased_input=False, layer_norm_eps=1e-7,
    pad_token_id=0, num_labels=3, id2label={int(k): v for k, v in labels.items()},
    label2id={v: int(k) for k, v in labels.items()},
)
model = DebertaForSequenceClassification(config).eval()
os.makedirs(args.out, exist_ok=True)
ids = torch.randint(1000, 20000, (2, 128))
mask = torch.ones_like(ids)
with torch.no_grad():
    torch.onnx.export(
        model, (ids, mask), os.path.join(args.out, "model.onnx"),
        input_names=["input_ids", "attention_mask"], output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                      "logits": {0: "batch"}},
        opset_version=17, do_constant_folding=True, dynamo=False,
    )
if args.sharpen:
    import onnx
    from onnx import numpy_helper
    path = os.path.join(args.out, "model.onnx")
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type in ("MatMul", "Gemm") and any(
                k in node.name for k in ("in_proj", "pos_proj", "pos_q_proj", "classifier", "pooler")):
            for i in node.input:
                if i in inits:
                    inits[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(inits[i]) * args.sharpen, i))
    onnx.save(m, path)
cfg = config.to_dict()
cfg["id2label"] = labels
cfg["_name_or_path"] = "random-weight throughput model with the shape of microsoft/deberta-large-mnli (NOT for scores)"
with open(os.path.join(args.out, "config.json"), "w") as f:
    json.dump(cfg, f, indent=1)
shutil.copy(os.path.join(args.tokenizer_from, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
n = sum(p.numel() for p in model.parameters())
print(json.dumps({"out": os.path.realpath(args.out), "parameters": n, "note": "random weights: throughput only"}))
