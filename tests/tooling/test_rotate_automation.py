"""The real engine of `rotate` (components/ops/rotate/automation.py AutomationEngine) through the real Automation API
(pulumi.automation: LocalWorkspace, select_stack, Stack.preview/up/outputs), offline: only the Pulumi CLI
is replaced (PulumiCommand.run records the command line and answers as the CLI does), so what is checked
is exactly what the CLI would be asked to do.

Sources: pulumi/pulumi sdk/python/lib/pulumi/automation/_local_workspace.py (select_stack for a local
program: work_dir, `stack select --stack`), _stack.py (up: `up --yes --skip-preview`, each target and
replace a repeated flag; preview reads the engine's events, over gRPC from the pinned CLI:
_setup_event_log), errors.py (create_command_error:
"[409] Conflict: Another update is currently in progress." and "the stack is currently locked by" are
ConcurrentUpdateError); pkg/cmd/pulumi/state/state_unprotect.go (`state unprotect --stack --yes <urn>`).

What only a real account shows (docs/operations/rotate.md): the CLI's own behaviour with a
backend (the lock, Ctrl-C, outputs after a failed update), the preview's events from a real engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from pulumi import automation as auto
from pulumi.automation._cmd import CommandResult, PulumiCommand
from pulumi.automation.errors import create_command_error
from pulumi.runtime.proto import events_pb2, events_pb2_grpc
from semver import VersionInfo

from rke_aws.ops import rotate

URN = ("urn:pulumi:prod::rke-aws::rke-aws:index:RkeCluster$rke-aws:nodes:Nodes$aws:ec2/instance:Instance::"
       "prod-servers-1")
STACK_URN = "urn:pulumi:prod::rke-aws::pulumi:pulumi:Stack::rke-aws-prod"
# The CLI the workflows install (.github/pulumi-version, the one place it is pinned). Past 3.205 the Automation
# API takes the engine's events over gRPC, not from a file it polls (_stack.py _setup_event_log): with a file, a
# command the backend refuses before the engine starts (a lock) leaves it empty and the SDK waits out its 5 s
# join of the reader (_cleanup); with gRPC it stops its server without waiting.
CLI_VERSION = VersionInfo.parse((Path(__file__).resolve().parents[2] / ".github" / "pulumi-version").read_text().strip())
HISTORY = [{"kind": "update", "startTime": "2026-11-01T10:00:00.000Z", "endTime": "2026-11-01T10:04:00.000Z",
            "message": "", "environment": {}, "config": {}, "result": "succeeded", "version": 12}]


class FakeCli(PulumiCommand):
    """The Pulumi CLI as the Automation API calls it: records each command line; answers outputs,
    config, history and previews (the event log); `fail` maps a subcommand to (exit code, stderr)."""

    def __init__(self, outputs: dict | None = None, events: list[dict] | None = None):
        self.command = "pulumi"
        self.version = CLI_VERSION
        self.calls: list[list[str]] = []
        self.outputs = outputs or {}
        self.events = events or []
        self.fail: dict[str, tuple[int, str]] = {}

    def run(self, args, cwd, additional_env, on_output=None, on_error=None):
        args = list(args)
        self.calls.append(args)
        sub = next(a for a in args if not a.startswith("-"))
        if sub in self.fail:
            code, stderr = self.fail[sub]
            raise create_command_error(CommandResult(stdout="", stderr=stderr, code=code))
        if args[:2] == ["stack", "output"]:
            return CommandResult(stdout=json.dumps(self.outputs), stderr="", code=0)
        if args[:2] == ["stack", "history"]:
            return CommandResult(stdout=json.dumps(HISTORY), stderr="", code=0)
        if args[:1] == ["config"]:
            return CommandResult(stdout=json.dumps({"rke-aws:rotation": {"value": '{"maxUnavailableAgents":2}',
                                                                          "secret": False}}), stderr="", code=0)
        if sub == "preview":
            # The engine's events, each one JSON text, streamed to the SDK's Events server at `--event-log
            # tcp://host:port` and the stream closed after the cancelEvent (pkg/backend/display/display.go
            # startEventLogger); a completed operation ends with a summaryEvent and that cancelEvent
            # (pulumi/automation/events.py CancelEvent). A refused one (the fail branch above) never starts
            # the engine and sends nothing.
            target = args[args.index("--event-log") + 1].removeprefix("tcp://")
            ending = [{"summaryEvent": {"resourceChanges": {}}}, {"cancelEvent": {}}]
            requests = [events_pb2.EventRequest(event=json.dumps({"sequence": i, "timestamp": 0, **event}))
                        for i, event in enumerate(self.events + ending)]
            with grpc.insecure_channel(target) as channel:
                events_pb2_grpc.EventsStub(channel).StreamEvents(iter(requests), timeout=30)
        return CommandResult(stdout="", stderr="", code=0)


def _pre(op: str, urn: str, typ: str) -> dict:
    return {"resourcePreEvent": {"metadata": {"op": op, "urn": urn, "type": typ, "provider": ""}}}


def engine(cli: FakeCli, lines: list[str] | None = None) -> rotate.AutomationEngine:
    return rotate.AutomationEngine("prod", opts=auto.LocalWorkspaceOptions(pulumi_command=cli),
                                   say=(lines if lines is not None else []).append)


def test_the_stack_is_selected_in_the_project_directory_never_created():
    cli = FakeCli()
    e = engine(cli)
    assert cli.calls == [["stack", "select", "--stack", "prod"]]
    assert e.stack.workspace.work_dir == str(rotate.ROOT) and (rotate.ROOT / "Pulumi.yaml").exists()


def test_a_missing_stack_stops_before_anything_changed():
    cli = FakeCli()
    cli.fail["stack"] = (255, "error: no stack named 'prod' found")
    with pytest.raises(rotate.Stop) as stop:
        engine(cli)
    assert "no stack named prod" in stop.value.why and "pulumi login" in stop.value.how


def test_replace_is_one_targeted_update_of_exactly_those_instances():
    cli = FakeCli(outputs={"nodes": []})
    lines: list[str] = []
    e = engine(cli, lines)
    e.replace([URN])
    unprotect, up = cli.calls[1], cli.calls[2]
    # protectServers: the bit is cleared first; the update protects the new instance again.
    assert unprotect == ["state", "unprotect", "--stack", "prod", "--yes", URN]
    assert up[:3] == ["up", "--yes", "--skip-preview"], up
    assert up.count("--target") == 1 and up[up.index("--target") + 1] == URN
    assert up.count("--replace") == 1 and up[up.index("--replace") + 1] == URN
    assert "--target-dependents" not in up and up[up.index("--color") + 1] == "never"
    assert up[up.index("--message") + 1] == "rke-aws rotate: replace prod-servers-1"
    assert "--stack" in up and up[up.index("--stack") + 1] == "prod"


@pytest.mark.parametrize(("stderr", "refused"), [
    # Pulumi Cloud: an update and a preview alike first create an update there (pkg/backend/httpstate/backend.go
    # apply -> createAndStartUpdate), which is where the 409 comes from.
    ("error: [409] Conflict: Another update is currently in progress.", ("up", "preview")),
    # DIY backend: an update (and refresh, destroy, import) takes the stack's lock; a preview takes none
    # (pkg/backend/diy/backend.go Update -> Lock, Preview; lock.go checkForLock writes this text).
    ("error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end", ("up",)),
], ids=["pulumi-cloud", "diy"])
def test_the_stack_lock_is_engine_busy(stderr, refused):
    cli = FakeCli()
    e = engine(cli)
    cli.fail["up"] = (255, stderr)
    with pytest.raises(rotate.EngineBusy):
        e.replace([URN])
    if "preview" in refused:
        cli.fail["preview"] = (255, stderr)
        with pytest.raises(rotate.EngineBusy):
            e.pending()


def test_a_failed_update_is_engine_failed_with_the_cli_text():
    cli = FakeCli()
    e = engine(cli)
    cli.fail["up"] = (255, "error: update failed\n  creating EC2 Instance: InsufficientInstanceCapacity")
    with pytest.raises(rotate.EngineFailed) as failed:
        e.replace([URN])
    assert "InsufficientInstanceCapacity" in str(failed.value)


def test_pending_reads_the_preview_events_and_ignores_the_stack_and_unchanged_resources():
    events = [_pre("same", STACK_URN, "pulumi:pulumi:Stack"), _pre("update", STACK_URN, "pulumi:pulumi:Stack"),
              _pre("same", URN, "aws:ec2/instance:Instance"),
              _pre("update", "urn:pulumi:prod::rke-aws::aws:ec2/securityGroupRule:SecurityGroupRule::x",
                   "aws:ec2/securityGroupRule:SecurityGroupRule"),
              _pre("create", URN, "aws:ec2/instance:Instance")]
    cli = FakeCli(events=events)
    e = engine(cli)
    found = e.pending()
    preview = cli.calls[-1]
    assert preview[0] == "preview" and "--event-log" in preview
    assert found == [("update", "urn:pulumi:prod::rke-aws::aws:ec2/securityGroupRule:SecurityGroupRule::x"),
                     ("create", URN)]


def test_outputs_and_rotation_settings_come_from_the_stack():
    cli = FakeCli(outputs={"distribution": "rke2", "nodes": [{"name": "n"}]})
    e = engine(cli)
    assert e.outputs() == {"distribution": "rke2", "nodes": [{"name": "n"}]}
    assert rotate.rotation_settings(e.config()) == 2
    assert any(c[:1] == ["config"] and "--show-secrets" in c for c in cli.calls)


def test_rotation_settings_are_judged_by_the_model():
    assert rotate.rotation_settings({}) == 1
    with pytest.raises(rotate.Stop) as stop:
        rotate.rotation_settings({"rke-aws:rotation": '{"maxUnavailableAgents": 0}'})
    assert "rke-aws:rotation.maxUnavailableAgents: 0 is out of range" in stop.value.why


def test_the_kubeconfig_is_the_flag_then_the_stack_then_make_kubeconfig(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(rotate.Stop) as stop:
        rotate.kubeconfig_text("prod", None, {})
    assert "make kubeconfig STACK=prod" in stop.value.how
    (tmp_path / "kubeconfig-prod.yaml").write_text("from make")
    assert rotate.kubeconfig_text("prod", None, {}) == "from make"
    assert rotate.kubeconfig_text("prod", None, {"rke-aws:kubeconfig": "from stack"}) == "from stack"
    (tmp_path / "k.yaml").write_text("from flag")
    assert rotate.kubeconfig_text("prod", str(tmp_path / "k.yaml"), {"rke-aws:kubeconfig": "x"}) == "from flag"
