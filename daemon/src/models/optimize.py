"""Writes the optimized variants of a transformer encoder ONNX model (run by `uqd models optimize`).

model_opt.onnx       fp32, ONNX Runtime's transformer optimizer (fused Attention, SkipLayerNorm,
                     EmbedLayerNormalization, BiasGelu where the graph allows); DeBERTa's
                     disentangled attention, which it does not fuse, as MultiHeadAttention with
                     the position terms as its attention bias (fuse_disentangled_attention; kept
                     only when a check batch gives the same outputs to 1e-3; UQ_FUSE_ATTENTION=0
                     skips it); a graph in which no attention fuses still gets its variants,
                     with a warning
model_opt_int8.onnx  the optimized graph, dynamically quantized (QInt8 weights, per channel)
model_opt_fp16.onnx  the optimized graph in float16 with float32 inputs/outputs (for CUDA)
variants.json        what was written, from which source (size, mtime), the fused-op counts

Usage: python optimize.py SRC_DIR OUT_DIR
The model family comes from SRC_DIR/config.json `model_type`. Prints one JSON line on success.
"""
import json
import os
import sys
import time

# config.json model_type -> the ONNX Runtime optimizer's model type (BERT-like encoders share its fusions)
FAMILIES = {
    "bert": "bert", "roberta": "bert", "xlm-roberta": "bert", "camembert": "bert", "distilbert": "bert",
    "electra": "bert", "deberta": "bert", "deberta-v2": "bert", "albert": "bert", "mpnet": "bert",
    "ernie": "bert", "mobilebert": "bert",
}


# --- DeBERTa's disentangled attention -> com.microsoft MultiHeadAttention ------------------------
#
# ONNX Runtime's optimizer fuses no DeBERTa attention: the scores carry the disentangled
# position terms (content-to-position and position-to-content, gathered by relative distance).
# Per layer, the exported graph computes (Q, K, V in [batch, heads, seq, head_size], Q already
# biased and scaled by 1/sqrt(3 * head_size), as DeBERTa v1 does):
#     Softmax(Where(mask, -inf, MatMul(Q, Transpose(K)) + rel)) -> Where(mask, 0, .) -> MatMul(., V)
#     -> Transpose(0, 2, 1, 3) -> Reshape([batch, seq, hidden])
# which is MultiHeadAttention(query = Q as [batch, seq, hidden], key = K, value = V (both
# [batch, heads, seq, head_size]), key_padding_mask = attention_mask, attention_bias = rel,
# scale = 1) for every query that is not padding (the rows of padded queries are never read:
# they are masked as keys and the classifier reads the first token). The position terms are
# still computed as before; the fused kernel does QK', the bias, the mask, the softmax and .V
# in one pass. Graphs of another shape are left as they are.

def _const(graph_index, name):
    """The value of `name` when it is an initializer or a Constant node's output, else None."""
    from onnx import numpy_helper
    inits, prod = graph_index
    if name in inits:
        return numpy_helper.to_array(inits[name])
    n = prod.get(name)
    if n is not None and n.op_type == "Constant":
        for a in n.attribute:
            if a.name == "value":
                return numpy_helper.to_array(a.t)
    return None


def _attr(node, name, default=None):
    import onnx
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _ancestor_inputs(name, prod, graph_inputs):
    """The graph inputs that tensor `name` depends on."""
    seen, stack, found = set(), [name], set()
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in graph_inputs:
            found.add(t)
        n = prod.get(t)
        if n is not None:
            stack.extend(i for i in n.input if i)
    return found


