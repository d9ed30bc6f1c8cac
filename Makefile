# Two jobs a user runs: `make report` (the suite against a target) and `make test` (the project's own tests); and
# `make check`, a contributor's quick loop.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

ENDPOINT ?=
API_KEY  ?=
MODEL    ?=
AGENTS   ?=
REPORTS  := reports
comma  := ,

# Python keeps each module's compiled code (and pytest its assertion-rewritten copy) beside the source, in
# __pycache__, unless PYTHONDONTWRITEBYTECODE says not to. Some shells and CI images set it; then every process of a
# make job compiles lmconform (and rewrites its asserts, the plugin being pytest's) from source again: `make test` runs
# hundreds, and a usage error of the suite took 4.6 s instead of 0.9 s.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: report matrix matrix-real snapshots-real check catalogue expected-real test test-real fuzz-self targets bench bench-real \
        install clean agents-matrix record-agents

# uv installs the project and its test dependencies in seconds where pip takes half a minute, their compiled code
# included: without it, the first run's processes compile the modules they import, which costs that run more than
# it saves (docs/performance.md, the project's own loops). The environment is made without pip: Python's own pip
# installs uv in it, and uv installs pip (uncompiled: nothing of make check runs it), which tools/ and
# tests/test_packaging.py use. uv reads no pip configuration: where only pip reaches the packages (an index set in
# pip.conf), pip installs them instead. $(call install_extras,EXTRAS): the project in .venv with those extras.
install_extras = $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[$(1)]' || \
                 $(PYTHON) -m pip --python $(BIN)/python install --quiet -e '.[$(1)]'

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --quiet uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python pip || $(PYTHON) -m pip --python $(BIN)/python install --quiet pip
	$(call install_extras,test)
	touch $(STAMP)

install: $(STAMP)

# Without ENDPOINT the suite starts the embedded reference server on a free loopback port; AGENTS=claude-code,codex,
# opencode (or all) also runs those coding agents against it (docs/agents.md).
report: $(STAMP)
	mkdir -p $(REPORTS)
	LMCONFORM_API_KEY='$(API_KEY)' $(BIN)/python -m pytest suites -p no:cacheprovider \
	    $(if $(ENDPOINT),--endpoint '$(ENDPOINT)') $(if $(MODEL),--model '$(MODEL)') \
	    $(if $(AGENTS),--agents '$(AGENTS)') \
	    --results-json $(REPORTS)/results.json --report $(REPORTS)/report.html \
	    --html $(REPORTS)/pytest.html --self-contained-html --junitxml $(REPORTS)/junit.xml

# tests/test_html_report.py opens the report in headless Chromium (Debian's package; CI runs as root).
CHROMIUM := /usr/bin/chromium

$(CHROMIUM):
	apt-get update -qq && apt-get install -y -qq chromium

# The compatibility matrix of several runs: the clean reference server and the same server with faults, each a
# target of its own. A run that finds failures exits 1, which is its result, not an error of the build.
MATRIX_FAULTS ?= tool-index-one chain-ignored
matrix: $(STAMP)
	mkdir -p $(REPORTS)
	rm -f $(REPORTS)/matrix-*.json
	$(BIN)/python -m pytest suites -q --tb=no -p no:cacheprovider --target-name reference \
	    --results-json $(REPORTS)/matrix-reference.json > /dev/null; test $$? -le 1
	for fault in $(MATRIX_FAULTS); do \
	    $(BIN)/python -m pytest suites -q --tb=no -p no:cacheprovider --reference-fault $$fault \
	        --target-name "reference+$$fault" --results-json $(REPORTS)/matrix-$$fault.json > /dev/null; \
	    test $$? -le 1 || exit 1; \
	done
	$(BIN)/lmconform matrix $(REPORTS)/matrix-*.json -o $(REPORTS)/matrix.html --markdown $(REPORTS)/matrix.md

# The project's tests include real servers (tests/test_real_targets.py, tests/test_proxy_gate.py), each installed
# apart from .venv in the user's cache (~/.cache/lmconform/targets, or LMCONFORM_TARGETS_CACHE): llama-cpp-python
# with Gemma 3 270M (built from source the first time, about 5 minutes on 2 cores; pip's wheel cache makes later
# installs take seconds), llama.cpp's llama-server in a Debian sid chroot (root needed, as in CI), and the LiteLLM
# proxy; and the coding agents the tests run (lmconform agents install: npm, about 1.2 GB, in
# ~/.cache/lmconform/agents). Each step is skipped once done.
targets: $(STAMP)
	$(BIN)/python -m tools.targets install

# make test: one worker more than the cores. The real servers' tests keep one (they are grouped) and mostly wait on a
# model server computing on one thread, the proxy gate's another, and many tests wait on a process starting: a worker
# more keeps the cores busy (docs/performance.md).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$((n + 1)))
# make check: two workers per core. Its tests are short, and most of those that take time start a process, a server or
# a proxy and wait on it; with a fourth worker the cores stay busy through those waits (three and five measured
# slower: docs/performance.md).
CHECK_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$((2 * n)))

