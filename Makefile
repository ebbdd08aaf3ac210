# uqlite: `make demo` (set up + score an example), `make check` (the fast tier), `make test` (the
# full suite), `make bench`, `make bench-suite`, `make wheel`, `make npm`.
SHELL := /bin/bash
SQLITE ?= /usr/bin/sqlite3
SAMPLES ?= 5
DATA ?= ../shared/data

.PHONY: setup demo check test bench bench-suite wheel npm clean nli-env nli-smoke nli-model nli-v3 nli-v4 nli-fast

setup:
	@bash scripts/setup.sh

demo: setup
	@$(SQLITE) :memory: < examples/demo.sql

# The fast tier, for an edit: formatting, the source's shape (scripts/structure.py --check: no
# import cycle between files, no stray UQ_* read, no non-test file over 450 lines but tables of
# data, no non-test function over 80 lines; scripts/test_structure.py checks those checks), clippy with
# warnings denied, every unit test and the integration tests that start no daemon (core's property
# and protocol tests, the report), in the debug profile, without `make setup`'s release builds.
# `make test` is the full suite (CI, the README).
check:
	cargo fmt --all --check
	cd ext && cargo fmt --check
	python3 scripts/structure.py --check
	python3 scripts/test_structure.py
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cd ext && cargo clippy --all-targets --quiet -- -D warnings
	cargo test --workspace --lib --quiet
	cargo test -p uq-core --test pure --quiet
	cargo test -p uqd --test engine --quiet -- report::
	cd ext && cargo test --lib --quiet

test: setup
	bash scripts/llama-server.sh || echo "make test: the llama-cpp-python server could not be installed; tests/tests/e2e/openai_server.rs will fail" >&2
	bash scripts/triton-server.sh || echo "make test: PyTriton could not be installed; tests/tests/e2e/triton.rs will fail" >&2
	cargo test --release --workspace
	cd ext && cargo test --release
	bash scripts/node-tests.sh

# The Python package and the Datasette plugin: dist/python/*.whl (python/build_wheel.py).
wheel: setup
	@python3 python/build_wheel.py --out dist/python

# The Node.js package for better-sqlite3: dist/npm/uqlite-<version>.tgz (npm/build.js).
npm: setup
	@node npm/build.js --out dist/npm

bench: setup
	dist/uqd bench table --data $(DATA)/selfcheck_wikibio_dev.jsonl --samples $(SAMPLES)
	dist/uqd bench selfcheck --data $(DATA)/selfcheck_wikibio_dev.jsonl --samples $(SAMPLES)

# The evaluation suite (docs/reference.md, "The evaluation suite"): every shared evaluation file,
# figures with intervals; compare two runs with dist/uqd bench suite --compare A.json B.json.
bench-suite: setup
	@mkdir -p .cache/suite
	dist/uqd bench suite --data-dir $(DATA) --samples $(SAMPLES) --json .cache/suite/suite.json

# The NLI model recipe (models/nli/README.md): a private PyTorch environment (.cache/nli-train,
# ~5.5 GB installed, 3.1 GB downloaded, with PyTorch's CUDA wheels; Debian's wordnet-base), not part
# of `make test`. nli-smoke (a few hundred pairs, CI) checks the generators' invariants
# (check_data.py, v4's off-topic neutrals and antonyms included), that v4's recipe runs (every
# source: the real pairs of $(DATA)/nli-train, the pairs made from them, v2's biographies, the
# distillation term) and that uqd loads and scores with its export; nli-model rebuilds the
# v2-class model (~1 h on 2 CPU cores); nli-v3 trains v3 from v2 (~1 h); nli-v4 trains v4 from v2
# (90k pairs, about 80 min on 2 idle cores) with the interpolations toward v2 beside it; nli-fast
# distils a 3-layer student from the default (v2) on v2's mix with v4's real pairs (NLI_FAST_PAIRS=N:
# its training pairs, that mix scaled; default 100k, 69 min measured on 2 cores); judge either with
# evaluate.py --judge (models/nli/README.md).
NLI_OUT ?= .cache/nli-build
NLI_PY = .cache/nli-train/bin/python
nli-env:
	@bash models/nli/env.sh

nli-smoke: setup nli-env
	$(NLI_PY) models/nli/check_data.py --data $(DATA)
	$(NLI_PY) models/nli/build.py --variant v4 --smoke --interpolate 0.5 --out $(NLI_OUT)/smoke --data $(DATA)

nli-model: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v2 --out $(NLI_OUT)/v2 --data $(DATA)

nli-v3: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v3 --out $(NLI_OUT)/v3 --data $(DATA)

nli-v4: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v4 --no-eval --interpolate 0.5,0.75 --out $(NLI_OUT)/v4 --data $(DATA)

NLI_FAST_PAIRS ?= 100000
nli-fast: setup nli-env
	$(NLI_PY) models/nli/build.py --variant fast --no-eval --pairs $(NLI_FAST_PAIRS) --out $(NLI_OUT)/fast --data $(DATA)

clean:
	rm -rf dist target ext/target