def _match_attention(sm, prod, cons, index):
    """The pieces of one disentangled attention around Softmax `sm`, or None."""
    import numpy as np
    if _attr(sm, "axis", -1) not in (-1, 3):
        return None
    # Forward: [Where(mask, 0, P)] -> MatMul(P, V) -> Transpose(0,2,1,3) -> Reshape.
    nxt = cons.get(sm.output[0], [])
    if len(nxt) != 1:
        return None
    p = sm.output[0]
    if nxt[0].op_type == "Where" and nxt[0].input[2] == p:
        z = _const(index, nxt[0].input[1])
        if z is None or np.any(z != 0):
            return None
        p = nxt[0].output[0]
        nxt = cons.get(p, [])
        if len(nxt) != 1:
            return None
    pv = nxt[0]
    if pv.op_type != "MatMul" or pv.input[0] != p:
        return None
    nxt = cons.get(pv.output[0], [])
    if len(nxt) != 1 or nxt[0].op_type != "Transpose" or list(_attr(nxt[0], "perm", [])) != [0, 2, 1, 3]:
        return None
    tr = nxt[0]
    nxt = cons.get(tr.output[0], [])
    if len(nxt) != 1 or nxt[0].op_type != "Reshape":
        return None
    reshape = nxt[0]
    shape = _const(index, reshape.input[1])
    if shape is None or len(shape) != 3 or list(shape[:2]) != [0, 0]:
        return None
    # Backward: [Where(mask, very negative, S)] where S = MatMul(Q, Transpose(K, 0,1,3,2)) [+ rel].
    x = sm.input[0]
    mask = None
    n = prod.get(x)
    if n is not None and n.op_type == "Where":
        fill = _const(index, n.input[1])
        if fill is None or fill.size != 1 or float(fill.reshape(-1)[0]) > -1e4:
            return None
        mask = n.input[0]
        x = n.input[2]
        n = prod.get(x)
    if n is None:
        return None
    rel = None
    qk = None
    if n.op_type == "Add":
        for a, b in ((0, 1), (1, 0)):
            m = prod.get(n.input[a])
            if m is not None and m.op_type == "MatMul":
                t = prod.get(m.input[1])
                if t is not None and t.op_type == "Transpose" and list(_attr(t, "perm", [])) == [0, 1, 3, 2]:
                    qk, rel = m, n.input[b]
                    break
    elif n.op_type == "MatMul":
        qk = n
    if qk is None:
        return None
    kt = prod[qk.input[1]]
    if len(cons.get(qk.output[0], [])) != 1:
        return None
    return {"q": qk.input[0], "k": kt.input[0], "v": pv.input[1], "rel": rel, "mask": mask,
            "out": reshape.output[0], "reshape": reshape}


# Largest |difference| allowed between the fused and the unfused graph on the check batch.
FUSED_TOLERANCE = 1e-3


