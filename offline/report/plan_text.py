"""The plan as a person reads it, top down (issue 34 §4): what `rke-aws plan <stack>` prints.

First screen: a summary (what is created, per kind), the nodes as a table, the program's warnings, notes
and what needs a second `pulumi up`. Then the resources grouped as the component tree (network, security,
IAM, nodes, in-cluster), in creation order, one line each. `--full` adds every input as YAML, the generated
configuration, the look-ups, the CCM's values and the outputs (what `plan` printed before issue 34).

Rendered from the plan's JSON (plan_report.summary: tests/snapshots/<stack>.json), plus the component tree
and creation order of the run when there is one (`layout`); the JSON keeps its shape for machines.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from rke_aws_offline.report.values import emulated_id, natural_key, plain, scalar, short

WIDTH = 120
# Kinds of what a plan creates, in the order a cluster is built: each component type (the program's
# ComponentResources, components/aws and components/cluster) and what a reviewer calls it.
KINDS = {
    "Network": "network", "ClusterSecurityGroup": "security", "ControlPlaneEndpoint": "endpoint", "NodeIam": "IAM",
    "JoinTokens": "secrets", "InitMarker": "secrets", "PublishedKubeconfig": "secrets",
    "EtcdBackupBucket": "etcd snapshots", "Nodes": "nodes", "EbsCsiCredentials": "add-ons", "EbsCsiDriver": "add-ons",
    "ServerManifests": "manifests", "CloudControllerManager": "CCM", "SystemUpgrades": "upgrades",
    "RancherRegistration": "Rancher", "RancherAgent": "Rancher",
}
KIND_ORDER = ("network", "security", "endpoint", "IAM", "secrets", "etcd snapshots", "nodes", "add-ons", "manifests",
              "CCM", "upgrades", "Rancher")
OTHER = "other"
# A message naming a later `pulumi up` is a step the first one cannot finish (components/rke_cluster.py,
# plan/rancher.py, plan/guards.py write them so).
SECOND_STEP = re.compile(r"`pulumi up` again|`pulumi up --refresh`")
FULL_HINT = "(--full: every input, the generated configuration, the look-ups, the CCM's values and the outputs)"


def kind(component_type: str) -> str:
    return KINDS.get(component_type, OTHER)


def kind_rank(component_type: str) -> int:
    k = kind(component_type)
    return KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER)


def component_of(entry: dict) -> tuple[str, str]:
    """(type, name) of the component an entry of the JSON belongs to: `rke2-dev (Network)` -> (Network, rke2-dev)."""
    m = re.match(r"^(.*) \(([^()]+)\)$", entry.get("component") or "")
    return (m.group(2), m.group(1)) if m else ("", "")


# ---- the component tree and creation order, from a run ----------------------------------------------------

def layout(run: Any) -> list[dict[str, Any]]:
    """Each custom resource of `run` (a harness.ProgramRun) as {type, name, path}: `path` the chain of
    components from the outermost (`RkeCluster rke2-dev`) to its parent, in the order to print: components by
    kind, then within one, types in dependency order (a type whose resources others depend on first: the VPC
    before its subnets, a role before its policies), resources by name. The engine's registration order
    itself varies from run to run (worker threads), so it is not used."""
    by_urn = {r.urn: r for r in run.resources}
    custom = {r.urn: r for r in run.resources if r.custom}
    depth: dict[str, int] = {}

    def depth_of(urn: str, seen: frozenset = frozenset()) -> int:
        if urn not in depth:
            deps = [d for d in custom[urn].dependencies if d in custom and d not in seen]
            depth[urn] = 1 + max((depth_of(d, seen | {urn}) for d in deps), default=-1)
        return depth[urn]

    dependents: Counter[str] = Counter(d for r in custom.values() for d in set(r.dependencies) if d in custom)
    rows = []
    for urn, r in custom.items():
        chain: list[tuple[str, str]] = []
        p = by_urn.get(r.parent)
        while p is not None:
            chain.insert(0, (_short_type(p.type), p.name))
            p = by_urn.get(p.parent)
        rows.append({"type": _short_type(r.type), "name": r.name, "chain": chain, "depth": depth_of(urn),
                     "dependents": dependents[urn], "parent": r.parent})
    # A type's place within its component: its shallowest resource, then how much depends on it.
    type_key: dict[tuple[str, str], tuple] = {}
    for row in rows:
        k = (row["parent"], row["type"])
        type_key[k] = min(type_key.get(k, (99, 0)), (row["depth"], -row["dependents"]))
    for row in rows:
        row["sort"] = (tuple((kind_rank(t), t, natural_key(n)) for t, n in row["chain"]),
                       type_key[(row["parent"], row["type"])], row["type"], natural_key(row["name"]))
    rows.sort(key=lambda row: row["sort"])
    return [{"type": r["type"], "name": r["name"], "path": [f"{t} {n}" for t, n in r["chain"]]} for r in rows]


def _short_type(typ: str) -> str:
    return typ.split(":")[-1]


def _ordered(s: dict, order: list[dict] | None) -> list[tuple[list[str], dict]]:
    """(component path, entry) for every resource of the plan, in the order to print."""
    entries = s["resources"]
    if order is None:  # the JSON alone: its one level of components, by kind
        def key(e: dict) -> tuple:
            t, n = component_of(e)
            return kind_rank(t), t, natural_key(n), e["type"], natural_key(e["name"])
        return [([" ".join(component_of(e)) if e.get("component") != "(stack)" else "(stack)"], e)
                for e in sorted(entries, key=key)]
    pool: dict[tuple[str, str], list[dict]] = {}
    for e in entries:
        pool.setdefault((e["type"], e["name"]), []).append(e)
    out = []
    for row in order:
        found = pool.get((row["type"], row["name"]))
        if found:
            out.append((row["path"] or ["(stack)"], found.pop(0)))
    out += [([" ".join(component_of(e))], e) for rest in pool.values() for e in rest]  # not in the layout
    return out


# ---- the first screen ---------------------------------------------------------------------------------------

def headline(s: dict) -> list[str]:
    out = s.get("outputs") or {}
    facts = [f"{out.get('distribution', '?')} {out.get('kubernetesVersion', '')}".strip(), out.get("region"),
             f"cluster {out['clusterId']}" if out.get("clusterId") else None, "emulated account: IDs are fake"]
    counts = Counter(kind(component_of(e)[0]) for e in s["resources"])
    kinds = [k for k in KIND_ORDER if counts[k]] + ([OTHER] if counts[OTHER] else [])
    return [f"{s['stack']}: {len(s['resources'])} resources to create ({' · '.join(f for f in facts if f)})",
            "  " + " · ".join(f"{k} {counts[k]}" for k in kinds)]


@dataclass
class NodeView:
    """One node of the plan as the table reads it: its `nodes` entry, its Instance's inputs, its image."""
    node: dict[str, Any]
    inputs: dict[str, Any] = field(default_factory=dict)
    image: tuple[str, str] | None = None  # (OS, architecture) of the image it boots, when the program chose it


