'use strict';
// Scoring through the real extension and daemon: a grounded check against an FTS5 table,
// response_confidence with samples, uq_highlight, and the helpers scoreRows and highlight.
const test = require('node:test');
const assert = require('node:assert/strict');
const { uqlite, memoryDb, RAG_ANSWER, INVENTED, ragTables } = require('./helpers.cjs');

const GROUNDED_FTS = '{"scorers":["grounded_entailment"],"sources":{"fts":"docs","k":5}}';
const ANSWER = 'Marie Curie was a physicist. She was born in Vienna.';
const CONSISTENT = 'Marie Curie was a physicist. She was born in Warsaw.';
const SAMPLES = [
  'Marie Curie, a physicist, was born in Warsaw.',
  'Born in Warsaw, Marie Curie became a physicist.',
  'Marie Curie was a Polish physicist born in Warsaw.',
];

test('a grounded check against an FTS5 table', () => {
  const db = memoryDb();
  ragTables(db);
  const units = db
    .prepare('SELECT unit_idx, unit, scorer, score, evidence FROM uq_unit_scores(?, NULL, ?) ORDER BY unit_idx')
    .all(RAG_ANSWER, GROUNDED_FTS);
  assert.equal(units.length, 2);
  assert.equal(units[0].unit, 'Penicillin was discovered by Alexander Fleming in 1928.');
  assert.equal(units[1].unit, INVENTED);
  assert.ok(units[0].score > 0.7, `the supported sentence scores ${units[0].score}`);
  assert.ok(units[1].score < 0.3, `the invented sentence scores ${units[1].score}`);
  const ev = JSON.parse(units[0].evidence);
  assert.equal(ev.verdict, 'supported');
  assert.equal(ev.passage_id, '1'); // the rowid of the FTS5 passage about penicillin
  // The answer's weakest sentence, as one number.
  const weakest = db
    .prepare(`SELECT response_confidence(?, NULL, '{"scorers":["grounded_entailment"],"aggregation":"min","sources":{"fts":"docs","k":5}}')`)
    .pluck()
    .get(RAG_ANSWER);
  assert.ok(Math.abs(weakest - units[1].score) < 1e-9, `min ${weakest} vs ${units[1].score}`);
  db.close();
});

test('response_confidence with samples', () => {
  const db = memoryDb();
  const conf = db.prepare('SELECT response_confidence(?, ?) AS c');
  const wrong = conf.get(ANSWER, JSON.stringify(SAMPLES)).c;
  const right = conf.get(CONSISTENT, JSON.stringify(SAMPLES)).c;
  assert.equal(typeof wrong, 'number');
  assert.ok(wrong >= 0 && wrong <= 1 && right >= 0 && right <= 1);
  assert.ok(right > 0.8, `the answer the samples agree with: ${right}`);
  assert.ok(wrong < right - 0.2, `"born in Vienna" against samples saying Warsaw: ${wrong} (vs ${right})`);
  const min = db.prepare(`SELECT response_confidence(?, ?, '{"aggregation":"min"}')`).pluck().get(ANSWER, JSON.stringify(SAMPLES));
  assert.ok(min < 0.2, `min over the units: ${min}`);
  db.close();
});

test('uq_highlight marks the unsupported sentence in text', () => {
  const db = memoryDb();
  ragTables(db);
  const text = db
    .prepare(`SELECT uq_highlight(?, unit, score, scorer, '{"format":"text"}') FROM uq_unit_scores(?, NULL, ?)`)
    .pluck()
    .get(RAG_ANSWER, RAG_ANSWER, GROUNDED_FTS);
  assert.equal(text, `Penicillin was discovered by Alexander Fleming in 1928. [!${INVENTED}]`);
  db.close();
});

test('scoreRows: one object per unit and scorer, with samples or sources', () => {
  const db = memoryDb();
  ragTables(db);
  const rows = uqlite.scoreRows(
    db,
    [
      { response: ANSWER, samples: SAMPLES },
      { response: null },
      { response: CONSISTENT, samples: JSON.stringify(SAMPLES) },
    ],
    { scorers: ['entailment', 'noncontradiction'] }
  );
  const order = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2].localeCompare(b[2]);
  assert.deepEqual(
    rows.map((r) => [r.row, r.unitIdx, r.scorer]).sort(order),
    [
      [0, 0, 'entailment'], [0, 0, 'noncontradiction'], [0, 1, 'entailment'], [0, 1, 'noncontradiction'],
      [2, 0, 'entailment'], [2, 0, 'noncontradiction'], [2, 1, 'entailment'], [2, 1, 'noncontradiction'],
    ]
  );
  const vienna = rows.find((r) => r.row === 0 && r.unitIdx === 1 && r.scorer === 'entailment');
  assert.equal(vienna.unit, 'She was born in Vienna.');
  assert.equal(ANSWER.slice(vienna.start, vienna.end), vienna.unit);
  assert.equal(vienna.evidence, null);
  assert.ok(vienna.score < 0.3, `${vienna.score}`);

  const grounded = uqlite.scoreRows(
    db,
    [RAG_ANSWER, { response: RAG_ANSWER, sources: ['Penicillin was discovered by Alexander Fleming in 1928.'] }],
    { scorers: ['grounded_entailment'], sources: { fts: 'docs', k: 5 } }
  );
  assert.equal(grounded.length, 4);
  for (const r of grounded) {
    assert.equal(typeof r.evidence, 'object');
    assert.ok(['supported', 'silent', 'contradicted'].includes(r.evidence.verdict));
  }
  assert.deepEqual(grounded.map((r) => r.evidence.verdict === 'supported'), [true, false, true, false]);
  // The row's sources decide: passage 0 of its own list, not FTS5 rowid 1.
  assert.equal(grounded[2].evidence.passage, 0);
  db.close();
});

test('highlight: text and HTML', () => {
  const db = memoryDb();
  ragTables(db);
  const units = uqlite.scoreRows(db, [{ response: RAG_ANSWER, sources: { fts: 'docs', k: 5 } }], { scorers: ['grounded_entailment'] });
  assert.equal(
    uqlite.highlight(RAG_ANSWER, units, { format: 'text' }),
    `Penicillin was discovered by Alexander Fleming in 1928. [!${INVENTED}]`
  );
  const html = uqlite.highlight(RAG_ANSWER, units, { db });
  assert.match(html, /^<div class="uq-highlight"/);
  assert.match(html, /uq-unsupported/);
  assert.equal(uqlite.highlight(null, units), null);
  assert.equal(uqlite.highlight('A b. C d.', '[{"unit":"C d.","score":0.25}]', { format: 'text' }), 'A b. [?C d.]');
  assert.throws(() => uqlite.highlight('A b.', [{ unit: 'A b.', score: 2 }]), (e) => e instanceof Error && /^uq_highlight: /.test(e.message));
  db.close();
});
