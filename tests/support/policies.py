"""The policy pack (policies/rules.py) run against registrations of a program run, as the Pulumi analyzer
would."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import unknown_checking_proxy

from policies import rules

POLICY = {p.name: p for p in rules.POLICIES}


def _opts(parent: str | None = None) -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent)


def resource_args(typ: str, urn: str, name: str, props: dict, config: dict | None = None) -> ResourceValidationArgs:
    # unknown_checking_proxy (pulumi_policy/proxy.py _proxy_helper) rebuilds every dict and list it wraps, and the
    # leaves are immutable (text, numbers, booleans, None, assets): a policy writing to its props cannot reach `props`,
    # so no deep copy first (it was half of this module's CPU).
    return ResourceValidationArgs(typ, unknown_checking_proxy(props), urn, name, _opts(), None, config)


def run_resource_policy(policy: Policy, typ: str, urn: str, props: dict, config: dict | None = None) -> list[str]:
    found: list[str] = []
    assert isinstance(policy, ResourceValidationPolicy)
    policy.validate(resource_args(typ, urn, urn.rsplit("::", 1)[-1], props, config),
                    lambda msg, urn=None: found.append(msg))
    return found


def _mock_id(run, reg) -> str | None:
    """The id the account answered for `reg` (the harness records it), or its state's `id`."""
    return reg.state.get("id") or reg.id or None


@dataclass
class Rec:
    """A stack resource before it becomes a PolicyResource, so tests can plant mistakes in it."""
    type: str
    urn: str
    name: str
    props: dict
    deps: list[str] = field(default_factory=list)
    prop_deps: dict[str, list[str]] = field(default_factory=dict)


def _copy(value: Any) -> Any:
    """A copy of a registration's JSON-like value: new dicts and lists, the immutable leaves shared (what
    copy.deepcopy gives for these, at a fraction of its CPU)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_RECORDS: dict[tuple[str, int], list[Rec]] = {}


def _records(stack: str) -> list[Rec]:
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    key = (stack, id(run))
    if key not in _RECORDS:
        out = []
        for reg in run.resources:
            if not reg.custom:
                continue
            props = {**reg.state, **reg.inputs}
            rid = _mock_id(run, reg)
            if rid is not None:
                props["id"] = rid
            out.append(Rec(reg.type, reg.urn, reg.name, props, list(reg.dependencies)))
        _RECORDS[key] = out
    return _RECORDS[key]


def records(stack: str) -> list[Rec]:
    """A copy of the stack's custom resources as the stack analyzer would see them (outputs = state), each call its
    own: tests plant mistakes in them."""
    return [Rec(r.type, r.urn, r.name, _copy(r.props), list(r.deps), {k: list(v) for k, v in r.prop_deps.items()})
            for r in _records(stack)]


def stack_args(recs: list[Rec], config: dict | None = None) -> StackValidationArgs:
    objs = {r.urn: PolicyResource(r.type, unknown_checking_proxy(r.props), r.urn, r.name, _opts(),
                                  None, None, [], {}) for r in recs}
    for r in recs:
        objs[r.urn].dependencies.extend(objs[d] for d in r.deps if d in objs)
        for prop, urns in r.prop_deps.items():
            objs[r.urn].property_dependencies[prop] = [objs[u] for u in urns if u in objs]
    return StackValidationArgs(list(objs.values()), config)


def run_stack_policy(policy: Policy, recs: list[Rec], config: dict | None = None) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    assert isinstance(policy, StackValidationPolicy)
    policy.validate(stack_args(recs, config), lambda msg, urn=None: found.append((msg, urn)))
    return found


def of_type(recs: list[Rec], typ: str) -> list[Rec]:
    found = [r for r in recs if r.type == typ]
    assert found, f"no {typ} registered"
    return found


def registrations(stack: str, typ: str):
    from tests.support.runs import run_stack_cached

    regs = run_stack_cached(stack).of_type(typ)
    assert regs, f"{stack}: no {typ} registered"
    return regs


def _node_rule(stack: str):
    """The every-stack ingress rule (nodes <-> nodes, all traffic): the base for planted world rules."""
    return next(r for r in registrations(stack, rules.SG_INGRESS_RULE) if "referencedSecurityGroupId" in r.inputs)


def _world_rule(stack: str, **changes: Any) -> tuple[Any, dict]:
    reg = _node_rule(stack)
    props = copy.deepcopy(reg.inputs)
    props.pop("referencedSecurityGroupId")
    props.update(cidrIpv4="0.0.0.0/0")
    props.update(changes)
    return reg, {k: v for k, v in props.items() if v is not None}


def node_group(recs: list[Rec]) -> Rec:
    """The cluster-tagged node group (with controlPlane.endpoint nlb the load balancer has another)."""
    (sg,) = [r for r in of_type(recs, rules.SECURITY_GROUP)
             if any(k.startswith(rules.CLUSTER_TAG_PREFIX) for k in r.props.get("tags", {}))]
    return sg
