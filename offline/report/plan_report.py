"""`rke-aws plan <stack>` (`make plan STACK=<stack>`): what a stack would create, evaluated offline.

No credentials and no network: the program runs against an emulated AWS account (moto, in process;
offline/engine/emulated_account.py), so IDs, addresses and DNS names come from the emulator (and are marked
fake) and its refusals fail the plan.

What a person reads first (offline/report/plan_text.py): what is created per kind, the nodes as a table (name,
pool, role, zone, address, type, architecture, market, OS), the program's warnings and what needs a second
`pulumi up`; then the resources grouped as the component tree, in creation order. `--full` adds, per resource,
every input the program sends (instance type, AMI, root volume, IMDS, all tags, security-group rules, IAM
policies statement by statement, SSM parameters, Helm releases, Route 53 records, ...), with JSON policies and
YAML manifests parsed; user data summarised (its files, the boot script's settings and a digest) next to each
node's generated configuration; the look-ups the program made; the CCM's chart, image and effective values;
the outputs. Secrets are masked: secret inputs and outputs, secret-looking keys in generated configs, and every
secret value wherever it appears.

`--json` prints the data for machines (its shape does not follow the text); tests/snapshots/<stack>.json holds it.
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from typing import Any

import yaml
from pulumi import RunError

from rke_aws.plan import stale
from rke_aws.settings import tags as tagsets
from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.records import secret_strings
from rke_aws_offline.report import plan_text, progress
from rke_aws_offline.report.project import Project, ProjectError
from rke_aws_offline.report.review import MASK, YAML_LOADER, cloud_config, decode_user_data, parsed, review_inputs

RKE2_CONFIG_PATH = "/etc/rancher/rke2/config.yaml"
# Keys whose values are secrets in cluster.yml / RKE2 config.yaml.
SECRET_CONFIG_KEYS = frozenset({"token", "agent-token", "ssh_key", "ssh_cert", "password", "secret"})
# Outputs shown in their own sections of the readable plan.
OWN_SECTION_OUTPUTS = ("nodes", "ccmValues", "rkeClusterYml")
RELEASE = "kubernetes:helm.sh/v3:Release"


def _short_type(typ: str) -> str:
    return typ.split(":")[-1]


def mask_config(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (MASK if k in SECRET_CONFIG_KEYS and v not in (None, "") else mask_config(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_config(v) for v in value]
    return value


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, width=1000)


def state_of(outputs: dict[str, Any] | None) -> dict[str, Any]:
    """The cluster state in a run's outputs: flat (this repository's stacks: `flat_outputs=True`), or nested under
    each cluster's key (rke_aws.RkeCluster's default: a user's project). Several clusters: their nodes together,
    the first cluster's other values."""
    outputs = outputs or {}
    if "nodes" in outputs or "stateVersion" in outputs:
        return outputs
    nested = [v for v in outputs.values() if isinstance(v, dict) and "stateVersion" in v]
    if not nested:
        return outputs
    return {**nested[0], "nodes": [n for state in nested for n in state.get("nodes") or []]}


def generated_configs(run: harness.ProgramRun) -> list[dict[str, Any]]:
    """RKE: the cluster.yml for `rke up`; RKE2: each node's /etc/rancher/rke2/config.yaml from its user
    data. Parsed (so JSON and snapshot diffs are per key), secrets masked; cluster-wide files first,
    then node files ordered by the node's address (numerically: .9 before .10)."""
    configs: list[dict[str, Any]] = []
    state = state_of(run.outputs)
    if state.get("rkeClusterYml"):
        configs.append({"file": "cluster.yml", "content": mask_config(yaml.load(state["rkeClusterYml"], Loader=YAML_LOADER))})
    per_node = []
    for inst in run.of_type("aws:ec2/instance:Instance"):
        doc = cloud_config(decode_user_data(inst.inputs) or "")
        for f in (doc or {}).get("write_files", []):
            if f.get("path") == RKE2_CONFIG_PATH:
                node = (inst.inputs.get("tags") or {}).get("Name") or inst.name
                per_node.append({"file": RKE2_CONFIG_PATH, "node": node, "privateIp": inst.inputs.get("privateIp"),
                                 "content": mask_config(yaml.load(f.get("content") or "", Loader=YAML_LOADER) or {})})
    per_node.sort(key=lambda c: (ipaddress.ip_address(c["privateIp"]) if c["privateIp"] else ipaddress.ip_address(0), c["node"]))
    return configs + per_node


def config_title(entry: dict[str, Any]) -> str:
    return f"{entry['node']}:{entry['file']}" if entry.get("node") else entry["file"]


