"""``score_frame``: the unit scores of the answers in a pandas DataFrame (the ``pandas`` extra)."""

import json
import sqlite3

from .runtime import load


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("uqlite.score_frame needs pandas: pip install 'uqlite[pandas]'") from None
    return pandas


def _samples_json(value, row, column):
    """A row's samples as the JSON array ``uq_unit_scores`` takes (a list, or a JSON string)."""
    if isinstance(value, str):
        return value  # the extension checks it and names the argument when it is not an array
    try:
        items = list(value)
    except TypeError:
        raise ValueError(
            f"row {row!r}: column {column!r} holds {type(value).__name__}, not a list of sampled "
            f"answers or a JSON array string"
        ) from None
    return json.dumps([str(s) for s in items])


def score_frame(df, response="response", samples="samples", options=None, conn=None):
    """One row per unit and scorer of every answer of ``df``.

    ``df[response]`` holds the answers, ``df[samples]`` their sampled answers (a list of strings
    or a JSON array string per row); ``options`` is a dict (or JSON string) of ``uq_unit_scores``
    options (docs/reference.md, Options). Returns a DataFrame with the columns ``row`` (the index
    label of the answer's row in ``df``), ``unit_idx``, ``unit``, ``scorer``, ``score``, in row
    order. ``conn``: a connection with uqlite loaded to reuse; by default an in-memory one.
    An error of the extension is raised as ``sqlite3.OperationalError`` naming the row.
    """
    pd = _pandas()
    for col in (response, samples):
        if col not in df.columns:
            raise KeyError(
                f"score_frame: no column {col!r} in the DataFrame (columns: {list(df.columns)}); "
                f"pass response=... and samples=... to name yours"
            )
    if options is None:
        opts = "{}"
    elif isinstance(options, str):
        opts = options
    else:
        opts = json.dumps(options)
    own = conn is None
    if own:
        conn = sqlite3.connect(":memory:")
        load(conn)
    rows = []
    try:
        for label, resp, samp in zip(df.index, df[response], df[samples]):
            if resp is None or (isinstance(resp, float) and resp != resp):
                continue  # no answer, no units
            sj = _samples_json(samp, label, samples)
            try:
                out = conn.execute(
                    "SELECT unit_idx, unit, scorer, score FROM uq_unit_scores(?, ?, ?)",
                    (str(resp), sj, opts),
                ).fetchall()
            except sqlite3.Error as e:
                raise type(e)(f"row {label!r}: {e}") from e
            rows.extend((label,) + tuple(r) for r in out)
    finally:
        if own:
            conn.close()
    return pd.DataFrame(rows, columns=["row", "unit_idx", "unit", "scorer", "score"])
