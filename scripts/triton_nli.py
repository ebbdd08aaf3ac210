"""Serves an NLI model directory (model.onnx) on a Triton Inference Server, CPU, via PyTriton.

The model runs in ONNX Runtime inside Triton's Python backend; Triton exposes the KServe v2 HTTP
API that uqd's `nli_backend` speaks (docs/reference.md, "NLI on an inference server"):

    .cache/triton-venv/bin/python scripts/triton_nli.py --model-dir ../shared/models/nli-minilm-l6-v2 \
        --port 8000 [--name nli] [--threads 1] [--max-batch 64]

Serves until killed; GET /v2/models/NAME/ready answers 200 once the model is loaded.
scripts/triton-server.sh makes the environment (nvidia-pytriton and onnxruntime from PyPI).
"""

import argparse
import os
import sys

import numpy as np
import onnxruntime as ort
from pytriton.decorators import batch
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig

DTYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(float)": np.float32}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True, help="directory holding model.onnx")
    ap.add_argument("--onnx-file", default="model.onnx", help="file in --model-dir to serve")
    ap.add_argument("--port", type=int, default=8000, help="HTTP port (KServe v2)")
    ap.add_argument("--grpc-port", type=int, default=0, help="gRPC port (default: --port + 1)")
    ap.add_argument("--metrics-port", type=int, default=0, help="metrics port (default: --port + 2)")
    ap.add_argument("--name", default="nli", help="model name on the server")
    ap.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    ap.add_argument("--max-batch", type=int, default=64, help="largest batch Triton passes in")
    args = ap.parse_args()

    path = os.path.join(args.model_dir, args.onnx_file)
    if not os.path.isfile(path):
        sys.exit(f"triton_nli: {path} does not exist: --model-dir must hold {args.onnx_file}")
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    in_names = [i.name for i in sess.get_inputs()]
    out = sess.get_outputs()[0]
    names = [o.name for o in sess.get_outputs()]
    out_name = "logits" if "logits" in names else out.name

    @batch
    def infer(**inputs):
        feed = {n: inputs[n] for n in in_names}
        (logits,) = sess.run([out_name], feed)
        return {out_name: logits.astype(np.float32)}

    config = TritonConfig(
        http_address="127.0.0.1",
        http_port=args.port,
        grpc_address="127.0.0.1",
        grpc_port=args.grpc_port or args.port + 1,
        metrics_port=args.metrics_port or args.port + 2,
        allow_metrics=False,
    )
    with Triton(config=config) as triton:
        triton.bind(
            model_name=args.name,
            infer_func=infer,
            inputs=[Tensor(name=i.name, dtype=DTYPES[i.type], shape=(-1,)) for i in sess.get_inputs()],
            outputs=[Tensor(name=out_name, dtype=np.float32, shape=(-1,))],
            config=ModelConfig(max_batch_size=args.max_batch, batcher=DynamicBatcher()),
            strict=True,
        )
        print(f"serving {args.name} at http://127.0.0.1:{args.port}", flush=True)
        triton.serve()


if __name__ == "__main__":
    main()
