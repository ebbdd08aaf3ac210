'use strict';
// Two Node processes started together on a socket no daemon serves yet: the first call of each
// starts uqd (the package's, beside uq0.so) or finds the one the other started; both end up
// talking to one daemon.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { uqlite, tempDir } = require('./helpers.cjs');

const CHILD = `
const Database = require('better-sqlite3');
const uqlite = require('uqlite');
const db = new Database(':memory:');
uqlite.load(db);
const nli = JSON.parse(db.prepare('SELECT uq_nli(?, ?)').pluck().get('Paris is the capital of France.', 'Paris is in France.'));
const c = db.prepare('SELECT response_confidence(?, ?)').pluck().get('Paris is in France.', JSON.stringify(['Paris is the capital of France.']));
const debug = db.prepare('SELECT uq_debug()').pluck().get();
const field = (k) => (debug.match(new RegExp('^' + k + ': (.*)$', 'm')) || [])[1];
console.log(JSON.stringify({ pid: Number(field('daemon pid')), binary: field('uqd binary'), precision: field('precision'), entailment: nli.entailment, c }));
`;

function child(env) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', CHILD], { cwd: __dirname, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}: ${err}`))));
  });
}

test('two Node processes share one daemon', async () => {
  const socket = path.join(tempDir('uqlite-sock-'), 'uqd.sock');
  const env = { ...process.env, UQ_SOCKET: socket };
  const uqd = uqlite.daemonPath();
  try {
    const [a, b] = await Promise.all([child(env), child(env)]);
    assert.ok(a.pid > 0, JSON.stringify(a));
    assert.equal(a.pid, b.pid, 'both processes reach the same uqd');
    const status = JSON.parse(execFileSync(uqd, ['status', '--socket', socket], { encoding: 'utf8' }));
    assert.equal(status.pid, a.pid);
    assert.match(a.binary, new RegExp(`^${uqd.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `), 'the package\'s own uqd was started');
    assert.ok(a.entailment > 0.5 && Math.abs(a.entailment - b.entailment) < 1e-9);
    assert.ok(a.c > 0.5 && a.c === b.c);
  } finally {
    try {
      execFileSync(uqd, ['stop', '--socket', socket], { stdio: 'ignore' });
    } catch {
      // not running
    }
  }
});

test('the packed int8 variant of the NLI model is the one that runs', async () => {
  const fs = require('node:fs');
  const variants = path.join(path.dirname(uqlite.daemonPath()), 'models', 'variants');
  if (!fs.existsSync(variants)) {
    console.log('# no NLI variant packed (make setup wrote none): model.onnx runs');
    return;
  }
  const socket = path.join(tempDir('uqlite-sock-'), 'uqd.sock');
  try {
    const r = await child({ ...process.env, UQ_SOCKET: socket, UQ_PRECISION: 'auto', UQ_DEVICE: 'cpu' });
    assert.equal(r.precision, 'int8');
  } finally {
    try {
      execFileSync(uqlite.daemonPath(), ['stop', '--socket', socket], { stdio: 'ignore' });
    } catch {
      // not running
    }
  }
});