def fuse_disentangled_attention(model, num_heads):
    """Replaces each DeBERTa attention of `model` (an onnx ModelProto, changed in place) with
    com.microsoft MultiHeadAttention. Returns how many were fused and, when none, why."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    index = ({t.name: t for t in g.initializer}, prod)
    graph_inputs = {i.name for i in g.input}
    found = [m for m in (_match_attention(n, prod, cons, index) for n in g.node if n.op_type == "Softmax") if m]
    if not found:
        return 0, "no attention of the DeBERTa pattern (Softmax over QK' + position terms, then .V)"
    # The mask must be the padding mask of input `attention_mask` ([batch, seq]): it becomes the
    # kernel's key padding mask.
    mask_in = None
    for m in found:
        if m["mask"] is None:
            continue
        src = _ancestor_inputs(m["mask"], prod, graph_inputs)
        if src != {"attention_mask"}:
            return 0, f"the attention mask depends on {sorted(src)}, not on attention_mask alone"
        mask_in = "attention_mask"
    if any(m["mask"] is None for m in found) and mask_in is not None:
        return 0, "some attention layers are masked and some are not"
    head = []
    kpm = None
    if mask_in is not None:
        kpm = "uq_fused_key_padding_mask"
        head.append(helper.make_node("Cast", [mask_in], [kpm], name="uq_fused_mask_cast", to=TensorProto.INT32))
    shape_name = "uq_fused_bsd_shape"
    g.initializer.append(numpy_helper.from_array(np.array([0, 0, -1], dtype=np.int64), shape_name))
    # Each attention's Reshape (the context tensor's producer) gives way to the fused nodes, in
    # its place in the graph's order: all their inputs are computed before it.
    instead = {}
    for k, m in enumerate(found):
        q_t, q = f"uq_fused_attn{k}_q_bsnh", f"uq_fused_attn{k}_q"
        inputs = [q, m["k"], m["v"], "", kpm or "", m["rel"] or ""]
        while inputs[-1] == "":
            inputs.pop()
        instead[id(m["reshape"])] = [
            helper.make_node("Transpose", [m["q"]], [q_t], name=f"uq_fused_attn{k}_q_transpose", perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [q_t, shape_name], [q], name=f"uq_fused_attn{k}_q_reshape"),
            helper.make_node("MultiHeadAttention", inputs, [m["out"]], name=f"uq_fused_attn{k}",
                             domain="com.microsoft", num_heads=num_heads, scale=1.0),
        ]
    nodes = list(head)
    for n in g.node:
        nodes.extend(instead.get(id(n), [n]))
    # The nodes only the replaced attention used (scores, masks, softmax) go.
    needed = {o.name for o in g.output}
    keep = []
    for n in reversed(nodes):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(i for i in n.input if i)
    keep = [onnx.NodeProto.FromString(n.SerializeToString()) for n in reversed(keep)]
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in g.node for i in n.input}
    for k in reversed(range(len(g.initializer))):
        if g.initializer[k].name not in used:
            del g.initializer[k]
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return len(found), None


def _with_first_token_output(model):
    """`model` serialized with a second output, the encoder's first-token vector, the
    input of the pooler's Gather(axis 1, index 0): with random or small classifier weights the
    logits alone hardly move, the encoder's output does."""
    import onnx
    g = model.graph
    index = ({t.name: t for t in g.initializer}, {o: n for n in g.node for o in n.output})
    for n in g.node:
        if n.op_type == "Gather" and _attr(n, "axis", 0) == 1:
            v = _const(index, n.input[1])
            if v is not None and v.size == 1 and int(v.reshape(-1)[0]) == 0:
                g.output.append(onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.FLOAT, None))
                try:
                    return model.SerializeToString()
                finally:
                    del g.output[len(g.output) - 1]
    return model.SerializeToString()


def largest_difference(unfused, fused, vocab, threads=2):
    """Runs both graphs (ModelProtos) on a padded random batch (3 rows of 23, 9 and 17 tokens);
    returns the largest |difference| over the logits and the encoder's first-token output."""
    import numpy as np
    import onnxruntime as ort
    rng = np.random.default_rng(0)
    lens = [23, 9, 17]
    ids = rng.integers(1000, max(1001, min(vocab, 20000)), size=(len(lens), max(lens))).astype(np.int64)
    mask = np.zeros_like(ids)
    for r, n in enumerate(lens):
        mask[r, :n] = 1
        ids[r, n:] = 0
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    outs = []
    for model in (unfused, fused):
        sess = ort.InferenceSession(_with_first_token_output(model), so, providers=["CPUExecutionProvider"])
        feed = {i.name: (mask if i.name == "attention_mask" else ids) for i in sess.get_inputs()}
        outs.append(sess.run(None, feed))
        del sess
    return max(float(np.max(np.abs(a - b))) for a, b in zip(outs[0], outs[1]))


