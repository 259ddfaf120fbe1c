"""A small IAM identity-policy evaluator for tests, independent of components/.

Why not moto: moto 5.x evaluates policies in `moto.iam.access_control.IAMPolicyStatement`, and its
condition support (`moto.iam.policy_conditions`) cannot prove what these tests need:
- only `StringEquals` is implemented; every other operator (StringLike, Null, ArnLike, the
  ForAnyValue:/ForAllValues: forms, ...) is skipped and counts as satisfied;
- a condition key missing from the request context is skipped too, so a positive condition such as
  `StringEquals aws:ResourceTag/...` *passes* for an untagged resource;
- a statement whose condition fails returns DENIED, i.e. a non-matching Allow acts as an explicit
  Deny for the whole policy;
- action matching is case-sensitive, `?` is not a wildcard, NotResource is not read.
So a test built on it would pass for the wrong reasons; this module implements the documented
semantics instead (IAM User Guide, "Policy evaluation logic" and "IAM JSON policy elements:
Condition operators"), and tests/unit/test_iam_eval.py proves it on hand-written cases.

Scope: identity-based policies of one principal, no permissions boundaries, SCPs or session
policies; no policy variables (`${...}`); operators beyond the string/ARN/Null/Bool families raise.

    decision(docs, "ec2:DeleteSecurityGroup", "arn:aws:ec2:us-east-1:1:security-group/sg-1",
             {"aws:ResourceTag/kubernetes.io/cluster/c1": "owned"})  -> ALLOW / DENY / IMPLICIT_DENY
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

ALLOW = "allow"
DENY = "explicit-deny"
IMPLICIT_DENY = "implicit-deny"

Context = Mapping[str, str | bool | Iterable[str]]

_BASE_OPERATORS = {
    # name: (matcher(policy_value, request_value) -> bool, negated)
    "StringEquals": (lambda p, v: v == p, False),
    "StringNotEquals": (lambda p, v: v == p, True),
    "StringEqualsIgnoreCase": (lambda p, v: v.lower() == p.lower(), False),
    "StringNotEqualsIgnoreCase": (lambda p, v: v.lower() == p.lower(), True),
    "StringLike": (lambda p, v: _wildcard(p, v), False),
    "StringNotLike": (lambda p, v: _wildcard(p, v), True),
    "ArnEquals": (lambda p, v: _arn_like(p, v), False),  # ArnEquals matches like ArnLike (per-field wildcards)
    "ArnLike": (lambda p, v: _arn_like(p, v), False),
    "ArnNotEquals": (lambda p, v: _arn_like(p, v), True),
    "ArnNotLike": (lambda p, v: _arn_like(p, v), True),
    "Bool": (lambda p, v: v.lower() == p.lower(), False),
}


def _wildcard(pattern: str, value: str, ignore_case: bool = False) -> bool:
    """IAM's glob: `*` any run of characters, `?` one character, everything else literal."""
    return _glob(pattern, ignore_case).fullmatch(value) is not None


