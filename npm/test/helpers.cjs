'use strict';
// Shared by the tests of the npm package (scripts/node-tests.sh copies npm/test/ into the folder
// where it installed dist/npm/uqlite-<version>.tgz, so `require('uqlite')` is the installed one).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const Database = require('better-sqlite3');
const uqlite = require('uqlite');

/** A fresh temporary directory (0700), removed at exit. */
function tempDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** An in-memory database with uqlite loaded. */
function memoryDb() {
  const db = new Database(':memory:');
  uqlite.load(db);
  return db;
}

/** The passages and answers of docs/reference.md's "Checking RAG answers". */
const PASSAGES = [
  'Penicillin was discovered by Alexander Fleming in 1928. It was the first widely used antibiotic.',
  'Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.',
  'Mount Everest is the highest mountain above sea level. It stands on the border between Nepal and China.',
];
const INVENTED = 'Fleming later became the mayor of London.';
const RAG_ANSWER = `Penicillin was discovered by Alexander Fleming in 1928. ${INVENTED}`;

function ragTables(db) {
  db.exec('CREATE VIRTUAL TABLE docs USING fts5(body)');
  const ins = db.prepare('INSERT INTO docs(body) VALUES (?)');
  for (const p of PASSAGES) ins.run(p);
}

module.exports = { Database, uqlite, tempDir, memoryDb, PASSAGES, INVENTED, RAG_ANSWER, ragTables };
