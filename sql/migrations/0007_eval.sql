-- uqlite schema, migration 7: what `uqd eval` found on a database's labelled answers (one
-- evaluation per run and granularity; docs/reference.md, "uqd eval").

CREATE TABLE uq_eval(
  eval_id       INTEGER PRIMARY KEY,
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  run_id        INTEGER NOT NULL REFERENCES uq_run(run_id),
  source_table  TEXT,                   -- the table evaluated (NULL: every table of the run)
  granularity   TEXT NOT NULL,
  units         INTEGER NOT NULL,       -- labelled units evaluated
  answers       INTEGER NOT NULL,       -- their answers (what the intervals resample)
  resamples     INTEGER NOT NULL,
  seed          INTEGER NOT NULL,
  recommended   TEXT,                   -- the scorer with the highest AUROC
  calibration   TEXT,                   -- its Platt model, as uq_fit_calibration returns it
  conformal     TEXT,                   -- its conformal fit, as uq_fit_conformal returns it
  notes         TEXT                    -- what the recommendation rests on, in words
);

-- Each scorer's figures with their 95 % intervals over resampled answers.
CREATE TABLE uq_eval_figure(
  eval_id   INTEGER NOT NULL REFERENCES uq_eval(eval_id),
  scorer    TEXT NOT NULL,
  figure    TEXT NOT NULL,              -- 'auroc' | 'auc_pr' | 'nonfact_auc_pr' | 'ece'
  estimate  REAL,                       -- NULL: undefined (e.g. one class)
  low       REAL,
  high      REAL,
  PRIMARY KEY (eval_id, scorer, figure)
);
