"""An NLI model.onnx (BERT cross-encoder) back to a PyTorch BertForSequenceClassification.

The initializers map one-to-one onto the 105 parameters. Two namings are read:
  v1 (`nli-minilm-l6`): `word_embeddings`, `encoder.layer.N....weight_T` (transposed),
     `classifier.weight_T`, ...
  a torch.onnx export (`nli-minilm-l6-v2`, this recipe's output): `m.bert....` names for the
     embeddings, biases and LayerNorms, and anonymous `onnx::MatMul_K` for the transposed
     linear weights, named here by the bias that the MatMul's Add consumes.
The conversion is then checked against ONNX Runtime's logits (`check`)."""
import json

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from tokenizers import Tokenizer
from transformers import BertConfig, BertForSequenceClassification

EMB = {"word_embeddings": "word_embeddings.weight", "position_embeddings": "position_embeddings.weight",
       "token_type_embeddings": "token_type_embeddings.weight"}


def _canon(name):
    """An initializer name -> the BertForSequenceClassification parameter name (or None)."""
    for p in ("m.", "model."):
        if name.startswith(p):
            name = name[len(p):]
    if name in EMB:
        return "bert.embeddings." + EMB[name]
    if name.startswith("classifier."):
        return name
    if name.startswith("bert."):
        return name
    if name.startswith(("embeddings.", "encoder.", "pooler.")):
        return "bert." + name
    return None


def onnx_state_dict(path):
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    state = {}
    for name, arr in inits.items():
        key = _canon(name)
        if key is None:
            continue
        if key.endswith(".weight_T"):
            key, arr = key[:-len("_T")], arr.T
        state[key] = arr
    # anonymous MatMul weights: the bias added to the MatMul's output names them
    consumers = {}
    for n in m.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    for n in m.graph.node:
        if n.op_type != "MatMul":
            continue
        w = next((i for i in n.input if i in inits and _canon(i) is None and inits[i].ndim == 2), None)
        if w is None:
            continue
        for c in consumers.get(n.output[0], []):
            b = next((i for i in c.input if i in inits and (_canon(i) or "").endswith(".bias")), None)
            if c.op_type == "Add" and b:
                state[_canon(b)[:-len(".bias")] + ".weight"] = inits[w].T
    return {k: torch.from_numpy(np.array(v, copy=True)) for k, v in state.items()}


def load(model_dir):
    """BertForSequenceClassification with the weights of model_dir/model.onnx."""
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    config = BertConfig(**{k: v for k, v in cfg.items() if not k.startswith("_")})
    # eager attention: the SDPA path exports a graph that ignores a padding mask (and that ONNX
    # Runtime's optimizer does not fuse)
    config._attn_implementation = "eager"
    model = BertForSequenceClassification(config)
    state = onnx_state_dict(f"{model_dir}/model.onnx")
    want = model.state_dict()
    missing = [k for k in want if k not in state and not k.endswith("position_ids")]
    extra = [k for k in state if k not in want]
    if missing or extra:
        raise SystemExit(f"convert: {model_dir}/model.onnx does not map onto BertForSequenceClassification: "
                         f"missing {missing[:5]}, unexpected {extra[:5]}")
    for k, v in state.items():
        if tuple(want[k].shape) != tuple(v.shape):
            raise SystemExit(f"convert: {k}: shape {tuple(v.shape)} in the ONNX file, {tuple(want[k].shape)} wanted")
    model.load_state_dict(state, strict=False)
    model.eval()
    return model


def student(teacher, layers):
    """A smaller BertForSequenceClassification: the teacher's embeddings, pooler and classifier and
    the teacher's encoder layers `layers` (indices, in order), e.g. (0, 2, 4) of 6."""
    import copy
    config = copy.deepcopy(teacher.config)
    config.num_hidden_layers = len(layers)
    config._attn_implementation = "eager"
    model = BertForSequenceClassification(config)
    state = {}
    for k, v in teacher.state_dict().items():
        if k.startswith("bert.encoder.layer."):
            i, rest = k[len("bert.encoder.layer."):].split(".", 1)
            if int(i) in layers:
                state[f"bert.encoder.layer.{list(layers).index(int(i))}.{rest}"] = v.clone()
        else:
            state[k] = v.clone()
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise SystemExit(f"convert: student of layers {layers}: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.eval()
    return model


CHECK_PAIRS = [
    ("A man is playing a guitar on stage.", "A man is performing music."),
    ("A man is playing a guitar on stage.", "The man is asleep in bed."),
    ("Two dogs run through a field.", "The dogs are chasing a ball."),
    ("Marie Curie was born in Warsaw in 1867. She studied at the Sorbonne and won the Nobel Prize in "
     "Physics in 1903.", "Marie Curie was born in 1867."),
    ("Marie Curie was born in Warsaw in 1867.", "Marie Curie was born in Paris."),
]


def logits_torch(model, tokenizer_path, pairs):
    tok = Tokenizer.from_file(tokenizer_path)
    tok.enable_padding()
    enc = tok.encode_batch(pairs)
    ids = torch.tensor([e.ids for e in enc])
    mask = torch.tensor([e.attention_mask for e in enc])
    types = torch.tensor([e.type_ids for e in enc])
    with torch.no_grad():
        out = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device),
                    token_type_ids=types.to(model.device)).logits
    return out.cpu().numpy(), (ids.numpy(), mask.numpy(), types.numpy())


def logits_ort(onnx_path, feeds):
    s = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    ids, mask, types = feeds
    names = [o.name for o in s.get_outputs()]
    out = s.run(["logits"], {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64),
                             "token_type_ids": types.astype(np.int64)})
    assert "logits" in names
    return out[0]


def check(model, model_dir, onnx_path=None, tol=1e-4):
    """Max |logit difference| between the PyTorch model and ONNX Runtime on CHECK_PAIRS (padded batch)."""
    pt, feeds = logits_torch(model, f"{model_dir}/tokenizer.json", CHECK_PAIRS)
    ox = logits_ort(onnx_path or f"{model_dir}/model.onnx", feeds)
    diff = float(np.abs(pt - ox).max())
    same_argmax = bool((pt.argmax(1) == ox.argmax(1)).all())
    if diff > tol or not same_argmax:
        raise SystemExit(f"check: PyTorch and ONNX Runtime logits differ by {diff:.2e} (tolerance {tol:.0e})")
    return diff


if __name__ == "__main__":
    import sys
    d = sys.argv[1]
    m = load(d)
    print(json.dumps({"model": d, "max_abs_logit_diff_vs_onnxruntime": check(m, d)}))
