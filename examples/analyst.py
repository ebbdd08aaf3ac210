"""An analyst's first hour (python/README.md, "Your own labels"): LLM biographies in one table,
annotators' sentence labels in another, scored, evaluated, cleaned and highlighted from Python.

    python examples/analyst.py [--answers N] [--samples M] [--db PATH] [--data FILE]

Run it with the Python that has the wheel installed (`pip install uqlite[pandas]`). It writes
two tables of the analyst's own shape into DB (default /tmp/uq-analyst.db, replaced): `bios(id,
answer, samples)` (the first N answers of FILE, default ../shared/data/selfcheck_wikibio_dev.jsonl,
with M sampled answers each) and `labels(answer_id, sent_idx, sentence, label)` (the annotators'
own sentence split, labels `accurate` / `minor_inaccurate` / `major_inaccurate`). Then:

1. the first score (`uqlite.load` + `response_confidence`), which starts the daemon;
2. `uqlite.score_table` over bios (sentences; entailment and noncontradiction);
3. `uqlite.evaluate` against the labels table with a label mapping;
4. cleaning with `uad_claims` (the sentence filter, no LLM) at the default cut (1/3), then on the
   evaluation's calibrated probability, then with `min_kept` 1: per setting the sentences removed,
   the accurate sentences removed and the answers left empty;
5. the first answer highlighted at the same cut (`uq_highlight`, text form).

Prints one JSON object (the timings in seconds, the evaluation's matching note, the figures).
"""
import argparse
import json
import os
import re
import sqlite3
import sys
import time

import uqlite

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.environ.get("UQ_DATA", os.path.join(ROOT, "..", "shared", "data")),
                    "selfcheck_wikibio_dev.jsonl")
LABELS = {"accurate": 1, "minor_inaccurate": 0, "major_inaccurate": 0}


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower().rstrip(".!?;:")


def write_tables(db, data, n, m):
    if os.path.exists(db):
        os.remove(db)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE bios(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
    conn.execute("CREATE TABLE labels(answer_id INTEGER, sent_idx INTEGER, sentence TEXT, label TEXT)")
    with open(data) as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            r = json.loads(line)
            conn.execute("INSERT INTO bios VALUES (?, ?, ?)",
                         (i, r["gpt3_text"], json.dumps(r["gpt3_text_samples"][:m])))
            conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)",
                             [(i, k, s, a) for k, (s, a) in enumerate(zip(r["gpt3_sentences"], r["annotation"]))])
    conn.commit()
    conn.close()


def cleaning(conn, options):
    """Per answer `uad_claims` with `options`: sentences removed, accurate ones removed (matched to
    the labels by text), answers left empty, and the first answer's cleaned text."""
    labels = {}
    for aid, sentence, label in conn.execute("SELECT answer_id, sentence, label FROM labels"):
        labels[(aid, norm(sentence))] = label
    removed = accurate_removed = accurate = empty = units = 0
    first = first_removed = None
    for aid, answer, samples in conn.execute("SELECT id, answer, samples FROM bios ORDER BY id").fetchall():
        rows = conn.execute("SELECT claim, kept, refined_response FROM uad_claims(?, ?, ?)",
                            (answer, samples, json.dumps(options))).fetchall()
        units += len(rows)
        for claim, kept, _ in rows:
            label = labels.get((aid, norm(claim)))
            accurate += label == "accurate"
            if not kept:
                removed += 1
                accurate_removed += label == "accurate"
        refined = rows[0][2] if rows else answer
        empty += not refined.strip()
        if first is None:
            first, first_removed = refined, sum(1 for r in rows if not r[1])
    return dict(sentences=units, removed=removed, accurate=accurate,
                accurate_removed=accurate_removed, empty_answers=empty, first_cleaned=first,
                first_removed=first_removed)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--answers", type=int, default=59)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--db", default="/tmp/uq-analyst.db")
    p.add_argument("--data", default=DATA)
    a = p.parse_args()
    write_tables(a.db, a.data, a.answers, a.samples)
    times, out = {}, {}

    t = time.monotonic()
    conn = sqlite3.connect(a.db)
    uqlite.load(conn)
    answer, samples = conn.execute("SELECT answer, samples FROM bios ORDER BY id LIMIT 1").fetchone()
    out["first_confidence"] = conn.execute("SELECT response_confidence(?, ?)", (answer, samples)).fetchone()[0]
    times["first_score"] = time.monotonic() - t
    out["precision"] = conn.execute("SELECT uq_debug()").fetchone()[0].count("int8") > 0

    t = time.monotonic()
    scores = uqlite.score_table(a.db, "bios", {"granularity": "sentence", "answer_column": "answer",
                                               "samples_column": "samples",
                                               "scorers": ["entailment", "noncontradiction"]},
                                progress=False)
    times["score_table"] = time.monotonic() - t
    out["scored_units"] = int(scores["unit_idx"].count())

    t = time.monotonic()
    ev = uqlite.evaluate(a.db, "bios", labels="labels", label_map=LABELS)
    times["evaluate"] = time.monotonic() - t
    out["evaluation"] = ev

    cut = {"scorers": ["entailment"]}
    e = conn.execute("SELECT recommended, calibration FROM uq_eval ORDER BY eval_id DESC LIMIT 1").fetchone()
    calibrated = dict(cut, scorers=[e[0]], calibration={e[0]: json.loads(e[1])})
    t = time.monotonic()
    out["clean_default"] = cleaning(conn, cut)
    times["clean"] = time.monotonic() - t
    out["clean_calibrated"] = cleaning(conn, calibrated)
    out["calibrated_note"] = conn.execute("SELECT uq_debug()").fetchone()[0]
    out["clean_calibrated_min_kept"] = cleaning(conn, dict(calibrated, min_kept=1))

    # The first answer marked at the same cut: what it shows [?…] is what the filter removes.
    out["highlighted"] = conn.execute(
        "SELECT uq_highlight(?, json_group_array(json_object('start', start, 'end', end, 'score', score)), "
        "'{\"format\":\"text\"}') FROM uq_unit_scores(?, ?, '{\"scorers\":[\"entailment\"]}')",
        (answer, answer, samples)).fetchone()[0]
    out["highlighted_low"] = len(re.findall(r"\[[?!]", out["highlighted"]))
    conn.close()
    out["times_s"] = {k: round(v, 2) for k, v in times.items()}
    json.dump(out, sys.stdout, indent=1, default=str)
    print()


if __name__ == "__main__":
    main()
