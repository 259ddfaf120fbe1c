"""What is stale: a running node that differs from what the configuration asks for a new one.

Running instances ignore a new image, a new boot configuration (user data) and a new instance type
(components/aws/nodes.py IGNORED_ON_UPDATE), and keep a root volume larger than the pool's (EBS cannot
shrink a volume: EC2 API Reference, ModifyVolume, "Size ... must be greater than or equal to the
existing size"). Such a node keeps running as it booted until it is replaced; rotation
(components/ops/rotate/) replaces the stale ones one at a time.

Each node in the stack's `nodes` output carries both sides: what runs, read from the instance's state
(after an update that ignores an input, the engine keeps the instance's old value: pulumi/pulumi
pkg/resource/deploy/step_generator.go processIgnoreChanges; a targeted `--replace` creates from the
program's inputs instead: isTargetedReplace), under the attribute's key, and what the configuration
asks, under `wanted`. So "what is stale" is a pure function of the outputs, computed the same way by
the program (a note per node), the offline plan and diff, and `rotate`.

A new attribute (issue 35's OS) is one line in ATTRIBUTES, plus its field in components/state/model.py
(NodeBuild, and NodeState for what runs) and its two values in the node output (components/aws/nodes.py).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..state.model import NodeBuild, NodeState
from .cluster_documents import load_yaml

# Output keys are the state model's (components/state/model.py, the one place they are spelled).
WANTED = NodeState.output_key("wanted")  # the node output key holding what the configuration asks


def _shown(value: Any) -> str:
    return str(value)


def _differs(running: Any, wanted: Any) -> bool:
    return bool(running != wanted)


@dataclass(frozen=True)
class Attribute:
    key: str  # node output key of what runs; the same key under `wanted` holds what is asked
    label: str  # as a message names it
    instance_input: str  # the aws.ec2.Instance input it comes from (ignored on running nodes)
    shown: Callable[[Any], str] = _shown
    # running, wanted -> stale (both known); default: any difference
    stale: Callable[[Any, Any], bool] = _differs
    # the attribute's value from the instance input's value (offline diff: registrations, not outputs)
    from_input: Callable[[Any], Any] = lambda value: value  # noqa: E731


def _gib(value: Any) -> str:
    # Outputs come back as JSON numbers (80.0): shown as the user wrote them (80).
    shown = int(value) if isinstance(value, float) and value.is_integer() else value
    return f"{shown} GiB"


def _bigger(running: Any, wanted: Any) -> bool:
    # A larger volume is grown in place by the update (ModifyVolume); only a smaller one needs a new node.
    try:
        return int(running) > int(wanted)
    except (TypeError, ValueError):
        return False


def _key(field: str) -> str:
    return NodeBuild.output_key(field)


# The third column is an aws.ec2.Instance input (the provider's name, not an output key).
ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(_key("image"), "image", "ami"),
    Attribute(_key("instance_type"), "instance type", "instanceType"),
    Attribute(_key("boot_digest"), "boot configuration (user data digest)", "userDataBase64",
              from_input=lambda encoded: boot_digest_of_base64(encoded)),
    Attribute(_key("root_volume_gb"), "root volume", "rootBlockDevice.volumeSize", _gib, _bigger),
    # issue 35: Attribute(_key("os"), "OS", "ami"),
)
ROOT_VOLUME = _key("root_volume_gb")
NAME, POOL, INDEX, ROLES = (NodeState.output_key(f) for f in ("name", "pool", "index", "roles"))
BY_KEY = {a.key: a for a in ATTRIBUTES}


# ---- the boot configuration's digest ------------------------------------------------------------

# Settings of the boot script that differ between nodes of one configuration without changing what a new
# node becomes: the RKE2 release reaches running nodes through the upgrade Plans (system-upgrade-
# controller), and the peers an initialising server probes matter only at a cluster's first boot.
# (components/node/scripts.py writes each setting as NAME='value' on a line of its own; the cloud-config
# carries the script as one YAML string, so the digest is taken over the parsed document.)
_VOLATILE = re.compile(r"^(?:INSTALL_VERSION|PEER_IPS)='[^\n]*'$", re.MULTILINE)
DIGEST_CHARS = 12


def _steady(doc: Any) -> Any:
    if isinstance(doc, str):
        return _VOLATILE.sub("", doc)
    if isinstance(doc, Mapping):
        return {str(k): _steady(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_steady(v) for v in doc]
    return doc


def boot_digest(user_data: str) -> str:
    """A short digest of a node's cloud-config (as text), without what reaches running nodes anyway."""
    try:
        doc = load_yaml(user_data)
    except yaml.YAMLError:
        doc = user_data
    canonical = json.dumps(_steady(doc), sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:DIGEST_CHARS]


