"""Writes a model directory uqd loads: model.onnx (opset 17; inputs input_ids, attention_mask,
token_type_ids, int64 [batch, sequence]; output logits float32 [batch, 3]), tokenizer.json,
vocab.txt and config.json (id2label 0 contradiction, 1 entailment, 2 neutral), then checks the
ONNX file against PyTorch."""
import json
import os
import shutil

import torch

import convert


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits


def export(model, start_dir, out, name_or_path):
    os.makedirs(out, exist_ok=True)
    model = model.to("cpu").eval()
    ids = torch.full((2, 16), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0  # a padded row, so that the mask stays an input of the traced graph
    part = os.path.join(out, "model.onnx.part")
    # (a wrapper left in training mode would be put back into it, dropout and all, after the export)
    torch.onnx.export(Logits(model).eval(), (ids, mask, torch.zeros_like(ids)), part,
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                    "attention_mask": {0: "batch", 1: "sequence"},
                                    "token_type_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}},
                      opset_version=17, do_constant_folding=True)
    model.eval()
    os.replace(part, os.path.join(out, "model.onnx"))
    for f in ("tokenizer.json", "vocab.txt"):
        shutil.copyfile(os.path.join(start_dir, f), os.path.join(out, f))
    with open(os.path.join(start_dir, "config.json")) as f:
        cfg = json.load(f)
    cfg["_name_or_path"] = name_or_path
    cfg["num_hidden_layers"] = model.config.num_hidden_layers  # a student has fewer than its start model
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    return convert.check(model, out)
