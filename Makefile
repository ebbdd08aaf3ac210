# uqlite: `make demo` (set up + score an example), `make test`, `make bench`, `make wheel`.
SHELL := /bin/bash
SQLITE ?= /usr/bin/sqlite3
SAMPLES ?= 5
DATA ?= ../shared/data

.PHONY: setup demo test bench wheel clean

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

clean:
	rm -rf dist target ext/target
