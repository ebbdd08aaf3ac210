-- uqlite schema, migration 5: where each unit stands in its answer (docs/reference.md,
-- "Spans and highlighting"). start, end: characters of uq_answer.answer from 0, end exclusive
-- (substr(answer, start + 1, end - start) is the unit's place); alignment: 1 for a unit found
-- verbatim (a sentence), else the weighted share of a claim's content words inside its span.
-- All three NULL for a claim that could not be placed, and for rows written before v5.

ALTER TABLE uq_unit ADD COLUMN start INTEGER;
ALTER TABLE uq_unit ADD COLUMN end INTEGER;
ALTER TABLE uq_unit ADD COLUMN alignment REAL;

DROP VIEW uq_scored_units;
-- One row per unit and scorer, with the answer it belongs to and its labels (latest grader).
CREATE VIEW uq_scored_units AS
SELECT a.run_id, a.answer_id, a.source_table, a.source_key, a.prompt,
       u.unit_id, u.granularity, u.position, u.text AS unit,
       s.scorer, s.score,
       (SELECT l.label FROM uq_label l WHERE l.unit_id = u.unit_id AND l.kind = 'factual'
         ORDER BY l.created_at DESC LIMIT 1) AS label,
       (SELECT l.label FROM uq_label l WHERE l.unit_id = u.unit_id AND l.kind = 'objective'
         ORDER BY l.created_at DESC LIMIT 1) AS objective,
       u.origin,
       s.calibrated,
       s.evidence,
       u.start, u.end, u.alignment
FROM uq_unit_score s
JOIN uq_unit u ON u.unit_id = s.unit_id
JOIN uq_answer a ON a.answer_id = u.answer_id;
