"""Convert an ONNX BERT cross-encoder (BertForSequenceClassification export) into a Hugging Face
directory usable by uqlm's NLI class, with the classifier rows permuted into uqlm's hard-coded
label order [contradiction, neutral, entailment]. Then verify against onnxruntime.

usage: python convert_onnx_to_hf.py SRC_DIR OUT_DIR [--check-data JSONL]
"""
import argparse, json, os, shutil, sys
import numpy as np
import onnx
from onnx import numpy_helper
import torch

UQLM_ORDER = ["contradiction", "neutral", "entailment"]


ROOTS = ("bert.", "classifier.", "embeddings.", "encoder.", "pooler.")
BARE = {"word_embeddings": "bert.embeddings.word_embeddings.weight",
        "position_embeddings": "bert.embeddings.position_embeddings.weight",
        "token_type_embeddings": "bert.embeddings.token_type_embeddings.weight"}


def hf_key(name):
    if name in BARE:
        return BARE[name]
    key = name
    while not key.startswith(ROOTS):
        if "." not in key:
            return None
        key = key.split(".", 1)[1]
    if key.startswith(("embeddings.", "encoder.", "pooler.")):
        key = "bert." + key
    return key


def onnx_state_dict(path):
    m = onnx.load(path)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    sd = {}
    # named initializers: strip wrapper prefixes (e.g. "m."), add "bert." where missing,
    # and un-transpose "*.weight_T" (stored as MatMul [in, out]).
    for name, arr in inits.items():
        if name.startswith("onnx::") or arr.ndim == 0 or arr.size <= 1:
            continue
        key = hf_key(name)
        if key is None:
            continue
        if key.endswith(".weight_T"):
            key, arr = key[: -len("_T")], np.ascontiguousarray(arr.T)
        sd[key] = arr
    # anonymous MatMul weights: MatMul(x, W) -> Add(bias, .) ; nn.Linear weight = W.T
    for name, arr in inits.items():
        if not name.startswith("onnx::MatMul"):
            continue
        mm = [n for n in consumers[name] if n.op_type == "MatMul"]
        assert len(mm) == 1, name
        adds = [n for n in consumers[mm[0].output[0]] if n.op_type == "Add"]
        assert len(adds) == 1, name
        bias = [i for i in adds[0].input if i in inits]
        assert len(bias) == 1 and bias[0].endswith(".bias"), (name, adds[0].input)
        bkey = hf_key(bias[0])
        wkey = bkey[: -len(".bias")] + ".weight"
        assert wkey not in sd, wkey
        assert inits[bias[0]].shape[0] == arr.shape[1], (name, arr.shape)
        sd[wkey] = np.ascontiguousarray(arr.T)
    return sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--check-data", default="../shared/data/selfcheck_wikibio_dev.jsonl")
    ap.add_argument("--n-check", type=int, default=20)
    a = ap.parse_args()
    torch.set_num_threads(2)
    from transformers import BertConfig, BertForSequenceClassification, AutoTokenizer

    cfg = json.load(open(os.path.join(a.src, "config.json")))
    src_id2label = {int(k): v.lower() for k, v in cfg["id2label"].items()}
    src_label2id = {v: k for k, v in src_id2label.items()}
    perm = [src_label2id[l] for l in UQLM_ORDER]  # new row i <- source row perm[i]
    print("source id2label:", src_id2label, "-> permutation (uqlm row <- src row):", perm)

    sd = onnx_state_dict(os.path.join(a.src, "model.onnx"))
    sd["classifier.weight"] = sd["classifier.weight"][perm]
    sd["classifier.bias"] = sd["classifier.bias"][perm]

    new_cfg = dict(cfg)
    new_cfg.pop("_name_or_path", None)
    new_cfg["id2label"] = {str(i): l for i, l in enumerate(UQLM_ORDER)}
    new_cfg["label2id"] = {l: i for i, l in enumerate(UQLM_ORDER)}
    new_cfg["num_labels"] = 3
    config = BertConfig(**new_cfg)
    model = BertForSequenceClassification(config).eval()
    res = model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in sd.items()}, strict=False)
    missing = [k for k in res.missing_keys if not k.endswith("position_ids")]
    print("missing:", missing, "unexpected:", res.unexpected_keys)
    assert not missing and not res.unexpected_keys

    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    for f in ("tokenizer.json", "vocab.txt"):
        shutil.copy(os.path.join(a.src, f), os.path.join(a.out, f))
    json.dump({"tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "model_max_length": 512,
               "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
               "mask_token": "[MASK]"}, open(os.path.join(a.out, "tokenizer_config.json"), "w"), indent=1)
    json.dump({"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
               "mask_token": "[MASK]"}, open(os.path.join(a.out, "special_tokens_map.json"), "w"), indent=1)

    # ---- verification: HF (reloaded from disk) vs onnxruntime on n pairs (premise = sample, hypothesis = sentence)
    import onnxruntime as ort
    from tokenizers import Tokenizer
    pairs = []
    for line in open(a.check_data):
        d = json.loads(line)
        for s in d["gpt3_sentences"]:
            for smp in d["gpt3_text_samples"][:2]:
                pairs.append((smp, s))
        if len(pairs) >= a.n_check:
            break
    pairs = pairs[: a.n_check]
    raw_tok = Tokenizer.from_file(os.path.join(a.src, "tokenizer.json"))
    raw_tok.enable_truncation(512)
    raw_tok.enable_padding(pad_id=0, pad_token="[PAD]")
    enc = raw_tok.encode_batch(pairs)
    feeds = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
             "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
             "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
    so = ort.SessionOptions(); so.intra_op_num_threads = 2; so.inter_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(a.src, "model.onnx"), so, providers=["CPUExecutionProvider"])
    feeds = {k: v for k, v in feeds.items() if k in {i.name for i in sess.get_inputs()}}
    lo = sess.run(["logits"], feeds)[0]
    po = np.exp(lo - lo.max(1, keepdims=True)); po /= po.sum(1, keepdims=True)
    po = po[:, perm]

    tok = AutoTokenizer.from_pretrained(a.out)
    hf = BertForSequenceClassification.from_pretrained(a.out).eval()
    bt = tok([p for p, _ in pairs], [h for _, h in pairs], padding=True, truncation="longest_first", max_length=512, return_tensors="pt")
    same_ids = np.array_equal(bt["input_ids"].numpy(), feeds["input_ids"]) and np.array_equal(bt["token_type_ids"].numpy(), feeds["token_type_ids"])
    with torch.no_grad():
        lh = hf(**bt).logits.numpy()
    ph = np.exp(lh - lh.max(1, keepdims=True)); ph /= ph.sum(1, keepdims=True)
    diff = float(np.abs(ph - po).max())
    agree = float((ph.argmax(1) == po.argmax(1)).mean())
    print(json.dumps({"check_pairs": len(pairs), "tokenization_identical": bool(same_ids),
                      "max_abs_prob_diff": diff, "max_abs_logit_diff": float(np.abs(lh - lo[:, perm]).max()),
                      "argmax_agreement": agree, "seq_len": int(feeds["input_ids"].shape[1]),
                      "hf_label_order": [hf.config.id2label[i] for i in range(3)]}))
    assert same_ids and diff < 1e-4, "conversion check FAILED"
    print("conversion check OK")


if __name__ == "__main__":
    main()
