# msgwire developer tasks. `make help` lists them.
.DEFAULT_GOAL := help
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum requirements/dev.txt | cut -c1-12)
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): requirements/dev.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/dev.txt
	@rm -f $(VENV)/.installed-* && touch $@

.PHONY: venv
venv: $(STAMP) ## Make .venv with the pinned dependencies of requirements/dev.txt

.PHONY: build
build: venv ## Build the Rust extension (release profile) into .venv
	$(BIN)/maturin develop --release --quiet

.PHONY: test
test: build ## Run every test: cargo test, then pytest (benches run once each, untimed)
	cargo test --workspace --quiet
	$(BIN)/python -m pytest --quiet tests benches --benchmark-disable

.PHONY: demo
demo: build ## The main job: show what msgwire does on the bundled examples
	$(BIN)/python -m msgwire demo

.PHONY: bench
bench: build ## Time msgwire beside its peers (pytest-benchmark); figures go in benches/README.md
	$(BIN)/python -m pytest benches --benchmark-only --benchmark-columns=median,iqr,ops --benchmark-sort=name $(BENCH_ARGS)

.PHONY: format
format: venv ## Format Rust and Python code
	cargo fmt --all
	$(BIN)/ruff format python tests benches
	$(BIN)/ruff check --fix python tests benches

.PHONY: lint
lint: build ## clippy (pedantic), rustfmt, ruff, mypy, stubtest
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff format --check python tests benches
	$(BIN)/ruff check python tests benches
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest msgwire._core

.PHONY: schema
schema: build ## Regenerate docs/schema-v1.json from the types
	$(BIN)/python -m msgwire.schema > docs/schema-v1.json

.PHONY: lock
lock: ## Re-pin requirements/dev.txt from the newest versions of the direct dependencies
	rm -rf /tmp/msgwire-lock && $(PYTHON) -m venv /tmp/msgwire-lock
	/tmp/msgwire-lock/bin/pip install --quiet maturin msgspec pytest hypothesis httpx jsonschema pytest-benchmark orjson pydantic-ai-slim openai anthropic httpx-sse ruff mypy
	{ head -2 requirements/dev.txt; /tmp/msgwire-lock/bin/pip freeze; } > requirements/dev.new && mv requirements/dev.new requirements/dev.txt

.PHONY: clean
clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV) .pytest_cache .benchmarks