def _images(s: dict) -> dict[str, tuple[str, str]]:
    """AMI ID -> (OS, architecture) for the images the program looked up by name (getAmi), from the OS table
    (rke_aws.node.os_images: each OS's image names per partition and architecture)."""
    from rke_aws.settings import os_images

    names: dict[str, tuple[str, str]] = {}
    for os_image in os_images.OS_IMAGES.values():
        for published in os_image.images.values():
            for arch, pattern in (published.names if published else {}).items():
                if pattern:
                    names[pattern] = (os_image.title.removesuffix(" LTS"), arch)
    found = {}
    for lk in s.get("lookups") or []:
        if lk.get("token", "").endswith("getAmi") and (lk.get("result") or {}).get("id"):
            patterns = [v for f in (lk.get("args") or {}).get("filters") or [] if f.get("name") == "name"
                        for v in f.get("values") or []]
            match = next((names[p] for p in patterns if p in names), None)
            if match:
                found[lk["result"]["id"]] = match
    return found


def node_views(s: dict) -> list[NodeView]:
    instances = {e["inputs"].get("privateIp"): e["inputs"] for e in s["resources"] if e["type"] == "Instance"}
    images = _images(s)
    views = []
    for n in s.get("nodes") or []:
        inputs = instances.get(n.get("privateIp")) or {}
        views.append(NodeView(n, inputs, images.get(inputs.get("ami"))))
    return views


