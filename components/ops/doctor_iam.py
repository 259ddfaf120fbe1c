"""The doctor's IAM questions, apart from the account it asks: a role's policy documents, which needed actions
they allow by name, and what to ask AWS's policy simulator (iam:SimulatePrincipalPolicy) for each call a node of
this cluster makes on its resources. The checks that use them are rke_aws.ops.doctor's `iam` and `iam-simulate`."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..aws import iam_policies as iam_policy
from ..settings import tags as tagsets


def role_documents(iam: Any, role_name: str) -> list[tuple[str, dict]]:
    """The role's policy documents, inline and attached, as (name, document)."""
    docs: list[tuple[str, dict]] = []
    for pname in iam.list_role_policies(RoleName=role_name)["PolicyNames"]:
        doc = iam.get_role_policy(RoleName=role_name, PolicyName=pname)["PolicyDocument"]
        docs.append((pname, json.loads(doc) if isinstance(doc, str) else doc))
    for att in iam.list_attached_role_policies(RoleName=role_name)["AttachedPolicies"]:
        try:  # managed policies count too; AWS-managed ones may be unreadable in an emulator
            version = iam.get_policy(PolicyArn=att["PolicyArn"])["Policy"]["DefaultVersionId"]
            doc = iam.get_policy_version(PolicyArn=att["PolicyArn"], VersionId=version)["PolicyVersion"]["Document"]
        except Exception:  # noqa: BLE001
            continue
        docs.append((att["PolicyName"], json.loads(doc) if isinstance(doc, str) else doc))
    return docs


def _as_list(v: Any) -> list:
    return [v] if isinstance(v, str) else list(v or [])


def allowed_actions(documents: Iterable[dict], needed: Iterable[str]) -> set[str]:
    """The needed actions the documents allow (Allow matches, no Deny matches; wildcards honoured)."""
    allow: list[str] = []
    deny: list[str] = []
    for doc in documents:
        stmts = doc.get("Statement") or []
        for st in [stmts] if isinstance(stmts, dict) else stmts:
            (allow if st.get("Effect") == "Allow" else deny).extend(a.lower() for a in _as_list(st.get("Action")))

    def matches(action: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(action.lower(), p) for p in patterns)

    return {a for a in needed if matches(a, allow) and not matches(a, deny)}


# ---- what AWS decides: the IAM policy simulator ----------------------------------------------------

@dataclass(frozen=True)
class Simulation:
    """One iam:SimulatePrincipalPolicy request: actions on resources, with a request context."""
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (key, values)
    what: str = ""

    def request(self, role_arn: str) -> dict:
        entries = [{"ContextKeyName": k, "ContextKeyValues": list(v), "ContextKeyType": "stringList" if len(v) > 1 else "string"}
                   for k, v in self.context]
        req: dict[str, Any] = {"PolicySourceArn": role_arn, "ActionNames": list(self.actions),
                               "ResourceArns": list(self.resources)}
        if entries:
            req["ContextEntries"] = entries
        return req


# A resource of each type the CCM creates (none exists before it creates one): ARNs of the shape AWS gives.
_SAMPLE_RESOURCES = {
    "security-group": "arn:{p}:ec2:{r}:{a}:security-group/sg-0123456789abcdef0",
    "vpc": "arn:{p}:ec2:{r}:{a}:vpc/vpc-0123456789abcdef0",
    "loadbalancer": "arn:{p}:elasticloadbalancing:{r}:{a}:loadbalancer/a0123456789abcdef0123456789abcdef",
    "loadbalancer/net/": "arn:{p}:elasticloadbalancing:{r}:{a}:loadbalancer/net/k8s-default-svc-0123456789/0123456789abcdef",
    "targetgroup": "arn:{p}:elasticloadbalancing:{r}:{a}:targetgroup/k8s-default-svc-0123456789/0123456789abcdef",
    "listener/net": "arn:{p}:elasticloadbalancing:{r}:{a}:listener/net/k8s-default-svc-0123456789/0123456789abcdef/0123456789abcdef",
}
# The create action whose tags a TAG call authorises, per resource type (tag-on-create).
_CREATED_BY = {"security-group": "CreateSecurityGroup", "loadbalancer": "CreateLoadBalancer",
               "loadbalancer/net/": "CreateLoadBalancer", "targetgroup": "CreateTargetGroup",
               "listener/net": "CreateListener"}


