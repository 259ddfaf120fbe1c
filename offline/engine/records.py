"""What the offline engine records of one resource registration: a plain record the reports (compare, diff)
read without loading the engine or the emulated account (offline/engine/harness.py writes it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    inputs: dict
    state: dict
    parent: str
    dependencies: list[str]
    protect: bool
    delete_before_replace: bool
    ignore_changes: list[str]
    provider: str
    custom: bool
    secret_inputs: set[str] = field(default_factory=set)
    id: str = ""  # the physical ID the mocks answered (custom resources)
    retain_on_delete: bool = False
    deleted_with: str = ""  # the URN whose deletion subsumes this one's (the `deletedWith` option)
    aliases: list[str] = field(default_factory=list)  # URNs this resource may have had in the state
    replace_on_changes: list[str] = field(default_factory=list)  # inputs whose change replaces (an option)
    # Outputs the engine stores as secrets (the additionalSecretOutputs option: top-level names only).
    additional_secret_outputs: list[str] = field(default_factory=list)


def urn_parts(urn: str) -> tuple[str, str, str]:
    """(urn:pulumi:<stack>::<project>, qualified type, name)."""
    prefix, _, name = urn.rpartition("::")
    head, _, qualified = prefix.rpartition("::")
    return head, qualified, name


def match_old_urns(resources: list[Registration], olds: set[str],
                   duplicate: type[Exception] = ValueError) -> dict[str, str]:
    """New URN -> the old resource's URN each registration takes over, as the engine's step generator
    finds it (pulumi/pulumi pkg/resource/deploy/step_generator.go getOldResource): its own URN first,
    then its aliases (generateAliases), each old URN claimed once. A child of a resource that was found
    by an alias also gets the inherited alias under that old URN (inheritedChildAlias: the old parent's
    type chain, and the old parent's name in place of the new one where the child's name starts with
    it); the Python SDK leaves this to the engine when the engine takes alias specs
    (sdk/python/lib/pulumi/runtime/resource.py prepare_aliases). The first candidate found in the old
    state is the one taken; when another resource holds it, by its URN (whatever the order of
    registration) or through an alias, the engine stops with "Duplicate resource alias" (diag 2008 /
    2016): so does this, raising `duplicate`."""
    found_by_alias: dict[str, str] = {}  # the step generator's `aliases`: new URN -> the old URN it took over
    match: dict[str, str] = {r.urn: r.urn for r in resources if r.urn in olds}
    holder: dict[str, str] = dict(match)  # old URN -> the new resource that holds it
    for r in resources:
        if r.urn in match:
            continue
        candidates = [r.urn, *r.aliases]
        parent_old = found_by_alias.get(r.parent or "")
        if parent_old is not None:
            parent_name = urn_parts(r.parent)[2]
            for alias in [r.urn, *r.aliases]:
                _, qualified, name = urn_parts(alias)
                head, parent_qualified, parent_old_name = urn_parts(parent_old)
                if name.startswith(parent_name):
                    name = parent_old_name + name[len(parent_name):]
                candidates.append(f"{head}::{parent_qualified}${qualified.rpartition('$')[2]}::{name}")
        found = next((c for c in candidates if c in olds), None)
        if found is None:
            continue
        if found in holder:
            other = holder[found]
            how = "is registered as it is" if other == found else f"is claimed through an alias by {other}"
            raise duplicate(f"Duplicate resource alias: {r.urn} claims {found} through an alias, but {found} {how}")
        match[r.urn] = found_by_alias[r.urn] = found
        holder[found] = r.urn
    return match


def secret_strings(values: list[Any]) -> set[str]:
    """Every string of six characters or more in `values` (nested dicts and lists): what a report masks when the
    values are secret (shorter strings would mask ordinary words)."""
    found: set[str] = set()

    def collect(v: Any) -> None:
        if isinstance(v, str) and len(v) >= 6:
            found.add(v)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)

    for v in values:
        collect(v)
    return found
