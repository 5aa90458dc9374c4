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

# The extension is built again only when what it is built from changed (as $(STAMP) for the
# requirements): its Rust sources, the Cargo files, pyproject.toml (maturin's settings) or the venv.
# PIP_QUIET: maturin installs through pip, which would print a line per skipped extra and per
# requirement already there (`--quiet` is maturin's own).
EXTENSION_INPUTS := $(shell find rust/core/src rust/python/src -name '*.rs') \
	rust/core/Cargo.toml rust/python/Cargo.toml Cargo.toml Cargo.lock pyproject.toml
BUILT := $(VENV)/.built-extension

$(BUILT): $(STAMP) $(EXTENSION_INPUTS)
	PIP_QUIET=1 $(BIN)/maturin develop --release --quiet
	@touch $@

.PHONY: build
build: $(BUILT) ## Build the Rust extension (release profile) into .venv, when its sources changed

# Debian packages of the real components the demo and the tests run (scripts/system-packages.sh
# installs the missing ones with apt-get). The demo reads a screenshot by OCR (msgwire.harness.resources.ocr,
# extra "ocr"): Tesseract's English model and its orientation and script detection; the tesserocr wheel
# brings libtesseract, these bring the data.
DEMO_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd
SYSTEM_PACKAGES := $(DEMO_PACKAGES)
# German for the two-language OCR test
SYSTEM_PACKAGES += tesseract-ocr-deu
# fonts the OCR tests render text with (DejaVu Sans, Serif, Mono)
SYSTEM_PACKAGES += fonts-dejavu-core
# PostgreSQL server (msgwire.harness.store.postgres, extra "postgres"): the store tests and benchmarks start a
# throwaway cluster with its initdb and pg_ctl (tests/_support/postgres.py)
SYSTEM_PACKAGES += postgresql

.PHONY: system
system: ## Install the Debian packages the tests and the demo need, when missing
	@bash scripts/system-packages.sh $(SYSTEM_PACKAGES)

.PHONY: test
test: build system ## Run every test: cargo test, a short fuzz run, then pytest (derandomized; benches once each, untimed)
	cargo test --workspace --quiet
	$(MAKE) --no-print-directory fuzz-smoke
	$(BIN)/python -m pytest --quiet tests benches --benchmark-disable
	$(MAKE) --no-print-directory test-oldest
	$(MAKE) --no-print-directory test-oldest-openai-agents

# The pydantic-ai interop tests again on the oldest supported pydantic-ai (requirements/oldest.txt: the
# extra's floor and only what those tests need), in a venv of the same Python, with the extension built
# for .venv (PYTHONPATH=python). Installing it takes about a minute (58 s on a loaded 2-core machine),
# once per change of requirements/oldest.txt; the run about 15 s.
OLDEST := .venv-oldest
OLDEST_STAMP := $(OLDEST)/.installed-$(shell sha1sum requirements/oldest.txt | cut -c1-12)

$(OLDEST_STAMP): requirements/oldest.txt $(STAMP)
	@rm -rf $(OLDEST) && $(BIN)/python -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --no-deps -r requirements/oldest.txt
	@touch $@

.PHONY: test-oldest
test-oldest: build $(OLDEST_STAMP) ## The pydantic-ai interop tests on the oldest supported pydantic-ai (requirements/oldest.txt)
	PYTHONPATH=$(abspath python) VIRTUAL_ENV=$(abspath $(OLDEST)) $(OLDEST)/bin/python -m pytest --quiet -p no:cacheprovider \
		tests/interop/test_pydantic_ai.py tests/interop/test_pydantic_ai_*.py

# The edit loop leaves out what takes minutes and rarely breaks from an edit elsewhere: the fuzz
# run and cargo test (run `cargo test` when the Rust changed), the benches' smoke run, the
# PostgreSQL fault tests that stop and restart a server, and mypy over the typing tests and the
# docs' examples (tests/test_typing.py). `make test` runs them all.
QUICK_SKIP := --ignore=tests/harness/store/test_store_faults.py --ignore=tests/harness/test_swarm_faults.py \
	--ignore=tests/test_typing.py

.PHONY: test-quick
test-quick: build system ## The edit loop: pytest tests/ without the fuzz run, cargo test, benches, PostgreSQL restarts, mypy
	$(BIN)/python -m pytest --quiet tests $(QUICK_SKIP)

