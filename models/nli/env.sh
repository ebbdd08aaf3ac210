#!/usr/bin/env bash
# Makes the recipe's private training environment .cache/nli-train (pinned: models/nli/requirements.txt)
# once, and prints what it downloaded and how long it took. Idempotent: a stamp holding the
# requirements' hash skips a second install.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.cache/nli-train
REQ=models/nli/requirements.txt
stamp=$VENV/.requirements.sha256
want=$(sha256sum "$REQ" | cut -d' ' -f1)
# v4's antonyms read WordNet 3.0 (real_aug.py): Debian's wordnet-base.
if [ ! -f /usr/share/wordnet/data.adj ]; then
  echo "nli env: installing wordnet-base (WordNet 3.0, v4's antonyms) with apt-get" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base; } >&2
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$VENV/bin/python" -c 'import torch, transformers, faker, onnx, onnxruntime' 2>/dev/null; then
  exit 0
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
t0=$(date +%s)
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# The wheels go through pip's cache; what was fetched is reported from the installed size.
"$VENV/bin/pip" install -q -r "$REQ"
echo "$want" > "$stamp"
echo "nli env: $VENV made in $(( $(date +%s) - t0 ))s; installed size $(du -sh "$VENV" | cut -f1)" >&2
