# Single entry point. Everything runs inside the project's uv-managed virtualenv (.venv).
STACK ?= rke2-dev
UV ?= uv
export UV_PYTHON_DOWNLOADS = never

.PHONY: setup test plan plan-json snapshots doctor
# doctor: extra arguments, e.g. DOCTOR_ARGS=--emulated or DOCTOR_ARGS='--outputs outputs.json --profile prod'
DOCTOR_ARGS ?=

setup:  ## install the pinned dependency set (uv.lock) into .venv
	$(UV) sync --frozen

test: setup  ## the whole test suite, offline
	$(UV) run --frozen python -m pytest

plan: setup  ## evaluate one stack against an emulated AWS account (moto) and print what it would create
	$(UV) run --frozen python -m offline.plan $(STACK)

plan-json: setup
	$(UV) run --frozen python -m offline.plan $(STACK) --json

snapshots: setup  ## rewrite the golden plans tests/snapshots/<stack>.json
	$(UV) run --frozen python -m offline.snapshots

doctor: setup  ## check an AWS account for what the CCM needs (real credentials; DOCTOR_ARGS=--emulated for moto)
	$(UV) run --frozen python -m offline.doctor $(STACK) $(DOCTOR_ARGS)

.PHONY: bench
# bench: extra arguments, e.g. BENCH_ARGS=--write (rewrite bench/RESULTS.md) or BENCH_ARGS=--quick
BENCH_ARGS ?=

bench: setup  ## offline performance bench: evaluation time vs baselines, deploy graph, `pulumi up` estimate (always exits 0)
	$(UV) run --frozen python -m bench $(BENCH_ARGS)
