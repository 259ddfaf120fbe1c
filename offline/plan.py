"""`make plan STACK=<stack>`: evaluate a stack offline and print what it would create.

No credentials and no network: the program runs against an emulated AWS account (moto, in
process; offline/moto_mocks.py), so IDs, addresses and DNS names come from the emulator and its
refusals fail the plan. `--mocks aws-like` uses the lighter AwsLikeMocks instead. Secrets are
masked: secret outputs, secret-looking keys in the generated configs, and any secret value
wherever it would appear.

`--json` prints the same summary for machines; tests/snapshots/<stack>.json holds it per stack.
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

from components import tags as tagsets

from . import harness

MASK = "****"
RKE2_CONFIG_PATH = "/etc/rancher/rke2/config.yaml"
# Keys whose values are secrets in cluster.yml / RKE2 config.yaml.
SECRET_CONFIG_KEYS = frozenset({"token", "agent-token", "ssh_key", "ssh_cert", "password", "secret"})
# Outputs shown in their own sections of the readable plan.
OWN_SECTION_OUTPUTS = ("nodes", "ccmValues", "rkeClusterYml")


def _short_type(typ: str) -> str:
    return typ.split(":")[-1]


def _policy_actions(policy: Any) -> list[str]:
    doc = json.loads(policy) if isinstance(policy, str) else (policy or {})
    actions: list[str] = []
    for st in doc.get("Statement", []):
        if st.get("Effect") == "Allow":
            act = st.get("Action", [])
            actions += [act] if isinstance(act, str) else list(act)
    return actions


def iam_summary(run: harness.ProgramRun) -> dict[str, dict]:
    """Per node role: inline-policy action count, attached managed policies, instance profiles."""
    out: dict[str, dict] = {}
    for role in run.of_type("aws:iam/role:Role"):
        rname = role.state.get("name") or role.name
        inline = {p.state.get("name") or p.name: sorted(set(_policy_actions(p.inputs.get("policy"))), key=str.lower)
                  for p in run.of_type("aws:iam/rolePolicy:RolePolicy") if p.inputs.get("role") == rname}
        actions = {a.lower() for acts in inline.values() for a in acts}
        out[role.name] = {
            "roleName": rname,
            "actions": len(actions),
            "inlinePolicies": {k: len(v) for k, v in sorted(inline.items())},
            "managedPolicies": sorted(a.inputs["policyArn"] for a in run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                                      if a.inputs.get("role") == rname),
            "instanceProfiles": sorted(p.state.get("name") or p.name for p in run.of_type("aws:iam/instanceProfile:InstanceProfile")
                                       if p.inputs.get("role") == rname),
        }
    return dict(sorted(out.items()))


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
        user_data = inst.inputs.get("userData") or ""
        try:
            doc = yaml.safe_load(user_data) if user_data.startswith("#cloud-config") else None
        except yaml.YAMLError:
            doc = None
        for f in (doc or {}).get("write_files", []) if isinstance(doc, dict) else []:
            if f.get("path") == RKE2_CONFIG_PATH:
                node = (inst.inputs.get("tags") or {}).get("Name") or inst.name
                per_node.append({"file": RKE2_CONFIG_PATH, "node": node, "privateIp": inst.inputs.get("privateIp"),
                                 "content": mask_config(yaml.safe_load(f.get("content") or "") or {})})
    per_node.sort(key=lambda c: (ipaddress.ip_address(c["privateIp"]) if c["privateIp"] else ipaddress.ip_address(0), c["node"]))
    return configs + per_node


def config_title(entry: dict[str, Any]) -> str:
    return f"{entry['node']}:{entry['file']}" if entry.get("node") else entry["file"]


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


def summary(run: harness.ProgramRun) -> dict:
    ids: dict[str, str] = getattr(run.mocks, "ids", None) or {}
    components = {r.urn: r for r in run.resources if not r.custom}
    groups: dict[str, list[str]] = defaultdict(list)
    for r in run.resources:
        if r.custom:
            parent = components.get(r.parent)
            rid = ids.get(f"{r.type}::{r.name}")
            groups[parent.name + " (" + _short_type(parent.type) + ")" if parent else "(stack)"].append(
                f"{_short_type(r.type)} {r.name}" + (f" = {rid}" if rid else ""))
    cluster_tagged = sorted(
        f"{_short_type(r.type)} {r.name}: {k}={v}"
        for r in run.resources
        for k, v in (r.inputs.get("tags") or {}).items()
        if k.startswith(tagsets.CLUSTER_TAG_PREFIX)
    ) + sorted(
        f"Tag {r.name}: {r.inputs['resourceId']} {r.inputs['key']}={r.inputs['value']}"
        for r in run.of_type("aws:ec2/tag:Tag") if r.inputs["key"].startswith(tagsets.CLUSTER_TAG_PREFIX)
    )
    profiles = run.outputs.get("instanceProfileNames", {})
    nodes = [
        {**{k: n[k] for k in ("name", "pool", "availabilityZone", "privateIp", "instanceId")}, "roles": ",".join(n["roles"]),
         "instanceProfile": profiles.get("controlplane" if "controlplane" in n["roles"] else "worker")}
        for n in run.outputs.get("nodes", [])
    ]
    outputs = {k: (MASK if k in run.secret_outputs else v) for k, v in run.outputs.items() if k != "nodes"}
    s = {"stack": run.stack, "resources": {k: sorted(v) for k, v in sorted(groups.items())},
         "nodes": nodes, "clusterTagged": cluster_tagged, "iam": iam_summary(run),
         "ccmValues": run.outputs.get("ccmValues"), "configs": generated_configs(run), "outputs": outputs,
         "messages": [f"{lvl}: {m}" for lvl, m in run.logs]}
    return _scrub(s, _secret_values(run))


def _block(title: str, text: str) -> list[str]:
    return [f"  {title}:"] + [f"    {line}" for line in text.rstrip("\n").splitlines()]


def render(s: dict) -> str:
    lines = [f"Stack {s['stack']}: {sum(len(v) for v in s['resources'].values())} resources", ""]
    for group, items in s["resources"].items():
        lines.append(f"{group}")
        lines += [f"  + {i}" for i in items]
    lines += ["", "Nodes:"]
    cols = ("name", "roles", "availabilityZone", "privateIp", "instanceProfile", "instanceId")
    widths = {c: max([len(c)] + [len(str(n.get(c, ""))) for n in s["nodes"]]) for c in cols}
    lines.append("  " + "  ".join(c.ljust(widths[c]) for c in cols))
    lines += ["  " + "  ".join(str(n.get(c, "")).ljust(widths[c]) for c in cols) for n in s["nodes"]]
    lines += ["", "Cluster-tagged:"] + [f"  {t}" for t in s["clusterTagged"]]
    if s.get("iam"):
        lines += ["", "IAM (role: actions allowed by its inline policies; attached managed policies; instance profiles):"]
        for logical, r in s["iam"].items():
            lines.append(f"  {logical} ({r['roleName']}): {r['actions']} actions "
                         f"[{', '.join(f'{k}: {v}' for k, v in r['inlinePolicies'].items())}]")
            lines.append(f"    managed: {', '.join(r['managedPolicies']) or '-'}")
            lines.append(f"    instance profiles: {', '.join(r['instanceProfiles']) or '-'}")
    if s.get("ccmValues") is not None:
        lines += ["", "CCM values (ccmValues: Release values with the null overrides merged; null deletes a chart default):"]
        lines += [f"  {line}" for line in _yaml(s["ccmValues"]).rstrip("\n").splitlines()]
    if s.get("configs"):
        lines += ["", "Generated configuration (secrets masked):"]
        for entry in s["configs"]:
            lines += _block(config_title(entry), _yaml(entry["content"]))
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
    from . import moto_mocks

    run, account = moto_mocks.build_stack(stack)
    try:
        return summary(run)
    finally:
        account.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", choices=harness.stack_names())
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--mocks", choices=("moto", "aws-like"), default="moto",
                    help="moto: emulated AWS account (default); aws-like: offline/mocks.py")
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
