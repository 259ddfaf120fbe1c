"""`make plan STACK=<stack>`: evaluate a stack offline and print everything it would create.

No credentials and no network: the program runs against an emulated AWS account (moto, in
process; offline/engine/emulated_account.py), so IDs, addresses and DNS names come from the emulator and its
refusals fail the plan. `--mocks aws-like` uses the lighter AwsLikeMocks instead.

What a reviewer sees, per resource: every input the program sends (instance type, AMI, root
volume, IMDS, all tags, security-group rules, IAM policies statement by statement with their
conditions, SSM parameters, Helm releases, Route 53 records, ...), with JSON policies and YAML
manifests parsed so a diff is per key; user data summarised (its files, the boot script's
settings and a digest of everything) next to each node's generated configuration; the look-ups
the program made; the CCM's chart, image and effective values; the outputs. Secrets are masked:
secret inputs and outputs, secret-looking keys in generated configs, and every secret value
wherever it appears.

`--json` prints the same for machines; tests/snapshots/<stack>.json holds it per stack.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from collections import defaultdict
from typing import Any

import yaml
from pulumi import RunError

from rke_aws.plan import stale
from rke_aws.settings import tags as tagsets
from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from rke_aws_offline.report.review import MASK, _cloud_config, _parsed, decode_user_data, review_inputs

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


def generated_configs(run: harness.ProgramRun) -> list[dict[str, Any]]:
    """RKE: the cluster.yml for `rke up`; RKE2: each node's /etc/rancher/rke2/config.yaml from its user
    data. Parsed (so JSON and snapshot diffs are per key), secrets masked; cluster-wide files first,
    then node files ordered by the node's address (numerically: .9 before .10)."""
    configs: list[dict[str, Any]] = []
    if run.outputs.get("rkeClusterYml"):
        configs.append({"file": "cluster.yml", "content": mask_config(yaml.safe_load(run.outputs["rkeClusterYml"]))})
    per_node = []
    for inst in run.of_type("aws:ec2/instance:Instance"):
        doc = _cloud_config(decode_user_data(inst.inputs) or "")
        for f in (doc or {}).get("write_files", []):
            if f.get("path") == RKE2_CONFIG_PATH:
                node = (inst.inputs.get("tags") or {}).get("Name") or inst.name
                per_node.append({"file": RKE2_CONFIG_PATH, "node": node, "privateIp": inst.inputs.get("privateIp"),
                                 "content": mask_config(yaml.safe_load(f.get("content") or "") or {})})
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
            out["helmChart"] = _parsed(param.inputs.get("insecureValue"))
    if not out:
        out["installedBy"] = ("nothing yet: the next `pulumi up` once a kubeconfig is set or published"
                              if run.outputs.get("distribution") else None)
    return out


def ccm_section(run: harness.ProgramRun) -> dict[str, Any]:
    out: dict[str, Any] = {"image": run.outputs.get("ccmImage"), "values": run.outputs.get("ccmValues")}
    install = _chart_install(run, versions.CCM_CHART_NAME, "ccm.yaml")
    install.pop("releaseValues", None)  # the same as `values`
    return {**out, **install}


def addons_section(run: harness.ProgramRun) -> dict[str, Any]:
    """Add-ons (addons.*) and etcd snapshots: what is enabled and how it is installed."""
    out: dict[str, Any] = {"ebsCsi": {"enabled": bool(run.outputs.get("ebsCsi"))}}
    if out["ebsCsi"]["enabled"]:
        out["ebsCsi"].update(_chart_install(run, versions.EBS_CSI_CHART_NAME, "ebs-csi.yaml"))
    out["etcdSnapshots"] = run.outputs.get("etcdSnapshotLocation")
    return out


def _secret_values(run: harness.ProgramRun) -> set[str]:
    """Every secret value of the run (secret outputs and inputs, generated passwords)."""
    found: set[str] = set()

    def collect(v: Any) -> None:
        if isinstance(v, str) and len(v) >= 6:
            found.add(v)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)

    for key in run.secret_outputs:
        collect(run.outputs.get(key))
    for reg in run.resources:
        for key in reg.secret_inputs:
            collect(reg.inputs.get(key))
        if reg.type == "random:index/randomPassword:RandomPassword":
            collect(reg.state.get("result"))
    return found


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
        for n in run.outputs.get("nodes", [])
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
    stale_nodes = stale.lines(stale.from_outputs(stale.with_running(run.outputs.get("nodes"),
                                                                    (run.previous_outputs or {}).get("nodes"))))
    if stale_nodes:
        s["stale"] = stale_nodes
    return _scrub(s, _secret_values(run))


