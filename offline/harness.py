"""Run `__main__.py` offline under `AwsLikeMocks` and record everything it registered.

Used by the tests, by `make plan` and by the benchmarks, so all three see the same program run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pulumi
import yaml
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.sync_await import _sync_await

from .mocks import AwsLikeMocks
from .stacks import STACKS_DIR, environments

ROOT = Path(__file__).resolve().parent.parent
MAIN = ROOT / "__main__.py"
# Test-only stacks (a phase-two stack with encrypted values, other partitions): planned, snapshotted
# and tested like stacks/, but not environments (no workflow deploys them).
FIXTURE_STACKS_DIR = ROOT / "tests" / "stacks"
# What an encrypted stack value becomes offline: present and secret, its text unknown.
SECURE_PLACEHOLDER = "offline-placeholder: encrypted value, not decrypted offline"
PROJECT = "rke-aws"


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    inputs: dict
    state: dict
    parent: str
    dependencies: list[str]
    protect: bool
    delete_before_replace: bool
    ignore_changes: list[str]
    provider: str
    custom: bool
    secret_inputs: set[str] = field(default_factory=set)
    id: str = ""  # the physical ID the mocks answered (custom resources)
    retain_on_delete: bool = False
    aliases: list[str] = field(default_factory=list)  # URNs this resource may have had in the state


@dataclass
class Lookup:
    """One invoke the program made (an AMI, the zones, a subnet) and what it got back."""
    token: str
    args: dict
    result: dict
    failure: Optional[str] = None


@dataclass
class ProgramRun:
    stack: str
    config: dict[str, str]
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    logs: list[tuple[str, str]] = field(default_factory=list)
    mocks: Optional[AwsLikeMocks] = None
    previous_outputs: Optional[dict[str, Any]] = None  # what the stack exported last time
    lookups: list[Lookup] = field(default_factory=list)

    def of_type(self, typ: str) -> list[Registration]:
        return [r for r in self.resources if r.type == typ]

    def by_urn(self, urn: str) -> Registration:
        return next(r for r in self.resources if r.urn == urn)

    def named(self, name: str) -> Registration:
        return next(r for r in self.resources if r.name == name)


def _is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig


def _has_secret(value: Any) -> bool:
    if _is_secret(value):
        return True
    if isinstance(value, dict):
        return any(_has_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_secret(v) for v in value)
    return False


def unwrap_secrets(value: Any) -> Any:
    """Inputs as the provider would see them, secrets revealed (their keys go to secret_inputs)."""
    if _is_secret(value):
        return unwrap_secrets(value["value"])
    if isinstance(value, dict):
        return {k: unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(v) for v in value]
    return value


class _RecordingMonitor(pulumi_mocks.MockMonitor):
    """Records registrations; answers the engine's own invokes as a backend would."""

    def __init__(self, mocks: AwsLikeMocks, run: ProgramRun):
        super().__init__(mocks)
        self.run = run

    def Invoke(self, request):
        if request.tok == "pulumi:pulumi:readStackOutputs":
            # The backend's answer for this stack: its outputs after the previous run (none: a new stack).
            from pulumi.runtime.proto import resource_pb2

            pulumi_mocks._ensure_event_loop()
            name = rpc.deserialize_properties(request.args)["name"]
            outputs = json.loads(json.dumps(self.run.previous_outputs or {}))  # plain data, as it crosses the wire
            ret = {"name": name, "outputs": outputs, "secretOutputNames": []}
            return resource_pb2.ResourceInvokeResponse(failures=None, **{"return": _sync_await(rpc.serialize_properties(ret, {}))})
        response = super().Invoke(request)
        pulumi_mocks._ensure_event_loop()
        self.run.lookups.append(Lookup(
            token=request.tok,
            args=unwrap_secrets(rpc.deserialize_properties(request.args)),
            result=unwrap_secrets(rpc.deserialize_properties(getattr(response, "return"))),
            failure="; ".join(f.reason for f in response.failures) or None,
        ))
        return response

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        pulumi_mocks._ensure_event_loop()
        raw_inputs = rpc.deserialize_properties(request.object)
        inputs = {k: unwrap_secrets(v) for k, v in raw_inputs.items()}
        reg = self.resources[response.urn]
        self.run.resources.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                inputs=inputs,
                state=dict(reg.state),
                parent=request.parent,
                dependencies=list(request.dependencies),
                protect=bool(request.protect),
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=list(request.ignoreChanges),
                provider=request.provider,
                custom=bool(request.custom),
                secret_inputs={k for k, v in raw_inputs.items() if _has_secret(v)},
                id=response.id or "",
                retain_on_delete=bool(request.retainOnDelete),
                aliases=[_alias_urn(response.urn, a) for a in request.aliases],
            )
        )
        return response


