'use strict';
/**
 * uqlite for Node.js: loads the uqlite SQLite extension into a better-sqlite3 Database, in the
 * sqlite-vec style, plus small helpers that mirror the Python package's (docs/reference.md, "Node.js").
 *
 * The package carries the extension (uq0.so), its daemon (uqd), the default NLI model, the
 * embedding model and the ONNX Runtime library, laid out as uqd's defaults expect them beside
 * itself (lib/, models/nli, models/embed): the daemon that the extension starts on first use
 * finds them with no setting. UQ_NLI_MODEL, UQ_EMBED_MODEL, UQ_ORT_LIB, UQ_LOCAL_LLM and the
 * daemon's other settings, when set, win (the daemon inherits this process's environment).
 */
const fs = require('node:fs');
const path = require('node:path');

const pkg = require('./package.json');

/** The package version: that of uq_version() without its "v". */
const version = pkg.version;

const ENDED = new Set(['done', 'failed', 'cancelled']);

function platformError() {
  const os = (pkg.os || []).join(', ');
  const cpu = (pkg.cpu || []).join(', ');
  return new Error(
    `uqlite: this package carries uq0.so and uqd built for ${os} ${cpu}, not for ` +
      `${process.platform} ${process.arch}: build uqlite from source (make setup) and load its ` +
      `dist/uq0.so with db.loadExtension()`
  );
}

/** Full path of the loadable extension (uq0.so), as db.loadExtension() and sqlite3's .load take it. */
function getLoadablePath() {
  if ((pkg.os && !pkg.os.includes(process.platform)) || (pkg.cpu && !pkg.cpu.includes(process.arch))) {
    throw platformError();
  }
  const file = path.join(__dirname, 'uq0.so');
  if (!fs.existsSync(file)) {
    throw new Error(`uqlite: ${file} is missing: this is a source checkout, not the built package (make npm builds it)`);
  }
  return file;
}

/** Path of the uqd binary (uqd status, uqd stop, uqd score DB TABLE, uqd report DB). */
function daemonPath() {
  return path.join(__dirname, 'uqd');
}

function firstValue(row) {
  if (row == null) return undefined;
  const values = Object.values(row);
  return values[0];
}

/**
 * Loads uqlite into `db` (a better-sqlite3 Database; also a node:sqlite DatabaseSync opened with
 * allowExtension: true) and returns the loaded extension's version, e.g. "v0.1.0".
 */
function load(db) {
  if (!db || typeof db.loadExtension !== 'function' || typeof db.prepare !== 'function') {
    throw new TypeError(
      'uqlite.load(db): db must be a better-sqlite3 Database (new Database(file)) or a node:sqlite ' +
        `DatabaseSync opened with allowExtension: true; got ${db === null ? 'null' : typeof db}`
    );
  }
  const file = getLoadablePath();
  if (typeof db.enableLoadExtension === 'function') {
    // node:sqlite: extension loading is off until asked for; turned off again after.
    db.enableLoadExtension(true);
    try {
      db.loadExtension(file);
    } finally {
      db.enableLoadExtension(false);
    }
  } else {
    db.loadExtension(file);
  }
  return firstValue(db.prepare('SELECT uq_version()').get());
}

/** Whether uqlite's functions are registered on `db` already. */
function isLoaded(db) {
  try {
    db.prepare('SELECT uq_version()').get();
    return true;
  } catch (e) {
    if (/no such function/i.test(String(e && e.message))) return false;
    throw e;
  }
}

function ensureLoaded(db) {
  if (!isLoaded(db)) load(db);
}

