"""``score_table``: a ``uq_score_table`` job over a table of a database file, with a progress bar,
resumed when an earlier call was interrupted (the ``pandas`` extra for its result).

The job runs in the daemon, not in this process: interrupting the script (Ctrl-C, a killed
kernel) leaves it running, and a killed daemon leaves it unfinished in ``uq_job``. Calling
``score_table`` again with the same table and options finds that job and waits for it
(``uq_wait`` restarts a job no daemon runs; committed rows are never scored twice).
"""

import json
import os
import sqlite3
import sys
import time
import warnings

from .frames import _evidence, _pandas
from .runtime import load

_ENDED = ("done", "failed", "cancelled")


def _unfinished_job(conn, table, options):
    """The newest queued or running job over ``table`` whose stored options contain ``options``."""
    try:
        rows = conn.execute(
            "SELECT job_id, options_json FROM uq_job WHERE lower(source_table) = lower(?) "
            "AND status IN ('queued', 'running') ORDER BY job_id DESC",
            (table.split(".", 1)[1] if table.lower().startswith("main.") else table,),
        ).fetchall()
    except sqlite3.OperationalError:  # no uqlite schema yet: no job
        return None
    for job_id, stored in rows:
        try:
            s = json.loads(stored)
        except ValueError:
            continue
        if all(s.get(k) == v for k, v in options.items()):
            return job_id
    return None


def _grounded(options):
    """Whether the job's results get an ``evidence`` column: a grounded scorer or sources."""
    scorers = options.get("scorers")
    if isinstance(scorers, str):
        scorers = [scorers]
    named = any(str(x).startswith("grounded_") for x in scorers or [])
    return named or "sources" in options or "sources_column" in options


class _Bar:
    """A one-line progress bar on stderr (a line per update when stderr is not a terminal)."""

    def __init__(self, job_id, enabled):
        self.job_id, self.enabled = job_id, enabled
        self.tty = enabled and sys.stderr.isatty()
        self.last = None
        self.t0 = time.monotonic()
        self.done0 = None

    def update(self, status, done, total, errors):
        if not self.enabled:
            return
        if self.done0 is None:
            self.done0 = done
        state = (status, done, total, errors)
        if state == self.last:
            return
        self.last = state
        width = 30
        filled = int(width * done / total) if total else width
        rate = (done - self.done0) / max(time.monotonic() - self.t0, 1e-9)
        eta = f", ETA {int((total - done) / rate)} s" if rate > 0 and done < total else ""
        err = f", {errors} failed" if errors else ""
        line = f"job {self.job_id} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} rows{err}{eta} {status}"
        sys.stderr.write(("\r" + line + "\x1b[K") if self.tty else line + "\n")
        sys.stderr.flush()

    def close(self):
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


class RowsFailedWarning(UserWarning):
    """Some rows of a ``score_table`` job failed (the others are scored)."""


def open_existing(db_path, func):
    """A read-write connection to the SQLite file ``db_path``, never creating it: a missing file
    is a clear error, not an empty database."""
    path = os.fspath(db_path)
    if path != ":memory:" and not os.path.isfile(path):
        raise FileNotFoundError(
            f"{func}: no database file {path!r} (from {os.getcwd()!r}): pass the path of an "
            f"existing SQLite file"
        )
    if path == ":memory:":
        return sqlite3.connect(path, timeout=30)
    return sqlite3.connect(f"file:{_uri_path(path)}?mode=rw", uri=True, timeout=30)


def _uri_path(path):
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def _failed_rows(conn, job_id, errors, table, strict):
    """Raises (``strict``) or warns when rows of the job failed, with the count, the first
    errors and the query that lists them all."""
    if not errors:
        return
    first = conn.execute(
        "SELECT source_key, error FROM uq_job_error WHERE job_id = ? ORDER BY rowid LIMIT 3", (job_id,)
    ).fetchall()
    total = conn.execute("SELECT total FROM uq_job WHERE job_id = ?", (job_id,)).fetchone()[0]
    shown = "; ".join(f"row {k}: {e}" for k, e in first)
    msg = (
        f"score_table: job {job_id} over {table}: {errors} of {total} rows failed ({shown}); "
        f"all of them: SELECT source_key, error FROM uq_job_error WHERE job_id = {job_id}; fix "
        f"the cause, then `uqd score DB {table} --resume {job_id} --retry-errors`"
    )
    if strict:
        raise RuntimeError(msg)
    warnings.warn(msg, RowsFailedWarning, stacklevel=3)