def _alias_urn(urn: str, alias) -> str:
    """An alias as the engine resolves it (pulumi/pulumi pkg/resource/deploy/step_generator.go
    collapseAliasToUrn): a whole URN, or the resource's own URN under the alias's name and type
    (pulumi-aws itself aliases renamed types, e.g. BucketV2 -> Bucket). A parent in the alias is
    not resolved here: this program never moves a resource to another parent."""
    if alias.urn:
        return alias.urn
    assert not alias.spec.parentUrn and not alias.spec.noParent, f"{urn}: alias of another parent"
    prefix, _, name = urn.rpartition("::")
    head, _, qualified = prefix.rpartition("::")
    if alias.spec.type:
        parents, sep, _ = qualified.rpartition("$")
        qualified = f"{parents}{sep}{alias.spec.type}"
    return f"{head}::{qualified}::{alias.spec.name or name}"


class _LogCollector(logging.Handler):
    def __init__(self, run: ProgramRun):
        super().__init__(logging.INFO)
        self.run = run

    def emit(self, record: logging.LogRecord) -> None:
        self.run.logs.append((record.levelname.lower(), record.getMessage()))


def drain_leftover_tasks() -> None:
    """Forget what a previous, failed program run left behind in Pulumi's runtime.

    Pulumi's MockSettings (unlike Settings) does not reset `SETTINGS.outputs`, so the output
    tasks of a run that failed stay registered, and the next run awaits them and re-raises the
    old failure (e.g. tests/test_nodes.py's renamed-node test, then any later run). Cancels
    pending tasks on the loop and clears that set. Called before every run.
    """
    from pulumi.runtime.sync_await import _ensure_event_loop

    loop = _ensure_event_loop()
    if loop.is_running():
        return
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    # Registrations and invokes run in the loop's default thread pool; a run that failed can
    # leave some still running. Wait for them, so none reaches the mocks of the next run.
    executor = getattr(loop, "_default_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)
        loop._default_executor = None  # asyncio creates a fresh pool on the next run_in_executor
    with settings.SETTINGS.lock:
        leftovers = list(settings.SETTINGS.outputs)
        settings.SETTINGS.outputs.clear()
    for task in leftovers:  # retrieve their exceptions so asyncio does not log them at exit
        if task.done() and not task.cancelled():
            task.exception()


def stack_names(include_fixtures: bool = True) -> list[str]:
    """Environments (stacks/), and with `include_fixtures` the test-only stacks in tests/stacks/."""
    fixtures = [p.name[len("Pulumi."):-len(".yaml")] for p in FIXTURE_STACKS_DIR.glob("Pulumi.*.yaml")]
    return sorted(environments() + (fixtures if include_fixtures else []))


def stack_file(stack: str) -> Path:
    for d in (STACKS_DIR, FIXTURE_STACKS_DIR):
        path = d / f"Pulumi.{stack}.yaml"
        if path.exists():
            return path
    raise FileNotFoundError(f"no stack file Pulumi.{stack}.yaml in {STACKS_DIR} or {FIXTURE_STACKS_DIR}")


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _decrypted_offline(value: Any) -> tuple[Any, bool]:
    """A config value with every `{secure: ...}` replaced by SECURE_PLACEHOLDER, and whether any was."""
    if _is_secure(value):
        return SECURE_PLACEHOLDER, True
    if isinstance(value, dict):
        items = {k: _decrypted_offline(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        items = [_decrypted_offline(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def flatten_config(doc: dict) -> dict[str, str]:
    """A stack file's `config:` as the flat map the Pulumi engine hands a program.

    An encrypted value (`pulumi config set --secret` writes `{secure: v1:...}`) cannot be decrypted
    offline; it becomes SECURE_PLACEHOLDER: present, secret (see `secret_keys_of`), text unknown, so the
    program takes the path it takes with the real value.
    """
    flat: dict[str, str] = {}
    for key, value in (doc.get("config") or {}).items():
        value, _ = _decrypted_offline(value)
        flat[key] = value if isinstance(value, str) else json.dumps(value)
    return flat


def secret_keys_of(config: dict[str, str]) -> list[str]:
    """Keys the engine would mark secret: encrypted in the stack file (placeholder inside), and the
    kubeconfig, which the README always sets with --secret."""
    return sorted(k for k, v in config.items() if k.endswith(":kubeconfig") or SECURE_PLACEHOLDER in str(v))


def stack_config(stack: str) -> dict[str, str]:
    doc = yaml.safe_load(stack_file(stack).read_text()) or {}
    return flatten_config(doc)


def run_program(config: dict[str, str], stack: str = "test", preview: bool = False,
                mocks: Optional[AwsLikeMocks] = None, secret_keys: Optional[list[str]] = None,
                previous_outputs: Optional[dict[str, Any]] = None, main: Path = MAIN) -> ProgramRun:
    """Evaluate `__main__.py` with `config` under the mocks; raises what the program raises.

    `secret_keys`: the keys the engine marks secret; default `secret_keys_of(config)`.
    `previous_outputs`: the stack's outputs after its last update (a run's `outputs`); None: a new stack.
    `main`: the program to run (another checkout's, for offline/diff.py); its directory goes first on
    sys.path so its own `components` are the ones imported.
    """
    run = ProgramRun(stack=stack, config=dict(config), previous_outputs=previous_outputs)
    region = config.get("aws:region", "us-west-2")
    run.mocks = mocks or AwsLikeMocks(region)
    logger = logging.getLogger(f"rke-aws.offline.{id(run)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(_LogCollector(run))

    drain_leftover_tasks()
    # No cluster answers offline, and kubeconfigs here are placeholders (components/running.py).
    os.environ.setdefault("RKE_AWS_OFFLINE", "1")
    settings.ROOT.set(None)
    pulumi.runtime.set_all_config(dict(config), secret_keys_of(config) if secret_keys is None else secret_keys)
    monitor = _RecordingMonitor(run.mocks, run)
    pulumi.runtime.set_mocks(run.mocks, project=PROJECT, stack=stack, preview=preview,
                             logger=logger, monitor=monitor)
    program_root = str(Path(main).resolve().parent)
    if program_root not in sys.path:
        sys.path.insert(0, program_root)

    def program() -> None:
        runpy.run_path(str(main), run_name="__main__")

    try:
        _sync_await(pulumi_mocks.run_pulumi_func(program))
    finally:
        # The handler holds the run (and every registration); loggers live for the process.
        logger.handlers.clear()
    root = settings.get_root_resource()
    for key, value in (root.outputs if root is not None else {}).items():
        out = pulumi.Output.from_input(value)
        run.outputs[key] = _sync_await(out.future())
        if _sync_await(out.is_secret()):
            run.secret_outputs.add(key)
    return run


def run_stack(stack: str, preview: bool = False) -> ProgramRun:
    return run_program(stack_config(stack), stack=stack, preview=preview)
