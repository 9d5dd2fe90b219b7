# One command runner for assist. `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
# Flags of `make run`'s `assist serve`, e.g. SERVE_ARGS="--host 0.0.0.0 --tokens tokens.toml
# --tls-cert cert.pem --tls-key key.pem" for a team's workstation.
SERVE_ARGS ?=

VSCODE := editors/vscode
LLAMA_CPP := $(shell grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml)
# x86-64 only: other compilers' targets do not know these flags.
NO_AMX := $(if $(filter x86_64,$(shell uname -m)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16,)

.PHONY: install run test unit e2e editors vscode codeserver browser lint fmt typecheck readme-tree bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# llama-cpp-python builds from source for this CPU (several minutes on 2 cores). AMX is
	# left out: where the kernel or sandbox does not grant the tile registers, llama.cpp's AMX
	# kernels crash on their first matrix multiply. Not from pip's cache: a cached wheel may
	# have been built with other flags.
	CFLAGS="$(NO_AMX)" CXXFLAGS="$(NO_AMX)" $(BIN)/pip install --no-cache-dir '$(LLAMA_CPP)'
	$(BIN)/pip install -e '.[model,dev]'
	touch $(STAMP)

install: $(STAMP)

## Start the daemon in the foreground on the embedded default model.
run: $(STAMP)
	$(BIN)/assist serve $(SERVE_ARGS)

## Lint, type-check, the VS Code extension, then the whole test suite (real model, real Neovim).
test: lint vscode browser unit e2e editors

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

e2e: $(STAMP)
	$(BIN)/python -m pytest tests/e2e $(PYTEST_ARGS)

## The real-editor tests against a real daemon: a headless Neovim 0.12 (from the dev extra), and
## the packaged VS Code extension inside code-server driven by headless Chromium.
editors: $(STAMP) vscode codeserver browser
	$(BIN)/python -m pytest tests/editors $(PYTEST_ARGS)

## code-server and playwright-core from the npm registry, into ~/.cache/assist (once a machine).
codeserver:
	sh tests/editors/vscode/install_code_server.sh

## Debian's Chromium, for the dashboard test (headless).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }

## The VS Code extension: locked install, type-check and bundle, unit tests, .vsix.
vscode:
	cd $(VSCODE) && npm ci && npm run build && npm test && npm run package

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/mypy scripts/readme_tree.py
	$(BIN)/python scripts/readme_tree.py --check

typecheck: $(STAMP)
	$(BIN)/mypy

## Write the module tree of README.md's "How it is built" from each module's docstring.
readme-tree: $(STAMP)
	$(BIN)/python scripts/readme_tree.py

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Print latency, cache-hit and overhead figures measured on this machine.
bench: $(STAMP)
	$(BIN)/assist bench
	$(BIN)/python tests/bench/bench_prompt_reuse.py
	$(BIN)/python tests/bench/bench_fix.py
	$(BIN)/python tests/bench/bench_lsp.py
	$(BIN)/python tests/bench/bench_workstation.py
	$(BIN)/python tests/bench/bench_tls.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -rf $(VSCODE)/node_modules $(VSCODE)/dist $(VSCODE)/out $(VSCODE)/*.vsix
