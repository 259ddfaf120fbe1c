"""Run `__main__.py` offline against an emulated AWS account and record everything it registered.

Used by the tests, by `rke-aws plan|diff` and by the benchmarks, so all see the same program run. The account is
moto's (rke_aws_offline.engine.emulated_account.MotoMocks), imported on the first run.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.sync_await import _sync_await

from rke_aws_offline.engine import lazy_sdk, stacks
from rke_aws_offline.engine.records import Registration
from rke_aws_offline.engine.stacks import PROJECT, STACKS_DIR, environments, project_name

if TYPE_CHECKING:
    pass

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "__main__.py"
# Test-only stacks (a phase-two stack with encrypted values, other partitions): planned, snapshotted
# and tested like stacks/, but not environments (no workflow deploys them).
FIXTURE_STACKS_DIR = ROOT / "tests" / "stacks"


@dataclass
class Lookup:
    """One invoke the program made (an AMI, the zones, a subnet) and what it got back."""
    token: str
    args: dict
    result: dict
    failure: str | None = None


@dataclass
class ProgramRun:
    stack: str
    config: dict[str, str]
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    logs: list[tuple[str, str]] = field(default_factory=list)
    mocks: Any = None  # the account the run was made in (stopped unless the caller keeps it)
    previous_outputs: dict[str, Any] | None = None  # what the stack exported last time
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

    def __init__(self, mocks: pulumi.runtime.Mocks, run: ProgramRun):
        super().__init__(mocks)
        self.run = run

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The engine's URN (pulumi/pulumi pkg/resource/deploy/deployment.go generateURN): the parent's
        whole qualified type, none for children of the root stack. The SDK's MockMonitor.make_urn keeps
        only the parent's last type and puts the stack's in front of its children."""
        from pulumi.runtime.settings import get_project, get_stack

        parent_type = parent.split("::")[2] if parent else ""
        if parent_type == "pulumi:pulumi:Stack":
            parent_type = ""
        qualified = f"{parent_type}${type_}" if parent_type else type_
        return "urn:pulumi:" + "::".join([get_stack(), get_project(), qualified, name])

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
                deleted_with=request.deletedWith,
                aliases=[_alias_urn(response.urn, a) for a in request.aliases],
                replace_on_changes=list(request.replaceOnChanges),
                additional_secret_outputs=list(request.additionalSecretOutputs),
            )
        )
        return response


