// import * as uqlite from 'uqlite': the ESM entry has the same API as require('uqlite').
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import * as uqlite from 'uqlite';
import uqliteDefault, { load, getLoadablePath } from 'uqlite';

const require = createRequire(import.meta.url);

test('the ESM namespace has the API', () => {
  for (const name of ['load', 'getLoadablePath', 'daemonPath', 'scoreRows', 'scoreTable', 'highlight']) {
    assert.equal(typeof uqlite[name], 'function', name);
  }
  assert.equal(uqliteDefault, require('uqlite'));
  assert.equal(load, require('uqlite').load);
  assert.equal(getLoadablePath(), require('uqlite').getLoadablePath());
});

test('load through the ESM entry', () => {
  const db = new Database(':memory:');
  assert.equal(uqlite.load(db), `v${uqlite.version}`);
  assert.deepEqual(db.prepare('SELECT idx, sentence FROM uq_sentences(?)').all('One. Two.'), [
    { idx: 0, sentence: 'One.' },
    { idx: 1, sentence: 'Two.' },
  ]);
  db.close();
});
