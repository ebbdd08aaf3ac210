#!/usr/bin/env bash
# `uqd bench white-box` against the real llama.cpp server: starts llama-cpp-python's
# OpenAI-compatible server (scripts/llama-server.sh builds it once into .cache/llama-venv) on the
# bundled SmolLM2-135M-Instruct GGUF, runs the bench with it as the generation LLM (token
# log-probabilities with 5 alternatives), prints the bench's lines and its table, and stops the
# server. Needs `make setup`.
#   scripts/bench-white-box.sh [uqd bench white-box flags…]   (e.g. --questions 140 --samples 5)
# UQD=PATH runs another uqd (default dist/uqd).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/llama-server.sh
MODEL=dist/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$MODEL" ] || { echo "bench-white-box: $MODEL is missing: run make setup" >&2; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
LOG=$(mktemp)
# One thread: on 2 cores the NLI model runs beside it.
.cache/llama-venv/bin/python -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --n_ctx 2048 --n_threads 1 --verbose false > "$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 180); do
  curl -fs "http://127.0.0.1:$PORT/v1/models" > /dev/null 2>&1 && break
  kill -0 $SERVER 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 1
done
LLM="{\"backend\":\"openai\",\"base_url\":\"http://127.0.0.1:$PORT/v1\",\"model\":\"smollm2-135m-instruct\",\"api_key_env\":null,\"seed\":7,\"concurrency\":1,\"timeout_ms\":300000}"
# A cache of its own, so that a rerun measures the server again.
UQ_CACHE_DB=$(mktemp -d)/completions.sqlite "${UQD:-dist/uqd}" bench white-box --llm "$LLM" "$@"