function optionsObject(options, who) {
  if (options == null) return {};
  if (typeof options === 'string') {
    let parsed;
    try {
      parsed = JSON.parse(options);
    } catch (e) {
      throw new TypeError(`${who}: options is not JSON (${e.message}): ${options}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new TypeError(`${who}: options must be a JSON object, got ${options}`);
    }
    return parsed;
  }
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${who}: options must be an object or a JSON object string, got ${typeof options}`);
  }
  return { ...options };
}

function samplesJson(samples, i) {
  if (samples == null) return null; // SQL NULL: for scorers that compare no samples (grounded ones)
  if (typeof samples === 'string') return samples; // the extension checks it and names the argument
  if (Array.isArray(samples)) return JSON.stringify(samples.map(String));
  throw new TypeError(`uqlite.scoreRows: rows[${i}].samples is ${typeof samples}, not an array of sampled answers or a JSON array string`);
}

function sourcesValue(sources) {
  if (typeof sources === 'string') {
    if (sources.trimStart().startsWith('[')) {
      try {
        const parsed = JSON.parse(sources);
        if (Array.isArray(parsed)) return parsed;
      } catch {
        // a text that happens to start with "["
      }
    }
    return sources;
  }
  return sources; // an array of texts or {id, text} objects, or {fts: ...}: the extension checks it
}

function parseEvidence(value) {
  if (value == null) return null;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

/**
 * The unit scores of each row: one object per unit and scorer
 * ({row, unitIdx, unit, scorer, score, start, end, alignment, evidence}), rows in order.
 *
 * A row is an object {response (or answer), samples, sources} or a plain string (the response).
 * `samples`: an array of sampled answers or a JSON array string; absent or null: SQL NULL (for
 * scorers that compare none). `sources` (grounded scorers): a text, an array of texts or of
 * {id, text} objects, a JSON array string, or {fts: "docs", k: 5}; passed as that row's option
 * `sources` (over options'); null: options' own, else none (NULL grounded scores).
 * `options`: scoring options (object or JSON string). A row without a response is skipped.
 * An error of the extension is thrown as the SqliteError it is, its message prefixed with the row.
 */
function scoreRows(db, rows, options) {
  if (!Array.isArray(rows)) throw new TypeError('uqlite.scoreRows(db, rows, options): rows must be an array');
  ensureLoaded(db);
  const base = optionsObject(options, 'uqlite.scoreRows');
  const baseJson = JSON.stringify(base);
  const stmt = db.prepare(
    'SELECT unit_idx, unit, scorer, score, start, "end", alignment, evidence FROM uq_unit_scores(?, ?, ?)'
  );
  const out = [];
  rows.forEach((r, i) => {
    const row = typeof r === 'string' ? { response: r } : r;
    if (row == null || typeof row !== 'object') {
      throw new TypeError(`uqlite.scoreRows: rows[${i}] is ${row === null ? 'null' : typeof row}, not an object {response, samples, sources} or a string`);
    }
    const response = row.response !== undefined ? row.response : row.answer;
    if (response == null) return;
    let opts = baseJson;
    if (Object.prototype.hasOwnProperty.call(row, 'sources')) {
      const src = row.sources != null ? sourcesValue(row.sources) : base.sources !== undefined ? base.sources : [];
      opts = JSON.stringify({ ...base, sources: src });
    }
    let units;
    try {
      units = stmt.all(String(response), samplesJson(row.samples, i), opts);
    } catch (e) {
      if (e && typeof e.message === 'string') e.message = `row ${i}: ${e.message}`;
      throw e;
    }
    for (const u of units) {
      out.push({
        row: i,
        unitIdx: u.unit_idx,
        unit: u.unit,
        scorer: u.scorer,
        score: u.score,
        start: u.start,
        end: u.end,
        alignment: u.alignment,
        evidence: parseEvidence(u.evidence),
      });
    }
  });
  return out;
}

let highlightDb = null;

function defaultDb(who) {
  if (highlightDb) return highlightDb;
  let Database;
  try {
    Database = require('better-sqlite3');
  } catch {
    throw new Error(`${who} needs a database: pass options.db (a Database with uqlite loaded) or npm install better-sqlite3@12`);
  }
  const db = new Database(':memory:');
  load(db);
  highlightDb = db;
  return db;
}

/**
 * The answer with each unit marked by its score (uq_highlight): HTML, or with {format: "text"}
 * text with [!…] around unsupported and [?…] around doubtful pieces. `units`: an array of
 * {unit or start/end, score, scorer} (scoreRows' objects of one row fit) or a JSON array string.
 * `options`: uq_highlight's (doubtful, unsupported, format, legend), plus `db`: a Database with
 * uqlite loaded to run it on (default: an in-memory better-sqlite3 one; no daemon is needed).
 * Returns null for a null answer.
 */
function highlight(answer, units, options) {
  const opts = optionsObject(options, 'uqlite.highlight');
  let db = opts.db;
  delete opts.db;
  if (db) ensureLoaded(db);
  else db = defaultDb('uqlite.highlight');
  const unitsJson = typeof units === 'string' ? units : JSON.stringify(units);
  return firstValue(
    db.prepare('SELECT uq_highlight(?, ?, ?)').get(answer == null ? null : String(answer), unitsJson ?? null, JSON.stringify(opts))
  );
}

function bareTable(table) {
  return table.toLowerCase().startsWith('main.') ? table.slice(5) : table;
}

function sameJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function unfinishedJob(db, table, options) {
  let rows;
  try {
    rows = db
      .prepare(
        "SELECT job_id, options_json FROM uq_job WHERE lower(source_table) = lower(?) AND status IN ('queued', 'running') ORDER BY job_id DESC"
      )
      .all(bareTable(table));
  } catch (e) {
    if (/no such table/i.test(String(e && e.message))) return null; // no uqlite schema yet: no job
    throw e;
  }
  for (const r of rows) {
    let stored;
    try {
      stored = JSON.parse(r.options_json);
    } catch {
      continue;
    }
    if (stored && Object.entries(options).every(([k, v]) => sameJson(stored[k], v))) return r.job_id;
  }
  return null;
}

function grounded(options) {
  let scorers = options.scorers;
  if (typeof scorers === 'string') scorers = [scorers];
  const named = Array.isArray(scorers) && scorers.some((s) => String(s).startsWith('grounded_'));
  return named || 'sources' in options || 'sources_column' in options;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scores `table` in a background job of the daemon (uq_score_table) and resolves when it ends.
 *
 * `db`: a better-sqlite3 Database of a file (uqlite is loaded into it when it is not) or a file
 * path (opened with better-sqlite3 and closed after). `options`: job options (object or JSON
 * string). `onProgress({jobId, status, done, total, errors, resumed})` is called at once and
 * after each change, polling every `pollMs` (default 500) without blocking the event loop.
 * With `resume` (default true) an unfinished job over the same table whose options include
 * `options` is waited for instead of starting a new one. Resolves to
 * {jobId, runId, status, errors, resumed, units: [{sourceKey, unitIdx, unit, scorer, score, evidence}]};
 * a job that ends failed or cancelled rejects with an Error carrying its message.
 */
async function scoreTable(db, table, options, { onProgress, resume = true, pollMs = 500 } = {}) {
  if (typeof table !== 'string' || !table) throw new TypeError('uqlite.scoreTable(db, table, options): table must be a table name');
  const opts = optionsObject(options, 'uqlite.scoreTable');
  let own = false;
  if (typeof db === 'string') {
    let Database;
    try {
      Database = require('better-sqlite3');
    } catch {
      throw new Error('uqlite.scoreTable(path, …) needs better-sqlite3: npm install better-sqlite3@12, or pass an open Database');
    }
    db = new Database(db, { timeout: 30000 });
    own = true;
  }
  try {
    ensureLoaded(db);
    let jobId = resume ? unfinishedJob(db, table, opts) : null;
    const resumed = jobId != null;
    if (!resumed) jobId = firstValue(db.prepare('SELECT uq_score_table(?, ?)').get(table, JSON.stringify(opts)));
    const jobStmt = db.prepare('SELECT status, done, total, errors, run_id, message FROM uq_job WHERE job_id = ?');
    const waitStmt = db.prepare('SELECT uq_wait(?, 0)');
    let last = null;
    let job;
    for (;;) {
      job = jobStmt.get(jobId);
      if (!job) throw new Error(`uqlite.scoreTable: job ${jobId} is not in uq_job`);
      const state = { jobId, status: job.status, done: job.done, total: job.total, errors: job.errors, resumed };
      if (onProgress && !sameJson(state, last)) onProgress(state);
      last = state;
      if (ENDED.has(job.status)) break;
      // uq_wait(id, 0) answers at once; it also restarts a job that no daemon runs (a killed daemon).
      // (better-sqlite3 binds a number as REAL; uq_wait takes an INTEGER id: a BigInt binds as one.)
      waitStmt.get(BigInt(jobId));
      await sleep(pollMs);
    }
    if (job.status !== 'done') {
      const err = new Error(`job ${jobId} ${job.status}: ${job.message}`);
      err.jobId = jobId;
      err.status = job.status;
      throw err;
    }
    const withEvidence = grounded(opts);
    const units = db
      .prepare(
        'SELECT a.source_key, u.position, u.text, s.scorer, s.score, s.evidence ' +
          'FROM uq_answer a JOIN uq_unit u ON u.answer_id = a.answer_id ' +
          'JOIN uq_unit_score s ON s.unit_id = u.unit_id ' +
          'WHERE a.run_id = ? AND lower(a.source_table) = lower(?) ' +
          'ORDER BY a.answer_id, u.position, s.scorer'
      )
      .all(job.run_id, bareTable(table))
      .map((r) => ({
        sourceKey: r.source_key,
        unitIdx: r.position,
        unit: r.text,
        scorer: r.scorer,
        score: r.score,
        evidence: withEvidence ? parseEvidence(r.evidence) : null,
      }));
    return { jobId, runId: job.run_id, status: job.status, errors: job.errors, resumed, units };
  } finally {
    if (own) db.close();
  }
}

module.exports = { version, load, getLoadablePath, daemonPath, scoreRows, scoreTable, highlight };
