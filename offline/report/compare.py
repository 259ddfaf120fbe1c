"""What the next `pulumi up` of one program run does to the resources another registered, per resource, judged
as the providers and the engine would (the rules: offline/engine/resource_types.py, each with its upstream file).

`compare(stack, base, head)` takes two runs as plain data (diff.result_of) and returns a StackDiff: per changed
resource its action, the changed inputs with their old and new values (secrets never: only that they changed),
the provider's reasons, and for inputs the program tells the engine to ignore (ignore_changes) what that means
for the running resource. offline/report/diff.py evaluates the runs; offline/report/diff_text.py prints them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from rke_aws_offline.engine.records import secret_strings
from rke_aws_offline.engine.resource_types import RULES, TypeRules, Verdict

INSTANCE = "aws:ec2/instance:Instance"
PARAMETER = "aws:ssm/parameter:Parameter"
# How a node is replaced, in the words of the tool that does it (issue 37's rotation).
REPLACE_NODE = "replace the node (python3 -m offline.tasks rotate)"


# ---- comparing --------------------------------------------------------------------------------------

ACTIONS = ("replace", "unknown", "delete", "add", "update")  # in the order a reviewer reads them


class Missing:
    """An input one side does not set (shown as `(unset)`)."""

    def __repr__(self) -> str:
        return "(unset)"


MISSING = Missing()


@dataclass
class Change:
    action: str  # add | delete | update | replace | unknown (may replace) | unchanged (only ignored inputs)
    urn: str
    type: str
    name: str
    node: str | None = None  # the node as it runs now (instances)
    changed: list[str] = field(default_factory=list)  # changed inputs (a.b for a decided sub-key)
    replaced_by: list[str] = field(default_factory=list)  # the inputs that force the replacement
    ignored: list[str] = field(default_factory=list)
    secret: list[str] = field(default_factory=list)  # changed inputs whose values are secret (never shown)
    why: list[str] = field(default_factory=list)  # the provider's reasons, where a rule gives one
    stops: bool = False  # updated by stopping the resource (an EC2 instance's type or user data)
    # input -> (old, new) for every changed or ignored input shown that is not secret (secret ones: `secret`)
    values: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # what a reviewer must know beyond the action, one sentence each (an ignored input's meaning)
    notes: list[str] = field(default_factory=list)


@dataclass
class StackDiff:
    stack: str
    changes: list[Change] = field(default_factory=list)
    refused: str | None = None
    etcd: list[str] = field(default_factory=list)  # etcd members deleted, replaced, maybe replaced or stopped
    note: str | None = None
    diagnostics: list[str] = field(default_factory=list)  # the head program's warnings and notes ("warning: ...")
    stale: list[str] = field(default_factory=list)  # running nodes that keep what they booted (rke_aws.plan.stale)

    def count(self, action: str) -> int:
        return sum(c.action == action for c in self.changes)


def _registrations(result: dict):
    from rke_aws_offline.engine.records import Registration

    known = {f.name for f in dataclasses.fields(Registration)}
    regs = []
    for r in result.get("resources", []):
        # Another checkout's harness may record more or fewer fields than this one.
        r = {k: v for k, v in r.items() if k in known}
        r["secret_inputs"] = set(r.get("secret_inputs") or [])
        regs.append(Registration(**r))
    return regs


def _node_name(reg) -> str | None:
    return (reg.inputs.get("tags") or {}).get("Name") if reg.type == INSTANCE else None


def _provider_urn(reg) -> str | None:
    return reg.provider.rsplit("::", 1)[0] if reg.provider else None


def judge(rules: TypeRules, old: dict, new: dict, changed: set, unknown: set) -> list[Verdict]:
    """The provider's verdicts on one resource's changed inputs (`unknown`: inputs whose new value
    is not known before the apply, e.g. the ID of a resource being replaced)."""
    verdicts: list[Verdict] = []
    decided: set[str] = set()
    for keys, condition in rules.conditions:
        if set(keys) & (changed | unknown):
            verdicts += condition(old, new, changed, unknown)
        decided |= set(keys)
    nested = dict(rules.nested)
    for key in sorted((changed | unknown) - decided):
        if key in rules.replace_on:
            verdicts.append(Verdict("replace", (key,)))
        elif key in nested:
            a, b = old.get(key) or {}, new.get(key) or {}
            subs = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if isinstance(a, dict) and isinstance(b, dict) else []
            forcing = [s for s in subs if s in nested[key]]
            if key in unknown and not subs:
                verdicts.append(Verdict("unknown", (key,), "value not known offline: may replace"))
            elif forcing:
                verdicts.append(Verdict("replace", tuple(f"{key}.{s}" for s in forcing)))
                rest = [s for s in subs if s not in nested[key]]
                if rest:
                    verdicts.append(Verdict("update", tuple(f"{key}.{s}" for s in rest)))
            else:
                verdicts.append(Verdict("update", tuple(f"{key}.{s}" for s in subs) or (key,)))
        else:
            verdicts.append(Verdict("update", (key,)))
    return verdicts


def _comparable(reg) -> dict:
    from rke_aws_offline.report.review import review_inputs

    return review_inputs(reg, mask=False)


# Components the program defines itself (types in its own package) are only groupings: the engine
# has nothing to create, update or delete for them (pulumi/pulumi pkg/resource/deploy/step_generator.go
# diff: "If there is no provider for this resource (which should only happen for component
# resources)", no provider is asked). A component of a provider's package (a
# "remote" component: kubernetes:yaml/v2:ConfigFile, kubernetes:helm.sh/v4:Chart) is different: the
# engine hands it to the provider's Construct (pkg/resource/deploy/source_eval.go; pulumi/pulumi-kubernetes
# provider/pkg/provider/provider_construct.go maps those types to provider/pkg/provider/yaml/v2 and
# helm/v4), which reads the manifest or chart at preview time and registers the children itself, with
# the component's provider. Offline the mocks never see those children, so the component stands for
# them: changed inputs may change, replace or delete any of them; added or deleted, all of them are;
# a replaced provider replaces all of them.
OWN_PACKAGES = ("rke-aws", "pulumi")
REMOTE_WHY = "children decided by the provider: may replace"


def diffable(reg) -> bool:
    """A resource the engine asks a provider about: custom, or a component of a provider's package."""
    return bool(reg.custom) or reg.type.split(":", 1)[0] not in OWN_PACKAGES