def _chart_install(run: harness.ProgramRun, chart: str, manifest: str) -> dict[str, Any]:
    """How one chart gets installed: its Release (helm) or the HelmChart servers mirror (manifest)."""
    out: dict[str, Any] = {}
    for rel in run.of_type(RELEASE):
        if rel.inputs.get("chart") == chart:
            out["release"] = {k: rel.inputs.get(k) for k in ("name", "chart", "version", "namespace")}
            out["release"]["repo"] = (rel.inputs.get("repositoryOpts") or {}).get("repo")
            out["releaseValues"] = rel.inputs.get("values")
    for param in run.of_type("aws:ssm/parameter:Parameter"):
        if param.inputs.get("name", "").endswith(f"/manifests/{manifest}"):
            out["helmChart"] = parsed(param.inputs.get("insecureValue"))
    if not out:
        out["installedBy"] = ("nothing yet: the next `pulumi up` once a kubeconfig is set or published"
                              if state_of(run.outputs).get("distribution") else None)
    return out


def ccm_section(run: harness.ProgramRun) -> dict[str, Any]:
    state = state_of(run.outputs)
    out: dict[str, Any] = {"image": state.get("ccmImage"), "values": state.get("ccmValues")}
    install = _chart_install(run, versions.CCM_CHART_NAME, "ccm.yaml")
    install.pop("releaseValues", None)  # the same as `values`
    return {**out, **install}


def addons_section(run: harness.ProgramRun) -> dict[str, Any]:
    """Add-ons (addons.*) and etcd snapshots: what is enabled and how it is installed."""
    state = state_of(run.outputs)
    out: dict[str, Any] = {"ebsCsi": {"enabled": bool(state.get("ebsCsi"))}}
    if out["ebsCsi"]["enabled"]:
        out["ebsCsi"].update(_chart_install(run, versions.EBS_CSI_CHART_NAME, "ebs-csi.yaml"))
    out["etcdSnapshots"] = state.get("etcdSnapshotLocation")
    return out


def _secret_values(run: harness.ProgramRun) -> set[str]:
    """Every secret value of the run (secret outputs and inputs, generated passwords)."""
    values: list[Any] = [run.outputs.get(key) for key in run.secret_outputs]
    for reg in run.resources:
        values += [reg.inputs.get(key) for key in reg.secret_inputs]
        if reg.type == "random:index/randomPassword:RandomPassword":
            values.append(reg.state.get("result"))
    return secret_strings(values)


def _scrub(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, str):
        for s in secrets:
            if s in value:
                value = value.replace(s, MASK)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


def resource_entries(run: harness.ProgramRun) -> list[dict[str, Any]]:
    ids: dict[str, str] = getattr(run.mocks, "ids", None) or {}
    by_urn = {r.urn: r for r in run.resources}
    entries = []
    for r in run.resources:
        if not r.custom:
            continue
        parent = by_urn.get(r.parent)
        entry: dict[str, Any] = {
            "name": r.name,
            "type": _short_type(r.type),
            "component": f"{parent.name} ({_short_type(parent.type)})" if parent else "(stack)",
            "inputs": review_inputs(r),
        }
        rid = ids.get(f"{r.type}::{r.name}")
        if rid:
            entry["id"] = rid
        options = {k: v for k, v in (("protect", r.protect), ("deleteBeforeReplace", r.delete_before_replace),
                                     ("retainOnDelete", r.retain_on_delete),
                                     ("ignoreChanges", sorted(r.ignore_changes)),
                                     ("replaceOnChanges", sorted(r.replace_on_changes))) if v}
        if options:
            entry["options"] = options
        entries.append(entry)
    return sorted(entries, key=lambda e: (e["component"], e["type"], e["name"]))


