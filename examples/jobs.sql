-- A whole table scored in the background, human labels joined in, metrics per scorer.
-- Needs a database FILE (the daemon writes into it):   sqlite3 /tmp/uq-jobs.db < examples/jobs.sql
-- then `dist/uqd report /tmp/uq-jobs.db` writes an HTML report next to it.

.load dist/uq0
.mode list
DROP TABLE IF EXISTS answers;
CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT);
INSERT INTO answers VALUES
 (1, 'Tell me about the Eiffel Tower.',
  'The Eiffel Tower is in Paris. It was completed in 1889. It is made of gold.',
  json_array('The Eiffel Tower, completed in 1889, stands in Paris.',
             'Paris is home to the Eiffel Tower, finished in 1889 and built of wrought iron.')),
 (2, 'Tell me about Mount Everest.',
  'Mount Everest is the highest mountain on Earth. It lies in the Andes.',
  json_array('Mount Everest, in the Himalayas, is the highest mountain on Earth.',
             'The highest mountain on Earth is Mount Everest, on the Nepal-China border in the Himalayas.'));

-- 1. Start a job and wait for it (uq_jobs shows progress meanwhile).
SELECT 'job ' || uq_score_table('answers', '{"scorers":["entailment","noncontradiction","matched_bert_score"]}');
SELECT 'status ' || uq_wait((SELECT max(job_id) FROM uq_job));
SELECT 'progress ' || done || '/' || total || ' rows, ' || errors || ' errors' FROM uq_jobs ORDER BY job_id DESC LIMIT 1;

-- 2. Human labels (1 = factual) go to uq_label next to the graders' labels.
INSERT OR REPLACE INTO uq_label(unit_id, kind, grader, label)
SELECT u.unit_id, 'factual', 'human', CASE WHEN u.text LIKE '%gold%' OR u.text LIKE '%Andes%' THEN 0 ELSE 1 END
FROM uq_unit u JOIN uq_answer a USING (answer_id)
WHERE a.run_id = (SELECT max(run_id) FROM uq_run);

-- 3. The least confident sentences, and each scorer's AUROC against the labels.
SELECT source_key, unit, scorer, round(score, 3) FROM uq_scored_units
WHERE run_id = (SELECT max(run_id) FROM uq_run) AND scorer = 'entailment' AND score < 0.3
ORDER BY source_key, position;
SELECT scorer, round(uq_auroc(score, label), 3) AS auroc FROM uq_scored_units
WHERE run_id = (SELECT max(run_id) FROM uq_run) GROUP BY scorer ORDER BY scorer;
