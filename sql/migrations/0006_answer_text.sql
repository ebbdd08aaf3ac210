-- uqlite schema, migration 6: uq_scored_units carries the answer's text (column answer, last),
-- so that highlighting a stored answer (uq_highlight over its units) needs no join.

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
       u.start, u.end, u.alignment,
       a.answer
FROM uq_unit_score s
JOIN uq_unit u ON u.unit_id = s.unit_id
JOIN uq_answer a ON a.answer_id = u.answer_id;
