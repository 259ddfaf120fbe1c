"""IAM roles for service accounts: the trust policy that admits exactly one Kubernetes service
account through the cluster's OIDC provider, the rules a service account's name must follow, and
the refusal of role policies that allow every action on every resource. Pure.

Sources:
- Trust policy: the IAM user guide ("Create a role for OpenID Connect federation") and the pod
  identity webhook's README (EKS walkthrough): Principal `Federated` = the OIDC provider's ARN, action
  `sts:AssumeRoleWithWebIdentity`, conditions on `<provider host/path>:sub` and `:aud` with
  `StringEquals`. kops (pkg/model/awsmodel/iam.go `formatAWSIAMStatement`) writes the `sub`
  condition only and switches to `StringLike` for a wildcard namespace; here both keys are exact
  and no wildcard can reach them (the names are checked below).
- The token's `sub` is `system:serviceaccount:<namespace>:<name>` (kubernetes pkg/serviceaccount
  util.go `MakeUsername`).
- Names: a namespace is a DNS-1123 label, a service account name a DNS-1123 subdomain (kubernetes
  pkg/apis/core/validation/validation.go `ValidateNamespaceName` = NameIsDNSLabel,
  `ValidateServiceAccountName` = NameIsDNSSubdomain; k8s.io/apimachinery pkg/util/validation:
  label <= 63 characters `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, subdomain <= 253 characters of such
  labels joined by dots).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .identity_issuer import STS_AUDIENCE, host_path

ASSUME_ACTION = "sts:AssumeRoleWithWebIdentity"
ROLE_ARN_ANNOTATION = "eks.amazonaws.com/role-arn"  # what the webhook reads on a service account

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253


def dns_label_problem(value: str) -> str | None:
    if len(value) > DNS_LABEL_MAX:
        return f"is {len(value)} characters long; at most {DNS_LABEL_MAX}"
    if not _DNS_LABEL.match(value):
        return "must consist of lower-case letters, digits and '-', and start and end with a letter or digit"
    return None


def dns_subdomain_problem(value: str) -> str | None:
    if len(value) > DNS_SUBDOMAIN_MAX:
        return f"is {len(value)} characters long; at most {DNS_SUBDOMAIN_MAX}"
    if not value or not all(_DNS_LABEL.match(label) and len(label) <= DNS_LABEL_MAX for label in value.split(".")):
        return ("must be lower-case letters, digits, '-' and '.', each dot-separated part starting and ending "
                "with a letter or digit")
    return None


def parse_service_account(value: object) -> tuple[tuple[str, str] | None, list[str]]:
    """`<namespace>/<name>` -> ((namespace, name), []) or (None, problems), as Kubernetes validates the
    two names (a name it refuses could never exist, and a pattern must never reach a trust policy)."""
    if not isinstance(value, str) or value.count("/") != 1:
        return None, ["must be <namespace>/<name>, e.g. kube-system/ebs-csi-controller-sa"]
    namespace, name = value.split("/")
    problems = []
    if (p := dns_label_problem(namespace)) is not None:
        problems.append(f"namespace {namespace!r} {p} (a Kubernetes namespace is a DNS-1123 label)")
    if (p := dns_subdomain_problem(name)) is not None:
        problems.append(f"name {name!r} {p} (a Kubernetes service account name is a DNS-1123 subdomain)")
    return ((namespace, name), []) if not problems else (None, problems)


def subject(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def trust_policy(provider_arn: str, issuer_url: str, namespace: str, name: str,
                 audience: str = STS_AUDIENCE) -> dict[str, Any]:
    """Exactly one service account, and tokens for `audience`, via the cluster's OIDC provider."""
    _, problems = parse_service_account(f"{namespace}/{name}")
    if problems:
        raise ValueError("; ".join(problems))
    if not provider_arn.endswith(f":oidc-provider/{host_path(issuer_url)}"):
        raise ValueError(f"{provider_arn!r} is not the provider of {issuer_url!r}")
    key = host_path(issuer_url)
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "ServiceAccount",
        "Effect": "Allow",
        "Principal": {"Federated": provider_arn},
        "Action": ASSUME_ACTION,
        "Condition": {"StringEquals": {f"{key}:sub": subject(namespace, name), f"{key}:aud": audience}},
    }]}


def trust_policy_json(*args: Any, **kwargs: Any) -> str:
    return json.dumps(trust_policy(*args, **kwargs), indent=2, sort_keys=True)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _everything(values: list[str]) -> bool:
    return any(v in ("*", "*:*") for v in values)


def unbounded_statements(policy: Mapping[str, Any]) -> list[str]:
    """Sids (or positions) of Allow statements that grant every action on every resource: Action `*`
    (or `*:*`) on Resource `*`, or NotAction on Resource `*` (everything but a list)."""
    statements = policy.get("Statement", [])
    if isinstance(statements, Mapping):
        statements = [statements]
    found = []
    for i, stmt in enumerate(statements):
        if not isinstance(stmt, Mapping) or stmt.get("Effect") != "Allow":
            continue
        resource_all = _everything(_strings(stmt.get("Resource")))
        action_all = _everything(_strings(stmt.get("Action"))) or "NotAction" in stmt
        if resource_all and action_all:
            found.append(str(stmt.get("Sid") or f"statement {i + 1}"))
    return found


def policy_problems(policy_text: object, allow_unbounded: bool) -> list[str]:
    """Why a role's inline policy (`identity.roles[].policy`) is refused: not a JSON policy document,
    or a statement allowing every action on every resource without the explicit override."""
    if isinstance(policy_text, str):
        try:
            policy = json.loads(policy_text)
        except ValueError as exc:
            return [f"is not JSON ({exc.args[0]})"]
    else:
        policy = policy_text
    if not isinstance(policy, Mapping) or "Statement" not in policy:
        return ["must be an IAM policy document with a Statement"]
    unbounded = unbounded_statements(policy)
    if unbounded and not allow_unbounded:
        return [f"{', '.join(unbounded)} allows every action on every resource; name the actions and "
                "resources the workload needs, or set allowAllActions: true on this role to accept it"]
    return []
