"""Datasette plugin: uqlite's SQL functions in every connection Datasette opens.

``prepare_connection`` loads the extension (``uqlite.load``), so ``uq_unit_scores``,
``response_confidence``, the metric aggregates and the ``uq_*`` tables and views work in the SQL
editor, canned queries and the JSON API. ``render_cell`` colours unit and answer scores in HTML
pages (red 0 … green 1); the JSON API keeps the plain numbers. Every database gets the canned
query ``uq_grounded``: an answer's units checked against sources (grounded checking: given
passages, or ``{"fts": table}`` for an FTS5 table of the database). A database holding uqlite's
schema (a ``uq_score_table`` job ran on it) also gets ``uq_units``: its scored units, least
supported first.
"""

from datasette import hookimpl
from markupsafe import Markup

import uqlite

#: Columns whose values in [0, 1] are confidence scores (uq_unit_scores, uq_scored_units, …).
SCORE_COLUMNS = {"score", "calibrated", "confidence", "response_confidence", "claim_confidence"}


@hookimpl
def prepare_connection(conn):
    uqlite.load(conn)


@hookimpl
def render_cell(value, column):
    if column not in SCORE_COLUMNS or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0.0 <= value <= 1.0:
        return None
    hue = int(120 * value)  # 0 red (probably unsupported) … 120 green (well supported)
    return Markup(
        f'<span class="uq-score" data-score="{value:.6g}" title="uqlite confidence" '
        f'style="background:hsl({hue},70%,80%);padding:0 .3em;border-radius:3px">{value:.3f}</span>'
    )


#: The canned query of databases with uqlite's schema.
UNITS_SQL = """SELECT source_table, source_key, position AS unit_idx, unit, scorer, score, calibrated, label
FROM uq_scored_units
WHERE (:scorer = '' OR scorer = :scorer)
ORDER BY score, source_key, position"""


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
                "description": "uqlite unit scores of the jobs run on this database (scorer: empty for all)",
                "params": ["scorer"],
            }
        return queries

    return inner
