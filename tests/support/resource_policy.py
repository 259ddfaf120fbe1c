"""Resource-based policies (role trust policies, S3 bucket policies) for the suite's IAM evaluator,
independent of components/.

tests/iam_eval.py evaluates identity policies and refuses a Principal. A resource-based policy
names who it applies to in Principal (IAM User Guide, "IAM JSON policy elements: Principal"):
`"*"` and `{"AWS": "*"}` are everyone, anonymous requests included; `{"Federated": <provider ARN>}`
is a web identity federated through that provider; `{"Service": ...}` a service. So: keep the
statements whose Principal names the caller, drop the element, and let iam_eval decide on the rest.

S3 public access (S3 user guide, "Blocking public access to your Amazon S3 storage", "The meaning of
public"): a bucket policy is public when an Allow grants to `*` without a fixing condition
(aws:SourceIp, aws:SourceArn, aws:SourceVpc(e), aws:SourceAccount, aws:SourceOwner, aws:userid ...);
`BlockPublicPolicy` rejects PutBucketPolicy of a public policy; `RestrictPublicBuckets` lets only AWS
service principals and the owner's account use a bucket whose policy is public.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import iam_eval

ANONYMOUS = ("anonymous", "")
ALLOW, DENY, IMPLICIT_DENY = iam_eval.ALLOW, iam_eval.DENY, iam_eval.IMPLICIT_DENY


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [value] if isinstance(value, (str, Mapping)) else list(value)


def principal_matches(principal: Any, caller: tuple[str, str]) -> bool:
    """Whether a statement's Principal names `caller` ((kind, id): ("anonymous", ""), ("Federated",
    provider ARN), ("AWS", ARN), ("Service", name))."""
    if principal == "*":
        return True
    if not isinstance(principal, Mapping):
        raise ValueError(f"Principal must be '*' or a map: {principal!r}")
    kind, ident = caller
    for key, values in principal.items():
        if key not in ("AWS", "Federated", "Service", "CanonicalUser"):
            raise ValueError(f"unknown principal type {key!r}")
        for v in _as_list(values):
            if key == "AWS" and v == "*":
                return True
            if key == kind and v == ident:
                return True
    return False


def statements_for(policy: Mapping[str, Any] | str, caller: tuple[str, str]) -> list[dict[str, Any]]:
    import json

    doc = json.loads(policy) if isinstance(policy, str) else policy
    out = []
    for stmt in _as_list(doc.get("Statement")):
        if "NotPrincipal" in stmt:
            raise ValueError("NotPrincipal is not modelled")
        if "Principal" not in stmt:
            raise ValueError(f"a resource-based policy statement needs a Principal: {stmt}")
        if principal_matches(stmt["Principal"], caller):
            bare = {k: v for k, v in stmt.items() if k != "Principal"}
            if "Resource" not in bare and "NotResource" not in bare:
                # A role's trust policy names no Resource: it is the role it is attached to (IAM User
                # Guide, "IAM JSON policy elements: Resource").
                bare["Resource"] = "*"
            out.append(bare)
    return out


def decision(policy: Mapping[str, Any] | str, caller: tuple[str, str], action: str, resource: str = "*",
             context: Mapping[str, Any] | None = None) -> str:
    return iam_eval.decision({"Statement": statements_for(policy, caller)}, action, resource, context or {})


_FIXING_KEYS = {"aws:sourceip", "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceaccount",
                "aws:sourceowner", "aws:userid", "s3:x-amz-server-side-encryption-aws-kms-key-id"}


def is_public(policy: Mapping[str, Any]) -> bool:
    """S3's notion: an Allow to everyone without a condition on one of the fixing keys."""
    for stmt in _as_list(policy.get("Statement")):
        if stmt.get("Effect") != "Allow" or not principal_matches(stmt.get("Principal", {}), ANONYMOUS):
            continue
        keys = {k.lower() for block in (stmt.get("Condition") or {}).values() for k in block}
        if not keys & _FIXING_KEYS:
            return True
    return False


def anonymous_s3_decision(policy: Mapping[str, Any], public_access_block: Mapping[str, bool], action: str,
                          resource: str, secure_transport: bool = True) -> str:
    """An anonymous request to a bucket with `policy` and the bucket's Block Public Access settings
    (aws.s3.BucketPublicAccessBlock argument names)."""
    if public_access_block.get("restrict_public_buckets") and is_public(policy):
        return IMPLICIT_DENY
    return decision(policy, ANONYMOUS, action, resource, {"aws:SecureTransport": secure_transport})


def put_policy_refused(policy: Mapping[str, Any], public_access_block: Mapping[str, bool]) -> bool:
    return bool(public_access_block.get("block_public_policy")) and is_public(policy)
