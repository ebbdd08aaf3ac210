'use strict';
// scoreTable: a uq_score_table job over a table of a database file, with progress to its end.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Database, uqlite, tempDir, PASSAGES, INVENTED } = require('./helpers.cjs');

function answersDb() {
  const file = path.join(tempDir('uqlite-job-'), 'rag.db');
  const db = new Database(file);
  db.exec('CREATE TABLE answers(id INTEGER PRIMARY KEY, question TEXT, answer TEXT, context TEXT)');
  const ins = db.prepare('INSERT INTO answers(question, answer, context) VALUES (?, ?, ?)');
  ins.run('Who discovered penicillin?', `Penicillin was discovered by Alexander Fleming in 1928. ${INVENTED}`, PASSAGES[0]);
  ins.run('Where was Marie Curie born?', PASSAGES[1], PASSAGES[1]);
  ins.run('Where is Mount Everest?', 'Bananas are a good source of potassium.', PASSAGES[2]);
  return { db, file };
}

const OPTIONS = { sources_column: 'context', scorers: ['grounded_entailment'], aggregation: 'min', chunk_size: 1 };

test('a job with progress to its end', async () => {
  const { db } = answersDb();
  const seen = [];
  const result = await uqlite.scoreTable(db, 'answers', OPTIONS, { onProgress: (p) => seen.push(p), pollMs: 100 });
  assert.ok(seen.length >= 1);
  const last = seen[seen.length - 1];
  assert.deepEqual(last, { jobId: result.jobId, status: 'done', done: 3, total: 3, errors: 0, resumed: false });
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done, 'progress never goes back');
  assert.equal(result.status, 'done');
  assert.equal(result.resumed, false);
  assert.equal(result.units.length, 5);
  const invented = result.units.find((u) => u.unit === INVENTED);
  assert.equal(invented.sourceKey, '1');
  assert.ok(invented.score < 0.3, `${invented.score}`);
  assert.equal(invented.evidence.verdict, 'silent');
  const jobs = db.prepare('SELECT status, done, total FROM uq_jobs WHERE job_id = ?').get(result.jobId);
  assert.deepEqual(jobs, { status: 'done', done: 3, total: 3 });
  const weakest = db.prepare("SELECT source_key, score FROM uq_scored_answers WHERE aggregation = 'min' ORDER BY score").all();
  assert.equal(weakest.length, 3);
  db.close();
});

test('scoreTable by path; the extension error of a bad job option rejects', async () => {
  const { db, file } = answersDb();
  db.close();
  const result = await uqlite.scoreTable(file, 'answers', OPTIONS, { pollMs: 100 });
  assert.equal(result.units.length, 5);
  await assert.rejects(uqlite.scoreTable(file, 'answers', { ...OPTIONS, sources_column: 'nope' }), (e) => {
    assert.ok(e instanceof Error);
    assert.match(e.message, /nope/);
    return true;
  });
  await assert.rejects(uqlite.scoreTable(file, 'no_such_table', OPTIONS), /no_such_table|no table|no such table/i);
});
