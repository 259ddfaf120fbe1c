"""What the Pulumi engine deletes at the end of an update, in which order, and which deletes reach a
provider: a model of its rule, for tests over base -> change runs (offline/engine/harness.ProgramRun).

From pulumi/pulumi (read at 1b594989):
- pkg/resource/deploy/step_generator.go GenerateDeletes: every resource of the old state that this
  run did not register (found by its URN or an alias) gets a DeleteStep.
- step_generator.go ScheduleDeletes: the condemned resources are cut into antichains: first those
  none of whose dependencies is still condemned, then the next layer, ...; the list is reversed, so a
  resource is deleted only after everything that depends on it. A resource's dependencies
  (pkg/resource/graph/dependency_graph.go DependenciesOf, pkg/resource/state.go GetAllDependencies):
  its parent, its `dependencies` and property dependencies, `deletedWith`, its provider, and, for a
  dependency that is a component, that component's children recorded before it (the children of a
  remote component such as kubernetes:yaml/v2:ConfigFile are not in its dependents' lists).
- pkg/resource/deploy/step.go DeleteStep.Apply: the provider's Delete is called only for a custom
  resource whose OLD state is neither `retainOnDelete` nor `deletedWith` a resource deleted in the
  same update; a component's delete calls nothing.
- pkg/resource/deploy/source_eval.go inheritFromParent (engine >= 3.158; the program needs >= 3.202):
  a child registered without its own `retainOnDelete`, `deletedWith`, `protect` or provider takes
  its parent's. pulumi-kubernetes provider/pkg/provider/yaml/v2 (ConfigFile Construct) registers a
  manifest's objects with `Parent(component)` only, so they inherit what the ConfigFile was given.

The offline mocks never see a remote component's children: `children` adds them to the old state.
"""

from __future__ import annotations

from dataclasses import dataclass

from rke_aws_offline.engine import harness, records


@dataclass(frozen=True)
class Deletion:
    urn: str
    type: str
    calls_provider: bool  # the provider's Delete runs (False: retained, deleted with another, or a component)


def _provider_urn(reference: str) -> str:
    return reference.rsplit("::", 1)[0] if reference else ""


def child(parent: harness.Registration, typ: str, name: str) -> harness.Registration:
    """A resource a remote component's provider registers under `parent` with only Parent(parent):
    it inherits the parent's provider and retainOnDelete (source_eval.go inheritFromParent)."""
    head, qualified, _ = records.urn_parts(parent.urn)
    urn = f"{head}::{qualified}${typ}::{name}"
    return harness.Registration(
        urn=urn, type=typ, name=name, inputs={}, state={}, parent=parent.urn, dependencies=[], protect=parent.protect,
        delete_before_replace=False, ignore_changes=[], provider=parent.provider, custom=True,
        retain_on_delete=parent.retain_on_delete, deleted_with=parent.deleted_with)


def schedule(old: list[harness.Registration], new: harness.ProgramRun) -> list[list[Deletion]]:
    """The antichains of deletes, in the order the engine runs them (each antichain in parallel)."""
    olds = {r.urn for r in old}
    kept = set(records.match_old_urns(new.resources, olds).values())
    condemned = [r for r in old if r.urn not in kept]
    index = {r.urn: i for i, r in enumerate(old)}
    children: dict[str, list[str]] = {}
    for r in old:
        if r.parent:
            children.setdefault(r.parent, []).append(r.urn)

    def descendants(urn: str) -> set[str]:
        out: set[str] = set()
        for c in children.get(urn, ()):
            out |= {c} | descendants(c)
        return out

    by_urn = {r.urn: r for r in old}

    def dependencies_of(r: harness.Registration) -> set[str]:
        direct = set(r.dependencies) | ({_provider_urn(r.provider)} if r.provider else set())
        out = {r.parent} if r.parent else set()
        for d in direct:
            out.add(d)
            dep = by_urn.get(d)
            if dep is not None and not dep.custom:
                out |= {c for c in descendants(d) if index[c] < index[r.urn]}
        return out

    deleting = {r.urn for r in condemned}
    left = {r.urn for r in condemned}
    layers: list[list[str]] = []
    while left:
        layer = sorted(u for u in left if not (dependencies_of(by_urn[u]) & left))
        assert layer, f"a dependency cycle among {sorted(left)}"
        layers.append(layer)
        left -= set(layer)
    layers.reverse()
    return [[Deletion(u, by_urn[u].type, by_urn[u].custom and not by_urn[u].retain_on_delete
                      and by_urn[u].deleted_with not in deleting) for u in layer]
            for layer in layers]


def position(layers: list[list[Deletion]], urn: str) -> int:
    return next(i for i, layer in enumerate(layers) for d in layer if d.urn == urn)
