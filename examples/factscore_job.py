#!/usr/bin/python3
"""FActScore bios with graded claims, scored as a table and reported.

    /usr/bin/python3 examples/factscore_job.py [N] [DB]        (from the repository root)

Loads the first N (default 10) GPT-4 bios of ../shared/data/graph_uq_factscore_gpt-4.jsonl into
table `bios` of DB (default /tmp/uq-factscore.db): the answer, its 10 sampled answers, its stored
claims, the stored union of claims across answers, and the claims' FactScore labels. Two jobs
score the claims with m = 3 and m = 5 sampled answers (no LLM call: claims and union are given),
the labels go to uq_label through the job, AUROC per scorer is printed with uq_auroc, and
`dist/uqd report` writes the HTML report beside DB.
"""
import json
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("UQ_DATA", os.path.join(ROOT, "..", "shared", "data"))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10
DB = sys.argv[2] if len(sys.argv) > 2 else "/tmp/uq-factscore.db"
SCORERS = ["entailment", "noncontradiction", "closeness_centrality", "page_rank"]

if os.path.exists(DB):
    os.remove(DB)
conn = sqlite3.connect(DB, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(os.path.join(ROOT, "dist", "uq0"))
conn.execute("""CREATE TABLE bios(id INTEGER PRIMARY KEY, entity TEXT, prompt TEXT, response TEXT,
                samples TEXT, claims TEXT, all_claims TEXT, labels TEXT)""")
with open(os.path.join(DATA, "graph_uq_factscore_gpt-4.jsonl")) as f:
    for i, line in enumerate(f):
        if i >= N:
            break
        r = json.loads(line)
        conn.execute("INSERT INTO bios VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (
            i, r["entity"], r["prompt"].strip(), r["response"], json.dumps(r["samples"]),
            json.dumps([c["claim"] for c in r["response_claims"]]),
            json.dumps([c["claim"] for c in r["all_claims"]]),
            # 1 supported, 0 not; claims graded neither way stay unlabelled.
            json.dumps([c["label"] if c["label"] in (0, 1) else None for c in r["response_claims"]]),
        ))

for m in (3, 5):
    options = {"granularity": "claim", "scorers": SCORERS, "num_samples": m,
               "units_column": "claims", "claim_union_column": "all_claims", "labels_column": "labels"}
    job = conn.execute("SELECT uq_score_table('bios', ?)", (json.dumps(options),)).fetchone()[0]
    status = conn.execute("SELECT uq_wait(?)", (job,)).fetchone()[0]
    done, total, errors = conn.execute(
        "SELECT done, total, errors FROM uq_jobs WHERE job_id = ?", (job,)).fetchone()
    print(f"job {job} (m = {m}): {status}, {done}/{total} rows, {errors} errors")

print("scorer|m|labelled claims|AUROC|AUPRC")
for row in conn.execute("""
        SELECT s.scorer, r.num_samples, count(s.label), round(uq_auroc(s.score, s.label), 3),
               round(uq_auprc(s.score, s.label), 3)
        FROM uq_scored_units s JOIN uq_run r USING (run_id)
        GROUP BY s.scorer, r.num_samples ORDER BY s.scorer, r.num_samples"""):
    print("|".join(str(x) for x in row))
conn.close()

out = subprocess.run([os.path.join(ROOT, "dist", "uqd"), "report", DB], capture_output=True, text=True)
print(out.stdout.strip() or out.stderr.strip())
sys.exit(out.returncode)
