"""``evaluate``: ``uqd eval DB TABLE --json``, the evaluation suite's figures on a scored table's
labels, from a database file: the job's stored labels, or a labels table of your own
(``labels=``) aligned to the scored sentences (by text, then containment; by index without a
text column). docs/reference.md, "uqd eval", says what each field means.
"""

import json
import os
import subprocess

from .runtime import daemon_path

_REPO_DIST_UQD = os.path.join(os.path.dirname(__file__), "..", "..", "dist", "uqd")


def _uqd():
    """The ``uqd`` to run: ``UQ_DAEMON`` (as the extension reads it), else the package's,
    else a source checkout's ``dist/uqd``."""
    for p in (os.environ.get("UQ_DAEMON"), daemon_path(), _REPO_DIST_UQD):
        if p and os.path.isfile(p):
            return os.path.abspath(p)
    raise FileNotFoundError(
        f"no uqd binary at {daemon_path()}: install the uqlite wheel, or set UQ_DAEMON to a uqd"
    )


def evaluate(
    db_path,
    table,
    labels=None,
    label_map=None,
    label_expr=None,
    key=None,
    index=None,
    text=None,
    label=None,
    write=True,
    alpha=0.1,
):
    """Evaluates every scorer of ``table``'s scores in ``db_path``; returns the parsed JSON of
    ``uqd eval --json`` (``evaluations``: per run and granularity the figures with intervals,
    ``recommended``, ``calibration``, ``conformal``, ``notes`` and, with ``labels``,
    ``matching``).

    ``labels`` names a table of labelled sentences (``--labels``); ``label_map`` (a dict, e.g.
    ``{"accurate": 1, "minor_inaccurate": 0}``) or ``label_expr`` (SQL, e.g.
    ``"label = 'accurate'"``) turn its labels into 1 = factual; ``key``, ``index``, ``text`` and
    ``label`` name its columns (defaults ``answer_id``, ``sent_idx``, ``sentence``, ``label``).
    ``write=False`` writes nothing to ``uq_eval``. uqd's errors raise ValueError with its
    message; a missing ``db_path`` raises FileNotFoundError (it is never created).
    """
    db_path = os.fspath(db_path)
    if not os.path.isfile(db_path):
        raise FileNotFoundError(
            f"no database file {db_path!r}: give the path of a database scored by uqlite "
            "(uqlite.score_table)"
        )
    args = [_uqd(), "eval", db_path, table, "--json", "--alpha", str(alpha)]
    if not write:
        args.append("--dry-run")
    if isinstance(label_map, dict):
        label_map = json.dumps(label_map)
    for flag, value in (
        ("--labels", labels),
        ("--label-map", label_map),
        ("--label-expr", label_expr),
        ("--labels-key", key),
        ("--labels-index", index),
        ("--labels-text", text),
        ("--labels-label", label),
    ):
        if value is not None:
            args += [flag, str(value)]
    out = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        message = out.stderr.strip()
        if message.startswith("uqd: "):
            message = message[len("uqd: "):]
        raise ValueError(message or f"uqd eval failed with status {out.returncode}")
    return json.loads(out.stdout)
