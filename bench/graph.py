"""The deploy graph of a recorded program run: critical path, instance independence, list scheduling.

Nodes are the custom resources (and explicit providers) the program registered. An edge d -> r
means the engine cannot create r before d exists: r's recorded `dependencies` (the SDK already
expands a dependency on a component into the component's custom children), r's explicit provider,
and r's parent when that parent is itself a custom resource. Component resources cost nothing and
are left out.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rke_aws_offline.engine.harness import ProgramRun, Registration

from .baseline import provider_urn

INSTANCE = "aws:ec2/instance:Instance"
RELEASE = "kubernetes:helm.sh/v3:Release"
# Instance outputs that exist only once EC2 has created the instance (not plan-time values).
RUNTIME_OUTPUT_KEYS = ("id", "arn", "primaryNetworkInterfaceId", "publicIp", "publicDns")
NETWORK_TYPES = (
    "aws:ec2/route:Route",
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation",
    "aws:ec2/subnet:Subnet",
)


def short(typ: str) -> str:
    """aws:ec2/natGateway:NatGateway -> ec2.NatGateway; pulumi:providers:kubernetes -> providers.kubernetes."""
    parts = typ.split(":")
    if len(parts) == 3:
        mod = parts[1].split("/")[0]
        return f"{mod}.{parts[2]}" if mod not in ("index", "providers") else (f"providers.{parts[2]}" if mod == "providers" else parts[2])
    return typ


@dataclass
class Graph:
    res: dict[str, Registration]
    deps: dict[str, list[str]]
    order: list[str]  # topological; registration order where free

    @classmethod
    def of(cls, run: ProgramRun, only: Iterable[str] | None = None) -> Graph:
        everything = {r.urn: r for r in run.resources}
        children: dict[str, list[str]] = {}
        for r in run.resources:
            children.setdefault(r.parent, []).append(r.urn)

        def expand(u: str) -> list[str]:
            r = everything.get(u)
            if r is None:
                return []
            if r.custom:
                return [u]
            out: list[str] = []
            for c in children.get(u, []):
                out.extend(expand(c))
            return out

        keep = set(only) if only is not None else None
        res = {r.urn: r for r in run.resources if r.custom and (keep is None or r.urn in keep)}
        deps: dict[str, list[str]] = {}
        for u, r in res.items():
            ds: list[str] = []
            for d in r.dependencies:
                ds.extend(expand(d))
            p = provider_urn(r.provider)
            if p:
                ds.append(p)
            if r.parent in everything and everything[r.parent].custom:
                ds.append(r.parent)
            deps[u] = [d for d in dict.fromkeys(ds) if d in res and d != u]
        # Kahn's algorithm, preferring registration order.
        pos = {u: i for i, u in enumerate(res)}
        indeg = {u: len(ds) for u, ds in deps.items()}
        users: dict[str, list[str]] = {u: [] for u in res}
        for u, ds in deps.items():
            for d in ds:
                users[d].append(u)
        heap = [pos[u] for u, k in indeg.items() if k == 0]
        heapq.heapify(heap)
        urns = list(res)
        order: list[str] = []
        while heap:
            u = urns[heapq.heappop(heap)]
            order.append(u)
            for v in users[u]:
                indeg[v] -= 1
                if indeg[v] == 0:
                    heapq.heappush(heap, pos[v])
        if len(order) != len(res):
            raise ValueError("dependency cycle in the recorded run")
        return cls(res, deps, order)

    @property
    def edges(self) -> int:
        return sum(len(d) for d in self.deps.values())

    def label(self, u: str) -> str:
        r = self.res[u]
        return f"{short(r.type)} `{r.name}`"

    # -- paths -----------------------------------------------------------------------------

    def critical_path(self, cost: Callable[[Registration], float]) -> tuple[float, list[str]]:
        """Longest path by summed create time (the makespan with unbounded parallelism)."""
        finish: dict[str, float] = {}
        prev: dict[str, str | None] = {}
        for u in self.order:
            best = max(self.deps[u], key=lambda d: finish[d], default=None)
            finish[u] = (finish[best] if best else 0.0) + cost(self.res[u])
            prev[u] = best
        end = max(finish, key=finish.get)
        return finish[end], self._walk(end, prev)

    def longest_chain(self) -> list[str]:
        """Longest path by number of resources."""
        depth: dict[str, int] = {}
        prev: dict[str, str | None] = {}
        for u in self.order:
            best = max(self.deps[u], key=lambda d: depth[d], default=None)
            depth[u] = (depth[best] if best else 0) + 1
            prev[u] = best
        return self._walk(max(depth, key=depth.get), prev)

    @staticmethod
    def _walk(end: str, prev: dict[str, str | None]) -> list[str]:
        path = [end]
        while prev[path[-1]]:
            path.append(prev[path[-1]])  # type: ignore[arg-type]
        return path[::-1]

    # -- scheduling ------------------------------------------------------------------------

    def schedule(self, cost: Callable[[Registration], float], parallel: int | None = None) -> float:
        """List scheduling: a resource starts when its dependencies are done and fewer than
        `parallel` operations are in flight (None: unbounded); ready resources go in
        registration order. Returns the makespan in seconds."""
        pos = {u: i for i, u in enumerate(self.res)}
        urns = list(self.res)
        waiting = {u: len(d) for u, d in self.deps.items()}
        users: dict[str, list[str]] = {u: [] for u in self.res}
        for u, ds in self.deps.items():
            for d in ds:
                users[d].append(u)
        ready = [pos[u] for u, k in waiting.items() if k == 0]
        heapq.heapify(ready)
        running: list[tuple[float, int]] = []
        now = 0.0
        while ready or running:
            while ready and (parallel is None or len(running) < parallel):
                i = heapq.heappop(ready)
                heapq.heappush(running, (now + cost(self.res[urns[i]]), i))
            now, i = heapq.heappop(running)
            for v in users[urns[i]]:
                waiting[v] -= 1
                if waiting[v] == 0:
                    heapq.heappush(ready, pos[v])
        return now


# -- instance independence -------------------------------------------------------------------

@dataclass
class InstanceCheck:
    instances: int
    depends_on_instance: dict[str, list[str]] = field(default_factory=dict)  # instance -> upstream instances
    uses_runtime_outputs: dict[str, list[str]] = field(default_factory=dict)  # instance -> other nodes' output values
    uses_planned_ips: int = 0  # instances whose inputs embed another node's planned private IP
    downstream_of_instances: list[str] = field(default_factory=list)  # non-instance resources depending on an instance

    @property
    def ok(self) -> bool:
        return not self.depends_on_instance and not self.uses_runtime_outputs


_COARSE = re.compile(r"[A-Za-z0-9_.:/\-]+")
_FINE = re.compile(r"[A-Za-z0-9_.\-]+")


def _strings(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def check_instances(g: Graph) -> InstanceCheck:
    inst = [u for u in g.order if g.res[u].type == INSTANCE]
    is_inst = set(inst)
    check = InstanceCheck(instances=len(inst))
    upstream: dict[str, set[str]] = {}
    for u in g.order:
        s: set[str] = set()
        for d in g.deps[u]:
            s |= upstream[d]
            if d in is_inst:
                s.add(d)
        upstream[u] = s
        if s and u in is_inst:
            check.depends_on_instance[u] = sorted(s)
        elif s:
            check.downstream_of_instances.append(u)
    # Values only EC2 knows after creating an instance, and the plan-time private IPs.
    runtime: dict[str, str] = {}
    planned: dict[str, str] = {}
    for u in inst:
        r = g.res[u]
        for k in RUNTIME_OUTPUT_KEYS:
            v = r.state.get(k)
            if isinstance(v, str) and v:
                runtime[v] = u
        ip = r.inputs.get("privateIp")
        if ip:
            planned[ip] = u
    for u in inst:
        tokens: set[str] = set()
        for s in _strings(g.res[u].inputs):
            tokens.update(_COARSE.findall(s))
            tokens.update(_FINE.findall(s))
        hits = sorted({v for v in tokens if runtime.get(v, u) != u})
        if hits:
            check.uses_runtime_outputs[u] = hits
        if any(planned.get(t, u) != u for t in tokens):
            check.uses_planned_ips += 1
    return check