def boot_digest_of_base64(encoded: str | None) -> str | None:
    """The digest of the user data an instance holds (`user_data_base64`, gzip-compressed as
    components/node/cloud_init.py writes it, or plain), or None when it holds none (nodes created
    with plain `userData` by early releases: the provider stores only a hash of that)."""
    if not encoded:
        return None
    try:
        raw = base64.b64decode(encoded, validate=True)
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    except (ValueError, OSError, EOFError, UnicodeDecodeError):
        return None
    return boot_digest(text)


def held_boot_digest(encoded: str | None, sent: str, sent_digest: str) -> str | None:
    """The digest of the user data an instance holds (`encoded`), given what this run sent (`sent`, whose
    digest `sent_digest` the run has already taken): the same payload has the same digest, so only user data
    an earlier update left in place (ignored inputs keep their old value) is decompressed and parsed again."""
    return sent_digest if encoded == sent else boot_digest_of_base64(encoded)


# ---- comparing ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    attribute: Attribute
    running: Any
    wanted: Any

    def __str__(self) -> str:
        a = self.attribute
        return f"{a.label} {a.shown(self.running)} → {a.shown(self.wanted)}"


@dataclass(frozen=True)
class StaleNode:
    name: str
    pool: str
    index: int
    roles: tuple[str, ...]
    differences: tuple[Difference, ...]

    @property
    def is_server(self) -> bool:
        return bool({"etcd", "controlplane"} & set(self.roles))

    @property
    def what(self) -> str:
        return "; ".join(str(d) for d in self.differences)

    def line(self) -> str:
        return f"stale: {self.name} ({self.pool}-{self.index}): {self.what}"


def differences(running: Mapping[str, Any], wanted: Mapping[str, Any]) -> tuple[Difference, ...]:
    """What differs, attribute by attribute; an attribute not known on either side is not judged
    (outputs of releases before it was recorded)."""
    out = []
    for a in ATTRIBUTES:
        r, w = running.get(a.key), wanted.get(a.key)
        if r is None or w is None or r == "" or w == "":
            continue
        if a.stale(r, w):
            out.append(Difference(a, r, w))
    return tuple(out)


def running_values(node_output: Mapping[str, Any]) -> dict[str, Any]:
    """What runs, from one entry of the `nodes` output."""
    return {a.key: node_output.get(a.key) for a in ATTRIBUTES}


def stale_node(node_output: Mapping[str, Any], wanted: Mapping[str, Any] | None = None) -> StaleNode | None:
    """The node as stale, or None. `wanted`: what the configuration asks (default: the entry's own)."""
    asked = wanted if wanted is not None else node_output.get(WANTED)
    if not isinstance(asked, Mapping):
        return None
    found = differences(running_values(node_output), asked)
    if not found:
        return None
    roles = node_output.get(ROLES) or ()
    return StaleNode(str(node_output.get(NAME)), str(node_output.get(POOL)), int(node_output.get(INDEX) or 0),
                     tuple(str(r) for r in roles), found)


def from_outputs(nodes: Iterable[Mapping[str, Any]] | None) -> list[StaleNode]:
    """Every stale node of a stack's `nodes` output, in output order."""
    out = []
    for n in nodes or ():
        if isinstance(n, Mapping):
            s = stale_node(n)
            if s is not None:
                out.append(s)
    return out


def lines(stale: Sequence[StaleNode]) -> list[str]:
    return [s.line() for s in stale]


def _at(inputs: Mapping[str, Any], path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def values_from_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """An instance's attributes from its registered inputs (what it was created with, or would be)."""
    return {a.key: a.from_input(_at(inputs, a.instance_input)) for a in ATTRIBUTES}


def with_running(nodes: Iterable[Mapping[str, Any]] | None,
                 previous: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """A run's `nodes` output with what runs taken from the previous outputs for nodes that existed
    then (an update keeps a running instance's ignored inputs; offline runs re-create every instance
    from its inputs). A node without previous entry is new: it runs what it asks."""
    before = {(n.get(POOL), n.get(INDEX)): n for n in previous or () if isinstance(n, Mapping)}
    out = []
    for n in nodes or ():
        old = before.get((n.get(POOL), n.get(INDEX)))
        out.append({**n, **running_values(old)} if old is not None and old.get(NAME) == n.get(NAME) else dict(n))
    return out