def _architecture(v: NodeView) -> str:
    """The image's architecture (the program picks it by the instance type's); for a pool's own image, the
    instance type's from AWS's instance-type data (engine.resource_types.instance_architectures)."""
    if v.image:
        return v.image[1]
    from rke_aws_offline.engine.resource_types import instance_architectures

    archs = instance_architectures(v.inputs.get("instanceType"))
    return ",".join(sorted(archs)) if archs else "?"


# The node table's columns: (header, value). A column is one line here.
NODE_COLUMNS: list[tuple[str, Callable[[NodeView], Any]]] = [
    ("name", lambda v: v.node.get("name")),
    ("pool", lambda v: v.node.get("pool")),
    ("role", lambda v: v.node.get("roles")),
    ("zone", lambda v: v.node.get("availabilityZone")),
    ("address", lambda v: v.node.get("privateIp")),
    ("type", lambda v: v.inputs.get("instanceType")),
    ("arch", _architecture),
    ("market", lambda v: (v.inputs.get("instanceMarketOptions") or {}).get("marketType") or "on-demand"),
    # The image's OS when the program looked it up by name; a pool's own `ami` is the user's image.
    ("OS", lambda v: v.image[0] if v.image else f"own image {v.inputs.get('ami') or '?'}"),
]
# Notes printed under a node's row, each a function returning a sentence or None. A note is one line here.
NODE_NOTES: list[Callable[[NodeView], str | None]] = []


def node_table(s: dict) -> list[str]:
    views = node_views(s)
    rows = [[scalar(get(v)) if get(v) is not None else "" for _, get in NODE_COLUMNS] for v in views]
    headers = [h for h, _ in NODE_COLUMNS]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for v, row in zip(views, rows, strict=True):
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        lines += [f"    note: {n}" for n in (note(v) for note in NODE_NOTES) if n]
    return lines


def diagnostics(messages: Iterable[str]) -> dict[str, list[str]]:
    """The program's log lines (`warning: ...`, `info: ...`) by what a reviewer does with them."""
    out: dict[str, list[str]] = {"Warnings": [], "Notes": [], "Needs a second step": []}
    for line in messages:
        level, _, text = line.partition(": ")
        if SECOND_STEP.search(text):
            out["Needs a second step"].append(text if level == "info" else f"({level}) {text}")
        elif level in ("warning", "error"):
            out["Warnings"].append(text)
        else:
            out["Notes"].append(text)
    return out


def _bullet(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="  - ", subsequent_indent="    ", break_on_hyphens=False,
                         break_long_words=False) or ["  -"]


def stale_section(s: dict) -> list[str]:
    """Running nodes that keep what they booted (plan_report.summary's `stale`: rke_aws.plan.stale), each as
    `stale: <node> (<pool>-<n>): image ami-… → ami-…`; `rke-aws rotate <stack>` replaces them."""
    found = s.get("stale") or []
    if not found:
        return []
    return ["", f"Stale nodes (they keep running as they booted; `rke-aws rotate <stack>` replaces them one at a "
                f"time): {len(found)}"] + [f"  {line}" for line in found]


def first_screen(s: dict) -> list[str]:
    lines = headline(s) + ["", f"Nodes: {len(s.get('nodes') or [])}"] + node_table(s) + stale_section(s)
    found = diagnostics(s.get("messages") or [])
    if not any(found.values()):
        lines += ["", "No warnings, notes or second steps."]
    for title, texts in found.items():
        if texts:
            lines += ["", f"{title}: {len(texts)}"] + [line for t in texts for line in _bullet(t)]
    return lines


