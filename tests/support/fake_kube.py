"""A fake Kubernetes API server for the rotation tests: a local HTTP server (a thread) that serves Nodes,
Pods, PodDisruptionBudget-checked evictions and Leases, and plays RKE2's part around them.

What it models, and where each rule comes from:
- Evictions (kubernetes pkg/registry/core/pod/storage/eviction.go; kubernetes.io/docs/concepts/
  scheduling-eviction/api-eviction/): a pod matched by one PDB is evicted only while the budget allows a
  disruption (healthy pods above minAvailable), else HTTP 429 "Cannot evict pod as it would violate the
  pod's disruption budget"; a pod under two PDBs is refused with 500; a pod that is gone is 404; success
  is 201 with a Success Status. An evicted pod of a controller comes back on another schedulable node.
- RKE2's etcd member removal (k3s pkg/etcd/member_controller.go, etcd.go RemovePeer): deleting a Node with
  the etcd role removes its etcd member first; the Node stays Terminating (finalizer) while the removal
  fails, here when etcd would lose quorum by it (etcd refuses a removal that leaves too few started
  members). The removed member's etcd stops; its machine keeps running (the kubelet does not register a
  deleted Node again until it restarts: kubernetes pkg/kubelet/kubelet_node_status.go).
- New servers join etcd as learners and are promoted by the leader (k3s etcd.go join, manageLearners);
  the leader keeps the EtcdIsVoter condition on each etcd Node (True/MemberNotLearner, False with
  MemberIsLearner, Unhealthy or NotAMember: setEtcdStatusCondition).
- Leases (coordination.k8s.io/v1): create 409 when it exists, update 409 on a stale resourceVersion.

Time is a FakeClock shared with the rotation (its sleeps advance it), so waits of minutes take none.
`history` records etcd's membership after every change, for the invariants the tests assert.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support import serving

ETCD = "node-role.kubernetes.io/etcd"
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
FINALIZER = "wrangler.cattle.io/managed-etcd-controller"


class FakeClock:
    def __init__(self, start: float = 1_900_000_000.0):
        self.t = start
        self.on_sleep: list = []  # called after every sleep (may raise, e.g. KeyboardInterrupt)

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds
        for hook in list(self.on_sleep):
            hook()


@dataclass
class Machine:
    name: str
    server: bool
    version: str
    registers_at: float
    ready: bool = True  # False: boots but never becomes Ready
    running: bool = True
    etcd_removed: bool = False


@dataclass
class Snapshot:
    at: float
    members: int
    healthy_voters: int
    servers_down: tuple[str, ...]

    @property
    def quorum(self) -> int:
        return self.members // 2 + 1


@dataclass
class FakeCluster:
    clock: FakeClock
    version: str
    boot_seconds: float = 150.0
    promote_seconds: float = 30.0
    nodes: dict[str, dict] = field(default_factory=dict)
    machines: dict[str, Machine] = field(default_factory=dict)
    members: dict[str, dict] = field(default_factory=dict)  # node name -> {"learner": bool, "since": t}
    pods: dict[tuple[str, str], dict] = field(default_factory=dict)
    pdbs: list[dict] = field(default_factory=list)
    leases: dict[str, dict] = field(default_factory=dict)
    history: list[Snapshot] = field(default_factory=list)
    servers: set[str] = field(default_factory=set)
    requests: list[tuple[str, str]] = field(default_factory=list)
    # faults
    never_ready: set[str] = field(default_factory=set)  # the next machine booted under these names
    stuck_removal: bool = False  # RemovePeer keeps failing: the Node stays Terminating
    fail: dict[str, int] = field(default_factory=dict)  # "PATCH /api/v1/nodes" -> HTTP status to answer
    down_after: dict[str, int] = field(default_factory=dict)  # "GET /api/v1/pods" -> requests before the server stops
    rv: int = 1

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.clock.on_sleep.append(self.tick)
        self.server: ThreadingHTTPServer | None = None

    # ---- building a cluster ----
    def add_node(self, name: str, server: bool, version: str | None = None) -> None:
        with self.lock:
            self.machines[name] = Machine(name, server, version or self.version, self.clock.now())
            self._register(self.machines[name], learner=False)

    def add_workload(self, namespace: str, name: str, replicas: int, on: list[str], min_available: int | None = None,
                     pdbs: int = 1) -> None:
        """A Deployment's pods spread over `on`, and `pdbs` PodDisruptionBudgets selecting them."""
        with self.lock:
            for i in range(replicas):
                self._pod(namespace, f"{name}-{i}", on[i % len(on)], {"app": name}, owner="ReplicaSet")
            if min_available is not None:
                for j in range(pdbs):
                    self.pdbs.append({"metadata": {"namespace": namespace, "name": f"{name}-pdb{'-' + str(j) if j else ''}"},
                                      "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": name}}}})
            self._record()

    def stop(self, name: str) -> None:
        """The machine stops (an instance deleted, or down): its Node goes NotReady, its member unhealthy."""
        with self.lock:
            if name in self.machines:
                self.machines[name].running = False
            self.tick()

    def boot(self, name: str, server: bool, version: str | None = None) -> None:
        """A new instance under this name: it registers its Node after boot_seconds."""
        with self.lock:
            old = self.machines.get(name)
            assert old is None or not old.running, f"{name}: two machines with one address"
            self.machines[name] = Machine(name, server, version or self.version, self.clock.now() + self.boot_seconds,
                                          ready=name not in self.never_ready)
            self.never_ready.discard(name)
            self.tick()

    # ---- what a Node looks like ----
    def _register(self, m: Machine, learner: bool) -> None:
        m.registers_at = 0  # registered once: a deleted Node is not registered again by the same machine
        labels = {"kubernetes.io/hostname": m.name.split(".")[0]}
        annotations: dict[str, str] = {}
        if m.server:
            labels.update({CONTROL_PLANE: "true", ETCD: "true"})
            annotations["etcd.rke2.cattle.io/node-name"] = f"{m.name}-{hashlib.sha256(m.name.encode()).hexdigest()[:8]}"
            self.servers.add(m.name)
            # etcd refuses a member whose name it lists already (RKE2: "duplicate node name found").
            assert m.name not in self.members, f"{m.name}: joins while etcd still lists its old member"
            self.members[m.name] = {"learner": learner, "since": self.clock.now()}
        self.nodes[m.name] = {"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": m.name, "labels": labels, "annotations": annotations,
                                           "resourceVersion": str(self._next_rv())},
                              "spec": {}, "status": {"nodeInfo": {"kubeletVersion": m.version}, "conditions": []}}
        self._pod("kube-system", f"canal-{m.name.split('.')[0]}", m.name, {"k8s-app": "canal"}, owner="DaemonSet")
        if m.server:
            self._pod("kube-system", f"etcd-{m.name.split('.')[0]}", m.name, {"component": "etcd"}, mirror=True)
        self._refresh(m.name)

    def _refresh(self, name: str) -> None:
        node, m = self.nodes.get(name), self.machines.get(name)
        if node is None or m is None:
            return
        conditions = [{"type": "Ready", "status": "True" if (m.running and m.ready) else "False",
                       "reason": "KubeletReady" if (m.running and m.ready) else "KubeletNotReady"}]
        if m.server:
            member = self.members.get(name)
            if member is None:
                cond = ("False", "NotAMember")
            elif not m.running or m.etcd_removed or not m.ready:
                cond = ("False", "Unhealthy")
            elif member["learner"]:
                cond = ("False", "MemberIsLearner")
            else:
                cond = ("True", "MemberNotLearner")
            conditions.append({"type": "EtcdIsVoter", "status": cond[0], "reason": cond[1]})
        node["status"]["conditions"] = conditions

    def _healthy(self, name: str) -> bool:
        m = self.machines.get(name)
        return m is not None and m.running and m.ready and not m.etcd_removed

    def tick(self) -> None:
        with self.lock:
            now = self.clock.now()
            for m in self.machines.values():
                if m.running and m.name not in self.nodes and m.registers_at <= now and m.registers_at > 0:
                    self._register(m, learner=True)
            for name, member in self.members.items():
                if member["learner"] and self._healthy(name) and now - member["since"] >= self.promote_seconds:
                    member["learner"] = False
            for name, node in list(self.nodes.items()):
                if node["metadata"].get("deletionTimestamp"):
                    self._try_remove(name)
            for pod in list(self.pods.values()):
                if not pod["spec"].get("nodeName"):
                    target = self._schedulable()
                    if target:
                        pod["spec"]["nodeName"] = target
                        pod["status"]["phase"] = "Running"
            for name in self.nodes:
                self._refresh(name)
            self._record()

    def _record(self) -> None:
        voters = sum(1 for n, m in self.members.items() if not m["learner"] and self._healthy(n))
        down = tuple(sorted(s for s in self.servers
                            if not (s in self.members and not self.members[s]["learner"] and self._healthy(s))))
        snap = Snapshot(self.clock.now(), len(self.members), voters, down)
        if not self.history or (snap.members, snap.healthy_voters, snap.servers_down) != (
                self.history[-1].members, self.history[-1].healthy_voters, self.history[-1].servers_down):
            self.history.append(snap)

    # ---- pods ----
    def _pod(self, ns: str, name: str, node: str | None, labels: dict, owner: str | None = None,
             mirror: bool = False) -> None:
        meta: dict[str, Any] = {"namespace": ns, "name": name, "labels": labels, "uid": f"uid-{self._next_rv()}"}
        if owner:
            meta["ownerReferences"] = [{"kind": owner, "name": name.rsplit("-", 1)[0], "controller": True}]
        if mirror:
            meta["annotations"] = {"kubernetes.io/config.mirror": "x"}
        self.pods[(ns, name)] = {"metadata": meta, "spec": {"nodeName": node},
                                 "status": {"phase": "Running" if node else "Pending"}}

    def _schedulable(self, besides: str = "") -> str | None:
        for name, node in sorted(self.nodes.items()):
            m = self.machines.get(name)
            if name != besides and not node["spec"].get("unschedulable") and m and m.running and m.ready \
                    and not node["metadata"].get("deletionTimestamp") and ETCD not in node["metadata"]["labels"]:
                return name
        return None

    def _pdbs_for(self, pod: dict) -> list[dict]:
        labels = pod["metadata"].get("labels") or {}
        return [b for b in self.pdbs if b["metadata"]["namespace"] == pod["metadata"]["namespace"]
                and all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items())]

    def _healthy_pods(self, pdb: dict) -> int:
        sel = pdb["spec"]["selector"]["matchLabels"]
        return sum(1 for p in self.pods.values() if p["metadata"]["namespace"] == pdb["metadata"]["namespace"]
                   and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())
                   and p["status"]["phase"] == "Running" and self._healthy_node(p["spec"].get("nodeName")))

    def _healthy_node(self, name: str | None) -> bool:
        m = self.machines.get(name or "")
        return bool(m and m.running and m.ready and name in self.nodes)

    def evict(self, ns: str, name: str) -> tuple[int, dict]:
        pod = self.pods.get((ns, name))
        if pod is None:
            return 404, _status(404, "NotFound", f'pods "{name}" not found')
        budgets = self._pdbs_for(pod)
        if len(budgets) > 1:
            return 500, _status(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the "
                                                      "eviction subresource does not support.")
        if budgets:
            b = budgets[0]
            healthy, need = self._healthy_pods(b), int(b["spec"]["minAvailable"])
            if healthy - need < 1:
                return 429, {**_status(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's "
                                                               "disruption budget."),
                             "details": {"causes": [{"reason": "DisruptionBudget", "message":
                                                     f"The disruption budget {b['metadata']['name']} needs {need} "
                                                     f"healthy pods and has {healthy} currently"}]}}
        del self.pods[(ns, name)]
        owners = pod["metadata"].get("ownerReferences") or []
        if owners and owners[0]["kind"] == "ReplicaSet":
            self._pod(ns, f"{name}-r{self.rv}", self._schedulable(besides=pod["spec"].get("nodeName") or ""),
                      pod["metadata"]["labels"], owner="ReplicaSet")
        return 201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}

    # ---- nodes ----
    def _try_remove(self, name: str) -> bool:
        """RKE2's controller on a Node being deleted: remove its etcd member, then let the Node go."""
        node = self.nodes[name]
        if name in self.members:
            remaining = [n for n in self.members if n != name]
            started = sum(1 for n in remaining if self._healthy(n) and not self.members[n]["learner"])
            if self.stuck_removal or started < len(remaining) // 2 + 1:
                node["metadata"]["deletionTimestamp"] = node["metadata"].get("deletionTimestamp") or "now"
                node["metadata"]["finalizers"] = [FINALIZER]
                return False
            del self.members[name]
            if name in self.machines and self.machines[name].running:
                self.machines[name].etcd_removed = True  # a removed member's etcd stops
        del self.nodes[name]
        for key in [k for k, p in self.pods.items() if p["spec"].get("nodeName") == name]:
            del self.pods[key]
        return True

    def delete_node(self, name: str) -> tuple[int, dict]:
        if name not in self.nodes:
            return 404, _status(404, "NotFound", f'nodes "{name}" not found')
        self._try_remove(name)
        self.tick()
        return 200, {"kind": "Status", "status": "Success", "code": 200}

    # ---- leases ----
    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    # ---- serving ----
    def start(self) -> str:
        cluster = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                with cluster.lock:
                    cluster.tick()
                    status, doc = cluster.route(method, self.path, body)
                if status < 0:  # the server goes away mid-request
                    self.close_connection = True
                    return
                self._answer(status, doc)

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

            def do_PUT(self) -> None:  # noqa: N802
                self._handle("PUT")

            def do_PATCH(self) -> None:  # noqa: N802
                self._handle("PATCH")

            def do_DELETE(self) -> None:  # noqa: N802
                self._handle("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serving.serve_in_background(self.server, "fake-kube")
        self.tick()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def shutdown(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def route(self, method: str, raw_path: str, body: Any) -> tuple[int, dict]:
        parsed = urllib.parse.urlparse(raw_path)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
        self.requests.append((method, path))
        for key, status in list(self.fail.items()):
            if f"{method} {path}".startswith(key):
                return status, _status(status, "InternalError", "injected failure")
        for key, left in list(self.down_after.items()):
            if f"{method} {path}".startswith(key):
                if left <= 0:
                    return -1, {}
                self.down_after[key] = left - 1
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[:3] == ["api", "v1", "nodes"]:
            if len(parts) == 3 and method == "GET":
                return 200, {"kind": "NodeList", "items": [copy.deepcopy(n) for _, n in sorted(self.nodes.items())]}
            name = parts[3]
            if method == "GET":
                node = self.nodes.get(name)
                return (200, copy.deepcopy(node)) if node else (404, _status(404, "NotFound", f'nodes "{name}" not found'))
            if method == "PATCH":
                node = self.nodes.get(name)
                if node is None:
                    return 404, _status(404, "NotFound", f'nodes "{name}" not found')
                _merge(node, body or {})
                node["metadata"]["resourceVersion"] = str(self._next_rv())
                self.tick()
                return 200, copy.deepcopy(node)
            if method == "DELETE":
                return self.delete_node(name)
        if parts[:3] == ["api", "v1", "pods"] and method == "GET":
            on = (query.get("fieldSelector") or [""])[0].removeprefix("spec.nodeName=")
            return 200, {"kind": "PodList", "items": [copy.deepcopy(p) for _, p in sorted(self.pods.items())
                                                      if p["spec"].get("nodeName") == on]}
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) >= 6 and parts[4] == "pods":
            ns, name = parts[3], parts[5]
            if len(parts) == 7 and parts[6] == "eviction" and method == "POST":
                status, doc = self.evict(ns, name)
                self.tick()
                return status, doc
            if len(parts) == 6 and method == "GET":
                pod = self.pods.get((ns, name))
                return (200, copy.deepcopy(pod)) if pod else (404, _status(404, "NotFound", f'pods "{name}" not found'))
        if parts[:6] == ["apis", "coordination.k8s.io", "v1", "namespaces", "kube-system", "leases"]:
            name = parts[6] if len(parts) > 6 else (body or {}).get("metadata", {}).get("name")
            lease = self.leases.get(name)
            if method == "GET":
                return (200, copy.deepcopy(lease)) if lease else (404, _status(404, "NotFound", "lease not found"))
            if method == "POST":
                if lease is not None:
                    return 409, _status(409, "AlreadyExists", f'leases "{name}" already exists')
                body["metadata"]["resourceVersion"] = str(self._next_rv())
                self.leases[name] = body
                return 201, copy.deepcopy(body)
            if method == "PUT":
                if lease is None or body["metadata"].get("resourceVersion") != lease["metadata"]["resourceVersion"]:
                    return 409, _status(409, "Conflict", "the object has been modified")
                body["metadata"]["resourceVersion"] = str(self._next_rv())
                self.leases[name] = body
                return 200, copy.deepcopy(body)
            if method == "DELETE":
                self.leases.pop(name, None)
                return 200, _status(200, "Success", "deleted")
        return 404, _status(404, "NotFound", f"{method} {path}: not served by the fake")


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure" if code >= 300 else "Success",
            "code": code, "reason": reason, "message": message}


def _merge(target: dict, patch: dict) -> None:
    """RFC 7386 JSON merge patch (what `application/merge-patch+json` asks for)."""
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            _merge(target[k], v)
        else:
            target[k] = copy.deepcopy(v)