# The openai-agents interop tests again on the oldest supported openai-agents (requirements/oldest-openai-agents.txt):
# that release alone in a folder put ahead of .venv on PYTHONPATH, everything else .venv's. The differential test
# compares with openai-agents' own models on the release pinned in requirements/dev.txt, where its allow-list was
# measured: it runs there only.
OLDEST_AGENTS := .venv-oldest-openai-agents
OLDEST_AGENTS_STAMP := $(OLDEST_AGENTS)/.installed-$(shell sha1sum requirements/oldest-openai-agents.txt | cut -c1-12)

$(OLDEST_AGENTS_STAMP): requirements/oldest-openai-agents.txt $(STAMP)
	@rm -rf $(OLDEST_AGENTS)
	$(BIN)/python -m pip install --quiet --no-deps --target $(OLDEST_AGENTS) -r requirements/oldest-openai-agents.txt
	@touch $@

.PHONY: test-oldest-openai-agents
test-oldest-openai-agents: build $(OLDEST_AGENTS_STAMP) ## The openai-agents interop tests on the oldest supported openai-agents
	PYTHONPATH=$(abspath $(OLDEST_AGENTS)):$(abspath python) $(BIN)/python -m pytest --quiet -p no:cacheprovider \
		tests/interop/test_openai_agents.py tests/interop/test_openai_agents_session_suite.py \
		tests/interop/test_openai_agents_model_loop.py tests/interop/test_openai_agents_model_anomalies.py \
		tests/interop/test_openai_agents_model.py

.PHONY: test-deep
test-deep: build system ## The longer randomized search: property tests at random, DEEP_SCALE (10) times the examples
	MSGWIRE_HYPOTHESIS=deep MSGWIRE_HYPOTHESIS_SCALE=$(DEEP_SCALE) $(BIN)/python -m pytest --quiet tests $(DEEP_ARGS)

DEEP_SCALE ?= 10

# Fuzzing (fuzz/README.md). cargo-fuzz passes nightly-only flags (-Zsanitizer, sancov passes);
# RUSTC_BOOTSTRAP=1 lets the stable toolchain take them. Seeds come from the fixtures each run.
CARGO_FUZZ_VERSION := 0.13.2
CARGO_FUZZ := RUSTC_BOOTSTRAP=1 cargo fuzz
FUZZ_SANITIZER ?= none
FUZZ_BUILD = --release --debug-assertions --sanitizer=$(FUZZ_SANITIZER) --target-dir=fuzz/target
FUZZ_BIN = fuzz/target/$(shell rustc -vV | sed -n 's/^host: //p')/release
FUZZ_TARGETS ?= sse ndjson partial_json openai openai_responses anthropic gemini ollama canonical transcode request request_read response
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_JOBS ?= $(shell nproc)
# -timeout: an input that takes seconds is a bug (every body is linear). The dictionary of target $$t:
FUZZ_DICT = fuzz/dict/$$(case $$t in sse) echo sse;; ndjson|partial_json|canonical) echo json;; *) echo stream;; esac).dict
FUZZ_FLAGS = -max_len=8192 -timeout=10 -print_final_stats=1 -dict=$(FUZZ_DICT)

.PHONY: fuzz-tools
fuzz-tools:
	@cargo fuzz --version 2>/dev/null | grep -qx 'cargo-fuzz $(CARGO_FUZZ_VERSION)' || cargo install --quiet --locked cargo-fuzz --version $(CARGO_FUZZ_VERSION)

.PHONY: fuzz
fuzz: fuzz-tools ## Fuzz each of FUZZ_TARGETS for FUZZ_SECONDS (300) on FUZZ_JOBS processes; corpus in fuzz/corpus
	bash fuzz/seed.sh fuzz/corpus
	$(CARGO_FUZZ) build $(FUZZ_BUILD)
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/regressions/$$t; \
		$(CARGO_FUZZ) run $(FUZZ_BUILD) $$t fuzz/corpus/$$t fuzz/regressions/$$t -- \
			$(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) $(if $(filter-out 1,$(FUZZ_JOBS)),-fork=$(FUZZ_JOBS)) || exit 1; \
	done