# ---- the resources -----------------------------------------------------------------------------------------

def _rule_source(i: dict) -> str:
    for key in ("cidrIpv4", "cidrIpv6", "referencedSecurityGroupId", "prefixListId"):
        if i.get(key):
            return str(i[key])
    return "?"


def _ports(i: dict) -> str:
    proto = "all" if str(i.get("ipProtocol")) == "-1" else i.get("ipProtocol")
    lo, hi = plain(i.get("fromPort")), plain(i.get("toPort"))
    return f"{proto}" if lo is None else f"{proto} {lo}" if lo == hi else f"{proto} {lo}-{hi}"


# The few inputs that say what a resource is, per type; the rest is behind --full.
BRIEF: dict[str, Callable[[dict], Iterable[Any]]] = {
    "Vpc": lambda i: [i.get("cidrBlock")],
    "Subnet": lambda i: [i.get("availabilityZone"), i.get("cidrBlock"), "public" if i.get("mapPublicIpOnLaunch") else None],
    "SubnetCidrReservation": lambda i: [i.get("cidrBlock"), i.get("reservationType")],
    "Route": lambda i: [i.get("destinationCidrBlock"), "via NAT" if i.get("natGatewayId") else "via internet gateway"],
    "SecurityGroupIngressRule": lambda i: [_ports(i), "from", _rule_source(i)],
    "SecurityGroupEgressRule": lambda i: [_ports(i), "to", _rule_source(i)],
    "Instance": lambda i: [i.get("instanceType"), i.get("privateIp"),
                           (i.get("instanceMarketOptions") or {}).get("marketType")],
    "Parameter": lambda i: [i.get("name"), i.get("type")],
    "Bucket": lambda i: [i.get("bucket")],
    "Record": lambda i: [i.get("name"), i.get("type"), " ".join(map(str, i.get("records") or []))],
    "Zone": lambda i: [i.get("name")],
    "LoadBalancer": lambda i: [i.get("loadBalancerType"), "internal" if i.get("internal") else "internet-facing"],
    "Listener": lambda i: [i.get("protocol"), i.get("port")],
    "TargetGroup": lambda i: [i.get("protocol"), i.get("port")],
    "TargetGroupAttachment": lambda i: [i.get("port")],
    "Alias": lambda i: [i.get("name")],
    "Release": lambda i: [i.get("chart"), i.get("version"), i.get("namespace")],
    "Secret": lambda i: [(i.get("metadata") or {}).get("namespace"), (i.get("metadata") or {}).get("name")],
    "RandomPassword": lambda i: [f"{plain(i.get('length'))} characters"],
    "Cluster": lambda i: [i.get("name")],
}


def brief(entry: dict, names: dict[str, str] | None = None) -> str:
    """One line of what `entry` is: its telling inputs (an ID of another planned resource as that resource's
    name), then its own ID when it has AWS's shape, marked as the emulated account's."""
    get = BRIEF.get(entry["type"])
    values = [(names or {}).get(v, v) if isinstance(v, str) else v for v in (get(entry["inputs"]) if get else [])]
    parts = [short(v, 60) for v in values if v not in (None, "")]
    own = emulated_id(entry.get("id"))
    shown = own if own and not own.startswith(entry.get("id") or "\0") else None  # a name or ARN says nothing new
    return "  ".join(p for p in (" ".join(parts), shown) if p)


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(plain(doc), sort_keys=False, width=1000, allow_unicode=True)