@functools.lru_cache(maxsize=4096)
def _glob(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    # Compiled once per pattern: the unit tier matches the same policies' patterns hundreds of thousands of times.
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(rx, re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def _arn_like(pattern: str, value: str) -> bool:
    """ARN operators compare the six colon-separated fields one by one, each with wildcards."""
    p, v = pattern.split(":", 5), value.split(":", 5)
    if len(p) != 6 or len(v) != 6:
        return False
    return all(_wildcard(a, b) for a, b in zip(p, v, strict=False))


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (str, int, float)):
        return [str(value)]
    return [s for item in value for s in _strings(item)]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [value] if isinstance(value, (str, Mapping)) else list(value)


def _lookup(context: Context, key: str) -> tuple[bool, list[str], bool]:
    """(present, values, multivalued) of a condition key; key names are case-insensitive."""
    for k, v in context.items():
        if k.lower() == key.lower():
            multi = not isinstance(v, (str, bool))
            values = _strings(v)
            return (bool(values) or not multi), values, multi
    return False, [], False


def _condition_block(operator: str, block: Mapping[str, Any], context: Context) -> bool:
    """One operator with its keys: every key must hold (AND); a key's values are OR'ed."""
    qualifier, _, op = operator.rpartition(":")
    if qualifier not in ("", "ForAnyValue", "ForAllValues"):
        raise ValueError(f"unknown set operator qualifier {qualifier!r} in {operator!r}")
    if_exists = op.endswith("IfExists") and op != "IfExists"
    if if_exists:
        op = op[: -len("IfExists")]
    if op == "Null":
        if qualifier or if_exists:
            raise ValueError(f"{operator!r}: Null takes no qualifier")
        for key, expected in block.items():
            (want,) = {s.lower() for s in _strings(expected)} or {"true"}
            if want not in ("true", "false"):
                raise ValueError(f"Null {key}: {expected!r} is neither true nor false")
            present, _, _ = _lookup(context, key)
            if (want == "true") == present:
                return False
        return True
    if op not in _BASE_OPERATORS:
        raise ValueError(f"operator {operator!r} is not supported by this evaluator")
    matcher, negated = _BASE_OPERATORS[op]

    def single(value: str, policy_values: list[str]) -> bool:
        hit = any(matcher(p, value) for p in policy_values)
        return not hit if negated else hit

    for key, expected in block.items():
        policy_values = _strings(expected)
        present, values, multi = _lookup(context, key)
        if qualifier == "ForAllValues":
            # Every request value must satisfy the operator; a missing key or an empty set is vacuously true.
            ok = all(single(v, policy_values) for v in values)
        elif qualifier == "ForAnyValue":
            # At least one request value must satisfy it; a missing key or an empty set is false.
            ok = any(single(v, policy_values) for v in values)
        else:
            if multi:
                raise ValueError(f"{operator} on {key}: the context gives several values; "
                                 "use ForAnyValue:/ForAllValues: for a multivalued key")
            if not present:
                # Missing key: positive operators fail; negated ones (StringNotEquals, ...) and IfExists hold.
                ok = negated or if_exists
            else:
                ok = single(values[0], policy_values)
        if not ok:
            return False
    return True


def conditions_hold(condition: Mapping[str, Any] | None, context: Context) -> bool:
    """All operator blocks of a Condition element (AND)."""
    return all(_condition_block(op, block, context) for op, block in (condition or {}).items())


def _matches_action(patterns: list[str], action: str) -> bool:
    return any(_wildcard(p, action, ignore_case=True) for p in patterns)


def _matches_resource(patterns: list[str], resource: str) -> bool:
    return any(p == "*" or _wildcard(p, resource) for p in patterns)


def statement_applies(stmt: Mapping[str, Any], action: str, resource: str, context: Context) -> bool:
    if "Principal" in stmt or "NotPrincipal" in stmt:
        raise ValueError("identity policies have no Principal; this evaluator handles identity policies only")
    if ("Action" in stmt) == ("NotAction" in stmt):
        raise ValueError(f"statement needs exactly one of Action/NotAction: {stmt}")
    if ("Resource" in stmt) == ("NotResource" in stmt):
        raise ValueError(f"statement needs exactly one of Resource/NotResource: {stmt}")
    if "Action" in stmt:
        if not _matches_action(_strings(stmt["Action"]), action):
            return False
    elif _matches_action(_strings(stmt["NotAction"]), action):
        return False
    if "Resource" in stmt:
        if not _matches_resource(_strings(stmt["Resource"]), resource):
            return False
    elif _matches_resource(_strings(stmt["NotResource"]), resource):
        return False
    return conditions_hold(stmt.get("Condition"), context)


def _statements(documents: Iterable[Mapping[str, Any] | str]) -> Iterable[Mapping[str, Any]]:
    if isinstance(documents, (Mapping, str)):
        documents = [documents]
    for doc in documents:
        if isinstance(doc, str):
            doc = json.loads(doc)
        for stmt in _as_list(doc.get("Statement")):
            if stmt.get("Effect") not in ("Allow", "Deny"):
                raise ValueError(f"statement Effect must be Allow or Deny: {stmt}")
            yield stmt


def decision(documents: Iterable[Mapping[str, Any] | str] | Mapping[str, Any] | str, action: str,
             resource: str = "*", context: Context | None = None) -> str:
    """ALLOW, DENY (an explicit Deny matched) or IMPLICIT_DENY (no Allow matched)."""
    context = context or {}
    allowed = False
    for stmt in _statements(documents):
        if statement_applies(stmt, action, resource, context):
            if stmt["Effect"] == "Deny":
                return DENY
            allowed = True
    return ALLOW if allowed else IMPLICIT_DENY


def allowed(documents: Any, action: str, resource: str = "*", context: Context | None = None) -> bool:
    return decision(documents, action, resource, context) == ALLOW
