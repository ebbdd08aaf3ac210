-- Example queries over the extension (`.load dist/uq0` first); they work on any table of answers
-- and samples. The uqlite schema (runs, jobs, units, scores, labels) is sql/migrations/, applied by
-- uq_init() / uq_score_table(); examples/jobs.sql scores a whole table into it.
-- Run from the repository root: sqlite3 :memory: < sql/queries.sql

.load dist/uq0
CREATE TEMP TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT);
INSERT INTO answers VALUES
 (1, 'The Eiffel Tower is in Paris. It was completed in 1889. It is made of gold.',
  json_array('The Eiffel Tower, completed in 1889, stands in Paris.',
             'Paris is home to the Eiffel Tower, finished in 1889 and built of wrought iron.')),
 (2, 'Mount Everest is the highest mountain on Earth. It lies in the Andes.',
  json_array('Mount Everest, in the Himalayas, is the highest mountain on Earth.',
             'The highest mountain on Earth is Mount Everest, on the Nepal-China border in the Himalayas.'));

-- 1. Sentences that are probably hallucinated: LUQ confidence below 0.5.
SELECT a.id, s.unit_idx, s.unit, round(s.score, 3) AS luq
FROM answers a, uq_unit_scores(a.answer, a.samples, '{"scorers":["luq"]}') s
WHERE s.score < 0.5
ORDER BY a.id, s.unit_idx;

-- 2. Response-level confidence with every aggregation, one row per answer.
SELECT id,
       round(response_confidence(answer, samples, '{"scorers":["luq"]}'), 3) AS mean,
       round(response_confidence(answer, samples, '{"scorers":["luq"],"aggregation":"min"}'), 3) AS min,
       round(response_confidence(answer, samples, '{"scorers":["luq"],"aggregation":"geometric_mean"}'), 3) AS geometric_mean,
       round(response_confidence(answer, samples, '{"scorers":["luq"],"aggregation":"rank_weighted"}'), 3) AS rank_weighted
FROM answers;

-- 3. Keep the scores as a table, then compare scorers against labels with the metric aggregates.
CREATE TEMP TABLE unit_scores AS
SELECT a.id, s.unit_idx, s.unit, s.scorer, s.score
FROM answers a, uq_unit_scores(a.answer, a.samples,
       '{"scorers":["entailment","noncontradiction","contrasted_entailment","matched_bert_score"]}') s;
CREATE TEMP TABLE labels(id, unit_idx, label);   -- 1 = factual (e.g. from a grader or annotators)
INSERT INTO labels VALUES (1,0,1),(1,1,1),(1,2,0),(2,0,1),(2,1,0);
SELECT scorer, round(uq_auroc(score, label), 3) AS auroc, round(uq_auprc(score, label), 3) AS auprc,
       round(uq_brier(score, label), 3) AS brier, round(uq_best_threshold(score, label), 3) AS best_threshold
FROM unit_scores JOIN labels USING (id, unit_idx)
GROUP BY scorer ORDER BY auroc DESC;