def score_table(db_path, table, options=None, *, progress=True, resume=True, poll_s=0.5, strict=False):
    """Scores ``table`` of the SQLite file ``db_path`` in a background job and waits for it.

    ``options``: a dict of job options (docs/reference.md, Job options: scorers, columns,
    ``generate`` …). Shows a progress bar on stderr (``progress=False``: none). With
    ``resume=True`` (the default) an unfinished job over the same table whose options include
    ``options`` is resumed instead of starting a new one. Returns a pandas DataFrame of the
    job's unit scores (columns ``source_key``, ``unit_idx``, ``unit``, ``scorer``, ``score``;
    with a grounded scorer, option ``sources`` or ``sources_column`` (a column of each row's
    sources), also ``evidence``: a dict per grounded score, else None), with ``df.attrs``
    holding ``job_id``, ``run_id``, ``status``, ``errors`` and ``resumed``.
    A job that ends ``failed`` or ``cancelled`` raises ``RuntimeError`` with its message. A job
    that ends ``done`` with failed rows warns (``RowsFailedWarning``: the count, the first errors
    and the query listing them); ``strict=True`` raises ``RuntimeError`` instead. A missing
    ``db_path`` raises ``FileNotFoundError`` (it is never created).
    """
    pd = _pandas()
    options = dict(options or {})
    conn = open_existing(db_path, "score_table")
    try:
        load(conn)
        job_id = _unfinished_job(conn, table, options) if resume else None
        resumed = job_id is not None
        if resumed:
            if progress:
                sys.stderr.write(f"resuming job {job_id} over {table}\n")
        else:
            job_id = conn.execute(
                "SELECT uq_score_table(?, ?)", (table, json.dumps(options))
            ).fetchone()[0]
            conn.commit()
        bar = _Bar(job_id, progress)
        try:
            while True:
                # The bar is drawn at once, then after each wait (uq_wait also restarts a job
                # that no daemon runs, e.g. after the daemon was killed).
                status, done, total, errors, run_id, message = conn.execute(
                    "SELECT status, done, total, errors, run_id, message FROM uq_job WHERE job_id = ?",
                    (job_id,),
                ).fetchone()
                bar.update(status, done, total, errors)
                if status in _ENDED:
                    break
                conn.execute("SELECT uq_wait(?, ?)", (job_id, poll_s)).fetchone()
        except KeyboardInterrupt:
            bar.close()
            sys.stderr.write(
                f"job {job_id} goes on in the daemon: score_table({str(db_path)!r}, {table!r}, ...) "
                f"again resumes it; SELECT uq_cancel({job_id}) stops it\n"
            )
            raise
        bar.close()
        if status != "done":
            raise RuntimeError(f"job {job_id} {status}: {message}")
        _failed_rows(conn, job_id, errors, table, strict)
        grounded = _grounded(options)
        rows = conn.execute(
            "SELECT a.source_key, u.position, u.text, s.scorer, s.score"
            + (", s.evidence " if grounded else " ")
            + "FROM uq_answer a JOIN uq_unit u ON u.answer_id = a.answer_id "
            "JOIN uq_unit_score s ON s.unit_id = u.unit_id "
            "WHERE a.run_id = ? AND lower(a.source_table) = lower(?) "
            "ORDER BY a.answer_id, u.position, s.scorer",
            (run_id, table.split(".", 1)[1] if table.lower().startswith("main.") else table),
        ).fetchall()
    finally:
        conn.close()
    columns = ["source_key", "unit_idx", "unit", "scorer", "score"]
    if grounded:
        columns.append("evidence")
        rows = [tuple(r[:5]) + (_evidence(r[5]),) for r in rows]
    df = pd.DataFrame(rows, columns=columns)
    df.attrs.update(job_id=job_id, run_id=run_id, status=status, errors=errors, resumed=resumed)
    return df
