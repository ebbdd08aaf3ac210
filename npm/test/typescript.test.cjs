'use strict';
// index.d.ts checked with `tsc --noEmit` on a small typed example (typed-example.ts).
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');

test('tsc --noEmit on the typed example', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const tsVersion = require('typescript/package.json').version;
  let out = '';
  try {
    out = execFileSync(process.execPath, [tsc, '--noEmit', '-p', __dirname], { cwd: __dirname, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc ${tsVersion} found errors:\n${e.stdout}${e.stderr}`);
  }
  assert.equal(out.trim(), '');
});
