#!/usr/bin/env node
// A small RAG loop in JavaScript, checked by uqlite: retrieve passages from an FTS5 table, take
// the answer your LLM wrote from them, and score each of its sentences against those passages
// (grounded_entailment: the NLI model alone, no sampled answers, no LLM call). Prints the answer
// with its unsupported sentences marked [!…], each sentence's support, and the answer with them
// dropped.
//
//     npm install better-sqlite3@12 ./dist/npm/uqlite-0.1.0.tgz    # make npm writes the .tgz
//     node examples/rag.js                       # the built-in questions and answers
//     node examples/rag.js "QUESTION" "ANSWER"   # check your own answer against the passages
//
// docs/reference.md, "Node.js" and "Checking RAG answers".
'use strict';
const Database = require('better-sqlite3');
const uqlite = require('uqlite');

const PASSAGES = [
  'Penicillin was discovered by Alexander Fleming in 1928. It was the first widely used antibiotic.',
  'Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.',
  'Mount Everest is the highest mountain above sea level. It stands on the border between Nepal and China.',
  'The Amazon is the largest rainforest on Earth. Most of it lies in Brazil.',
];

// What an LLM answered from the retrieved passages (one answer invents a detail).
const QA = [
  ['Who discovered penicillin?', 'Penicillin was discovered by Alexander Fleming in 1928. Fleming later became the mayor of London.'],
  ['Where was Marie Curie born?', 'Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.'],
];

const db = new Database(':memory:');
uqlite.load(db);
db.exec('CREATE VIRTUAL TABLE docs USING fts5(body)');
const insert = db.prepare('INSERT INTO docs(body) VALUES (?)');
for (const p of PASSAGES) insert.run(p);

// Retrieval: the question's content words as a safe FTS5 query, best 2 passages by bm25.
const retrieve = db.prepare('SELECT rowid AS id, body AS text FROM docs WHERE docs MATCH uq_fts_query(?) ORDER BY rank LIMIT 2');
// The LLM-free sentence filter: keeps the sentences with support ≥ 0.5, in order, unchanged.
const filter = db.prepare('SELECT uad_filter(?, NULL, ?)');

const qa = process.argv.length >= 4 ? [[process.argv[2], process.argv[3]]] : QA;
for (const [question, answer] of qa) {
  const passages = retrieve.all(question).map((p) => ({ id: String(p.id), text: p.text }));
  const units = uqlite.scoreRows(db, [{ response: answer, sources: passages }], { scorers: ['grounded_entailment'] });
  const options = JSON.stringify({ granularity: 'sentence', scorers: ['grounded_entailment'], sources: passages, threshold: 0.5 });
  const kept = filter.pluck().get(answer, options);
  const weakest = Math.min(...units.map((u) => u.score ?? 0));
  console.log(`Q: ${question}`);
  console.log(`retrieved: ${passages.map((p) => `doc ${p.id}`).join(', ') || 'nothing'}`);
  console.log(`A: ${uqlite.highlight(answer, units, { format: 'text', db })}`);
  for (const u of units) {
    const score = u.score == null ? ' n/a' : u.score.toFixed(2);
    console.log(`   ${score} ${u.evidence.verdict.padEnd(12)} ${u.unit}`);
  }
  console.log(`weakest sentence: ${weakest.toFixed(2)}; kept: ${JSON.stringify(kept)}`);
  console.log();
}
