"""``score_frame``: the unit scores of the answers in a pandas DataFrame (the ``pandas`` extra)."""

import json
import sqlite3
import warnings

from .runtime import load


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("uqlite.score_frame needs pandas: pip install 'uqlite[pandas]'") from None
    return pandas


def _missing(value):
    """None, NaN or pandas' NA/NaT: a cell without a value."""
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    try:
        import pandas

        return value is pandas.NA or value is pandas.NaT
    except ImportError:
        return False


def _samples_json(value, row, column):
    """A row's samples as the JSON array ``uq_unit_scores`` takes (a list, or a JSON string);
    None for a missing cell (SQL NULL: enough for scorers that compare no samples)."""
    if _missing(value):
        return None
    if isinstance(value, str):
        return value  # the extension checks it and names the argument when it is not an array
    try:
        items = list(value)
    except TypeError:
        raise ValueError(
            f"row {row!r}: column {column!r} holds {type(value).__name__}, not a list of sampled "
            f"answers or a JSON array string"
        ) from None
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise ValueError(
                f"row {row!r}: column {column!r}: sample {i} is {type(s).__name__} ({s!r}), not a "
                f"text; each row's samples must be a list of sampled answers (strings) or a JSON "
                f"array string"
            )
    return json.dumps(items)


def _sources_value(value, row, column):
    """A row's sources as the JSON value of option ``sources``: a text, or an array of passages
    (texts or ``{"id", "text"}`` dicts); a string that is a JSON array is taken as that array."""
    if isinstance(value, str):
        s = value.lstrip()
        if s.startswith("["):
            try:
                parsed = json.loads(value)
            except ValueError:
                return value  # a text that happens to start with "["
            if isinstance(parsed, list):
                return parsed
        return value
    if isinstance(value, dict):
        return dict(value)  # one {"id", "text"} passage, or {"fts": ...}: the extension checks it
    try:
        items = list(value)
    except TypeError:
        raise ValueError(
            f"row {row!r}: column {column!r} holds {type(value).__name__}, not the row's sources "
            f"(a text, a list of texts or {{'id', 'text'}} dicts, or a JSON array string)"
        ) from None
    return [dict(item) if isinstance(item, dict) else str(item) for item in items]


def _json_default(value):
    """numpy scalars (a passage id read from a DataFrame) as Python values, else their text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def _evidence(value):
    """The ``evidence`` column parsed: a dict, or None (a scorer that is not grounded)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return None


def score_frame(df, response="response", samples="samples", options=None, conn=None, sources=None):
    """One row per unit and scorer of every answer of ``df``.

    ``df[response]`` holds the answers, ``df[samples]`` their sampled answers (a list of strings
    or a JSON array string per row). ``samples=None``: no samples column, SQL NULL is passed
    (for scorers that compare no samples, e.g. the grounded scorers only). ``options`` is a dict
    (or JSON string) of ``uq_unit_scores`` options (docs/reference.md, Options). A row whose
    samples cell is None/NaN is also passed NULL.

    ``sources``: the name of a column holding each row's sources for the grounded scorers
    (``grounded_entailment``, ``grounded_noncontradiction``, ``grounded_fallback``): a text, a
    list of texts or of ``{"id": ..., "text": ...}`` dicts, or a JSON array string; it is passed
    as that row's option ``sources`` (over one in ``options``). A row whose sources are
    None/NaN gets the ``sources`` of ``options``, else none: NULL grounded scores (as job
    option ``sources_column``).

    Returns a DataFrame with the columns ``row`` (the index label of the answer's row in
    ``df``), ``unit_idx``, ``unit``, ``scorer``, ``score``, ``start``, ``end``, ``alignment``
    (the unit's place in the answer, characters from 0, end exclusive; NaN for a claim not
    placed), in row order (a row whose answer is missing or blank is not scored: a warning
    names it, and ``result.attrs["uqlite_unscored_rows"]`` lists them); with ``sources``, also
    ``evidence``: what decided a grounded score (a dict with ``decided_by``, ``verdict``,
    ``passage``, ``passage_id``, ``start``, ``end``, ``entailment``, ``contradiction``), None for
    the other scorers. ``conn``: a connection with uqlite loaded to reuse; by default an
    in-memory one. An error of the extension is raised as ``sqlite3.OperationalError`` naming
    the row. ``uqlite.highlight(result)`` shows the answers highlighted by their scores (in
    Jupyter, or as HTML): the answers are kept in ``result.attrs["uqlite_responses"]``.
    """
    pd = _pandas()
    if response is None:
        raise KeyError("score_frame: response=None: name the column of the answers")
    for col in (response, samples, sources):
        if col is not None and col not in df.columns:
            raise KeyError(
                f"score_frame: no column {col!r} in the DataFrame (columns: {list(df.columns)}); "
                f"pass response=..., samples=... and sources=... to name yours"
            )
    if options is None:
        base = {}
    elif isinstance(options, str):
        try:
            base = json.loads(options) if sources is not None else None
        except ValueError as e:
            raise ValueError(f"score_frame: options is not JSON ({e}): {options!r}") from None
        if sources is not None and not isinstance(base, dict):
            raise ValueError(f"score_frame: options must be a JSON object, got {options!r}")
    else:
        base = dict(options)
    opts = options if isinstance(options, str) else json.dumps(base, default=_json_default)
    own = conn is None
    if own:
        conn = sqlite3.connect(":memory:")
        load(conn)
    n = len(df.index)
    resp_col = df[response]
    samp_col = df[samples] if samples is not None else [None] * n
    src_col = df[sources] if sources is not None else [None] * n
    cols = "unit_idx, unit, scorer, score, start, end, alignment" + (
        ", evidence" if sources is not None else ""
    )
    sql = f"SELECT {cols} FROM uq_unit_scores(?, ?, ?)"
    rows = []
    responses = {}
    blank = []
    try:
        for label, resp, samp, src in zip(df.index, resp_col, samp_col, src_col):
            if _missing(resp) or not str(resp).strip():
                blank.append(label)  # no answer, no units
                continue
            sj = None if samples is None else _samples_json(samp, label, samples)
            row_opts = opts
            if sources is not None:
                if not _missing(src):
                    row_src = _sources_value(src, label, sources)
                else:  # options' own sources, else no passage: NULL grounded scores
                    row_src = base.get("sources", [])
                row_opts = json.dumps(dict(base, sources=row_src), default=_json_default)
            try:
                out = conn.execute(sql, (str(resp), sj, row_opts)).fetchall()
            except sqlite3.Error as e:
                raise type(e)(f"row {label!r}: {e}") from e
            responses[label] = str(resp)
            if sources is None:
                rows.extend((label,) + tuple(r) for r in out)
            else:
                rows.extend((label,) + tuple(r[:7]) + (_evidence(r[7]),) for r in out)
    finally:
        if own:
            conn.close()
    columns = ["row", "unit_idx", "unit", "scorer", "score", "start", "end", "alignment"]
    if sources is not None:
        columns.append("evidence")
    if blank:
        warnings.warn(
            f"score_frame: {len(blank)} of {n} rows have no answer (missing or blank "
            f"{response!r}) and were not scored: rows {blank[:10]!r}{' …' if len(blank) > 10 else ''}",
            stacklevel=2,
        )
    result = pd.DataFrame(rows, columns=columns)
    result.attrs["uqlite_responses"] = responses
    result.attrs["uqlite_unscored_rows"] = blank
    return result
