"""What a rule reads (the keys as written and their valid part, the context) and what it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ...diagnostics import Diagnostic, Severity
from ..fields import DEFAULT_NODE_POOLS
from ..messages import Item, path_text, pool_labels
from ..sections import ClusterKeys, NodePool


@dataclass(frozen=True)
class Running:
    """What the stack's last outputs say about the running cluster (a new stack: the defaults)."""
    kubernetes_version: str | None = None  # the release it runs
    etcd_members: int = 0  # etcd members it has
    ccm_install: Literal["helm", "manifest"] | None = None  # how its CCM is installed, when recorded


@dataclass(frozen=True)
class PoolEntry:
    """One pool as written and its valid part."""
    index: int
    label: str | int  # how messages name it: its name, when valid and unique, else its position
    raw: Mapping[str, Any]  # its keys as written, nulls left out ({} when it is not a map)
    nulls: frozenset[str]  # keys given as null (refused already)
    pool: NodePool | None  # its valid keys (None: not a map)
    complete: bool  # valid, with name, roles and count: one of keys.valid.node_pools

    @property
    def key(self) -> str:
        return path_text(("nodePools", Item(self.label)))


@dataclass(frozen=True)
class Keys:
    """What the rules judge: the valid part of the configuration and what was written."""
    valid: ClusterKeys
    raw: Mapping[str, Any]  # by stack key, decoded (sections as maps), nulls left out
    pools: tuple[PoolEntry, ...]  # nodePools as written (the default layout when not given)
    pools_judged: bool = True  # False: nodePools was given but refused as a whole (null, empty, not decodable)
    # Top-level keys present at all, even those refused before validation (null, empty, secret): no "missing".
    written: frozenset[str] = frozenset()

    def gave(self, section: str, key: str | None = None) -> bool:
        """Whether the configuration wrote `section` (or `section.key`), even a value that was refused."""
        value = self.raw.get(section)
        if key is None:
            return section in self.raw
        return isinstance(value, Mapping) and key in value

    def section(self, name: str) -> Any:
        return self.raw.get(name)

    @classmethod
    def of(cls, args: ClusterKeys) -> Keys:
        """A configuration already valid key by key (built in Python, or read and checked before)."""
        raw = args.model_dump(by_alias=True, exclude_unset=True, exclude={"region"} if "region" in
                              type(args).model_fields else None)
        pools = args.node_pools
        given = pools is not None
        items: list[NodePool] = list(pools) if pools is not None else [
            NodePool.model_validate(p) for p in DEFAULT_NODE_POOLS]
        labels = pool_labels(items)
        entries = tuple(PoolEntry(i, labels[i], p.model_dump(by_alias=True, exclude_unset=True), frozenset(), p,
                                  p.name is not None and p.roles is not None and p.count is not None)
                        for i, p in enumerate(items))
        if not given:
            raw = {k: v for k, v in raw.items() if k != "nodePools"}
        return cls(args, raw, entries, written=frozenset(raw))

    @property
    def complete_pools(self) -> tuple[NodePool, ...]:
        return tuple(e.pool for e in self.pools if e.complete and e.pool is not None)


@dataclass(frozen=True)
class Context:
    """What a rule may know besides the keys."""
    region: str | None = None  # the cluster's region (aws:region), when known
    # The release the version-dependent rules judge: the one given when it is known, or the resolved one.
    kubernetes_version: str | None = None
    # The running cluster (settings/resolve.py); None: not known yet, so the rules that compare with it wait.
    running: Running | None = None
    # Stack keys the CLI marked secret (`secure:` values); None: not from a stack file (Python), not judged.
    secret_keys: frozenset[str] | None = None
    namespace: str = "rke-aws"  # the project's: messages that name another key's command use it


Rule = Callable[[Keys, Context], list[Diagnostic]]


def error(key: str, message: str, code: str, value: object = None) -> Diagnostic:
    return Diagnostic(key, message, code, Severity.ERROR, value)


def warning(key: str, message: str, code: str, value: object = None) -> Diagnostic:
    return Diagnostic(key, message, code, Severity.WARNING, value)


def given(section: BaseModel | None) -> set[str]:
    """The stack keys a section was given with (valid ones: a refused key is left out of the valid part)."""
    if section is None:
        return set()
    return {type(section).model_fields[name].alias or name for name in section.model_fields_set}