class DuplicateAlias(Exception):
    """Two resources of the new program claim one old resource (pulumi/pulumi step_generator.go
    getOldResource: diag 2008 "Duplicate resource alias" / 2016 "Duplicate resource URN ... conflicting
    with alias"); `pulumi preview` stops with that error."""


def compare(stack: str, base: dict, head: dict) -> StackDiff:
    """What the next `pulumi up` of `head` does to the resources `base` registered, per resource.

    Inputs are compared before secrets are masked (a changed secret is a change), then only the
    names of secret inputs are shown. Each change is judged by RULES for its type; a type without
    rules is "unknown: may replace".
    """
    result = StackDiff(stack)
    if "refused" in head:
        result.refused = head["refused"]
        return result
    if "refused" in base:
        result.note = f"the base did not evaluate ({base['refused'][:200]}); everything shows as added"
    old = {r.urn: r for r in _registrations(base)}
    new = {r.urn: r for r in _registrations(head)}
    # The engine finds a resource's old state by its URN, then by its aliases and those inherited from
    # an aliased parent (records.match_old_urns: pulumi/pulumi pkg/resource/deploy/step_generator.go
    # getOldResource): a child renamed or moved with an alias is the same resource, not a delete and a
    # create. A second claim is an engine error: the preview stops, and so does this diff.
    from rke_aws_offline.engine.records import match_old_urns

    try:
        match = match_old_urns(list(new.values()), set(old), duplicate=DuplicateAlias)
    except DuplicateAlias as e:
        result.refused = str(e)
        return result
    claimed = set(match.values())
    # Every secret value of either run: never printed, even where it reaches an input that is not secret.
    secret_values = secret_strings([r.inputs.get(k) for r in (*old.values(), *new.values()) for k in r.secret_inputs])
    replaced_ids: set[str] = set()
    replaced_providers: set[str] = set()
    maybe_providers: set[str] = set()
    decided: dict[str, Change] = {}
    # Replacements propagate: an input holding the ID of a replaced resource becomes unknown, and
    # where that input forces replacement, the dependent is replaced too; every resource a replaced
    # provider manages is replaced (the engine). Iterate to a fixpoint.
    for _ in range(20):
        grew = False
        for urn, n in new.items():
            if urn not in match or not diffable(n):
                continue
            o = old[match[urn]]
            a, b = _comparable(o), _comparable(n)
            keys = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
            unknown = {k for k, v in n.inputs.items() if _mentions(v, replaced_ids) and k not in keys}
            ignored = sorted(k for k in keys | unknown if k in n.ignore_changes)
            changed = {k for k in keys if k not in n.ignore_changes}
            unknown = {k for k in unknown if k not in n.ignore_changes}
            rules = RULES.get(n.type) if n.custom else None
            if not n.custom:
                verdicts = [Verdict("unknown", tuple(sorted(changed | unknown)), REMOTE_WHY)] if changed | unknown else []
            elif rules is None:
                verdicts = [Verdict("unknown", tuple(sorted(changed | unknown)),
                                    f"no replace rules for {n.type}: may replace")] if changed | unknown else []
            else:
                verdicts = judge(rules, o.inputs, n.inputs, changed, unknown)
            # replaceOnChanges: the engine turns a diff of these inputs into a replacement, whatever
            # the provider says (pulumi/pulumi pkg/resource/deploy/step_generator.go, applyReplaceOnChanges).
            forced = sorted(k for k in changed | unknown
                            if any(k == r or k.startswith(r + ".") for r in getattr(n, "replace_on_changes", ())))
            if forced:
                verdicts.append(Verdict("replace", tuple(forced), "replaceOnChanges (a resource option) replaces on "
                                                                  "any change of these inputs"))
            provider = _provider_urn(n)
            if provider in replaced_providers:
                verdicts.append(Verdict("replace", ("provider",), "its provider is replaced" if n.custom else
                                        "its provider is replaced, and with it every child it created"))
            elif provider in maybe_providers:
                verdicts.append(Verdict("unknown", ("provider",), "its provider may be replaced"))
            actions = {v.action for v in verdicts}
            action = next((x for x in ("replace", "unknown", "update") if x in actions), None)
            if action is None and not ignored:
                continue
            node = _node_name(o)
            if node and _node_name(n) != node:
                node = f"{node} -> {_node_name(n)}"
            shown = sorted({k for v in verdicts for k in v.keys if k != "provider"} | changed | unknown)
            shown = [k for k in shown if not any(s.startswith(k + ".") for s in shown)]  # a.b over a
            secrets = o.secret_inputs | n.secret_inputs
            secret = sorted(k for k in shown + ignored if k.split(".")[0] in secrets)
            stops = bool(rules and action == "update" and
                         any(v.action == "update" and set(v.keys) & rules.stops for v in verdicts))
            values = {k: (_at(a, k), _at(b, k)) for k in shown + ignored
                      if k not in secret and k not in unknown and k != "provider"}
            change = Change(action or "unchanged", urn, n.type, n.name, node, shown,
                            sorted({k for v in verdicts if v.action == "replace" for k in v.keys}), ignored, secret,
                            [f"{', '.join(v.keys)}: {v.why}" for v in verdicts if v.why], stops,
                            _scrub(values, secret_values), [ignored_meaning(n, k) for k in ignored])
            if decided.get(urn) != change:
                decided[urn] = change
                if action == "replace" and o.id and o.id not in replaced_ids:
                    replaced_ids.add(o.id)
                    grew = True
                if n.type.startswith("pulumi:providers:") and action in ("replace", "unknown"):
                    target = replaced_providers if action == "replace" else maybe_providers
                    if urn not in target:
                        target.add(urn)
                        grew = True
        if not grew:
            break
    changes = [c for c in decided.values() if c.action != "unchanged" or c.ignored]
    changes += [Change("add", u, r.type, r.name, _node_name(r)) for u, r in new.items() if u not in match and diffable(r)]
    changes += [Change("delete", u, r.type, r.name, _node_name(r)) for u, r in old.items() if u not in claimed and diffable(r)]
    order = {a: i for i, a in enumerate(ACTIONS + ("unchanged",))}
    result.changes = sorted(changes, key=lambda c: (order[c.action], c.type, c.name))
    etcd_nodes = {n["name"] for n in base.get("outputs", {}).get("nodes", []) if "etcd" in n.get("roles", [])}
    what = {"delete": "deleted", "replace": "replaced", "unknown": "may be replaced", "update": "stopped"}
    result.etcd = sorted(f"{c.node.split(' -> ')[0]} ({what[c.action]})" for c in result.changes
                         if c.node and c.node.split(" -> ")[0] in etcd_nodes
                         and (c.action in ("delete", "replace", "unknown") or c.stops))
    result.stale = stale_lines(old, new, match, decided)
    return result


