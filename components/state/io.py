"""Reading a cluster's last state back from the engine: the one caller of `readStackOutputs`.

The stack's own last outputs are read once, before anything is planned, through the engine's
`pulumi:pulumi:readStackOutputs` invoke (the read a StackReference does, but synchronous, so a refusal
happens before any resource is registered). A new stack has none. A flat state (this repository's 0.x
stacks) is the outputs themselves; a nested one is the output under the cluster's key.
"""

from __future__ import annotations

from typing import Any

from .migrations import HistoryError, from_outputs
from .model import ClusterState

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


def read_outputs() -> dict[str, Any] | None:
    """This stack's last outputs (None: a stack the backend does not know yet), Pulumi Cloud and DIY
    backends alike. Raises HistoryError when they cannot be read."""
    import pulumi
    from pulumi.runtime import invoke

    org = pulumi.get_organization() or "organization"  # DIY backends name the org literally so
    project, stack = pulumi.get_project(), pulumi.get_stack()
    errors = []
    # Fully qualified first; old-layout DIY backends know only the bare stack name.
    for name in (f"{org}/{project}/{stack}", stack):
        try:
            result = invoke(READ_STACK_OUTPUTS, {"name": name})
        except Exception as err:  # noqa: BLE001 - the engine's error text is all we get
            errors.append(" ".join(str(err).split()))
            continue
        return dict((result.value or {}).get("outputs") or {})
    if all("unknown stack" in e for e in errors):
        return None
    raise HistoryError(
        f"could not read this stack's last outputs ({'; '.join(errors)}); they are needed to keep running "
        "nodes where they are and to guard etcd quorum and the Kubernetes version, so nothing was changed"
    )


def read(key: str | None = None) -> ClusterState | None:
    """The cluster's last state: the stack's outputs themselves (`key` None: flat, 0.x), or the output under
    `key` (a cluster of a program with several). None for a cluster that has none."""
    outputs = read_outputs()
    if outputs is None:
        return None
    if key is not None:
        nested = outputs.get(key)
        outputs = dict(nested) if isinstance(nested, dict) else None
    return from_outputs(outputs)
