"""Datasette plugin: uqlite's SQL functions in every connection Datasette opens.

``prepare_connection`` loads the extension (``uqlite.load``), so ``uq_unit_scores``,
``response_confidence``, the metric aggregates and the ``uq_*`` tables and views work in the SQL
editor, canned queries and the JSON API. ``render_cell`` colours unit and answer scores in HTML
pages (red 0 … green 1) and shows ``uq_highlight`` output as the highlighted answer it is
(checked against the markup ``uq_highlight`` writes, else shown as text); the JSON API keeps the
plain values. Every database gets the canned
query ``uq_grounded``: an answer's units checked against sources (grounded checking: given
passages, or ``{"fts": table}`` for an FTS5 table of the database). A database holding uqlite's
schema (a ``uq_score_table`` job ran on it) also gets ``uq_units``: its scored units, least
supported first, and ``uq_highlighted``: each answer of a table with its units marked by
their scores, least confident answer first. Both show one run (column ``run_id``): by default
the latest of each source table, so a table scored twice shows each unit once; parameter
``run_id`` picks another.
"""

from html.parser import HTMLParser
import re

from datasette import hookimpl
from markupsafe import Markup

import uqlite

#: Columns whose values in [0, 1] are confidence scores (uq_unit_scores, uq_scored_units, …).
SCORE_COLUMNS = {"score", "calibrated", "confidence", "response_confidence", "claim_confidence"}


@hookimpl
def prepare_connection(conn):
    uqlite.load(conn)


#: What ``uq_highlight`` writes: these tags, these attributes, inline styles of this alphabet.
_TAGS = {"div", "span"}
_ATTRS = {"class", "style", "title", "data-score", "data-units"}
_STYLE = re.compile(r"^[a-z0-9#:;,.%() -]*$")


class _Check(HTMLParser):
    """Accepts only the markup ``uq_highlight`` writes (any other tag, attribute or style, a
    comment or a declaration fails), so a text in the database that merely looks like its output
    cannot inject HTML."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ok = True
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        self.depth += 1
        if tag not in _TAGS:
            self.ok = False
        for name, val in attrs:
            if name not in _ATTRS or (name == "style" and not _STYLE.match(val or "")):
                self.ok = False
            if name == "style" and "url" in (val or ""):
                self.ok = False

    def handle_endtag(self, tag):
        self.depth -= 1
        if tag not in _TAGS:
            self.ok = False

    def handle_startendtag(self, tag, attrs):
        self.ok = False

    def handle_comment(self, data):
        self.ok = False

    def handle_decl(self, decl):
        self.ok = False

    def handle_pi(self, data):
        self.ok = False

    def unknown_decl(self, data):
        self.ok = False


def highlight_markup(value):
    """``value`` as Markup when it is ``uq_highlight``'s HTML, else None."""
    if not isinstance(value, str) or not value.startswith('<div class="uq-highlight"'):
        return None
    check = _Check()
    try:
        check.feed(value)
        check.close()
    except Exception:
        return None
    return Markup(value) if check.ok and check.depth == 0 else None


@hookimpl
def render_cell(value, column):
    highlighted = highlight_markup(value)
    if highlighted is not None:
        return highlighted
    if column not in SCORE_COLUMNS or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0.0 <= value <= 1.0:
        return None
    hue = int(120 * value)  # 0 red (probably unsupported) … 120 green (well supported)
    return Markup(
        f'<span class="uq-score" data-score="{value:.6g}" title="uqlite confidence" '
        f'style="background:hsl({hue},70%,80%);padding:0 .3em;border-radius:3px">{value:.3f}</span>'
    )


#: Which run a canned query shows: run ``:run_id``, or (empty) the latest run of each source
#: table, so a table scored twice shows each of its units once. ``a`` is the query's answers.
RUN_FILTER = """CASE WHEN :run_id = '' THEN (coalesce(a.source_table, ''), a.run_id) IN
    (SELECT coalesce(source_table, ''), max(run_id) FROM uq_answer GROUP BY 1)
  ELSE a.run_id = CAST(:run_id AS INTEGER) END"""

#: The canned query of databases with uqlite's schema: the scored units of one scorer
#: (``:scorer``, empty for all) and one run (``:run_id``, empty for the latest of each table),
#: least supported first.
UNITS_SQL = f"""SELECT a.run_id, a.source_table, a.source_key, a.position AS unit_idx, a.unit,
  a.scorer, a.score, a.calibrated, a.label
FROM uq_scored_units a
WHERE (:scorer = '' OR a.scorer = :scorer) AND {RUN_FILTER}
ORDER BY a.score, a.source_key, a.position"""


