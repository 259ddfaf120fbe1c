"""A stack's configuration as written, checked key by key and across keys, every problem at once.

Two ways in:
- `read_flat`: the flat map the Pulumi CLI hands a program (`"<namespace>:<key>" -> text`, structured keys as
  JSON) to the stack file's own form: this project's keys without the namespace, structured values decoded,
  the keys the CLI marked secret. Other namespaces belong to other programs (a consumer's own keys): ignored,
  but a near miss of this project's (`rke_aws:` for `rke-aws`) is warned about, and `kubernetes:*` is said
  to be unused.
- `check`: the stack file's form (camelCase keys, values as YAML gives them or as text) to the valid part of
  the keys and the problems: nulls and empties refused, encrypted values only where a secret belongs, each
  section validated alone (a field with a problem is left out, settings/messages.py `check`), then every rule
  of settings/rules/ on what is valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..diagnostics import Diagnostic, Severity, suggest
from . import rules
from .fields import CLUSTER_ID_PATTERN, CLUSTER_ID_RULE, DEFAULT_NODE_POOLS, REGION_PATTERN, json_text, shown
from .messages import (
    NULL,
    TYPE,
    UNKNOWN_KEY,
    Item,
    null_or_empty,
    pool_labels,
    unknown_key_message,
)
from .messages import (
    check as validate_section,
)
from .rules.versions import effective
from .sections import SECTIONS, TOP_LEVEL_KEYS, ClusterKeys, NodePool

# The namespace of this repository's project (Pulumi.yaml `name`), its sample stacks and test fixtures; a
# program reads its own project's (pulumi.get_project(): `pulumi new` renames the project, and the CLI
# namespaces every key with it: pulumi/pulumi pkg/workspace/config.go mergeConfig, sdk/go/common/workspace/
# loaders.go stackConfigNamespacedWithProject, pkg/cmd/pulumi/config/io.go parseConfigKey).
NAMESPACE = "rke-aws"
# Namespaces whose keys something else reads: the providers and the engine this program runs with.
KNOWN_NAMESPACES = ("aws", "kubernetes", "pulumi")
# Pulumi.yaml declares these with default "" (its schema cannot express "the stack name" or "per
# distribution"); an empty value therefore means "use the program's default".
EMPTY_MEANS_DEFAULT = ("clusterId", "kubernetesVersion", "kubeconfig", "confirmClusterState")
# Scalar keys arrive as the text the user wrote (the model reads numbers and booleans from text); only
# structured keys (sections, nodePools, tags) are JSON. Derived from the model: a new scalar key needs nothing here.
STRUCTURED_KEYS = (*SECTIONS, "nodePools", "tags")
SCALAR_KEYS = tuple(k for k in TOP_LEVEL_KEYS if k not in STRUCTURED_KEYS)
# Booleans arrive as "true"/"false" (a YAML boolean) or the text written; the model reads exactly the
# spellings the schema allows (fields.BOOL_TEXTS), which JSON would loosen ("true\n", " true").
BOOL_KEYS = tuple(k for k in SCALAR_KEYS if ClusterKeys.model_fields[
    next(n for n, i in ClusterKeys.model_fields.items() if i.alias == k)].annotation is bool)
STRING_KEYS = tuple(k for k in SCALAR_KEYS if k not in BOOL_KEYS)
# The keys whose values are secrets; every other value becomes names, tags, addresses or settings that AWS and
# the stack's state show in plain text. `rancher` holds the Rancher API token: the CLI marks a structured key
# secret as a whole when a value inside it is `secure:` (pulumi/pulumi sdk/go/common/resource/config/map.go
# SecureKeys), so the program can only require the key to be secret (and never shows its text).
SECRET_KEYS = ("kubeconfig", "rancher", "registry")  # registry: its password (issue 35)
SECRET_AS_TEXT = ("is encrypted (a `secure:` value, set with --secret), but the program uses it as plain text: it becomes "
                  "names, tags, addresses or settings that AWS, the preview and the stack's state show unencrypted; "
                  "store it without --secret (`pulumi config set [--path] ...`), or leave it out")
# A `secure:` proxy value would still end up in plain text in the user data; credentials are refused
# (fields.PROXY_CREDENTIALS), so nothing in the proxy section needs to be secret.
PROXY_SECRET = ("is encrypted (a `secure:` value), but proxy URLs are written into every node's EC2 user data, which "
                "ec2:DescribeInstanceAttribute shows in plain text, and this program takes no proxy credentials; store "
                "the proxy without --secret and let the proxy authorise the cluster by source address")
REGION_RE = re.compile(REGION_PATTERN)
CLUSTER_ID_RE = re.compile(CLUSTER_ID_PATTERN)
# How far a namespace may be from the project's name to be taken for a typo of it (rke_aws, rke-aws2).
NAMESPACE_TYPO_DISTANCE = 2


@dataclass
class Flat:
    """A flat Pulumi config read for this project: its keys in the stack file's form, and what else it said."""
    config: dict[str, Any] = field(default_factory=dict)
    secret_keys: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)  # own keys present, even refused ones
    region: Any = None
    found: list[Diagnostic] = field(default_factory=list)


def distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def read_flat(raw: Mapping[str, Any], *, namespace: str, secret_keys: Collection[str] = ()) -> Flat:
    """The flat map the CLI hands a program, as this project's keys (module docstring)."""
    out = Flat()
    secret = frozenset(secret_keys)
    for full_key, value in raw.items():
        printable = isinstance(full_key, str) and re.fullmatch(r"[ -~]+", full_key) is not None
        text = full_key if printable else shown(full_key)
        if not isinstance(full_key, str) or full_key.count(":") != 1:
            out.found.append(Diagnostic(text, f"not a configuration key; keys are <namespace>:<name>, like "
                                                    f"{namespace}:nodePools", "config.not-a-key"))
            continue
        ns, key = full_key.split(":")
        if full_key == "aws:region":
            out.region = value
        if ns == namespace:
            out.written.add(key)
            out.config[key] = value
            if full_key in secret:
                out.secret_keys.add(key)
        elif ns == "kubernetes":
            out.found.append(Diagnostic(full_key, f"the program's Kubernetes provider is explicit, configured from "
                                                  f"{namespace}:kubeconfig (or the kubeconfig the first server "
                                                  "published); it ignores kubernetes:* settings", "config.kubernetes-keys",
                                        Severity.WARNING))
        elif ns not in KNOWN_NAMESPACES and distance(ns.lower(), namespace.lower()) <= NAMESPACE_TYPO_DISTANCE:
            # A typo of the namespace (rke_aws:, rke-aws2:) would leave the setting silently unused.
            close = f"{namespace}:{key}" if key in TOP_LEVEL_KEYS else f"{namespace}:{suggest(key, TOP_LEVEL_KEYS) or key}"
            out.found.append(Diagnostic(full_key, f"namespace {shown(ns)} is not this project's ({namespace}: its name "
                                                  f"in Pulumi.yaml), so nothing reads this key; did you mean {close}?",
                                        "config.namespace-typo", Severity.WARNING))
    if "distribution" not in out.written:
        # This project's keys are missing and another namespace has them: a stack written for a project named
        # otherwise (a template's keys after `pulumi new` renamed the project), refused with the way out.
        for full_key in raw:
            if isinstance(full_key, str) and full_key.count(":") == 1 and full_key.endswith(":distribution") \
                    and full_key.split(":")[0] not in KNOWN_NAMESPACES:
                out.found.append(Diagnostic(full_key, f"is another project's key: this project's keys are "
                                                      f"{namespace}:<key> (its name in Pulumi.yaml); name them so "
                                                      f"({namespace}:distribution, ...), or nothing reads them",
                                            "config.other-namespace"))
    return out


class _TooDeep(Exception):
    pass


def _decode(raw: Any) -> Any:
    """Structured config arrives JSON-encoded from the CLI; a value already decoded (a stack file read as
    YAML, a mapping a program built) stays as it is, and so does text that is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except RecursionError:
        raise _TooDeep() from None
    except ValueError:
        return raw


_K = TypeVar("_K", bound=ClusterKeys)


@dataclass
class Checked:
    """What `check` found: the rules' view of the keys, and every problem (errors, warnings)."""
    keys: rules.Keys
    found: list[Diagnostic]

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.found if d.severity == Severity.ERROR]


