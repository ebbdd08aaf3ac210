-- The SelfCheckGPT WikiBio sentence-level evaluation of `uqd bench selfcheck`, written as plain SQL
-- over the extension. Run from the repository root (takes minutes on 2 cores):
--   sqlite3 :memory: < examples/selfcheck.sql
-- Conventions (shared/data/README.md): a sentence is non-factual when minor or major inaccurate;
-- NonFact AUC-PR on 1 - confidence, Factual AUC-PR on confidence, passage Pearson between the
-- passage's mean 1 - confidence and its share of non-factual sentences. m = 5 samples.
.load dist/uq0
.headers on
.mode box

-- One row per passage (the JSONL file split on newlines). Change `LIMIT -1` to score fewer passages.
CREATE TEMP TABLE passages AS
WITH RECURSIVE doc(t) AS (SELECT CAST(readfile('../shared/data/selfcheck_wikibio_dev.jsonl') AS TEXT) || char(10)),
lines(n, line, rest) AS (
  SELECT 0, NULL, (SELECT t FROM doc)
  UNION ALL
  SELECT n + 1, substr(rest, 1, instr(rest, char(10)) - 1), substr(rest, instr(rest, char(10)) + 1)
  FROM lines WHERE instr(rest, char(10)) > 0
)
SELECT n - 1 AS passage, line AS j FROM lines WHERE trim(coalesce(line, '')) <> '' LIMIT -1;

-- The annotated sentences are the units.
CREATE TEMP TABLE sentences AS
SELECT p.passage, CAST(s.key AS INTEGER) AS idx, s.value AS sentence,
       json_extract(p.j, '$.annotation[' || s.key || ']') <> 'accurate' AS nonfact
FROM passages p, json_each(p.j, '$.gpt3_sentences') s;

-- Every sentence-level scorer, scoring the dataset's own sentences against the first 5 samples.
CREATE TEMP TABLE scores AS
SELECT p.passage, u.unit_idx AS idx, u.scorer, u.score
FROM passages p,
     uq_unit_scores('', json_extract(p.j, '$.gpt3_text_samples'),
       json_object('units', json(json_extract(p.j, '$.gpt3_sentences')), 'num_samples', 5,
                   'scorers', json_array('entailment', 'noncontradiction', 'contrasted_entailment',
                                         'matched_entailment', 'matched_noncontradiction',
                                         'matched_contrasted_entailment', 'matched_cosine_sim',
                                         'matched_bert_score'))) u;

CREATE TEMP VIEW labelled AS
SELECT s.scorer, s.passage, s.score, l.nonfact FROM scores s JOIN sentences l USING (passage, idx);

-- Average precision as scikit-learn defines it: the mean, over positives, of the precision at
-- the threshold equal to their score (RANGE frames group tied scores).
CREATE TEMP VIEW ap_nonfact AS
SELECT scorer, avg(prec) AS ap FROM (
  SELECT scorer, nonfact,
         sum(nonfact) OVER w * 1.0 / count(*) OVER w AS prec
  FROM labelled WINDOW w AS (PARTITION BY scorer ORDER BY 1 - score DESC RANGE UNBOUNDED PRECEDING)
) WHERE nonfact GROUP BY scorer;

CREATE TEMP VIEW ap_factual AS
SELECT scorer, avg(prec) AS ap FROM (
  SELECT scorer, nonfact,
         sum(1 - nonfact) OVER w * 1.0 / count(*) OVER w AS prec
  FROM labelled WINDOW w AS (PARTITION BY scorer ORDER BY score DESC RANGE UNBOUNDED PRECEDING)
) WHERE NOT nonfact GROUP BY scorer;

-- AUROC as the Mann-Whitney statistic (ties count one half).
CREATE TEMP VIEW auroc AS
SELECT f.scorer, avg(CASE WHEN f.score > n.score THEN 1.0 WHEN f.score = n.score THEN 0.5 ELSE 0.0 END) AS auroc
FROM labelled f JOIN labelled n ON n.scorer = f.scorer AND n.nonfact AND NOT f.nonfact
GROUP BY f.scorer;

-- Pearson correlation of the passage mean (1 - confidence) with the share of non-factual sentences.
CREATE TEMP VIEW passage_pearson AS
SELECT scorer,
       (avg(x * y) - avg(x) * avg(y)) / sqrt((avg(x * x) - avg(x) * avg(x)) * (avg(y * y) - avg(y) * avg(y))) AS r
FROM (SELECT scorer, passage, avg(1 - score) AS x, avg(nonfact) AS y FROM labelled GROUP BY scorer, passage)
GROUP BY scorer;

SELECT a.scorer,
       round(100 * a.ap, 2) AS nonfact_auc_pr,
       round(100 * f.ap, 2) AS factual_auc_pr,
       round(r.auroc, 4) AS auroc,
       round(100 * p.r, 2) AS passage_pearson
FROM ap_nonfact a JOIN ap_factual f USING (scorer) JOIN auroc r USING (scorer) JOIN passage_pearson p USING (scorer)
ORDER BY nonfact_auc_pr DESC;