def fail(msg):
    print(f"uqd models optimize: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        fail("usage: optimize.py SRC_DIR OUT_DIR")
    src, out = sys.argv[1], sys.argv[2]
    model_path = os.path.join(src, "model.onnx")
    try:
        with open(os.path.join(src, "config.json")) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {src}/config.json: {e}")
    mtype = str(cfg.get("model_type", "")).lower()
    if mtype not in FAMILIES:
        fail(f"{src}/config.json model_type {mtype!r} is not a supported family; supported: "
             + ", ".join(sorted(FAMILIES)))
    heads = cfg.get("num_attention_heads", cfg.get("n_heads"))
    hidden = cfg.get("hidden_size", cfg.get("dim"))
    if not isinstance(heads, int) or not isinstance(hidden, int):
        fail(f"{src}/config.json lacks num_attention_heads / hidden_size")

    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    opt = optimize_model(model_path, model_type=FAMILIES[mtype], num_heads=heads, hidden_size=hidden,
                         opt_level=0, use_gpu=False)
    stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    attention_fused = bool(stats.get("Attention") or stats.get("MultiHeadAttention"))
    disentangled = None
    if not attention_fused and mtype in ("deberta", "deberta-v2") and os.environ.get("UQ_FUSE_ATTENTION", "1") != "0":
        # DeBERTa: its attention with the position terms as the bias of MultiHeadAttention,
        # kept only when the fused graph computes what the unfused one does.
        unfused = onnx.ModelProto()
        unfused.CopyFrom(opt.model)
        n, why = fuse_disentangled_attention(opt.model, heads)
        if n:
            try:
                diff = largest_difference(unfused, opt.model, int(cfg.get("vocab_size") or 30000))
            except Exception as e:  # noqa: BLE001 (the fused graph does not run: keep the unfused one)
                diff, why = None, f"the fused graph does not run: {e}"
            if diff is not None and diff <= FUSED_TOLERANCE:
                stats["MultiHeadAttention"] = n
                attention_fused = True
                disentangled = {"layers": n, "max_abs_diff": diff}
            else:
                if why is None:
                    why = f"the fused graph differs from the unfused one by {diff:.3g} (> {FUSED_TOLERANCE})"
                opt.model.CopyFrom(unfused)
        if not attention_fused:
            print(f"uqd models optimize: {model_path}: DeBERTa attention not fused: {why}", file=sys.stderr)
        del unfused
    if not attention_fused:
        # A graph not exported from PyTorch (e.g. converted from another runtime): the fused
        # kernels are out of reach, but int8 of the graph as it is still runs about twice as fast.
        print(f"uqd models optimize: {model_path}: ONNX Runtime's optimizer fused no attention "
              f"({json.dumps(stats)}); writing the variants of the unfused graph. For the fused kernels, "
              "re-export the model from its PyTorch weights with `optimum-cli export onnx --model MODEL DIR` "
              "and run `uqd models optimize DIR` again", file=sys.stderr)

    def tmp(name):
        return os.path.join(out, name + ".part")

    files = {}
    fp32 = os.path.join(out, "model_opt.onnx")
    opt.save_model_to_file(tmp("model_opt.onnx"))
    os.replace(tmp("model_opt.onnx"), fp32)
    files["fp32"] = "model_opt.onnx"

    int8 = os.path.join(out, "model_opt_int8.onnx")
    quantize_dynamic(fp32, tmp("model_opt_int8.onnx"), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    os.replace(tmp("model_opt_int8.onnx"), int8)
    files["int8"] = "model_opt_int8.onnx"

    opt.convert_float_to_float16(keep_io_types=True)
    opt.save_model_to_file(tmp("model_opt_fp16.onnx"))
    os.replace(tmp("model_opt_fp16.onnx"), os.path.join(out, "model_opt_fp16.onnx"))
    files["fp16"] = "model_opt_fp16.onnx"

    st = os.stat(model_path)
    manifest = {
        "source": os.path.realpath(model_path),
        "source_size": st.st_size,
        "source_mtime": int(st.st_mtime),
        "model_type": mtype,
        "optimizer_model_type": FAMILIES[mtype],
        "fused": stats,
        "attention_fused": attention_fused,
        "disentangled_attention": disentangled,
        "files": files,
        "onnxruntime": onnxruntime.__version__,
        "onnx": onnx.__version__,
        "seconds": round(time.time() - t0, 1),
    }
    with open(tmp("variants.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp("variants.json"), os.path.join(out, "variants.json"))
    print(json.dumps({"out": os.path.realpath(out), **manifest}))


if __name__ == "__main__":
    main()
