"""The stack for rotation tests: the offline harness (offline/engine/harness.py run_program) stands in for the Pulumi
engine behind components/ops/rotate/model.py's Engine interface, and drives a FakeCluster's machines.

Each update evaluates the program with the stack's last outputs, as the engine hands them to it, and
keeps what the engine keeps (pulumi/pulumi pkg/resource/deploy/step_generator.go):
- a running instance keeps its ignored inputs (processIgnoreChanges: the old values go to the provider,
  so its state, and the outputs read from it, stay as they were) and its ID;
- a targeted `--replace` (isTargetedReplace) creates the instance from the program's own inputs, under a
  new ID, after deleting the old one (deleteBeforeReplace): the machine stops, a new one boots;
- `pending()` is the preview: resources whose inputs (minus their ignore_changes) differ from the last
  update's, and instances an interrupted update deleted without creating again.
Faults: `busy` (another update holds the lock: the Automation API's ConcurrentUpdateError), `fail_apply`
(the create fails after the delete, as an EC2 capacity error would).
"""

from __future__ import annotations

import copy
from typing import Any

from rke_aws.ops import rotate
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated.provider_checks import hex_of
from rke_aws_offline.engine.emulated_account import MotoMocks

from .fake_kube import FakeCluster

INSTANCE = "aws:ec2/instance:Instance"
# Instance inputs a running node ignores (components/aws/nodes.py IGNORED_ON_UPDATE; rootBlockDevice
# only while its volume would shrink: ROOT_VOLUME_SIZE).
KEPT = ("ami", "instanceType", "userData", "userDataBase64")

# The runs of engines made with `shared=True` (tests/support/rotation.py scenario), by all a run is made from: the
# stack, the configuration, the run before it (an object: runs are never changed once made) and, for an update,
# what it replaces and its generation (the new IDs). The same step of the same sequence (rotation scenarios replay
# the first replacements of one another) is evaluated once per session. Opt-in: a test that patches the program
# (test_stale_nodes' edited boot script) must get its own runs. The previous run is kept in the value so that
# its id is never reused.
_RUNS: dict[tuple, tuple[harness.ProgramRun | None, harness.ProgramRun]] = {}


def _config_key(config: dict) -> tuple:
    """A configuration as a key: a value's type is part of it (a secret and a plain value of the same text differ)."""
    return tuple(sorted((k, type(v).__name__, repr(v)) for k, v in config.items()))


def _run_once(shared: bool, key: tuple, previous: harness.ProgramRun | None, make) -> harness.ProgramRun:
    if not shared:
        return make()
    key = (id(previous), *key)
    if key not in _RUNS:
        _RUNS[key] = (previous, make())
    return _RUNS[key][1]


class _EngineMocks(MotoMocks):
    def __init__(self, region: str, kept: dict[str, tuple[str, dict]], replaced: set[str], generation: int):
        super().__init__(region)
        self.kept, self.replaced, self.generation = kept, replaced, generation

    def new_resource(self, args):
        rid, state = super().new_resource(args)
        if args.typ != INSTANCE:
            return rid, state
        if args.name in self.replaced:
            return f"i-{hex_of(f'{args.name}:{self.generation}', 17)}", state
        old = self.kept.get(args.name)
        if old is None:
            return rid, state
        old_id, old_state = old
        state = {**state, **{k: old_state[k] for k in KEPT if k in old_state}}
        for k in KEPT:
            if k not in old_state:
                state.pop(k, None)
        old_size = (old_state.get("rootBlockDevice") or {}).get("volumeSize")
        new_size = (state.get("rootBlockDevice") or {}).get("volumeSize")
        if old_size and new_size and old_size > new_size:
            state["rootBlockDevice"] = {**state["rootBlockDevice"], "volumeSize": old_size}
        return old_id, state


