# Convenience wrapper: every target runs `python3 -m offline.tasks <task>` (offline/tasks.py), which
# needs nothing but python3 and finds or installs uv itself. Recipes are silent (@) so that
# `make plan-json STACK=x > plan.json` writes nothing but the JSON to stdout.
STACK ?= rke2-dev
PYTHON ?= python3
TASKS = $(PYTHON) -m offline.tasks
# doctor / bench / diff / rotate: extra arguments, e.g. DOCTOR_ARGS=--emulated, BENCH_ARGS=--quick, BASE=origin/main,
# ROTATE_ARGS=--dry-run
DOCTOR_ARGS ?=
BENCH_ARGS ?=
BASE ?= origin/main
DIFF_ARGS ?=
ROTATE_ARGS ?=

.PHONY: setup test plan plan-json snapshots doctor bench diff kubeconfig schema rotate

setup:  ## install the pinned dependency set (uv.lock) into .venv
	@$(TASKS) setup

test:  ## the whole test suite, offline (what CI runs)
	@$(TASKS) test

plan:  ## evaluate one stack against an emulated AWS account (moto) and print what it would create
	@$(TASKS) plan $(STACK)

plan-json:
	@$(TASKS) plan $(STACK) --json

snapshots:  ## rewrite the golden plans tests/snapshots/<stack>.json
	@$(TASKS) snapshots

doctor:  ## check an AWS account for what the CCM needs (real credentials; DOCTOR_ARGS=--emulated for moto)
	@$(TASKS) doctor $(STACK) $(DOCTOR_ARGS)

bench:  ## offline performance bench (always exits 0)
	@$(TASKS) bench $(BENCH_ARGS)

diff:  ## offline per-resource diff of every stack between BASE (a git ref) and the working tree
	@$(TASKS) diff --base $(BASE) $(DIFF_ARGS)

kubeconfig:  ## write the cluster's admin kubeconfig to kubeconfig-$(STACK).yaml (mode 0600)
	@$(TASKS) kubeconfig $(STACK)

rotate:  ## replace stale nodes (new image, type, boot configuration) one at a time, etcd kept in quorum (real backend, AWS and cluster)
	@$(TASKS) rotate $(STACK) $(ROTATE_ARGS)

schema:  ## regenerate the stack-file JSON Schema, README's configuration reference and Pulumi.yaml's keys from the config model
	@$(TASKS) schema --write
