"""Program runs shared across a session: a config (or a stack file) evaluated once in the emulated account
(harness.run_program's default)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from rke_aws_offline.engine import harness
from tests.support.once import once_per_run

STACKS = harness.stack_names()


_RUNS: dict[tuple, harness.ProgramRun] = {}
# The pytest-xdist workers' common directory (tests/conftest.py sets it), None in a single process: a run one worker
# made is read by the others, not evaluated again (each worker would otherwise evaluate every stack, ~16 s of CPU).
SHARED: Path | None = None


def _config_key(config: dict[str, str]) -> tuple:
    """A config as a key: a value's type is part of it (a secret and a plain value of the same text differ)."""
    return tuple(sorted((k, type(v).__name__, v) for k, v in config.items()))


def _shared(key: tuple, prefix: str, evaluate) -> harness.ProgramRun:
    """The run under `key`, evaluated once per session (and, under xdist, once per run: the other workers read it).
    The account (stopped after the run) stays with the process that made it; what tests read is data."""
    if key not in _RUNS:
        def evaluated() -> harness.ProgramRun:
            run = evaluate()
            return dataclasses.replace(run, mocks=None) if SHARED is not None else run

        if SHARED is None:
            _RUNS[key] = evaluated()
        else:
            _RUNS[key] = once_per_run(SHARED, prefix + hashlib.sha256(repr(key).encode()).hexdigest()[:32], evaluated)
    return _RUNS[key]


def run_cached(config: dict[str, str], stack: str = "test", project: str | None = None) -> harness.ProgramRun:
    """The program's first run (no previous outputs) of `config` as stack `stack`, made once per session
    and shared: tests read runs, never change them. A value's type is part of the key (a secret and a
    plain value of the same text are different configs). `project`: default harness.project_of(stack)."""
    project = project or harness.project_of(stack)
    key = (stack, project, _config_key(config))
    if key not in _RUNS and _is_stack_file(stack, project, key[2]):
        # A stack file's run is its emulated build's (tests/support/emulated.py): one evaluation serves both.
        from tests.support import emulated

        _RUNS[key] = emulated.evaluate(stack, SHARED).run
    return _shared(key, "run-", lambda: harness.run_program(config, stack=stack, project=project))


def _is_stack_file(stack: str, project: str, config_key: tuple) -> bool:
    """`config_key` is the stack file's config, run as its project: what emulated_account.build_stack evaluates."""
    return stack in STACKS and project == harness.project_of(stack) and config_key == _config_key(harness.stack_config(stack))


def run_stack_cached(stack: str) -> harness.ProgramRun:
    """The run of a stack file (stacks/, tests/stacks/), once per session (harness.stack_config reads the file once
    per text of it)."""
    return run_cached(harness.stack_config(stack), stack)


def run_after_cached(config: dict[str, str], previous: harness.ProgramRun, stack: str = "test",
                     project: str | None = None) -> harness.ProgramRun:
    """The program's run of `config` after `previous` (its outputs as the last state), made once per session like
    run_cached: for a sequence several tests (or rows) walk through the same steps. Only for the stack program in the
    default emulated account with no fake cluster API installed (tests/support/fake_cluster.py): a run with mocks or a
    fake API of the test's own is harness.run_program's. The environment (but pytest's own variables) is part of
    the key: a test that sets RANCHER_INSECURE or RKE_AWS_READ_CLUSTER gets its own run."""
    import json
    import os

    from tests.support import fake_cluster

    assert fake_cluster.main() is None, "a fake cluster API is installed: run harness.run_program"
    project = project or harness.project_of(stack)
    environ = tuple(sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_")))
    outputs = json.dumps(previous.outputs, sort_keys=True, default=repr)
    key = ("after", stack, project, _config_key(config),
           hashlib.sha256(outputs.encode()).hexdigest(), hashlib.sha256(repr(environ).encode()).hexdigest())

    return _shared(key, "after-", lambda: harness.run_program(config, stack=stack, project=project,
                                                              previous_outputs=previous.outputs))
