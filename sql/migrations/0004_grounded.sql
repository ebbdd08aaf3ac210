-- uqlite schema, migration 4: grounded checking. A grounded scorer's unit score records what
-- decided it (docs/reference.md, "Grounded checking"): a JSON object with decided_by
-- ('source' | 'samples' | 'none'), verdict ('supported' | 'contradicted' | 'silent'), the
-- deciding passage (index, id: an FTS5 rowid or the id given), the character span of its
-- selected sentences (start, end) and their p_e, p_c. NULL for the other scorers.

ALTER TABLE uq_unit_score ADD COLUMN evidence TEXT;

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
       s.evidence
FROM uq_unit_score s
JOIN uq_unit u ON u.unit_id = s.unit_id
JOIN uq_answer a ON a.answer_id = u.answer_id;
