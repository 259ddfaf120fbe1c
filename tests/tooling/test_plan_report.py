"""`rke-aws plan <stack>`: the first screen a person reads (summary, nodes, warnings within the first 40 lines for
every stack), the resources by component in creation order, the full dump behind --full, progress on stderr
only, and a misspelt stack named with a suggestion.

Issue 34: `plan rke2-dev` printed 1,340 lines with the summary at line ~1,020, the node table at ~75% (without
instance type, market or architecture) and the warnings last."""

from __future__ import annotations

import json

import pytest

from rke_aws_offline.engine import harness
from rke_aws_offline.report import plan_report, plan_text
from tests.support import collector
from tests.support.runs import STACKS, run_stack_cached

FIRST_SCREEN = 40


def _first(text: str) -> list[str]:
    return text.splitlines()[:FIRST_SCREEN]


@pytest.mark.parametrize("stack", STACKS)
def test_summary_nodes_and_warnings_are_on_the_first_screen(stack, emulated):
    """From the shared emulated build of each stack (tests/support/emulated.py): the plan's own data."""
    s = json.loads(emulated(stack).snapshot)
    first = _first(plan_report.render(s))
    screen = "\n".join(first)
    assert first[0].startswith(f"{stack}: {len(s['resources'])} resources to create ("), first[0]
    assert "emulated account: IDs are fake" in first[0]
    assert f"Nodes: {len(s['nodes'])}" in first
    for n in s["nodes"]:
        row = next((line for line in first if line.strip().startswith(n["name"] + " ")), None)
        assert row is not None, f"{stack}: node {n['name']} not on the first screen:\n{screen}"
        assert n["pool"] in row and n["privateIp"] in row and n["availabilityZone"] in row, row
    for message in s["messages"]:
        words = message.partition(": ")[2].split()[:8]  # the start of each, as wrapped
        assert " ".join(words[:4]) in screen, f"{stack}: {message[:80]!r} not on the first screen:\n{screen}"


def test_the_nodes_show_type_architecture_market_and_os(emulated):
    s = json.loads(emulated("rke2-everything").snapshot)
    rows = {line.split()[0]: line for line in plan_text.node_table(s)[1:]}
    types = {e["inputs"]["privateIp"]: e["inputs"] for e in s["resources"] if e["type"] == "Instance"}
    for n in s["nodes"]:
        row = rows[n["name"]]
        inputs = types[n["privateIp"]]
        assert inputs["instanceType"] in row and "Ubuntu 24.04" in row, row
        assert ("spot" if inputs.get("instanceMarketOptions") else "on-demand") in row.split(), row
        assert ("arm64" if inputs["instanceType"].startswith("m7g") else "x86_64") in row.split(), row


def test_resources_are_grouped_by_component_in_creation_order():
    """Issue 34: resources were sorted alphabetically (the security group before the VPC)."""
    run = run_stack_cached("rke2-govcloud")
    text = plan_report.render(plan_report.summary(run), order=plan_text.layout(run))
    lines = text.splitlines()
    body = lines[lines.index(next(x for x in lines if x.startswith("Resources:"))):]
    at = {k: next(i for i, x in enumerate(body) if x.strip().startswith(k)) for k in
          ("RkeCluster rke2-govcloud", "Network rke2-govcloud", "+ Vpc ", "+ Subnet ", "+ RouteTableAssociation ",
           "ClusterSecurityGroup", "+ SecurityGroup ", "NodeIam", "+ Role ", "+ RolePolicy ", "+ InstanceProfile ",
           "Nodes rke2-govcloud", "+ Instance ")}
    assert at["RkeCluster rke2-govcloud"] < at["Network rke2-govcloud"] < at["+ Vpc "] < at["+ Subnet "] \
        < at["+ RouteTableAssociation "] < at["ClusterSecurityGroup"] < at["+ SecurityGroup "], body[:60]
    assert at["NodeIam"] < at["+ Role "] < at["+ RolePolicy "] and at["+ Role "] < at["+ InstanceProfile "]
    assert at["+ SecurityGroup "] < at["Nodes rke2-govcloud"] < at["+ Instance "]
    assert all(f"+ {e['type']} {e['name']}" in text for e in plan_report.summary(run)["resources"])
    assert plan_text.layout(run) == plan_text.layout(run_stack_cached("rke2-govcloud")), "the order is stable"


