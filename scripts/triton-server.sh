#!/usr/bin/env bash
# Makes .cache/triton-venv once: PyTriton (PyPI nvidia-pytriton, which bundles the Triton Inference
# Server) and ONNX Runtime, in a venv of Debian's /usr/bin/python3 (with another Python, Triton's
# Python backend fails). scripts/triton_nli.py serves an NLI model from it; tests/tests/e2e/triton.rs
# and scripts/bench-triton.sh start it. See docs/reference.md, "NLI on an inference server".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.cache/triton-venv
PYTRITON=0.7.0
ORT=1.31.1
STAMP=$VENV/.installed-$PYTRITON-$ORT
export PIP_CACHE_DIR=$ROOT/.cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1
say() { printf 'triton-server: %s\n' "$*" >&2; }

if [ -f "$STAMP" ] && "$VENV/bin/python" -c 'import pytriton, onnxruntime' 2>/dev/null; then
  exit 0
fi
rm -rf "$VENV"
if ! /usr/bin/python3 -m venv "$VENV" 2>/dev/null; then
  say "installing python3-venv with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  rm -rf "$VENV" && /usr/bin/python3 -m venv "$VENV"
fi
say "installing nvidia-pytriton==$PYTRITON and onnxruntime==$ORT into $VENV"
"$VENV/bin/pip" install -q "nvidia-pytriton==$PYTRITON" "onnxruntime==$ORT" "numpy<2"
"$VENV/bin/python" -c 'import pytriton, onnxruntime' 
touch "$STAMP"
say "installed"