def stale_lines(old: dict, new: dict, match: dict, decided: dict) -> list[str]:
    """Instances that stay (not replaced) but whose inputs ask for another image, type, boot configuration
    or a smaller root volume: they keep running as they booted (ignore_changes) until rotated."""
    from rke_aws.plan import stale

    out = []
    for urn, n in new.items():
        if n.type != INSTANCE or urn not in match or getattr(decided.get(urn), "action", None) == "replace":
            continue
        o = old[match[urn]]
        name = _node_name(o) or n.name
        found = stale.stale_node({**stale.values_from_inputs(o.inputs), "name": name, "pool": n.name, "index": 0},
                                 stale.values_from_inputs(n.inputs))
        if found is not None:
            out.append(f"{name} ({n.name}): {found.what}")
    return sorted(out)


def _mentions(value: Any, ids: set[str]) -> bool:
    if not ids:
        return False
    if isinstance(value, str):
        return value in ids
    if isinstance(value, dict):
        return any(_mentions(v, ids) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, ids) for v in value)
    return False


def _at(inputs: dict, key: str) -> Any:
    """The value of input `key` (`a.b`: sub-key b of input a), MISSING when unset."""
    value: Any = inputs
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


SECRET_MASK = "****"


def _scrub(value: Any, secrets: set[str]) -> Any:
    if not secrets:
        return value
    if isinstance(value, str):
        for s in secrets:
            value = value.replace(s, SECRET_MASK)
        return value
    if isinstance(value, tuple):
        return tuple(_scrub(v, secrets) for v in value)
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