def resource_tree(s: dict, order: list[dict] | None, full: bool) -> list[str]:
    lines = [f"Resources: {len(s['resources'])}, by component, in creation order"]
    names = {e["id"]: e["name"] for e in s["resources"] if e.get("id")}
    printed: list[str] = []
    for path, e in _ordered(s, order):
        common = 0
        while common < min(len(path), len(printed)) and path[common] == printed[common]:
            common += 1
        for depth in range(common, len(path)):
            lines.append("  " * (depth + 1) + path[depth])
        printed = path
        indent = "  " * (len(path) + 1)
        text = f"{indent}+ {e['type']} {e['name']}"
        detail = brief(e, names)
        if full:
            shown = emulated_id(e.get("id"))
            text += f" = {shown}" if shown else ""
            if e.get("options"):
                text += f"  [{', '.join(f'{k}: {scalar(v)}' for k, v in e['options'].items())}]"
        elif detail:
            text += f"  {detail}"
        lines.append(text)
        if full:
            lines += [f"{indent}    {line}" for line in _yaml(e["inputs"]).rstrip("\n").splitlines()]
    return lines


# ---- the rest of --full -------------------------------------------------------------------------------------

def _args(args: Any) -> str:
    """A look-up's arguments on one line: `name=value`, a filter as `name=v1,v2`."""
    if not isinstance(args, dict):
        return short(args, 200)
    parts = []
    for k, v in args.items():
        if k == "filters" and isinstance(v, list):
            parts += [f"{f.get('name')}={','.join(map(str, f.get('values') or []))}" for f in v if isinstance(f, dict)]
        else:
            parts.append(f"{k}={short(v, 100)}")
    return " ".join(parts)


def _result(lk: dict) -> str:
    if lk.get("failure"):
        return f"failed: {short(lk['failure'], 200)}"
    r = lk.get("result") or {}
    main = r.get("names") or r.get("id")
    extra = [r[k] for k in ("name", "cidrBlock", "vpcId", "availabilityZone") if r.get(k)]
    return " ".join([short(main, 120)] + [f"({short(x, 120)})" for x in extra])


def lookup_line(lk: dict) -> str:
    """`getAmi owners=099720109477 name=ubuntu/…-amd64-server-* → ami-64405c7d… (ubuntu/…)`."""
    return f"  {lk['token'].split(':')[-1]} {_args(lk.get('args'))} → {_result(lk)}"


def _block(title: str, text: str, indent: str = "  ") -> list[str]:
    return [f"{indent}{title}:"] + [f"{indent}  {line}" for line in text.rstrip("\n").splitlines()]


def rest_of_full(s: dict, config_title: Callable[[dict], str], own_section: Iterable[str]) -> list[str]:
    lines = ["", "Cluster-tagged:"] + [f"  {t}" for t in s["clusterTagged"]]
    lines += ["", "Look-ups:"] + [lookup_line(lk) for lk in s["lookups"]]
    lines += ["", "CCM (image, how it is installed, values: null deletes a chart default):"]
    lines += [f"  {line}" for line in _yaml(s["ccm"]).rstrip("\n").splitlines()]
    lines += ["", "Add-ons and etcd snapshots:"]
    lines += [f"  {line}" for line in _yaml(s["addons"]).rstrip("\n").splitlines()]
    if s.get("configs"):
        lines += ["", "Generated configuration (secrets masked):"]
        for entry in s["configs"]:
            lines += _block(config_title(entry), _yaml(entry["content"]))
    lines += ["", "Outputs:"]
    for k, v in s["outputs"].items():
        if k in own_section:
            continue
        text = v if isinstance(v, str) else _yaml(v) if isinstance(v, (dict, list)) and v else json.dumps(plain(v))
        lines.append(f"  {k}:")
        lines += [f"    {line}" for line in text.rstrip("\n").splitlines()]
    return lines


def render(s: dict, *, full: bool = False, order: list[dict] | None = None,
           config_title: Callable[[dict], str] = lambda e: e["file"], own_section: Iterable[str] = ()) -> str:
    lines = first_screen(s) + [""] + resource_tree(s, order, full)
    lines += rest_of_full(s, config_title, own_section) if full else ["", FULL_HINT]
    return "\n".join(lines)
