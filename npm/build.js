#!/usr/bin/env node
'use strict';
/**
 * Builds the npm package `uqlite`: dist/npm/uqlite-<version>.tgz (`npm pack` of a staged copy).
 *
 *     make npm                          # = make setup, then this script
 *     node npm/build.js [--out DIR] [--nli-model DIR] [--force]
 *
 * No build step of its own: `make setup` has built dist/uq0.so and dist/uqd with cargo; this
 * script stages them with npm/'s JavaScript and declarations, the NLI model (--nli-model, else
 * UQ_NLI_MODEL, else dist/models/nli, the model setup linked, read through the link) with its
 * int8 variant when setup wrote one, the embedding model (dist/models/embed) and the ONNX Runtime
 * library (dist/lib), laid out as uqd's defaults look for them beside itself (models/nli,
 * models/variants/<key>, models/embed, lib/), then packs them with
 * `npm pack`. The version is the Cargo workspace's. Skipped when the .tgz is newer than every
 * input (--force packs anyway). See docs/reference.md, "Node.js".
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const NLI_FILES = ['model.onnx', 'tokenizer.json', 'config.json'];
const EMBED_FILES = ['model.onnx', 'tokenizer.json', 'config.json'];
const JS_FILES = ['index.js', 'index.mjs', 'index.d.ts', 'README.md'];
const CPU = { x64: 'x64', arm64: 'arm64' };

function die(msg) {
  process.stderr.write(`build npm: ${msg}\n`);
  process.exit(1);
}

function args() {
  const a = { out: path.join(DIST, 'npm'), nli: null, force: false };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') a.out = path.resolve(argv[++i]);
    else if (argv[i] === '--nli-model') a.nli = path.resolve(argv[++i]);
    else if (argv[i] === '--force') a.force = true;
    else die(`unknown argument ${argv[i]} (usage: node npm/build.js [--out DIR] [--nli-model DIR] [--force])`);
  }
  return a;
}

function workspaceVersion() {
  const text = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
  const m = text.match(/^\[workspace\.package\][^[]*?^version\s*=\s*"([^"]+)"/ms);
  if (!m) die('no [workspace.package] version in Cargo.toml');
  return m[1];
}

function need(file, fix) {
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) die(`${file} is missing: ${fix}`);
  return file;
}

/** The keyed directory of dist/models/variants holding model_opt_int8.onnx made from `model`. */
function findInt8Variant(model) {
  const root = path.join(DIST, 'models', 'variants');
  if (!fs.existsSync(root)) return null;
  const real = fs.realpathSync(model);
  const size = fs.statSync(real).size;
  for (const name of fs.readdirSync(root).sort()) {
    const dir = path.join(root, name);
    if (!name.endsWith(`-${size}`) || !fs.existsSync(path.join(dir, 'model_opt_int8.onnx'))) continue;
    let manifest;
    try {
      manifest = JSON.parse(fs.readFileSync(path.join(dir, 'variants.json'), 'utf8'));
    } catch {
      continue;
    }
    let source = null;
    try {
      source = fs.realpathSync(manifest.source);
    } catch {
      // made from a path that is gone
    }
    if (manifest.source_size === size && source === real && manifest.source_xxh3 && name === `onnx-${manifest.source_xxh3}-${size}`) {
      return { dir, manifest };
    }
  }
  return null;
}

