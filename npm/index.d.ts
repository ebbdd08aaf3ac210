// Type declarations of the uqlite npm package (docs/reference.md, "Node.js").

/** The part of a better-sqlite3 `Database` (or a node:sqlite `DatabaseSync`) that uqlite uses. */
export interface SqliteDatabase {
  loadExtension(path: string, entryPoint?: string): unknown;
  prepare(sql: string): {
    get(...params: any[]): unknown;
    all(...params: any[]): unknown[];
  };
}

/** The package version, that of `uq_version()` without its "v". */
export declare const version: string;

/**
 * Loads uqlite into `db` (a better-sqlite3 Database; also a node:sqlite DatabaseSync opened with
 * `allowExtension: true`) and returns the loaded extension's version, e.g. `"v0.1.0"`.
 */
export declare function load(db: SqliteDatabase): string;

/** Full path of the loadable extension `uq0.so`. Throws on a platform the package has no build for. */
export declare function getLoadablePath(): string;

/** Path of the `uqd` binary (`uqd status`, `uqd stop`, `uqd score DB TABLE`, `uqd report DB`). */
export declare function daemonPath(): string;

/** A passage of the grounded scorers' sources. */
export type Passage = string | { id?: string | number; text: string };

/** Option `sources` of the grounded scorers: passages, or FTS5 retrieval from a table of the database. */
export type Sources =
  | string
  | Passage[]
  | { fts: string; k?: number; per?: 'answer' | 'unit'; column?: string; [key: string]: unknown };

/** Scoring options (docs/reference.md, Options); unknown keys are the extension's to refuse. */
export interface ScoringOptions {
  scorers?: string[];
  granularity?: 'sentence' | 'claim';
  aggregation?: 'mean' | 'min' | 'geometric_mean' | 'rank_weighted' | string;
  sources?: Sources;
  [option: string]: unknown;
}

/** One row of `scoreRows`: the response, its sampled answers and its sources. */
export interface ScoreRow {
  response?: string | null;
  /** Alias of `response`. */
  answer?: string | null;
  /** Sampled answers: an array, or a JSON array string; absent or null: none (SQL NULL). */
  samples?: string[] | string | null;
  /** The grounded scorers' sources for this row (over options'); null: options', else none. */
  sources?: Sources | null;
}

/** What decided a grounded score (the `evidence` column). */
export interface Evidence {
  decided_by?: string;
  verdict?: string;
  passage?: string | null;
  passage_id?: string | number | null;
  start?: number | null;
  end?: number | null;
  entailment?: number | null;
  contradiction?: number | null;
  [key: string]: unknown;
}

/** One unit and scorer of a row, as `uq_unit_scores` gives it. */
export interface UnitScore {
  /** Index of the row in `rows`. */
  row: number;
  unitIdx: number;
  unit: string;
  scorer: string;
  /** Confidence in [0, 1]; null when it could not be had. */
  score: number | null;
  /** The unit's place in the response (characters, end exclusive); null when not placed. */
  start: number | null;
  end: number | null;
  alignment: number | null;
  /** Grounded scorers: what decided the score; null for the others. */
  evidence: Evidence | null;
}

/**
 * The unit scores of each row, one object per unit and scorer, rows in order (rows without a
 * response are skipped). An extension error is thrown as its SqliteError, prefixed with the row.
 */
export declare function scoreRows(
  db: SqliteDatabase,
  rows: ReadonlyArray<ScoreRow | string>,
  options?: ScoringOptions | string
): UnitScore[];

export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

/** What `onProgress` is told, at once and after each change. */
export interface JobProgress {
  jobId: number;
  status: JobStatus;
  done: number;
  total: number;
  errors: number;
  resumed: boolean;
}

export interface ScoreTableOptions {
  onProgress?: (progress: JobProgress) => void;
  /** Wait for an unfinished job over the same table with these options instead of starting one (default true). */
  resume?: boolean;
  /** Milliseconds between polls of the job (default 500). */
  pollMs?: number;
}

/** One stored unit score of a job. */
export interface TableUnitScore {
  /** The source row's id (`id_column`, default rowid), as text. */
  sourceKey: string;
  unitIdx: number;
  unit: string;
  scorer: string;
  score: number | null;
  /** With a grounded scorer, `sources` or `sources_column`: what decided the score; else null. */
  evidence: Evidence | null;
}

export interface ScoreTableResult {
  jobId: number;
  runId: number;
  status: 'done';
  errors: number;
  resumed: boolean;
  units: TableUnitScore[];
}

/** Job options (docs/reference.md, Job options): scoring options plus the column keys and more. */
export interface JobOptions extends ScoringOptions {
  id_column?: string;
  prompt_column?: string;
  answer_column?: string;
  samples_column?: string;
  sources_column?: string;
  uad?: boolean;
  chunk_size?: number;
  concurrency?: number;
}

/**
 * Scores `table` in a background job of the daemon (`uq_score_table`), reporting progress until
 * it ends. `db`: a better-sqlite3 Database of a file, or the file's path. A job that ends
 * failed or cancelled rejects with an Error carrying its message.
 */
export declare function scoreTable(
  db: SqliteDatabase | string,
  table: string,
  options?: JobOptions | string,
  callbacks?: ScoreTableOptions
): Promise<ScoreTableResult>;

/** A unit to mark: its text or its span, and its score. */
export interface HighlightUnit {
  unit?: string | null;
  start?: number | null;
  end?: number | null;
  score: number | null;
  scorer?: string | null;
}

export interface HighlightOptions {
  /** A score below it is doubtful (default 0.5). */
  doubtful?: number;
  /** A score below it is unsupported (default 0.2). */
  unsupported?: number;
  /** "html" (default) or "text": [!…] unsupported, [?…] doubtful. */
  format?: 'html' | 'text';
  /** HTML: a key of the levels under the text. */
  legend?: boolean;
  /** A Database with uqlite loaded to run it on (default: an in-memory better-sqlite3 one). */
  db?: SqliteDatabase;
}

/** The answer with each unit marked by its score (`uq_highlight`); null for a null answer. */
export declare function highlight(
  answer: string | null,
  units: ReadonlyArray<HighlightUnit> | string,
  options?: HighlightOptions
): string | null;
