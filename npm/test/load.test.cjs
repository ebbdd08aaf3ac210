'use strict';
// require('uqlite'): load into better-sqlite3, uq_version(), the paths, errors as Errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Database, uqlite } = require('./helpers.cjs');

test('node and better-sqlite3 are the tested ones', () => {
  const major = Number(process.versions.node.split('.')[0]);
  if (major !== 20) console.log(`# found Node ${process.version} (${process.execPath}), not Node 20: the tests were written on Node 20`);
  const bsVersion = require('better-sqlite3/package.json').version;
  assert.match(bsVersion, /^12\./, `better-sqlite3 ${bsVersion}, not 12.x (13.x needs Node 22; this is Node ${process.version})`);
});

test('load returns the version uq_version() gives', () => {
  const db = new Database(':memory:');
  const v = uqlite.load(db);
  assert.equal(v, `v${uqlite.version}`);
  assert.equal(db.prepare('SELECT uq_version()').pluck().get(), v);
  db.close();
});

test('getLoadablePath and daemonPath point into the installed package', () => {
  const so = uqlite.getLoadablePath();
  assert.equal(path.basename(so), 'uq0.so');
  assert.ok(fs.statSync(so).isFile());
  assert.match(so, /node_modules[\\/]uqlite[\\/]uq0\.so$/);
  const uqd = uqlite.daemonPath();
  assert.equal(path.dirname(uqd), path.dirname(so));
  fs.accessSync(uqd, fs.constants.X_OK);
  // The plain better-sqlite3 way works as well.
  const db = new Database(':memory:');
  db.loadExtension(so);
  assert.equal(db.prepare('SELECT uq_version()').pluck().get(), `v${uqlite.version}`);
  db.close();
});

test('load refuses what is not a database', () => {
  assert.throws(() => uqlite.load({}), { name: 'TypeError', message: /better-sqlite3 Database/ });
});

test('a bad option reaches JavaScript as an Error with the extension message', () => {
  const db = new Database(':memory:');
  uqlite.load(db);
  assert.throws(
    () => db.prepare("SELECT * FROM uq_unit_scores('Paris is in France.', '[]', '{\"bogus\":1}')").all(),
    (e) => {
      assert.ok(e instanceof Error);
      assert.equal(e.code, 'SQLITE_ERROR');
      assert.match(e.message, /^uq_unit_scores: unknown option "bogus" in options_json: valid options are granularity, scorers/);
      return true;
    }
  );
  // Through a helper too, with the row named.
  assert.throws(() => uqlite.scoreRows(db, [{ response: 'Paris is in France.', samples: [] }], { bogus: 1 }), {
    message: /^row 0: uq_unit_scores: unknown option "bogus"/,
  });
  assert.throws(() => db.prepare("SELECT uq_highlight('A b.', '[{\"unit\":\"A b.\",\"score\":2}]')").get(), (e) =>
    e instanceof Error && /^uq_highlight: /.test(e.message)
  );
  db.close();
});
