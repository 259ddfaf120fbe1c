"""Baseline main program: register bench.baseline.SPEC with plain Pulumi resources, nothing else."""

import pulumi

from bench.baseline import PROVIDER_PREFIX, SPEC, props_and_options

made: dict[str, pulumi.CustomResource] = {}

for e in SPEC:
    props, opts = props_and_options(e, made)
    if e.type.startswith(PROVIDER_PREFIX):
        made[e.urn] = pulumi.ProviderResource(e.type[len(PROVIDER_PREFIX):], e.name, props, opts)
    else:
        made[e.urn] = pulumi.CustomResource(e.type, e.name, props, opts)
