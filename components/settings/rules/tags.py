"""tags: keys and values AWS takes in every service that tags (IAM, EC2, SSM, KMS, S3), none of the keys this
program or AWS reserve, no two keys IAM counts as one, and room for this program's own."""

from __future__ import annotations

import re

from ...diagnostics import Diagnostic
from ..fields import (
    MAX_USER_TAGS,
    RESERVED_TAG_KEYS,
    RESERVED_TAG_PREFIXES,
    TAG_CHARS,
    TAG_KEY_PATTERN,
    TAG_VALUE_PATTERN,
    json_text,
    shown,
)
from .base import Context, Keys, error

# AWS tagging rules: at most 50 tags per resource.
AWS_MAX_TAGS = 50
# The tags a resource may carry from this program (the most on an instance).
PROGRAM_TAG_KEYS = ("Name", "kubernetes.io/cluster/<id>", "rke-aws/pool", "rke-aws/roles",
                    "rke-aws/imds-hop-limit-reason", "kubernetes.io/role/*")
assert MAX_USER_TAGS == AWS_MAX_TAGS - len(PROGRAM_TAG_KEYS)
TAG_CHARS_RE = re.compile(TAG_CHARS + "*")
TAG_KEY_RE = re.compile(TAG_KEY_PATTERN)
TAG_VALUE_RE = re.compile(TAG_VALUE_PATTERN)
TAG_RULE = "use ASCII letters, digits, space and _ . : / = + - @"
RESERVED_TAG = ("is reserved (Name, kubernetes.io/cluster/*, kubernetes.io/role/* and rke-aws/* are set by this program, "
                "KubernetesCluster is the CCM's legacy cluster tag, aws:* is AWS's; compared in any letter case, as "
                "IAM compares keys); choose another key")


def tag_key_problem(k: str) -> str | None:
    """Why AWS (IAM, EC2, SSM, KMS, S3) or the CCM would refuse this tag key, or None; the verdict
    is TAG_KEY_RE's, the checks below only name the rule."""
    if TAG_KEY_RE.fullmatch(k):
        return None
    if not k.strip(" "):
        return "is empty; tag keys need 1 to 128 characters"
    low = k.strip(" ").lower()
    if any(low.startswith(pre) for pre in RESERVED_TAG_PREFIXES) or low in (x.lower() for x in RESERVED_TAG_KEYS):
        return RESERVED_TAG
    if len(k) > 128:
        return f"is {len(k)} characters long; AWS allows 128-character keys and 256-character values"
    if not TAG_CHARS_RE.fullmatch(k):
        return f"has characters AWS does not take in tag keys of every service (IAM, SSM); {TAG_RULE}"
    return "starts or ends with a space; remove it (AWS would keep a key that differs from what you see)"


def tag_value_problem(v: str) -> str | None:
    if TAG_VALUE_RE.fullmatch(v):
        return None
    if len(v) > 256:
        return f"is {len(v)} characters long; AWS allows 128-character keys and 256-character values"
    return f"has characters AWS does not take in tag values of every service (IAM, SSM); {TAG_RULE}"


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    raw = keys.section("tags")
    if raw is None:
        raw = keys.valid.tags
    found: list[Diagnostic] = []
    folded: dict[str, str] = {}
    for k, v in (raw.items() if isinstance(raw, dict) else ()):
        where = f"tags.{k}" if re.fullmatch(r"[ -~]*", k) else f"tags[{json_text(k)}]"
        key_problem = tag_key_problem(k)
        if key_problem:
            plain = key_problem == RESERVED_TAG or not k.strip(" ")
            found.append(error(where, key_problem if plain else f"{shown(k)} {key_problem}", "tags.key", k))
        elif isinstance(v, str) and tag_value_problem(v):
            found.append(error(where, f"value {shown(v)} {tag_value_problem(v)}", "tags.value", v))
        elif k.lower() in folded:
            # IAM, which tags the node roles, compares keys case-insensitively: one key twice.
            found.append(error(where, f"'{k}' and '{folded[k.lower()]}' differ only in letter case, which IAM counts "
                                      "as the same key; keep one", "tags.key-case", k))
        folded.setdefault(k.lower(), k)
    if isinstance(raw, dict) and len(raw) > MAX_USER_TAGS:
        found.append(error("tags", f"{len(raw)} tags; AWS allows {AWS_MAX_TAGS} per resource and this program sets up "
                                   f"to {len(PROGRAM_TAG_KEYS)} itself ({', '.join(PROGRAM_TAG_KEYS)}): use at most "
                                   f"{MAX_USER_TAGS}", "tags.too-many", len(raw)))
    return found
