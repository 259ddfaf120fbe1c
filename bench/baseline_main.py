"""Baseline main program: register bench.baseline.SPEC with plain Pulumi resources, nothing else."""

import pulumi

from bench.baseline import PROVIDER_PREFIX, SPEC, Ref

made: dict[str, pulumi.CustomResource] = {}


def _value(v):
    if isinstance(v, Ref):
        return made[v.urn].id
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


for e in SPEC:
    props = {k: (pulumi.Output.secret(_value(v)) if k in e.secret else _value(v)) for k, v in e.props.items()}
    opts = pulumi.ResourceOptions(
        depends_on=[made[u] for u in e.depends_on],
        provider=made[e.provider] if e.provider else None,
        protect=e.protect or None,
        delete_before_replace=e.delete_before_replace or None,
        ignore_changes=e.ignore_changes or None,
    )
    if e.type.startswith(PROVIDER_PREFIX):
        made[e.urn] = pulumi.ProviderResource(e.type[len(PROVIDER_PREFIX):], e.name, props, opts)
    else:
        made[e.urn] = pulumi.CustomResource(e.type, e.name, props, opts)