def check(config: Mapping[str, Any], *, secret_keys: Collection[str] | None = None, region: str | None = None,
          written: Collection[str] | None = None, default_cluster_id: tuple[str, str] | None = None,
          running: rules.Running | None = None, namespace: str = NAMESPACE, cls: type[ClusterKeys] = ClusterKeys) -> Checked:
    """Every problem of a configuration in the stack file's form, and its valid part (module docstring).
    `secret_keys`: the keys the CLI marked secret (None: not from a stack file: nothing is refused as plain
    text); `written`: keys present in the flat config, even refused ones; `default_cluster_id`: (the name a
    cluster ID defaults to, what that name is) when clusterId is not given; `running`: the running cluster
    (None: not known: the rules that compare with it wait for settings/resolve.py)."""
    found: list[Diagnostic] = []
    secret = frozenset(secret_keys or ())
    values: dict[str, Any] = {}
    for key, value in config.items():
        if key not in TOP_LEVEL_KEYS:
            printable = isinstance(key, str) and re.fullmatch(r"[ -~]+", key) is not None
            found.append(Diagnostic(key if printable else shown(key), unknown_key_message(str(key), TOP_LEVEL_KEYS),
                                    UNKNOWN_KEY, value=key))
            continue
        if key in secret and key not in SECRET_KEYS:
            # Neither read nor shown: its text must not reach a message, a tag or a name.
            found.append(Diagnostic(key, PROXY_SECRET if key == "proxy" else SECRET_AS_TEXT, "secrets.encrypted-text"))
            continue
        refused = null_or_empty(key, "null" if value is None else value, key in EMPTY_MEANS_DEFAULT)
        if refused is not None:
            found.append(refused)
            continue
        if value == "":
            continue  # Pulumi.yaml's "unset": the program's default
        try:
            values[key] = _decode(value) if key in STRUCTURED_KEYS else value
        except _TooDeep:
            found.append(Diagnostic(key, "nests deeper than the program reads; flatten it", TYPE))

    # The scalar keys through the model at once; the structured ones section by section, pools one by one.
    scalars = {k: v for k, v in values.items() if k in SCALAR_KEYS}
    top, problems = validate_section(cls, scalars, ())
    found += problems
    parts: dict[str, Any] = {name: getattr(top, name) for name in top.model_fields_set}
    for key, section in SECTIONS.items():
        if key in values and values[key] is not None and not isinstance(values[key], dict):
            # Not a map: judged as the top level's field, whose message may keep the value out (rancher holds the
            # token); the section keeps its defaults.
            _, problems = validate_section(cls, {key: values[key]}, ())
            found += problems
            parts[_field(key)] = section()
        elif key in values:
            obj, problems = validate_section(section, values[key], (key,))
            found += problems
            parts[_field(key)] = obj
    if "tags" in values:
        tagged, problems = validate_section(cls, {"tags": values["tags"]}, ())
        found += problems
        if "tags" in tagged.model_fields_set:
            parts["tags"] = tagged.tags

    pools, entries, judged = _pools(values, config, found)
    if pools is not None:
        parts["node_pools"] = pools

    if "cluster_id" not in parts and default_cluster_id is not None:
        name, what = default_cluster_id
        if CLUSTER_ID_RE.fullmatch(name):
            parts["cluster_id"] = name
        else:
            found.append(Diagnostic("clusterId", f"{json_text(name)} is not a cluster ID (defaulted from {what}; set "
                                                 f"clusterId); {CLUSTER_ID_RULE}", "config.pattern", value=name))
    valid = cls.model_construct(_fields_set=set(parts), **parts)
    raw = {k: v for k, v in values.items()}
    keys = rules.Keys(valid, raw, entries, judged, written=frozenset(written if written is not None else config))
    ctx = rules.Context(region=region if isinstance(region, str) and REGION_RE.fullmatch(region) else None,
                        kubernetes_version=effective(keys, running), running=running,
                        secret_keys=secret if secret_keys is not None else None, namespace=namespace)
    found += rules.judge(keys, ctx)
    return Checked(keys, found)


def _field(key: str) -> str:
    return next(name for name, info in ClusterKeys.model_fields.items() if info.alias == key)


def _pools(values: Mapping[str, Any], config: Mapping[str, Any],
           found: list[Diagnostic]) -> tuple[tuple[NodePool, ...] | None, tuple[rules.PoolEntry, ...], bool]:
    """nodePools one pool at a time: (the complete pools, or None when not given; every pool as written; whether
    the pools are judged at all: not when nodePools was given but refused as a whole)."""
    if "nodePools" not in values and "nodePools" in config:
        return None, (), False
    raw = values.get("nodePools")
    items = raw if raw is not None else [dict(pool) for pool in DEFAULT_NODE_POOLS]
    if not isinstance(items, list) or not items:
        found.append(Diagnostic("nodePools", f"{json_text(items)} is not a non-empty list of pools; each pool is "
                                             "{name, roles, count, ...}", TYPE, value=items))
        return None, (), False
    labels = pool_labels(items)
    entries: list[rules.PoolEntry] = []
    for i, item in enumerate(items):
        where = ("nodePools", Item(labels[i]))
        if not isinstance(item, dict):
            found.append(Diagnostic(f"nodePools[{labels[i]}]", f"{json_text(item)} is not a pool object; write "
                                                               "{name, roles, count, instanceType, ...}", TYPE, value=item))
            entries.append(rules.PoolEntry(i, labels[i], {}, frozenset(), None, False))
            continue
        pool, problems = validate_section(NodePool, item, where)  # reports `key: ~` too
        found += problems
        nulls = frozenset(k for k, v in item.items() if v is None)
        written = {k: v for k, v in item.items() if v is not None}
        complete = (pool.name is not None and pool.roles is not None and pool.count is not None
                    and len(set(pool.roles)) == len(pool.roles)
                    and set(written) <= {NodePool.model_fields[n].alias for n in pool.model_fields_set})
        entries.append(rules.PoolEntry(i, labels[i], written, nulls, pool, complete))
    pools = tuple(e.pool for e in entries if e.complete and e.pool is not None) if raw is not None else None
    return pools, tuple(entries), True


__all__ = ["EMPTY_MEANS_DEFAULT", "KNOWN_NAMESPACES", "NAMESPACE", "NULL", "SCALAR_KEYS", "SECRET_KEYS",
           "STRING_KEYS", "Checked", "Flat", "check", "read_flat"]
