# Single entry point. Everything runs inside the project's uv-managed virtualenv (.venv).
STACK ?= rke2-dev
UV ?= uv
export UV_PYTHON_DOWNLOADS = never

.PHONY: setup test plan plan-json

setup:  ## install the pinned dependency set (uv.lock) into .venv
	$(UV) sync --frozen

test: setup  ## the whole test suite, offline
	$(UV) run --frozen python -m pytest

plan: setup  ## evaluate one stack offline and print what it would create
	$(UV) run --frozen python -m offline.plan $(STACK)

plan-json: setup
	$(UV) run --frozen python -m offline.plan $(STACK) --json
