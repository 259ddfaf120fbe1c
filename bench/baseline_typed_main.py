"""Typed baseline main program: bench.baseline.SPEC registered with the provider SDKs' own classes
(pulumi_aws.ec2.Instance, pulumi_kubernetes.helm.v3.Release, ...), no components, no validation."""

import pulumi

from bench.baseline import SPEC, props_and_options, typed_class

made: dict[str, pulumi.CustomResource] = {}

for e in SPEC:
    cls, py_names = typed_class(e.type)
    props, opts = props_and_options(e, made)
    kwargs = {py_names.get(k, k): v for k, v in props.items()}
    made[e.urn] = cls(e.name, opts=opts, **kwargs)