def _block(title: str, text: str, indent: str = "  ") -> list[str]:
    return [f"{indent}{title}:"] + [f"{indent}  {line}" for line in text.rstrip("\n").splitlines()]


def render(s: dict) -> str:
    lines = [f"Stack {s['stack']}: {len(s['resources'])} resources", ""]
    groups: dict[str, list[dict]] = defaultdict(list)
    for e in s["resources"]:
        groups[e["component"]].append(e)
    for group, entries in groups.items():
        lines.append(group)
        for e in entries:
            lines.append(f"  + {e['type']} {e['name']}" + (f" = {e['id']}" if e.get("id") else "")
                         + (f"  [{', '.join(f'{k}: {v}' for k, v in e['options'].items())}]" if e.get("options") else ""))
            lines += [f"      {line}" for line in _yaml(e["inputs"]).rstrip("\n").splitlines()]
    lines += ["", "Nodes:"]
    cols = ("name", "roles", "availabilityZone", "subnet", "privateIp", "instanceProfile", "instanceId")
    widths = {c: max([len(c)] + [len(str(n.get(c, ""))) for n in s["nodes"]]) for c in cols}
    lines.append("  " + "  ".join(c.ljust(widths[c]) for c in cols))
    lines += ["  " + "  ".join(str(n.get(c, "")).ljust(widths[c]) for c in cols) for n in s["nodes"]]
    lines += ["", "Cluster-tagged:"] + [f"  {t}" for t in s["clusterTagged"]]
    lines += ["", "Look-ups:"] + [f"  {lk['token']} {json.dumps(lk['args'], sort_keys=True)} -> "
                                  f"{json.dumps(lk.get('failure') or lk['result'], sort_keys=True)}" for lk in s["lookups"]]
    lines += ["", "CCM (image, how it is installed, values: null deletes a chart default):"]
    lines += [f"  {line}" for line in _yaml(s["ccm"]).rstrip("\n").splitlines()]
    lines += ["", "Add-ons and etcd snapshots:"]
    lines += [f"  {line}" for line in _yaml(s["addons"]).rstrip("\n").splitlines()]
    if s.get("configs"):
        lines += ["", "Generated configuration (secrets masked):"]
        for entry in s["configs"]:
            lines += _block(config_title(entry), _yaml(entry["content"]))
    if s.get("stale"):
        lines += ["", "Stale nodes (they keep running as they booted; `rotate` replaces them one at a time):"]
        lines += [f"  {line}" for line in s["stale"]]
    lines += ["", "Outputs:"]
    for k, v in s["outputs"].items():
        if k in OWN_SECTION_OUTPUTS:
            continue
        text = v if isinstance(v, str) else json.dumps(v, indent=2, sort_keys=True)
        lines.append(f"  {k}:")
        lines += [f"    {line}" for line in text.splitlines()]
    lines += [""] + s["messages"]
    return "\n".join(lines)


def to_json(s: dict) -> str:
    return json.dumps(s, indent=2, sort_keys=True) + "\n"


def plan_stack(stack: str, mocks: str = "moto") -> dict:
    """The summary of one stack file, evaluated against the emulated account (or AwsLikeMocks)."""
    if mocks == "aws-like":
        return summary(harness.run_stack(stack))
    from rke_aws_offline.engine import emulated_account

    run, account = emulated_account.build_stack(stack)
    try:
        return summary(run)
    finally:
        account.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", choices=harness.stack_names())
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--mocks", choices=("moto", "aws-like"), default="moto",
                    help="moto: emulated AWS account (default); aws-like: offline/engine/fake_aws.py")
    args = ap.parse_args(argv)
    try:
        s = plan_stack(args.stack, args.mocks)
    except RunError as err:
        print(err, file=sys.stderr)
        return 1
    except Exception as err:  # a refusal of the emulated account, e.g. InvalidIPAddress.InUse
        print(f"{args.stack}: the plan failed: {err}", file=sys.stderr)
        return 1
    print(to_json(s) if args.json else render(s), end="" if args.json else "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
