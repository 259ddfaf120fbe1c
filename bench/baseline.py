"""The baseline: the program's resource set registered with plain `pulumi.CustomResource`s.

`derive(run, ids)` turns a recorded program run into a list of `Entry`s: every custom resource
(and provider) with the same type, name, inputs, secrets and resource options, in registration
order, without component resources, validation, planning or stack outputs. An input that holds a
dependency's ID becomes that dependency's `id` output (as in the program); the remaining
dependencies become `depends_on`. `baseline_main.py` registers `SPEC` under the same harness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rke_aws_offline.engine.harness import ProgramRun

PROVIDER_PREFIX = "pulumi:providers:"


@dataclass(frozen=True)
class Ref:
    """Placeholder for `<resource at urn>.id`."""
    urn: str


@dataclass
class Entry:
    urn: str
    type: str
    name: str
    props: dict[str, Any]
    secret: set[str] = field(default_factory=set)
    depends_on: list[str] = field(default_factory=list)
    provider: str | None = None
    protect: bool = False
    delete_before_replace: bool = False
    ignore_changes: list[str] = field(default_factory=list)


# Set by bench.run before each baseline evaluation; read by baseline_main.py.
SPEC: list[Entry] = []


def props_and_options(e: Entry, made: dict) -> tuple[dict[str, Any], Any]:
    """An entry's inputs (references resolved to the ids of `made` resources) and resource options."""
    import pulumi

    def value(v: Any) -> Any:
        if isinstance(v, Ref):
            return made[v.urn].id
        if isinstance(v, list):
            return [value(x) for x in v]
        return v

    props = {k: (pulumi.Output.secret(value(v)) if k in e.secret else value(v)) for k, v in e.props.items()}
    opts = pulumi.ResourceOptions(
        depends_on=[made[u] for u in e.depends_on],
        provider=made[e.provider] if e.provider else None,
        protect=e.protect or None,
        delete_before_replace=e.delete_before_replace or None,
        ignore_changes=e.ignore_changes or None,
    )
    return props, opts


def provider_urn(ref: str) -> str | None:
    """A provider reference is `<urn>::<id>`; callers keep it only if that provider was registered."""
    return ref.rsplit("::", 1)[0] if ref else None


def derive(run: ProgramRun, ids: dict[tuple[str, str], str]) -> list[Entry]:
    custom = {r.urn: r for r in run.resources if r.custom}
    id_of = {u: ids.get((r.type, r.name)) for u, r in custom.items()}
    entries = []
    for r in run.resources:
        if not r.custom:
            continue
        deps = [d for d in dict.fromkeys(r.dependencies) if d in custom]
        by_id = {id_of[d]: d for d in deps if id_of[d]}
        used: set[str] = set()

        def ref(v: Any) -> Any:
            if isinstance(v, str) and v in by_id:
                used.add(by_id[v])
                return Ref(by_id[v])
            return v

        props = {}
        for k, v in r.inputs.items():
            props[k] = [ref(x) for x in v] if isinstance(v, list) else ref(v)
        prov = provider_urn(r.provider)
        entries.append(Entry(
            urn=r.urn, type=r.type, name=r.name, props=props, secret=set(r.secret_inputs),
            depends_on=[d for d in deps if d not in used],
            provider=prov if prov in custom else None,
            protect=r.protect, delete_before_replace=r.delete_before_replace,
            ignore_changes=list(r.ignore_changes),
        ))
    return entries


# Type token -> (Python package, module path) of the class the provider SDK generates for it.
_PACKAGES = {"aws": "pulumi_aws", "random": "pulumi_random", "kubernetes": "pulumi_kubernetes"}
_typed_cache: dict[str, tuple[type, dict[str, str]]] = {}


def typed_class(typ: str) -> tuple[type, dict[str, str]]:
    """The SDK class for a type token and its {pulumiName: python_name} input map,
    e.g. aws:ec2/instance:Instance -> (pulumi_aws.ec2.Instance, {"instanceType": "instance_type", ...})."""
    if typ in _typed_cache:
        return _typed_cache[typ]
    import importlib

    from pulumi import _types

    pkg, mod, name = typ.split(":")
    if pkg == "kubernetes" and "." in mod.split("/")[0] and not mod.startswith("helm.sh"):
        # A custom resource kind (e.g. upgrade.cattle.io/v1 Plan): no SDK class, the generic one.
        from pulumi_kubernetes.apiextensions import CustomResource

        def custom(resource_name, opts=None, api_version=None, kind=None, **kw):
            return CustomResource(resource_name, api_version=api_version, kind=kind, opts=opts, **kw)

        _typed_cache[typ] = (custom, {"apiVersion": "api_version"})
        return _typed_cache[typ]
    if pkg == "pulumi" and mod == "providers":
        module, cls_name = importlib.import_module(_PACKAGES[name]), "Provider"
    else:
        parts = mod.split("/")
        if len(parts) > 1 and parts[-1] == name[0].lower() + name[1:]:
            parts = parts[:-1]  # aws:ec2/instance:Instance -> ec2
        # index -> the package root; helm.sh/v3 -> helm.v3
        path = [p.split(".")[0] for p in parts if p != "index"]
        module = importlib.import_module(".".join([_PACKAGES[pkg], *path]))
        cls_name = name
    cls = getattr(module, cls_name)
    # The args class defined beside the resource: where a nested input type already has the name
    # `<Name>Args` (pulumi_aws.s3.BucketVersioningArgs is Bucket's `versioning` block), codegen
    # calls the resource's own `<Name>InitArgs`.
    own = vars(importlib.import_module(cls.__module__))
    args_cls = next((own[n] for n in (f"{cls_name}InitArgs", f"{cls_name}Args")
                     if isinstance(own.get(n), type) and own[n].__module__ == cls.__module__), None) or \
        getattr(module, f"{cls_name}Args", None)
    names = {v: k for k, v in _types.input_type_py_to_pulumi_names(args_cls).items()} if args_cls else {}
    _typed_cache[typ] = (cls, names)
    return cls, names