def summary(run: harness.ProgramRun) -> dict:
    cluster_tagged = sorted(
        f"{_short_type(r.type)} {r.name}: {k}={v}"
        for r in run.resources
        for k, v in (r.inputs.get("tags") or {}).items()
        if k.startswith(tagsets.CLUSTER_TAG_PREFIX)
    ) + sorted(
        f"Tag {r.name}: {r.inputs['resourceId']} {r.inputs['key']}={r.inputs['value']}"
        for r in run.of_type("aws:ec2/tag:Tag") if r.inputs["key"].startswith(tagsets.CLUSTER_TAG_PREFIX)
    )
    # The profile each instance is registered with (RKE2 etcd-only servers use the controlplane one).
    profiles = {i.inputs.get("privateIp"): i.inputs.get("iamInstanceProfile")
                for i in run.of_type("aws:ec2/instance:Instance")}
    nodes = [
        {**{k: n.get(k) for k in ("name", "pool", "availabilityZone", "privateIp", "instanceId", "subnet")},
         "roles": ",".join(n["roles"]),
         "instanceProfile": profiles.get(n.get("privateIp"))}
        for n in state_of(run.outputs).get("nodes", [])
    ]
    nodes.sort(key=lambda n: ipaddress.ip_address(n["privateIp"]))
    outputs = {k: (MASK if k in run.secret_outputs else v) for k, v in run.outputs.items() if k != "nodes"}
    lookups = [{"token": lk.token, "args": lk.args,
                "result": ({k: lk.result.get(k) for k in ("id", "name", "ownerId", "names", "cidrBlock", "vpcId",
                                                           "availabilityZone") if k in lk.result}),
                **({"failure": lk.failure} if lk.failure else {})} for lk in run.lookups]
    s = {"stack": run.stack, "resources": resource_entries(run), "nodes": nodes, "clusterTagged": cluster_tagged,
         "lookups": lookups, "ccm": ccm_section(run), "addons": addons_section(run),
         "configs": generated_configs(run), "outputs": outputs,
         "messages": [f"{lvl}: {m}" for lvl, m in run.logs]}
    # Running nodes that keep what they booted (a run with the stack's previous outputs): plan/stale.py.
    stale_nodes = stale.lines(stale.from_outputs(stale.with_running(state_of(run.outputs).get("nodes"),
                                                                    state_of(run.previous_outputs).get("nodes"))))
    if stale_nodes:
        s["stale"] = stale_nodes
    return _scrub(s, _secret_values(run))


def render(s: dict, full: bool = False, order: list[dict] | None = None) -> str:
    """The plan as a person reads it (offline/report/plan_text.py): summary, nodes and warnings first, then the
    resources by component; `full`: every input, the generated configuration, look-ups, CCM values, outputs.
    `order`: the component tree and creation order of the run (plan_text.layout), when there is one."""
    return plan_text.render(s, full=full, order=order, config_title=config_title, own_section=OWN_SECTION_OUTPUTS)


def to_json(s: dict) -> str:
    return json.dumps(s, indent=2, sort_keys=True) + "\n"


def evaluate(stack: str, project: Project | None = None) -> harness.ProgramRun:
    """The stack's program run against a fresh emulated account (stopped again before returning)."""
    from rke_aws_offline.engine import emulated_account

    project = project or Project.find()
    config = project.stack_config(stack)[0] if not project.is_this_checkout else harness.stack_config(stack)
    run, account = emulated_account.build(config, stack, main=project.main, project=project.namespace_of(stack))
    account.stop()
    return run


def plan_stack(stack: str, project: Project | None = None) -> dict:
    """The summary of one stack file, evaluated against the emulated account."""
    return summary(evaluate(stack, project))


def main(argv: list[str] | None = None, project: Project | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rke-aws plan", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack of the project (its stack file Pulumi.<stack>.yaml)")
    ap.add_argument("--json", action="store_true", help="machine-readable output (tests/snapshots/<stack>.json)")
    ap.add_argument("--full", action="store_true", help="every input as YAML, the generated configuration, "
                                                        "the look-ups, the CCM's values and the outputs")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    try:
        project = project or Project.find()
    except ProjectError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    names = project.stack_names()
    if args.stack not in names:
        print(f"error: {unknown_stack(args.stack, names, project)}", file=sys.stderr)
        return 2
    say = progress.Progress(quiet=args.quiet)
    say(f"plan {args.stack}: evaluating the program in an emulated AWS account…")
    try:
        run = evaluate(args.stack, project)
    except RunError as err:
        say.done()
        print(err, file=sys.stderr)
        return 1
    except Exception as err:  # a refusal of the emulated account, e.g. InvalidIPAddress.InUse
        say.done()
        print(f"{args.stack}: the plan failed: {err}", file=sys.stderr)
        return 1
    say(f"plan {args.stack}: rendering…")
    s = summary(run)
    text = to_json(s) if args.json else render(s, full=args.full, order=plan_text.layout(run)) + "\n"
    say.done()
    sys.stdout.write(text)
    return 0


def unknown_stack(stack: str, names: list[str], project: Project) -> str:
    """`unknown stack 'rke2-dve' (no stacks/Pulumi.rke2-dve.yaml); stacks: …; did you mean rke2-dev?`"""
    from rke_aws.diagnostics import suggest

    hint = suggest(stack, names)
    return (f"unknown stack {stack!r} (no {project.relative(project.stacks_dir / f'Pulumi.{stack}.yaml')}); "
            f"stacks: {', '.join(names) or 'none'}" + (f"; did you mean {hint}?" if hint else ""))


if __name__ == "__main__":
    sys.exit(main())