.PHONY: fuzz-smoke
fuzz-smoke: fuzz-tools ## Each fuzz target for FUZZ_SMOKE_SECONDS (5) from the seeds, replaying fuzz/regressions
	rm -rf fuzz/target/smoke && bash fuzz/seed.sh fuzz/target/smoke/seeds
	$(CARGO_FUZZ) build $(FUZZ_BUILD)
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/target/smoke/corpus/$$t fuzz/regressions/$$t fuzz/artifacts/$$t; \
		$(FUZZ_BIN)/$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SMOKE_SECONDS) -seed=1 -artifact_prefix=fuzz/artifacts/$$t/ \
			fuzz/target/smoke/corpus/$$t fuzz/target/smoke/seeds/$$t fuzz/regressions/$$t >fuzz/target/smoke/$$t.log 2>&1 \
			|| { tail -n 40 fuzz/target/smoke/$$t.log; exit 1; }; \
		printf '  %-17s %s\n' $$t "$$(grep -h -m1 '^Done' fuzz/target/smoke/$$t.log)"; \
	done

.PHONY: demo
demo: build ## The main job: show what msgwire does on the bundled examples (installs its Debian packages)
	@bash scripts/system-packages.sh $(DEMO_PACKAGES)
	@$(BIN)/python -m msgwire demo

.PHONY: bench
bench: build ## Time msgwire beside its peers (pytest-benchmark); figures go in benches/README.md
	MSGWIRE_BENCH_FULL=1 MSGWIRE_BENCH_FILES=$${MSGWIRE_BENCH_FILES:-20000} $(BIN)/python -m pytest benches --benchmark-only --benchmark-columns=median,iqr,ops --benchmark-sort=name $(BENCH_ARGS)

.PHONY: profile
profile: venv ## perf profile of the Rust stream decode alone (PROFILE_DIALECT, default openai) on the bench workload
	$(BIN)/python -c "import msgwire.bench.workloads as w; open('target/profile.sse', 'wb').write(w.anthropic_stream() if '$(PROFILE_DIALECT)' == 'anthropic' else w.openai_stream())"
	CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release --quiet --example decode -p msgwire-core
	perf record --quiet -o target/perf.data ./target/release/examples/decode $(or $(PROFILE_DIALECT),openai) target/profile.sse 1000
	perf report -i target/perf.data --no-children --percent-limit 1 --stdio | grep -E '^ +[0-9]'

# Profile-guided build (as pydantic-core's build-pgo): an instrumented build, the benches' msgwire
# workloads to profile it, then the optimized build into .venv. rustc's profiles need LLVM 19's
# llvm-profdata (Debian llvm-19, installed here when missing: not a SYSTEM_PACKAGES need).
PGO_DIR := $(abspath target/pgo)
PGO_BENCHES := benches/test_stream.py benches/test_sse.py benches/test_codec.py benches/test_formats.py benches/test_transcode.py

.PHONY: build-pgo
build-pgo: venv ## Profile-guided release build of the extension into .venv (optional; see benches/README.md)
	@command -v llvm-profdata-19 >/dev/null || bash scripts/system-packages.sh llvm-19
	rm -rf $(PGO_DIR)/profiles $(PGO_DIR)/merged.profdata
	RUSTFLAGS='-Cprofile-generate=$(PGO_DIR)/profiles' CARGO_TARGET_DIR=$(PGO_DIR)/target $(BIN)/maturin develop --release --quiet
	$(BIN)/python -m pytest --quiet -p no:cacheprovider $(PGO_BENCHES) -k msgwire --benchmark-only \
		--benchmark-max-time=0.2 --benchmark-min-rounds=3
	llvm-profdata-19 merge -o $(PGO_DIR)/merged.profdata $(PGO_DIR)/profiles
	RUSTFLAGS='-Cprofile-use=$(PGO_DIR)/merged.profdata' CARGO_TARGET_DIR=$(PGO_DIR)/target $(BIN)/maturin develop --release --quiet

.PHONY: bench-memory
bench-memory: build ## Peak memory of assemble over a BENCH_MB (100) MB recording and of loads of a session that size
	$(BIN)/python -m benches.memory --mb $(BENCH_MB)

BENCH_MB ?= 100

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
	/tmp/msgwire-lock/bin/pip install --quiet maturin msgspec pytest hypothesis httpx jsonschema pytest-benchmark orjson pydantic-ai-slim openai anthropic httpx-sse ruff mypy rich matplotlib requests aiohttp tesserocr pillow lingua-language-detector mcp "psycopg[binary]" openai-agents pyarrow
	{ head -2 requirements/dev.txt; /tmp/msgwire-lock/bin/pip freeze; } > requirements/dev.new && mv requirements/dev.new requirements/dev.txt

.PHONY: clean
clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf fuzz/target fuzz/corpus fuzz/artifacts
	rm -rf $(VENV) .pytest_cache .benchmarks