function main() {
  const a = args();
  const version = workspaceVersion();
  const cpu = CPU[process.arch];
  if (process.platform !== 'linux' || !cpu) die(`packs linux builds only, this is ${process.platform} ${process.arch}`);

  // What goes in, as [path in the package, source file, executable].
  const files = [];
  for (const f of ['uq0.so', 'uqd']) files.push([f, need(path.join(DIST, f), 'run `make setup` first'), true]);
  // The NLI model: read through dist/models/nli's link (setup may point it at another model).
  const nliArg = a.nli || process.env.UQ_NLI_MODEL || path.join(DIST, 'models', 'nli');
  let nli;
  try {
    nli = fs.realpathSync(nliArg);
  } catch {
    die(`NLI model ${nliArg} does not exist: run \`make setup\` or set UQ_NLI_MODEL=DIR`);
  }
  for (const f of NLI_FILES) {
    files.push([`models/nli/${f}`, need(path.join(nli, f), `the NLI model ${nli} needs model.onnx, tokenizer.json and config.json (UQ_NLI_MODEL=DIR)`), false]);
  }
  // Its int8 variant, when `make setup` wrote one for this model.onnx (uqd models optimize): the
  // daemon's --precision auto runs it on the CPU (several times faster than model.onnx); packed
  // under the keyed directory uqd looks in (models/variants/onnx-<xxh3>-<size>), which checks its hash.
  const variant = findInt8Variant(path.join(nli, 'model.onnx'));
  if (variant) {
    files.push([`models/variants/${path.basename(variant.dir)}/model_opt_int8.onnx`, path.join(variant.dir, 'model_opt_int8.onnx'), false]);
  } else {
    process.stderr.write(`build npm: no int8 variant of ${nli}/model.onnx in ${path.join(DIST, 'models', 'variants')} (make setup writes it): packing model.onnx alone\n`);
  }
  for (const f of EMBED_FILES) {
    files.push([`models/embed/${f}`, need(path.join(DIST, 'models', 'embed', f), 'run `make setup` first'), false]);
  }
  // ONNX Runtime, under the name uqd's default looks for (lib/libonnxruntime.so.<version>).
  const libDir = path.join(DIST, 'lib');
  const ort = (fs.existsSync(libDir) ? fs.readdirSync(libDir) : []).filter((n) => /^libonnxruntime\.so\.\d+\.\d+\.\d+$/.test(n));
  if (ort.length !== 1) die(`expected one libonnxruntime.so.<version> in ${libDir}, found ${ort.length ? ort.join(', ') : 'none'}: run \`make setup\``);
  files.push([`lib/${ort[0]}`, path.join(libDir, ort[0]), false]);
  for (const f of JS_FILES) files.push([f, need(path.join(__dirname, f), 'npm/ is incomplete'), false]);

  const tgz = path.join(a.out, `uqlite-${version}.tgz`);
  const template = path.join(__dirname, 'package.json');
  const inputs = [...files.map((f) => f[1]), template, __filename];
  if (variant) inputs.push(path.join(variant.dir, 'variants.json'));
  const stamp = JSON.stringify({ nli, files: inputs.map((p) => [p, fs.statSync(p).size, fs.statSync(p).mtimeMs]) });
  const stampFile = path.join(a.out, '.inputs.json');
  if (!a.force && fs.existsSync(tgz) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) {
    console.log(`${tgz} ${fs.statSync(tgz).size} bytes (up to date; NLI model ${nli})`);
    return;
  }

  const stage = path.join(a.out, '.stage', 'uqlite');
  fs.rmSync(path.join(a.out, '.stage'), { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  for (const [rel, src, exe] of files) {
    const dest = path.join(stage, rel);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(src, dest);
    fs.chmodSync(dest, exe ? 0o755 : 0o644);
  }
  if (variant) {
    // Its manifest, listing the one variant packed.
    const m = { ...variant.manifest, files: { int8: 'model_opt_int8.onnx' } };
    fs.writeFileSync(path.join(stage, 'models', 'variants', path.basename(variant.dir), 'variants.json'), JSON.stringify(m, null, 2) + '\n');
  }
  const manifest = JSON.parse(fs.readFileSync(template, 'utf8'));
  manifest.version = version;
  manifest.cpu = [cpu];
  fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

  fs.mkdirSync(a.out, { recursive: true });
  for (const old of fs.readdirSync(a.out)) {
    if (/^uqlite-.*\.tgz$/.test(old)) fs.rmSync(path.join(a.out, old));
  }
  // npm pack names it uqlite-<version>.tgz; --ignore-scripts: the package has none anyway.
  execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', a.out], {
    cwd: stage,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  });
  if (!fs.existsSync(tgz)) die(`npm pack wrote no ${tgz}`);
  fs.rmSync(path.join(a.out, '.stage'), { recursive: true, force: true });
  fs.writeFileSync(stampFile, stamp);
  const unpacked = files.reduce((n, f) => n + fs.statSync(f[1]).size, 0);
  console.log(`${tgz} ${fs.statSync(tgz).size} bytes (unpacked ${unpacked} bytes; NLI model ${nli})`);
}

main();
