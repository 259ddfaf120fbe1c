"""Typed baseline main program: bench.baseline.SPEC registered with the provider SDKs' own classes
(pulumi_aws.ec2.Instance, pulumi_kubernetes.helm.v3.Release, ...), no components, no validation."""

import pulumi

from bench.baseline import SPEC, Ref, typed_class

made: dict[str, pulumi.CustomResource] = {}


def _value(v):
    if isinstance(v, Ref):
        return made[v.urn].id
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


for e in SPEC:
    cls, py_names = typed_class(e.type)
    kwargs = {py_names.get(k, k): (pulumi.Output.secret(_value(v)) if k in e.secret else _value(v)) for k, v in e.props.items()}
    opts = pulumi.ResourceOptions(
        depends_on=[made[u] for u in e.depends_on],
        provider=made[e.provider] if e.provider else None,
        protect=e.protect or None,
        delete_before_replace=e.delete_before_replace or None,
        ignore_changes=e.ignore_changes or None,
    )
    made[e.urn] = cls(e.name, opts=opts, **kwargs)
