"""Typical AWS create latencies per resource type, for the `pulumi up` estimate.

Seconds from the provider's Create call until Pulumi records the resource as created, i.e.
including the waiters the Terraform-bridged provider runs (pulumi-aws wraps terraform-provider-aws).
Mid-range values; each line says where the number comes from. Component resources cost 0.
"""

from __future__ import annotations

# type -> (seconds, source / justification): declared with each type in offline/engine/resource_types.py.
from rke_aws_offline.engine.resource_types import CREATE_SECONDS  # noqa: E402

# Unlisted custom types: a single API call plus a read-back.
DEFAULT_SECONDS = 3.0


def create_seconds(typ: str, custom: bool = True) -> float:
    if not custom:
        return 0.0
    return CREATE_SECONDS.get(typ, (DEFAULT_SECONDS, ""))[0]