#: The canned query of databases with uqlite's schema: every answer of a table (``:table``, empty
#: for all) and run (``:run_id``, empty for the latest of each table) highlighted with one
#: scorer's unit scores (``:scorer``, empty for the run's first), least confident first (its
#: response score). Units stored before schema v5 have no span: their text is passed, and found
#: in the answer again.
HIGHLIGHTED_SQL = f"""WITH pick AS (
  SELECT a.answer_id, a.run_id, a.source_table, a.source_key, a.answer,
    coalesce(nullif(:scorer, ''), (SELECT s.scorer FROM uq_unit u JOIN uq_unit_score s USING (unit_id)
      WHERE u.answer_id = a.answer_id ORDER BY s.rowid LIMIT 1)) AS scorer
  FROM uq_answer a WHERE (:table = '' OR a.source_table = :table) AND {RUN_FILTER}
)
SELECT p.run_id, p.source_table, p.source_key, p.scorer,
  (SELECT round(r.score, 3) FROM uq_response_score r
    WHERE r.answer_id = p.answer_id AND r.scorer = p.scorer LIMIT 1) AS confidence,
  uq_highlight(p.answer, (SELECT json_group_array(CASE WHEN u.start IS NULL
      THEN json_object('unit', u.text, 'score', s.score, 'scorer', s.scorer)
      ELSE json_object('unit', u.text, 'start', u.start, 'end', u.end, 'score', s.score,
        'scorer', s.scorer) END)
    FROM uq_unit u JOIN uq_unit_score s USING (unit_id)
    WHERE u.answer_id = p.answer_id AND s.scorer = p.scorer), '{{"legend":true}}') AS highlight
FROM pick p
ORDER BY confidence, p.source_table, p.source_key"""


#: The grounded scorers of the canned query ``uq_grounded``.
GROUNDED_SCORERS = "json_array('grounded_entailment', 'grounded_noncontradiction')"

#: The canned query of every database: ``:sources`` is a text (one passage), or a JSON array of
#: passages or ``{"fts": table, "column": ..., "k": ...}`` (passed as JSON, not as a text).
GROUNDED_SQL = f"""SELECT unit_idx, unit, scorer, round(score, 3) AS score,
  json_extract(evidence, '$.verdict') AS verdict, evidence
FROM uq_unit_scores(:response, NULL, CASE
  WHEN json_valid(:sources) AND substr(ltrim(:sources), 1, 1) IN ('[', '{{')
  THEN json_object('scorers', {GROUNDED_SCORERS}, 'sources', json(:sources))
  ELSE json_object('scorers', {GROUNDED_SCORERS}, 'sources', :sources)
END)
ORDER BY unit_idx, scorer"""


@hookimpl
def canned_queries(datasette, database):
    async def inner():
        queries = {
            "uq_grounded": {
                "sql": GROUNDED_SQL,
                "title": "Grounded check of an answer against sources",
                "description": (
                    "uqlite grounded checking: each unit of the response checked against the "
                    "sources (a text, a JSON array of passages, or {\"fts\": \"table\", \"k\": 5} "
                    "to retrieve from an FTS5 table of this database)"
                ),
                "params": ["response", "sources"],
            }
        }
        db = datasette.get_database(database)
        if "uq_scored_units" in await db.view_names():
            queries["uq_units"] = {
                "sql": UNITS_SQL,
                "title": "Scored units, least supported first",
                "description": (
                    "uqlite unit scores of the jobs run on this database (scorer: empty for all; "
                    "run_id: empty for the latest run of each table)"
                ),
                "params": ["scorer", "run_id"],
            }
            queries["uq_highlighted"] = {
                "sql": HIGHLIGHTED_SQL,
                "title": "Answers highlighted by confidence",
                "description": (
                    "uqlite: each answer of a table (empty for all) with its units marked by one "
                    "scorer's scores (empty for the run's first): orange unsupported, light "
                    "orange doubtful, lilac supported; hover a mark for the units and scores "
                    "(run_id: empty for the latest run of each table)"
                ),
                "params": ["table", "scorer", "run_id"],
            }
        return queries

    return inner
