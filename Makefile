# uqlite: `make demo` (set up + score an example), `make test`, `make bench`, `make wheel`.
SHELL := /bin/bash
SQLITE ?= /usr/bin/sqlite3
SAMPLES ?= 5
DATA ?= ../shared/data

.PHONY: setup demo test bench wheel clean nli-env nli-smoke nli-model nli-v3

setup:
	@bash scripts/setup.sh

demo: setup
	@$(SQLITE) :memory: < examples/demo.sql

test: setup
	bash scripts/llama-server.sh || echo "make test: the llama-cpp-python server could not be installed; tests/tests/openai_server.rs will fail" >&2
	bash scripts/triton-server.sh || echo "make test: PyTriton could not be installed; tests/tests/triton.rs will fail" >&2
	cargo test --release --workspace
	cd ext && cargo test --release

# The Python package and the Datasette plugin: dist/python/*.whl (python/build_wheel.py).
wheel: setup
	@python3 python/build_wheel.py --out dist/python

bench: setup
	dist/uqd bench table --data $(DATA)/selfcheck_wikibio_dev.jsonl --samples $(SAMPLES)
	dist/uqd bench selfcheck --data $(DATA)/selfcheck_wikibio_dev.jsonl --samples $(SAMPLES)

# The NLI model recipe (models/nli/README.md): a private PyTorch environment (.cache/nli-train,
# ~5.5 GB installed, 3.1 GB downloaded, with PyTorch's CUDA wheels), not part of `make test`. nli-smoke (a few hundred pairs, CI)
# checks that the recipe runs and that uqd loads and scores with its export; nli-model rebuilds the
# default v2-class model (~1 h on 2 CPU cores); nli-v3 trains v3 from the shipped v2.
NLI_OUT ?= .cache/nli-build
NLI_PY = .cache/nli-train/bin/python
nli-env:
	@bash models/nli/env.sh

nli-smoke: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v2 --smoke --out $(NLI_OUT)/smoke --data $(DATA)

nli-model: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v2 --out $(NLI_OUT)/v2 --data $(DATA)

nli-v3: setup nli-env
	$(NLI_PY) models/nli/build.py --variant v3 --out $(NLI_OUT)/v3 --data $(DATA)

clean:
	rm -rf dist target ext/target
