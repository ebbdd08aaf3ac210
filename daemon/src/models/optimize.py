"""Writes the optimized variants of a transformer encoder ONNX model (run by `uqd models optimize`).

model_opt.onnx       fp32, ONNX Runtime's transformer optimizer (fused Attention, SkipLayerNorm,
                     EmbedLayerNormalization, BiasGelu where the graph allows; a graph in which
                     no attention fuses still gets its variants, with a warning)
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
