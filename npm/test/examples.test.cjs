'use strict';
// examples/rag.js and the example of docs/reference.md's "Node.js" section, run as they are
// against the installed package (UQLITE_REPO: the repository, set by scripts/node-tests.sh).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const REPO = process.env.UQLITE_REPO;
// node_modules of this folder: where uqlite and better-sqlite3 are installed.
const MODULES = path.resolve(path.dirname(require.resolve('uqlite/package.json')), '..');

function run(file, args = []) {
  return execFileSync(process.execPath, [file, ...args], {
    cwd: __dirname,
    encoding: 'utf8',
    env: { ...process.env, NODE_PATH: MODULES },
  });
}

test('examples/rag.js', { skip: !REPO && 'UQLITE_REPO is not set' }, () => {
  const out = run(path.join(REPO, 'examples', 'rag.js'));
  process.stdout.write(out);
  assert.match(out, /^A: Penicillin was discovered by Alexander Fleming in 1928\. \[!Fleming later became the mayor of London\.\]$/m);
  assert.match(out, /^A: Marie Curie was born in Warsaw in 1867\. She won the Nobel Prize in Physics in 1903\.$/m);
  assert.match(out, /^weakest sentence: 0\.\d\d; kept: "Penicillin was discovered by Alexander Fleming in 1928\."$/m);
  assert.match(out, /^ {3}0\.\d\d supported {4}Penicillin was discovered/m);
  const own = run(path.join(REPO, 'examples', 'rag.js'), ['Where is Mount Everest?', 'Mount Everest stands on the border between Nepal and China.']);
  assert.match(own, /^retrieved: doc 3/m);
  assert.match(own, /supported +Mount Everest stands on the border/);
});

test('the examples of docs/reference.md, "Node.js"', { skip: !REPO && 'UQLITE_REPO is not set' }, () => {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'reference.md'), 'utf8');
  const start = doc.indexOf('\n## Node.js\n');
  assert.ok(start >= 0, 'docs/reference.md has a "## Node.js" section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start + 1, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 1, 'the section has ```js examples');
  blocks.forEach((code, i) => {
    const file = path.join(__dirname, `reference-example-${i + 1}.cjs`);
    fs.writeFileSync(file, code);
    const out = run(file);
    process.stdout.write(out.replace(/^(?=.)/gm, `example ${i + 1}: `));
    // Each "// → line" comment is a line the example prints (numbers 0.dd as any 0.dd).
    const expected = [...code.matchAll(/^\s*\/\/ → (.*)$/gm)].map((m) => m[1]);
    assert.ok(expected.length >= 1, `example ${i + 1} says what it prints`);
    for (const line of expected) {
      const pattern = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\b0\\\.\d+/g, '0\\.\\d+');
      assert.match(out, new RegExp(`^${pattern}$`, 'm'), `example ${i + 1} prints "${line}"`);
    }
  });
});
