-- uqlite schema, migration 1. Applied on demand (by `uq_init()`, `uq_score_table()`, and `uqd`
-- before it writes), inside one transaction, and recorded in uq_migrations; never edit an applied
-- migration, add the next file instead. Timestamps are UTC ISO-8601 with milliseconds
-- ('2026-11-22T17:30:00.123Z'). Ids are INTEGER PRIMARY KEYs: stable, never reused.

CREATE TABLE IF NOT EXISTS uq_migrations(
  version     INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- One scoring configuration: what was asked and with which models.
CREATE TABLE uq_run(
  run_id          INTEGER PRIMARY KEY,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  uqlite_version  TEXT NOT NULL,
  options_json    TEXT NOT NULL,          -- the scoring options as given (uq_unit_scores options)
  granularity     TEXT NOT NULL,          -- 'sentence' | 'claim'
  scorers_json    TEXT NOT NULL,          -- JSON array of scorer names
  aggregation     TEXT NOT NULL,          -- 'mean' | 'min' | 'geometric_mean' | 'rank_weighted'
  num_samples     INTEGER,                -- m, the sampled answers compared (NULL: all given)
  nli_model       TEXT,
  embed_model     TEXT,
  llm_model       TEXT,                   -- generation LLM (missing samples), when used
  device          TEXT
);

-- A background job over a source table (uq_score_table / `uqd score`).
CREATE TABLE uq_job(
  job_id             INTEGER PRIMARY KEY,
  run_id             INTEGER REFERENCES uq_run(run_id),
  kind               TEXT NOT NULL DEFAULT 'score',
  source_table       TEXT NOT NULL,
  columns_json       TEXT NOT NULL,       -- {"id":…,"prompt":…,"answer":…,"samples":…,"reference":…}
  options_json       TEXT NOT NULL,       -- the whole job options as given
  status             TEXT NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  total              INTEGER NOT NULL,    -- source rows to score
  done               INTEGER NOT NULL DEFAULT 0,   -- rows finished (scored or failed)
  errors             INTEGER NOT NULL DEFAULT 0,   -- rows that failed (see uq_job_error)
  llm_calls          INTEGER NOT NULL DEFAULT 0,
  prompt_tokens      INTEGER NOT NULL DEFAULT 0,
  completion_tokens  INTEGER NOT NULL DEFAULT 0,
  cost_usd           REAL,                -- NULL unless the LLM config gives prices
  message            TEXT,                -- why it failed or was cancelled
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  started_at         TEXT,
  updated_at         TEXT,
  finished_at        TEXT
);

CREATE TABLE uq_job_error(
  job_id      INTEGER NOT NULL REFERENCES uq_job(job_id),
  source_key  TEXT NOT NULL,
  error       TEXT NOT NULL,
  at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (job_id, source_key)
);

-- An original answer, as scored in a run (source_key = the source row's id, as text).
CREATE TABLE uq_answer(
  answer_id          INTEGER PRIMARY KEY,
  run_id             INTEGER NOT NULL REFERENCES uq_run(run_id),
  job_id             INTEGER REFERENCES uq_job(job_id),
  source_table       TEXT,
  source_key         TEXT NOT NULL,
  prompt             TEXT,
  answer             TEXT NOT NULL,
  model              TEXT,                -- the LLM that wrote it, when uqlite generated it
  prompt_tokens      INTEGER,
  completion_tokens  INTEGER,
  generated          INTEGER NOT NULL DEFAULT 0,   -- 1 when uqlite generated it
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (run_id, source_key)
);

-- The sampled answers y_1..y_m an answer was compared with.
CREATE TABLE uq_sample(
  answer_id          INTEGER NOT NULL REFERENCES uq_answer(answer_id),
  sample_idx         INTEGER NOT NULL,    -- 1..m
  text               TEXT NOT NULL,
  temperature        REAL,
  model              TEXT,
  prompt_tokens      INTEGER,
  completion_tokens  INTEGER,
  generated          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (answer_id, sample_idx)
);

-- Units (sentences or claims) of an answer, in order.
CREATE TABLE uq_unit(
  unit_id      INTEGER PRIMARY KEY,
  answer_id    INTEGER NOT NULL REFERENCES uq_answer(answer_id),
  granularity  TEXT NOT NULL,             -- 'sentence' | 'claim'
  position     INTEGER NOT NULL,          -- 0-based
  text         TEXT NOT NULL,
  UNIQUE (answer_id, granularity, position)
);

-- Unit confidence per scorer (NULL: the score could not be had, e.g. an unreadable judge reply).
CREATE TABLE uq_unit_score(
  unit_id  INTEGER NOT NULL REFERENCES uq_unit(unit_id),
  scorer   TEXT NOT NULL,
  score    REAL,
  PRIMARY KEY (unit_id, scorer)
);

-- Response-level confidence per scorer and aggregation (paper §3.4).
CREATE TABLE uq_response_score(
  answer_id    INTEGER NOT NULL REFERENCES uq_answer(answer_id),
  scorer       TEXT NOT NULL,
  aggregation  TEXT NOT NULL,
  score        REAL,
  PRIMARY KEY (answer_id, scorer, aggregation)
);

-- Uncertainty-aware decoding results (paper §3.4).
CREATE TABLE uq_uad(
  answer_id         INTEGER NOT NULL REFERENCES uq_answer(answer_id),
  scorer            TEXT NOT NULL,
  threshold         REAL,
  pre_confidence    REAL,
  post_confidence   REAL,
  n_units           INTEGER NOT NULL,
  n_kept            INTEGER NOT NULL,
  refined_response  TEXT NOT NULL,
  model             TEXT,
  PRIMARY KEY (answer_id, scorer)
);

-- Labels of units: kind 'factual' (FactScore grading: 1 supported, 0 not) or 'objective'
-- (1 objective, 0 subjective); grader = 'factscore:<model>', 'objectivity:<model>', 'human', ….
CREATE TABLE uq_label(
  unit_id     INTEGER NOT NULL REFERENCES uq_unit(unit_id),
  kind        TEXT NOT NULL CHECK (kind IN ('factual', 'objective')),
  grader      TEXT NOT NULL,
  label       INTEGER CHECK (label IN (0, 1)),   -- NULL: the grader's reply could not be read
  reference   TEXT,                              -- the reference text graded against
  raw_reply   TEXT,
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (unit_id, kind, grader)
);

CREATE INDEX uq_answer_job ON uq_answer(job_id);
CREATE INDEX uq_unit_answer ON uq_unit(answer_id);
CREATE INDEX uq_unit_score_scorer ON uq_unit_score(scorer);

-- Jobs with progress: rate in rows/s since start, ETA in seconds at that rate.
CREATE VIEW uq_jobs AS
SELECT j.job_id, j.source_table, j.status, j.done, j.total, j.errors,
       round(100.0 * j.done / max(j.total, 1), 1) AS percent,
       CASE WHEN j.started_at IS NOT NULL AND j.done > 0 THEN
         j.done / max((julianday(coalesce(j.finished_at, j.updated_at)) - julianday(j.started_at)) * 86400.0, 0.001)
       END AS rows_per_s,
       CASE WHEN j.status IN ('queued', 'running') AND j.started_at IS NOT NULL AND j.done > 0 THEN
         (j.total - j.done) * (julianday(j.updated_at) - julianday(j.started_at)) * 86400.0 / j.done
       END AS eta_s,
       j.llm_calls, j.prompt_tokens, j.completion_tokens, j.cost_usd,
       j.run_id, j.message, j.created_at, j.started_at, j.updated_at, j.finished_at
FROM uq_job j;

-- One row per unit and scorer, with the answer it belongs to and its labels (latest grader).
CREATE VIEW uq_scored_units AS
SELECT a.run_id, a.answer_id, a.source_table, a.source_key, a.prompt,
       u.unit_id, u.granularity, u.position, u.text AS unit,
       s.scorer, s.score,
       (SELECT l.label FROM uq_label l WHERE l.unit_id = u.unit_id AND l.kind = 'factual'
         ORDER BY l.created_at DESC LIMIT 1) AS label,
       (SELECT l.label FROM uq_label l WHERE l.unit_id = u.unit_id AND l.kind = 'objective'
         ORDER BY l.created_at DESC LIMIT 1) AS objective
FROM uq_unit_score s
JOIN uq_unit u ON u.unit_id = s.unit_id
JOIN uq_answer a ON a.answer_id = u.answer_id;

-- One row per answer, scorer and aggregation, with the answer's grade: the mean factual label
-- of its units (the paper's response-level grade, §5), NULL without labels.
CREATE VIEW uq_scored_answers AS
SELECT a.run_id, a.answer_id, a.source_table, a.source_key, a.prompt, a.answer,
       r.scorer, r.aggregation, r.score,
       (SELECT avg(l.label) FROM uq_unit u JOIN uq_label l ON l.unit_id = u.unit_id
         WHERE u.answer_id = a.answer_id AND l.kind = 'factual') AS grade,
       (SELECT count(*) FROM uq_unit u WHERE u.answer_id = a.answer_id) AS n_units
FROM uq_response_score r
JOIN uq_answer a ON a.answer_id = r.answer_id;