def _tag_context(tags: dict[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    return [(f"aws:ResourceTag/{k}", (v,)) for k, v in sorted(tags.items())]


def simulations(role: str, cluster_id: str, partition: str, region: str, account: str,
                existing: dict[str, tuple[str, dict[str, str]]]) -> list[Simulation]:
    """What to ask the simulator for a `role` node of this cluster: every call it makes (the CCM's
    calls, components/iam_policy.CCM_CALLS, for controlplane), on the resources it makes them on.
    `existing`: resource type -> (ARN, tags) of this cluster's own resources (its VPC, its security
    group); resources the CCM creates carry what it tags them with (the cluster tag, owned)."""
    if role != "controlplane":
        return [Simulation(tuple(iam_policy.actions_for(role)), ("*",), (), "reads")]
    key = tagsets.cluster_tag_key(cluster_id)
    owned = {key: tagsets.OWNED}

    def arn(rtype: str) -> tuple[str, dict[str, str]]:
        if rtype in existing:
            return existing[rtype]
        return _SAMPLE_RESOURCES[rtype].format(p=partition, r=region, a=account), owned

    request_tag = [(f"aws:RequestTag/{key}", (tagsets.OWNED,)), ("aws:TagKeys", (key,))]
    out = [Simulation(tuple(sorted({c.action for c in iam_policy.CCM_CALLS if c.kind == iam_policy.READ})), ("*",), (),
                      "reads")]
    for call in iam_policy.CCM_CALLS:
        if call.kind == iam_policy.CREATE:
            created = tuple(arn(r)[0] for r in call.resources)
            parent = [arn(call.parent)] if call.parent else []
            out.append(Simulation((call.action,), created + tuple(a for a, _ in parent),
                                  tuple(request_tag + [e for _, t in parent for e in _tag_context(t)]),
                                  f"creates {', '.join(call.resources) or call.parent}"))
        elif call.kind == iam_policy.MUTATE:
            for rtype in call.resources:
                where, tags = arn(rtype)
                out.append(Simulation((call.action,), (where,), tuple(_tag_context(tags)), f"on {rtype}"))
        elif call.kind == iam_policy.TAG:
            service = call.action.split(":", 1)[0]
            for rtype in call.resources:
                out.append(Simulation((call.action,), (arn(rtype)[0],),
                                      tuple(request_tag + [(f"{service}:CreateAction", (_CREATED_BY[rtype],))]),
                                      f"tags a new {rtype}"))
    out.append(Simulation((iam_policy.SERVICE_LINKED_ROLE_ACTION,), (
        f"arn:{partition}:iam::{account}:role/aws-service-role/{iam_policy.ELB_SERVICE_NAME}/"
        "AWSServiceRoleForElasticLoadBalancing",), (("iam:AWSServiceName", (iam_policy.ELB_SERVICE_NAME,)),),
        "the ELB service-linked role"))
    return out


def simulate(iam: Any, role_arn: str, sims: list[Simulation]) -> list[tuple[str, str, str, str]]:
    """Ask AWS; returns the denials (action, resource, decision, what). Raises what the API raises."""
    denied = []
    for sim in sims:
        req, marker = sim.request(role_arn), None
        while True:
            page = iam.simulate_principal_policy(**req, **({"Marker": marker} if marker else {}))
            for res in page.get("EvaluationResults") or []:
                per_resource = res.get("ResourceSpecificResults") or []
                if per_resource:
                    denied += [(res["EvalActionName"], r.get("EvalResourceName", "*"), r["EvalResourceDecision"], sim.what)
                               for r in per_resource if r.get("EvalResourceDecision") != "allowed"]
                elif res.get("EvalDecision") != "allowed":
                    denied.append((res["EvalActionName"], res.get("EvalResourceName", "*"), res.get("EvalDecision"), sim.what))
            if not page.get("IsTruncated"):
                break
            marker = page["Marker"]
    return denied