def _alias_urn(urn: str, alias) -> str:
    """An alias as the engine collapses it to a URN (pulumi/pulumi pkg/resource/deploy/step_generator.go
    collapseAliasToUrn): a whole URN, or the resource's own URN under the alias's name, type and parent
    (pulumi-aws itself aliases renamed types, e.g. BucketV2 -> Bucket). No parent (`noParent`, or the root
    stack: the Python SDK sends `Alias(parent=pulumi.ROOT_STACK_RESOURCE)`, which is None, as noParent)
    means the type stands alone, as for any child of the stack. A parent that was itself found by an
    alias is resolved by `match_old_urns`, as the engine does."""
    if alias.urn:
        return alias.urn
    prefix, _, name = urn.rpartition("::")
    head, _, qualified = prefix.rpartition("::")
    parents, _, own_type = qualified.rpartition("$")
    own_type = alias.spec.type or own_type
    if alias.spec.noParent:
        parents = ""
    elif alias.spec.parentUrn:
        parent_type = alias.spec.parentUrn.split("::")[2]
        parents = "" if parent_type == "pulumi:pulumi:Stack" else parent_type
    return f"{head}::{parents + '$' if parents else ''}{own_type}::{alias.spec.name or name}"


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
    old failure (e.g. tests/program/test_nodes.py's renamed-node test, then any later run). Cancels
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
    """rke_aws_offline.engine.stacks.stack_names over this module's FIXTURE_STACKS_DIR."""
    return stacks.stack_names(include_fixtures, FIXTURE_STACKS_DIR)


def project_of(stack: str) -> str:
    """The project a stack runs in, whose name is its configuration namespace: Pulumi.yaml's for an
    environment (stacks/), this repository's (PROJECT) for everything else."""
    return project_name() if stack in environments() else PROJECT


def stack_file(stack: str) -> Path:
    for d in (STACKS_DIR, FIXTURE_STACKS_DIR):
        path = d / f"Pulumi.{stack}.yaml"
        if path.exists():
            return path
    raise FileNotFoundError(f"no stack file Pulumi.{stack}.yaml in {STACKS_DIR} or {FIXTURE_STACKS_DIR}")


# ---- the stack file as the Pulumi CLI reads it ------------------------------------------------------
#
# rke_aws.settings.stackfile parses it (load_stack_text, secret_keys_of, ...). Imported late: a diff
# evaluates another checkout's program in this process's subprocess, whose `rke_aws` is that checkout's.

_STACK_CONFIGS: dict[tuple[str, str, str, str], dict[str, str]] = {}


def stack_config(stack: str) -> dict[str, str]:
    """The stack file's configuration as the CLI hands it to the program (a fresh dict each call). Read and validated
    once per text of the file: the tests ask for the same few stacks thousands of times (~10 ms each)."""
    from rke_aws.settings import stackfile

    path, project = stack_file(stack), project_of(stack)
    text = path.read_text()
    key = (stack, str(path), project, text)
    if key not in _STACK_CONFIGS:
        flat, secret_keys = stackfile.load_stack_text(text, f"Pulumi.{stack}.yaml", project=project)
        assert set(secret_keys) <= set(stackfile.secret_keys_of(flat))
        _STACK_CONFIGS[key] = flat
    return dict(_STACK_CONFIGS[key])


def _no_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


def _no_debug(msg: str, resource: Any = None, stream_id: int | None = None, ephemeral: bool | None = None) -> None:
    """pulumi.log.debug during an offline run: the run keeps INFO and above (_LogCollector)."""


def import_checkout(root: Path) -> None:
    """Make `root`'s program import its own code: `root` first on sys.path (a checkout from before the
    package layout imports `components`), and for another checkout than this one, its `components/` as
    `rke_aws` through a directory holding only that link, ahead of it (a sys.path entry wins over the
    editable install's finder, which maps `rke_aws` to this checkout). Only in a process that has not
    imported `rke_aws` yet (rke_aws_offline.report.diff evaluates each checkout in a fresh interpreter)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    if root == ROOT or not (root / "components").is_dir():
        return
    loaded = sys.modules.get("rke_aws")
    if loaded is not None:
        if Path(loaded.__file__ or "").resolve().parent == (root / "components").resolve():
            return
        raise RuntimeError(f"cannot run the program of {root} here: this process imported rke_aws from "
                           f"{loaded.__file__} (evaluate another checkout in a fresh interpreter)")
    import atexit
    import shutil
    import tempfile

    links = Path(tempfile.mkdtemp(prefix="rke-aws-import-"))
    atexit.register(shutil.rmtree, links, True)
    (links / "rke_aws").symlink_to((root / "components").resolve(), target_is_directory=True)
    sys.path.insert(0, str(links))


FIXTURE_OBJECTS = FIXTURE_STACKS_DIR / "account-objects.json"


def fixture_objects(config: dict[str, str]) -> dict[str, list[str]]:
    """The buckets (and their keys) of tests/stacks/account-objects.json whose name `config` mentions: what a
    user filled before planning (an air-gapped stack's artifacts bucket)."""
    if not FIXTURE_OBJECTS.exists():
        return {}
    text = json.dumps(config)
    table = json.loads(FIXTURE_OBJECTS.read_text())
    return {spec: keys for spec, keys in table.items() if not spec.startswith("_") and spec.split("@")[0] in text}


def run_program(config: dict[str, str], stack: str = "test", preview: bool = False,
                mocks: pulumi.runtime.Mocks | None = None, secret_keys: list[str] | None = None,
                previous_outputs: dict[str, Any] | None = None, main: Path = MAIN,
                project: str | None = None) -> ProgramRun:
    """Evaluate `__main__.py` with `config` against an emulated account; raises what the program raises.

    `mocks`: the account (MotoMocks); default a fresh one in the config's region. An account not yet active is
    started here and stopped after the run; one the caller started stays active (the caller inspects it).

    `secret_keys`: the keys the engine marks secret; default `secret_keys_of(config)`.
    `previous_outputs`: the stack's outputs after its last update (a run's `outputs`); None: a new stack.
    `main`: the program to run (another checkout's, for rke_aws_offline.report.diff); its own package is
    the one imported (import_checkout).
    `project`: the Pulumi project (pulumi.get_project(), the configuration namespace); default project_of(stack).
    """
    run = ProgramRun(stack=stack, config=dict(config), previous_outputs=previous_outputs)
    if mocks is None:
        from rke_aws_offline.engine.emulated_account import MotoMocks

        mocks = MotoMocks(config.get("aws:region", "us-west-2"), objects=fixture_objects(config))
    run.mocks = mocks
    account: Any = mocks
    started = not getattr(account, "active", True)  # an emulated account not yet active
    if started:
        account.start()
    try:
        _evaluate(run, config, stack, preview, secret_keys, main, project)
    except BaseException:
        if started:  # no registration of this run may reach the next run's account
            drain_leftover_tasks()
            account.stop()
        raise
    if started:
        account.stop()
    return run


def _evaluate(run: ProgramRun, config: dict[str, str], stack: str, preview: bool, secret_keys: list[str] | None,
              main: Path, project: str | None) -> None:
    logger = logging.getLogger(f"rke-aws.offline.{id(run)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(_LogCollector(run))

    drain_leftover_tasks()
    # Programs with hundreds of nodes hold tens of thousands of long-lived Output objects; with the
    # default thresholds the collector rescans them over and over (over half the run time at 500
    # nodes, bench/RESULTS.md). Fewer full collections keep offline runs linear in node count.
    gc.set_threshold(700, 10, 100)
    # Checkouts before issue 33 (the diff's base) read this to leave the cluster alone offline; today's program
    # needs no switch (offline, its Environment reads no cluster: components/plan/environment.py).
    os.environ.setdefault("RKE_AWS_OFFLINE", "1")
    settings.ROOT.set(None)
    if secret_keys is None:
        from rke_aws.settings.stackfile import secret_keys_of

        secret_keys = secret_keys_of(config)
    pulumi.runtime.set_all_config(dict(config), secret_keys)
    # The provider SDKs' sub-packages load class by class (engine/lazy_sdk.py); before the program imports them.
    lazy_sdk.install()
    monitor = _RecordingMonitor(run.mocks, run)

    def program() -> None:
        runpy.run_path(str(main), run_name="__main__")

    # The SDK walks the Python stack at every registration to tell the engine where the resource was
    # declared (pulumi/runtime/resource.py `_get_stack_trace`; the CLI shows it, nothing offline reads
    # it): ~13% of an offline run. Offline, every registration says "no frames".
    walk_stack = getattr(pulumi_resource, "_get_stack_trace", None)
    if walk_stack is not None:
        pulumi_resource._get_stack_trace = _no_stack_trace
    # The SDK's debug channel (pulumi/log.py `debug`: a LogRequest to the engine for each registration, the root
    # stack's in set_mocks included, ~380 per run, ~5% of it) reaches a handler that keeps INFO and above
    # (_LogCollector): offline, no message is built.
    send_debug = pulumi.log.debug
    pulumi.log.debug = _no_debug  # type: ignore[assignment]
    try:
        pulumi.runtime.set_mocks(run.mocks, project=project or project_of(stack), stack=stack, preview=preview,
                                 logger=logger, monitor=monitor)
        import_checkout(Path(main).resolve().parent)
        _sync_await(pulumi_mocks.run_pulumi_func(program))
    finally:
        # The handler holds the run (and every registration); loggers live for the process.
        logger.handlers.clear()
        # ...unless taken out of the registry: pytest (logging.py catching_logs, 6 times a test) attaches its handlers
        # to every non-propagating logger there, so one left per run made each later test of a worker slower.
        logging.Logger.manager.loggerDict.pop(logger.name, None)
        if walk_stack is not None:
            pulumi_resource._get_stack_trace = walk_stack
        pulumi.log.debug = send_debug  # type: ignore[assignment]
    root = settings.get_root_resource()
    for key, value in (root.outputs if root is not None else {}).items():
        out = pulumi.Output.from_input(value)
        run.outputs[key] = _sync_await(out.future())
        if _sync_await(out.is_secret()):
            run.secret_outputs.add(key)


def run_stack(stack: str, preview: bool = False) -> ProgramRun:
    return run_program(stack_config(stack), stack=stack, preview=preview)