def test_plan_prints_the_readable_view_the_full_dump_behind_a_flag_and_progress_on_stderr(capsys, monkeypatch):
    # The second command renders the first one's evaluation (the same stack file): what differs is the view.
    real, runs = plan_report.evaluate, []
    monkeypatch.setattr(plan_report, "evaluate", lambda stack, project=None: runs[0] if runs else
                        runs.append(real(stack, project)) or runs[0])
    assert plan_report.main(["rke2-govcloud"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("rke2-govcloud: ") and plan_text.FULL_HINT in out and "Outputs:" not in out
    assert "plan rke2-govcloud: evaluating the program in an emulated AWS account" in err, err
    assert plan_report.main(["rke2-govcloud", "--full", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "Outputs:" in out and "Generated configuration (secrets masked):" in out
    assert "rke2Token:\n    ****" in out and plan_text.FULL_HINT not in out
    assert "True" not in out and not any(x in out for x in ("0.0\n", "0.0,")), "values as YAML shows them"


def test_a_misspelt_stack_is_named_with_a_suggestion(capsys):
    assert plan_report.main(["rke2-govclod"]) == 2
    err = capsys.readouterr().err
    assert "unknown stack 'rke2-govclod'" in err and "did you mean rke2-govcloud?" in err, err
    assert "Traceback" not in err


def test_json_is_unchanged_by_the_readable_view(emulated, capsys):
    """The JSON keeps its shape for machines: `--json` is tests/snapshots/<stack>.json."""
    assert plan_report.main(["rke2-govcloud", "--json", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert printed == emulated("rke2-govcloud").snapshot
    assert printed == (harness.ROOT / "tests" / "snapshots" / "rke2-govcloud.json").read_text()


def test_the_plan_command_runs_without_the_cyclic_collector_and_restores_it(monkeypatch):
    """`rke-aws plan` is one short process: the cyclic GC's passes over the SDKs' objects cost 12% of its CPU
    (offline/cli.py _without_cyclic_gc); whoever calls it in process gets the collector back, over what it allocates
    next: what the plan left is frozen (neither that first pass nor the one at exit scans it)."""
    import gc

    from rke_aws_offline import cli

    seen: list[bool] = []
    monkeypatch.setattr(plan_report, "main", lambda argv, project=None: seen.append(gc.isenabled()) or 0)
    assert gc.isenabled()
    # The test process freezes too (tests/support/collector.py), not while this counts what the plan froze.
    with collector.paused():
        frozen = gc.get_freeze_count()
        assert cli.main(["plan", "rke2-dev"]) == 0
        assert seen == [False] and gc.isenabled() and gc.get_freeze_count() > frozen


def test_the_plan_command_line_ends_the_process_with_all_its_output_and_its_code():
    """Run as a command (no argv: the process's own command line), `rke-aws plan` ends the process without the
    interpreter's teardown (offline/cli.py _end_process): its whole output still arrives through a pipe, and its exit
    code is the plan's."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "rke_aws_offline.cli", "plan"]
    done = subprocess.run([*cmd, "rke2-govcloud", "--json", "--quiet"], cwd=harness.ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == (harness.ROOT / "tests" / "snapshots" / "rke2-govcloud.json").read_text()
    refused = subprocess.run([*cmd, "rke2-govclod"], cwd=harness.ROOT, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "did you mean rke2-govcloud?" in refused.stderr


def test_an_in_process_plan_returns(monkeypatch):
    """With argv (a caller in this process) the command returns its code: only the process's own command line ends
    the process."""
    from rke_aws_offline import cli

    monkeypatch.setattr(plan_report, "main", lambda argv, project=None: 3)
    monkeypatch.setattr(cli, "_end_process", lambda code: pytest.fail("an in-process call ended the process"))
    assert cli.main(["plan", "rke2-dev"]) == 3
    ended: list[int] = []
    monkeypatch.setattr(cli, "_end_process", ended.append)
    monkeypatch.setattr("sys.argv", ["rke-aws", "plan", "rke2-dev"])
    cli.main()
    assert ended == [3]

