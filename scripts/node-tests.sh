#!/usr/bin/env bash
# The npm package's tests, run by `make test` after the cargo tests (docs/reference.md, "Node.js").
#
#   bash scripts/node-tests.sh        # after `make setup`; UQ_KEEP=1 keeps the test folder
#
# 1. Node and npm (apt-get installs Debian's when missing); the test dependencies, installed the
#    first time from the npm registry into .cache/node-tests and reused: better-sqlite3 12.x
#    (13.x needs Node 22; its prebuilt binary comes from GitHub, unreachable here, so it builds
#    from source with node-gyp: python3, make, g++ and the Node headers), typescript and types.
# 2. dist/npm/uqlite-<version>.tgz (npm/build.js; skipped when up to date).
# 3. `npm install --offline` of that .tgz into an empty folder (no network at all: the package has
#    no dependencies; better-sqlite3 is linked in from the cache), then npm/test/*.test.* run there
#    with `node --test`, against the real extension and the package's own daemon on a socket of
#    their own (stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache/node-tests
# Pinned test dependencies: better-sqlite3 12.x is the last to support Node 20.
DEPS='"better-sqlite3": "12.11.1", "typescript": "5.9.3", "@types/better-sqlite3": "9.6.0", "@types/node": "20.19.43"'

say() { printf 'node-tests: %s\n' "$*" >&2; }

# 1. Node, npm and the test dependencies.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "installing nodejs and npm with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
node_version=$(node --version)
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  say "found Node $node_version at $(command -v node): the package and better-sqlite3 12.x need Node 20 or later"
  exit 1
elif [ "$major" != 20 ]; then
  say "found Node $node_version at $(command -v node), not Node 20 (what these tests were written on): going on with it"
fi
# node-gyp builds better-sqlite3 against the headers of this Node; it would download them, which
# fails offline, unless it is pointed at installed ones (NodeSource's nodejs ships them; Debian's
# are in libnode-dev).
nodedir=
for d in "$(dirname "$(dirname "$(command -v node)")")" /usr /usr/local; do
  if [ -f "$d/include/node/node.h" ] && [ -f "$d/include/node/common.gypi" ]; then nodedir=$d; break; fi
done
if [ -z "$nodedir" ] && command -v apt-get >/dev/null && dpkg -s nodejs >/dev/null 2>&1 && ! dpkg -s libnode-dev >/dev/null 2>&1; then
  say "installing libnode-dev (Node's headers, for building better-sqlite3) with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnode-dev || true
  [ -f /usr/include/node/node.h ] && nodedir=/usr
fi
stamp="node $node_version; $DEPS"
if [ "$(cat "$CACHE/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -f "$CACHE/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]; then
  say "installing the test dependencies into $CACHE (better-sqlite3 builds from source: a few minutes)"
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  printf '{ "name": "uqlite-node-tests", "private": true, "version": "0.0.0", "dependencies": { %s } }\n' "$DEPS" >"$CACHE/package.json"
  t0=$SECONDS
  (cd "$CACHE" && env ${nodedir:+npm_config_nodedir=$nodedir} npm_config_update_notifier=false \
    nice -n 19 npm install --no-audit --no-fund --foreground-scripts >"$CACHE/install.log" 2>&1) || {
    tail -30 "$CACHE/install.log" >&2
    say "npm install of the test dependencies failed with Node $node_version (log: $CACHE/install.log)"
    exit 1
  }
  if [ ! -f "$CACHE/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]; then
    # An npm that skipped the install script: build it now.
    (cd "$CACHE/node_modules/better-sqlite3" && env ${nodedir:+npm_config_nodedir=$nodedir} nice -n 19 npx --no node-gyp rebuild --release >>"$CACHE/install.log" 2>&1) || {
      tail -30 "$CACHE/install.log" >&2; say "better-sqlite3 could not be built with Node $node_version"; exit 1; }
  fi
  echo "$stamp" >"$CACHE/.stamp"
  say "test dependencies installed in $((SECONDS - t0)) s"
fi

# 2. The package.
node npm/build.js
tgz=$(ls dist/npm/uqlite-*.tgz | head -1)

# 3. An empty folder, the package installed offline, the tests.
APP=$(mktemp -d "${TMPDIR:-/tmp}/uqlite-node.XXXXXX")
SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/uqlite-sock.XXXXXX")
cleanup() {
  [ -x "$APP/node_modules/uqlite/uqd" ] && "$APP/node_modules/uqlite/uqd" stop --socket "$SOCKDIR/uqd.sock" >/dev/null 2>&1 || true
  rm -rf "$SOCKDIR"
  if [ "${UQ_KEEP:-}" = 1 ]; then say "kept $APP"; else rm -rf "$APP"; fi
}
trap cleanup EXIT
printf '{ "name": "uqlite-node-test-app", "private": true, "version": "0.0.0" }\n' >"$APP/package.json"
t0=$EPOCHREALTIME
(cd "$APP" && npm install --offline --no-audit --no-fund --loglevel=error "$ROOT/$tgz" >/dev/null)
t1=$EPOCHREALTIME
say "npm install --offline $(basename "$tgz") ($(($(stat -c %s "$tgz") / 1000000)) MB) into an empty folder: $(node -p "($t1 - $t0).toFixed(1)") s"
for dep in "$CACHE"/node_modules/*; do
  [ -e "$APP/node_modules/$(basename "$dep")" ] || ln -s "$dep" "$APP/node_modules/"
done
cp npm/test/* "$APP/"
cd "$APP"
# A daemon start (loading the models) can take minutes on a busy machine: wait up to 5 minutes.
UQ_SOCKET=$SOCKDIR/uqd.sock UQLITE_REPO=$ROOT UQ_START_TIMEOUT_MS=${UQ_START_TIMEOUT_MS:-300000} \
  node --test --test-concurrency=1 ./*.test.cjs ./*.test.mjs
