"""``highlight``: a ``score_frame`` result shown as its answers, each unit marked by its score
(the SQL function ``uq_highlight``, computed in the extension without the daemon)."""

import html
import json
import sqlite3

from .runtime import load


def _number(value):
    """A float, or None for None/NaN/NA."""
    if value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if x != x else x


class Highlighted:
    """The highlighted answers: ``items`` is a list of ``(row, html)``; Jupyter shows them as a
    table (``_repr_html_``); ``str()`` gives the text form when made with
    ``options={"format": "text"}``."""

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, row):
        for label, value in self.items:
            if label == row:
                return value
        raise KeyError(row)

    def __str__(self):
        return "\n\n".join(f"[{label}] {value}" for label, value in self.items)

    def _repr_html_(self):
        rows = "".join(
            f'<tr><th style="vertical-align:top;text-align:right">{html.escape(str(label))}</th>'
            f'<td style="text-align:left">{value}</td></tr>'
            for label, value in self.items
        )
        return f'<table class="uq-highlighted"><tbody>{rows}</tbody></table>'


def highlight(scores, df=None, response="response", options=None, conn=None):
    """One highlighted answer per answer of ``scores`` (a :func:`uqlite.score_frame` result).

    The answers come from ``df[response]`` (the frame that was scored) or, by default, from
    ``scores.attrs["uqlite_responses"]``, which ``score_frame`` sets. Each unit is marked at its
    ``start``/``end`` (found in the answer when the columns are missing); with several scorers in
    ``scores`` a piece shows the lowest score and lists each. ``options``: ``uq_highlight``'s
    (``doubtful``, ``unsupported``, ``format``: ``"html"`` or ``"text"``, ``legend``).
    Returns :class:`Highlighted`, shown as HTML in Jupyter.
    """
    if df is not None:
        if response not in df.columns:
            raise KeyError(f"highlight: no column {response!r} in df; pass response=... to name it")
        responses = {label: value for label, value in zip(df.index, df[response])}
    else:
        responses = scores.attrs.get("uqlite_responses")
        if responses is None:
            raise ValueError(
                "highlight: scores carries no answers (attrs['uqlite_responses']): pass the "
                "scored frame as df=..., or a result of uqlite.score_frame"
            )
    for col in ("row", "unit", "score"):
        if col not in scores.columns:
            raise KeyError(f"highlight: scores has no column {col!r}: pass a uqlite.score_frame result")
    opts = None if options is None else (options if isinstance(options, str) else json.dumps(options))
    has_span = "start" in scores.columns and "end" in scores.columns
    own = conn is None
    if own:
        conn = sqlite3.connect(":memory:")
        load(conn)
    items = []
    try:
        for label, group in scores.groupby("row", sort=False):
            if label not in responses:
                raise KeyError(f"highlight: row {label!r} of scores is not in the answers")
            units = []
            for r in group.itertuples(index=False):
                u = {"unit": r.unit, "score": _number(r.score)}
                if "scorer" in scores.columns:
                    u["scorer"] = r.scorer
                if has_span:
                    start, end = _number(r.start), _number(r.end)
                    u["start"] = None if start is None else int(start)
                    u["end"] = None if end is None else int(end)
                units.append(u)
            sql = "SELECT uq_highlight(?, ?)" if opts is None else "SELECT uq_highlight(?, ?, ?)"
            params = (str(responses[label]), json.dumps(units))
            if opts is not None:
                params += (opts,)
            try:
                (value,) = conn.execute(sql, params).fetchone()
            except sqlite3.Error as e:
                raise type(e)(f"row {label!r}: {e}") from e
            items.append((label, value))
    finally:
        if own:
            conn.close()
    return Highlighted(items)
