"""`make plan STACK=<stack>`: evaluate a stack offline and print what it would create.

No credentials and no network: the program runs under the AWS-like mocks. Secrets are masked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

from pulumi import RunError

from . import harness

MASK = "****"


def _short_type(typ: str) -> str:
    return typ.split(":")[-1]


def summary(run: harness.ProgramRun) -> dict:
    components = {r.urn: r for r in run.resources if not r.custom}
    groups: dict[str, list[str]] = defaultdict(list)
    for r in run.resources:
        if r.custom:
            parent = components.get(r.parent)
            groups[parent.name + " (" + _short_type(parent.type) + ")" if parent else "(stack)"].append(f"{_short_type(r.type)} {r.name}")
    cluster_tagged = sorted(
        f"{_short_type(r.type)} {r.name}: {k}={v}"
        for r in run.resources
        for k, v in (r.inputs.get("tags") or {}).items()
        if k.startswith("kubernetes.io/cluster/")
    ) + sorted(
        f"Tag {r.name}: {r.inputs['resourceId']} {r.inputs['key']}={r.inputs['value']}"
        for r in run.of_type("aws:ec2/tag:Tag") if r.inputs["key"].startswith("kubernetes.io/cluster/")
    )
    profiles = run.outputs.get("instanceProfileNames", {})
    nodes = [
        {**{k: n[k] for k in ("name", "pool", "availabilityZone", "privateIp")}, "roles": ",".join(n["roles"]),
         "instanceProfile": profiles.get("controlplane" if "controlplane" in n["roles"] else "worker")}
        for n in run.outputs.get("nodes", [])
    ]
    outputs = {k: (MASK if k in run.secret_outputs else v) for k, v in run.outputs.items() if k != "nodes"}
    return {"stack": run.stack, "resources": {k: sorted(v) for k, v in sorted(groups.items())},
            "nodes": nodes, "clusterTagged": cluster_tagged, "outputs": outputs,
            "messages": [f"{lvl}: {m}" for lvl, m in run.logs]}


def render(s: dict) -> str:
    lines = [f"Stack {s['stack']}: {sum(len(v) for v in s['resources'].values())} resources", ""]
    for group, items in s["resources"].items():
        lines.append(f"{group}")
        lines += [f"  + {i}" for i in items]
    lines += ["", "Nodes:"]
    cols = ("name", "roles", "availabilityZone", "privateIp", "instanceProfile")
    widths = {c: max([len(c)] + [len(str(n[c])) for n in s["nodes"]]) for c in cols}
    lines.append("  " + "  ".join(c.ljust(widths[c]) for c in cols))
    lines += ["  " + "  ".join(str(n[c]).ljust(widths[c]) for c in cols) for n in s["nodes"]]
    lines += ["", "Cluster-tagged:"] + [f"  {t}" for t in s["clusterTagged"]]
    lines += ["", "Outputs:"]
    for k, v in s["outputs"].items():
        text = v if isinstance(v, str) else json.dumps(v, indent=2)
        lines.append(f"  {k}:")
        lines += [f"    {line}" for line in text.splitlines()]
    lines += [""] + s["messages"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stack", choices=harness.stack_names())
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    try:
        run = harness.run_stack(args.stack)
    except RunError as err:
        print(err, file=sys.stderr)
        return 1
    s = summary(run)
    print(json.dumps(s, indent=2, sort_keys=True) if args.json else render(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