# A contributor's loop, without root: lint, types (mypy over the whole package), and every test that
# needs no real server, no root and no browser, those that judge many generated inputs with the smaller budgets of
# LMCONFORM_TEST_BUDGET=check (tests/budget.py). Its workers, and the runs of the suite and of lmconform the tests
# make, are forked from a process that imported pytest, lmconform and the SDKs once (tests/processes.py). `make test`
# is the whole truth: every process started as users start it.
# mypy runs while the tests start: their first seconds keep one core (the fork server importing), mypy's three the other.
check: $(STAMP)
	$(BIN)/ruff check lmconform tests tools bench
	$(BIN)/mypy & types=$$!; \
	LMCONFORM_TEST_BUDGET=check $(BIN)/python -m pytest tests -p no:cacheprovider --dist loadgroup \
	    --tx '$(CHECK_WORKERS)*popen//python=$(BIN)/python -S tests/forward.py' \
	    -m "not real_server and not root and not browser and not agents" --durations=10; tests=$$?; \
	wait $$types && exit $$tests

# The lint of make check too (a second), so that CI refuses what make check would.
test: $(STAMP) $(CHROMIUM) targets
	$(BIN)/ruff check lmconform tests tools bench
	$(BIN)/python -m pytest tests -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup --durations=15

# What the project publishes about the real servers, from the runs `make test` makes: the compatibility matrix
# (docs/compatibility.md and .html) and the shapes of their answers per version (fixtures/snapshots/<server>-<V>/).
# `make test` fails when what is committed no longer matches what the servers do; these rewrite it.
matrix-real: $(STAMP) targets
	LMCONFORM_WRITE_COMPATIBILITY=1 $(BIN)/python -m pytest tests/test_real_targets.py -p no:cacheprovider -q -s \
	    -k published_compatibility_matrix

snapshots-real: $(STAMP) targets
	LMCONFORM_WRITE_SNAPSHOTS=1 $(BIN)/python -m pytest tests/test_real_targets.py -p no:cacheprovider -q -s \
	    -k shapes_stored_for_its_version

# What the project's tests compare, written from runs rather than by hand. `make catalogue`: the fault × check table
# (fixtures/catalogue.toml) from the suite against each fault of the reference server and of the reference bridge; it
# needs no real server and no root. Adding a check: the check, a fault that fails it (its proven_by), this.
# `make expected-real`: the real servers' expected verdicts (fixtures/targets/*.toml) from their runs, each row's reason
# and model_dependent mark kept (real servers, root). A verdict no row expected gets a row whose reason is left to
# write: the command lists them, and `make test` fails until each is written.
catalogue: $(STAMP)
	$(BIN)/python -m tools.catalogue

expected-real: $(STAMP) targets
	LMCONFORM_WRITE_EXPECTED=1 $(BIN)/python -m pytest tests/test_real_targets.py -p no:cacheprovider -q -s \
	    -k verdicts_are_exactly_the_expected_ones

# The coding agents (Claude Code, Codex CLI, opencode at their pinned versions): the fault × agent matrix of
# docs/agents.md, which `make test` compares with what the agents do (a few minutes), with the agents' profiles it
# gives (lmconform/verdicts/profiles.toml: what a run without --agents predicts of each agent), the page's comparison
# of their predictions with what the agents did, and its list of known causes; and the requests each agent sends,
# re-recorded as lmconform/apis/<api>/cases/recorded-<agent>-<version>-<n>.json.
agents-matrix: $(STAMP) targets
	LMCONFORM_WRITE_AGENTS_MATRIX=1 $(BIN)/python -m pytest tests/test_agents.py -p no:cacheprovider -q \
	    -k fault_agent_matrix

record-agents: $(STAMP) targets
	$(BIN)/lmconform agents record

# Only the real servers, with every test's outcome listed.
test-real: $(STAMP) targets
	$(BIN)/python -m pytest tests/test_real_targets.py tests/test_proxy_gate.py -p no:cacheprovider -rA

# lmconform's own checks on many more generated wire forms than `make test` sends (FUZZ_SELF answers of each
# API): any check that fails a legal stream is a false alarm to fix.
FUZZ_SELF ?= 5000
fuzz-self: $(STAMP)
	LMCONFORM_FUZZ_SELF=$(FUZZ_SELF) $(BIN)/python -m pytest tests/test_stream_forms.py -p no:cacheprovider -q \
	    -k false_alarm

# schemathesis (the `bench` group) is installed for the benchmarks only: `bench fuzz` measures against it.
bench: $(STAMP)
	$(call install_extras,test$(comma)bench)
	$(BIN)/python -m bench

# What running cases concurrently (pytest -n 2) saves against the real model servers.
bench-real: $(STAMP) targets
	$(BIN)/python -m bench real

clean:
	rm -rf $(VENV) $(REPORTS)/*.html $(REPORTS)/*.json $(REPORTS)/*.xml
