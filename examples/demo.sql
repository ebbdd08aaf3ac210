-- uqlite demo (`make demo`): which sentences of an answer are probably hallucinated?
-- Run from the repository root: sqlite3 :memory: < examples/demo.sql
.load dist/uq0
.mode box
.headers on

CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT);
INSERT INTO answers VALUES (1, 'Tell me a short bio of Marie Curie.',
  'Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna in 1867.',
  json_array(
    'Marie Curie was a physicist and chemist born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.',
    'Born in Warsaw, Marie Curie was a chemist and physicist. In 1903 she won the Nobel Prize in Physics.',
    'Marie Curie, a physicist and chemist from Warsaw, won the 1903 Nobel Prize in Physics.'));

SELECT uq_version() AS version;

-- Sentence-level scores (LUQ = contrasted_entailment), one row per sentence and scorer.
SELECT s.unit_idx AS idx, s.unit AS sentence, s.scorer, round(s.score, 3) AS confidence
FROM answers a, uq_unit_scores(a.answer, a.samples,
       '{"scorers":["entailment","contrasted_entailment","matched_bert_score"]}') s
ORDER BY idx, scorer;

-- How confident is the whole answer? (mean and min of the entailment scores)
SELECT round(response_confidence(answer, samples), 3) AS mean_confidence,
       round(response_confidence(answer, samples, '{"aggregation":"min"}'), 3) AS min_confidence
FROM answers;

-- A cleaned answer: the sentences the samples support (LUQ confidence >= 0.5).
SELECT group_concat(unit, ' ') AS cleaned_answer
FROM (SELECT s.unit FROM answers a, uq_unit_scores(a.answer, a.samples, '{"scorers":["luq"]}') s
      WHERE s.score >= 0.5 ORDER BY s.unit_idx);

-- RAG: check answers against your own passages instead of samples. An FTS5 table of sources,
-- one supported answer and one with an invented sentence; each sentence is scored against the
-- passages FTS5 retrieves for it (grounded_entailment: the NLI model alone, no LLM call).
.mode box --wrap 110
CREATE VIRTUAL TABLE docs USING fts5(body);
INSERT INTO docs(body) VALUES
  ('Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.'),
  ('Penicillin was discovered by Alexander Fleming in 1928. It was the first widely used antibiotic.');
CREATE TABLE rag(id INTEGER PRIMARY KEY, answer TEXT);
INSERT INTO rag VALUES
  (1, 'Penicillin was discovered by Alexander Fleming in 1928. It was the first widely used antibiotic.'),
  (2, 'Penicillin was discovered by Alexander Fleming in 1928. Fleming later became the mayor of London.');

SELECT r.id, s.unit AS sentence, round(s.score, 3) AS supported
FROM rag r, uq_unit_scores(r.answer, NULL,
       '{"scorers":["grounded_entailment"],"sources":{"fts":"docs","k":3}}') s
ORDER BY r.id, s.unit_idx;

-- "Is anything unsupported?": the weakest sentence (min), the LLM-free sentence filter (the
-- sentences scoring >= 1/3, as written: the default cut, where the highlight marks a sentence
-- doubtful [?…]), and the answer with its unsupported part marked [!…].
SELECT r.id,
       round(response_confidence(r.answer, NULL, '{"scorers":["grounded_entailment"],
         "aggregation":"min","sources":{"fts":"docs","k":3}}'), 3) AS weakest,
       uad_filter(r.answer, NULL, '{"granularity":"sentence","scorers":["grounded_entailment"],
         "sources":{"fts":"docs","k":3}}') AS filtered
FROM rag r;

SELECT r.id, uq_highlight(r.answer, s.unit, s.score, s.scorer, '{"format":"text"}') AS highlighted
FROM rag r, uq_unit_scores(r.answer, NULL,
       '{"scorers":["grounded_entailment"],"sources":{"fts":"docs","k":3}}') s
GROUP BY r.id;

-- Claims ("granularity":"claim": the embedded SmolLM2 decomposes the answer; no network, no keys;
-- without a capable LLM configured, uad_filter and uad_claims filter sentences), their support by the
-- samples (LUQ-atomic), and uncertainty-aware decoding: the answer rebuilt from its kept claims,
-- each sentence of the rebuild checked against them. A sentence the claims do not entail is
-- scored too (origin 'uncovered_sentence'), so a detail the decomposition drops is not lost.
SELECT c.idx, c.claim, round(c.score, 3) AS luq_atomic, c.kept, c.origin
FROM answers a, uad_claims(a.answer, a.samples, '{"granularity":"claim","scorers":["luq_atomic"],"threshold":0.5}') c;

SELECT round(claim_confidence(answer, samples, '{"scorers":["luq_atomic"]}'), 3) AS claim_confidence,
       uad_filter(answer, samples, '{"granularity":"claim","scorers":["luq_atomic"],"threshold":0.5}') AS refined_answer
FROM answers;