class HarnessEngine:
    def __init__(self, config: dict, stack: str, cluster: FakeCluster | None = None, up_seconds: float = 60.0,
                 run: harness.ProgramRun | None = None, shared: bool = False):
        self.config, self.stack, self.cluster = dict(config), stack, cluster
        self.shared = shared
        self.up_seconds = up_seconds
        self.region = config.get("aws:region", "us-west-2")
        self.generation = 0
        self.replaced: list[list[str]] = []  # the URNs of each `replace`
        self.deleted: set[str] = set()  # instances an update deleted and did not create again
        self.busy = False
        self.fail_apply = False
        self.previews = 0
        # Runs are never changed once made (each update makes a new one), so tests may share them.
        # Every run of this engine in the kind of account its updates use (_EngineMocks): one backend's images
        # and IDs throughout, so a change is the configuration's and never the backend's.
        self._run = run if run is not None else _run_once(
            shared, ("base", stack, _config_key(self.config)), None,
            lambda: harness.run_program(self.config, stack=stack, mocks=MotoMocks(self.region)))
        self._applied_config = dict(self.config)

    # ---- what the user does ----
    def up(self, config: dict | None = None, run: harness.ProgramRun | None = None) -> harness.ProgramRun:
        """A plain `pulumi up` (after editing the stack file): running instances keep their ignored inputs.
        `run`: that update's run, made earlier by an engine in the same state (shared by tests)."""
        if config is not None:
            self.config = dict(config)
        if run is not None:
            # The state the engine that made `run` was in after it: the same generation, so the next `replace`
            # gives the same new IDs and is the same shared step (keyed by it), not an evaluation again.
            self.generation += 1
            self._run = run
        else:
            self._apply(set())
        self._applied_config = dict(self.config)
        return self._run

    # ---- Engine ----
    def outputs(self) -> dict[str, Any]:
        if self.busy:
            raise rotate.EngineBusy("error: [409] Conflict: Another update is currently in progress.")
        return copy.deepcopy(self._run.outputs)

    def pending(self) -> list[tuple[str, str]]:
        if self.busy:
            raise rotate.EngineBusy("error: [409] Conflict: Another update is currently in progress.")
        self.previews += 1
        found = [("create", urn) for urn in sorted(self.deleted)]
        if self.config == self._applied_config:
            return found
        preview = _run_once(
            self.shared, ("preview", self.stack, _config_key(self.config)), self._run,
            lambda: harness.run_program(self.config, stack=self.stack, previous_outputs=self._run.outputs,
                                        mocks=MotoMocks(self.region)))
        old = {r.urn: r for r in self._run.resources if r.custom}
        for r in preview.resources:
            if not r.custom:
                continue
            if r.urn not in old:
                found.append(("create", r.urn))
                continue

            def kept(reg: harness.Registration) -> dict:
                return {k: v for k, v in reg.inputs.items() if k not in reg.ignore_changes}
            if kept(r) != kept(old.pop(r.urn)):
                found.append(("update", r.urn))
        found += [("delete", urn) for urn in old]
        return found

    def replace(self, urns) -> None:
        urns = list(urns)
        if self.busy:
            raise rotate.EngineBusy("error: [409] Conflict: Another update is currently in progress.")
        self.replaced.append(urns)
        by_urn = {r.urn: r for r in self._run.resources}
        names = {by_urn[u].name: by_urn[u] for u in urns if u in by_urn}
        # deleteBeforeReplace: the old instances go first.
        for reg in names.values():
            if self.cluster is not None:
                self.cluster.stop(reg.inputs["tags"]["Name"])
        if self.fail_apply:
            self.deleted |= set(urns)
            raise rotate.EngineFailed("error: update failed\n  aws:ec2:Instance: creating EC2 Instance: "
                                      "InsufficientInstanceCapacity: We currently do not have sufficient capacity")
        self._apply(set(names) | {u.rsplit("::", 1)[-1] for u in urns if u in self.deleted})
        self.deleted -= set(urns)
        if self.cluster is not None:
            version = self._run.outputs.get("kubernetesVersion")
            for reg in names.values():
                server = "etcd" in reg.inputs["tags"].get("rke-aws/roles", "")
                self.cluster.boot(reg.inputs["tags"]["Name"], server, version)
            self.cluster.clock.sleep(self.up_seconds)

    def _apply(self, replaced: set[str]) -> None:
        self.generation += 1
        kept = {r.name: (r.id, r.state) for r in self._run.resources if r.type == INSTANCE}
        mocks = _EngineMocks(self.region, kept, replaced, self.generation)
        key = ("up", self.stack, _config_key(self.config), tuple(sorted(replaced)), self.generation)
        self._run = _run_once(self.shared, key, self._run, lambda: harness.run_program(
            self.config, stack=self.stack, previous_outputs=self._run.outputs, mocks=mocks))