# ---- what an ignored input means ----------------------------------------------------------------------
#
# The program registers some inputs with ignore_changes (components/aws/nodes.py, join_secrets.py): the
# engine keeps the running resource's value, so a changed value in the program never reaches it. A
# reviewer must read that plainly, per (type, input).

def _instance_type_meaning(reg: Any) -> str:
    if (reg.inputs.get("instanceMarketOptions") or {}).get("marketType") == "spot":
        # EC2 User Guide, "Stop interrupted Spot Instances": a stopped spot instance keeps its type.
        return f"not applied to running spot nodes: EC2 cannot change a spot instance's type; {REPLACE_NODE}"
    roles = set(str((reg.inputs.get("tags") or {}).get("rke-aws/roles") or "").split(",")) - {""}
    if roles and not roles & {"etcd", "controlplane"}:
        # Issue 37: agents keep their type too (components/aws/nodes.py IGNORED_ON_UPDATE).
        return ("not applied to running agents: EC2 changes a type by stopping the instance, and an update would "
                f"stop every node of the pool at once, undrained; {REPLACE_NODE}, drained first")
    return ("not applied to running servers: EC2 changes a type by stopping the instance, and an update would stop "
            f"every server (etcd member) at once; {REPLACE_NODE}, one server at a time")


_USER_DATA = f"not applied to running nodes: user data is read at first boot; {REPLACE_NODE}"
_WRITTEN_BY_SERVER = "written by the cluster's first server; the program never overwrites it"
IGNORED_MEANING: dict[tuple[str, str], Any] = {
    (INSTANCE, "userData"): _USER_DATA,
    (INSTANCE, "userDataBase64"): _USER_DATA,
    (INSTANCE, "ami"): f"not applied to running nodes: a node keeps the image it was launched from; {REPLACE_NODE}",
    (INSTANCE, "instanceType"): _instance_type_meaning,
    (PARAMETER, "insecureValue"): _WRITTEN_BY_SERVER,
    (PARAMETER, "value"): _WRITTEN_BY_SERVER,
}


def ignored_meaning(reg: Any, key: str) -> str:
    """What the change of ignored input `key` of `reg` means for the running resource, in one sentence."""
    meaning = IGNORED_MEANING.get((reg.type, key.split(".")[0]))
    text = meaning(reg) if callable(meaning) else meaning
    return f"{key}: {text or 'not applied to the running resource (ignore_changes)'}"
