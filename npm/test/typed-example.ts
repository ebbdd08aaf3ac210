// A small typed use of the package: checked by `tsc --noEmit` (typescript.test.cjs), not run.
import Database from 'better-sqlite3';
import * as uqlite from 'uqlite';
import type { JobProgress, ScoreTableResult, UnitScore } from 'uqlite';

const db = new Database(':memory:');
const version: string = uqlite.load(db);
const so: string = uqlite.getLoadablePath();
const uqd: string = uqlite.daemonPath();

const units: UnitScore[] = uqlite.scoreRows(
  db,
  [
    { response: 'Marie Curie was born in Vienna.', samples: ['Marie Curie was born in Warsaw.'] },
    { response: 'Penicillin was discovered in 1928.', sources: { fts: 'docs', k: 5 } },
    'A plain response.',
  ],
  { scorers: ['entailment'], aggregation: 'min' }
);
const worst: number | null = units.length ? units[0].score : null;
const verdict: string | undefined = units[0]?.evidence?.verdict;

const html: string | null = uqlite.highlight('Marie Curie was born in Vienna.', units, { format: 'text', doubtful: 0.6 });

async function job(file: string): Promise<number> {
  const result: ScoreTableResult = await uqlite.scoreTable(file, 'answers', { sources_column: 'context', scorers: ['grounded_entailment'] }, {
    onProgress: (p: JobProgress) => console.log(`${p.done}/${p.total} ${p.status}`),
    pollMs: 250,
  });
  return result.units.filter((u) => (u.score ?? 0) < 0.5).length;
}

const confidence = db.prepare('SELECT response_confidence(?, ?) AS c').get('a', '["b"]') as { c: number | null };

// What the declarations refuse.
// @ts-expect-error: load takes a database
uqlite.load('answers.db');
// @ts-expect-error: onProgress gets a JobProgress
void uqlite.scoreTable(db, 'answers', {}, { onProgress: (p: string) => p });
// @ts-expect-error: format is "html" or "text"
uqlite.highlight('a', [], { format: 'markdown' });

export { version, so, uqd, worst, verdict, html, job, confidence };
