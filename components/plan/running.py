"""What really runs: a read-only look at the cluster, for the day-2 guards (components/plan/day2/).

The stack's last outputs say what the last update configured; the cluster says what runs. After a
version change the upgrade Plans roll nodes over for minutes or hours, and after servers are removed
etcd keeps their members until their Node objects are deleted. So whenever the program has a way
to the cluster (an explicit `kubeconfig`, or the one the first RKE2 server published), it reads:

- `GET /api/v1/nodes`: every Node's name, kubelet version, roles (labels) and Ready condition;
- RKE2: `GET .../upgrade.cattle.io/v1/namespaces/system-upgrade/plans` (the Plans' version and
  status) and `GET .../helm.cattle.io/v1/namespaces/kube-system/helmcharts` (what the servers'
  helm-controller still runs from manifests), and `GET .../k3s.cattle.io/v1/namespaces/kube-system/addons`
  (which manifests the servers' deploy controller has applied: an Addon's spec.checksum is set once
  its file was applied, k3s pkg/deploy/controller.go).

Rules: GET only; READ_SECONDS in all (a thread with a deadline, each request REQUEST_SECONDS); any
failure is an `Unreadable` with the reason, never an exception: the API server of a cluster with a
private endpoint does not answer from outside its VPC, and the guards then fall back to the last
outputs and the user's confirmations. Only client certificates and bearer tokens are used (an
`exec` or `auth-provider` would run commands here); certificate data goes to 0600 temp files that
are deleted before the first request. The standard library does the HTTPS (no new dependency).

`parse_kubeconfig` and `snapshot` are pure: tests drive `snapshot` with a fake `get`, and `read` with a fake
`transport`.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

READ_SECONDS = 5.0  # the whole read: DNS, TLS and every request
REQUEST_SECONDS = 3.0  # one request (socket timeouts; the deadline above bounds the total)
MAX_BYTES = 32 * 1024 * 1024  # a Node list of a few hundred nodes is a few MB

NODES_PATH = "/api/v1/nodes"
PLANS_PATH = "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans"
HELMCHARTS_PATH = "/apis/helm.cattle.io/v1/namespaces/kube-system/helmcharts"
ADDONS_PATH = "/apis/k3s.cattle.io/v1/namespaces/kube-system/addons"
# Role labels: RKE2 servers carry control-plane and etcd (value "true"); RKE1 nodes carry
# controlplane / etcd / worker (domain.md section 3).
ETCD_LABEL = "node-role.kubernetes.io/etcd"
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/controlplane")

# How a read reaches the cluster: Access -> get(path) (JSON, or None for 404). `https` is the real one;
# tests pass their own to `read` (components/plan/environment.py: who reads, and when not).
Get = Callable[[str], dict | None]
Transport = Callable[["Access"], Get]


@dataclass(frozen=True)
class LiveNode:
    name: str
    kubelet_version: str
    etcd: bool
    control_plane: bool
    ready: bool


@dataclass(frozen=True)
class LivePlan:
    name: str
    version: str  # spec.version
    latest_version: str  # status.latestVersion
    complete: bool | None  # the Complete condition (None: not reported yet)
    applying: tuple[str, ...]  # status.applying: nodes being upgraded now


@dataclass(frozen=True)
class LiveCluster:
    """What the cluster answered. `plans` / `helm_charts` / `addons` are None when not read (RKE1) and
    empty when their resource type does not exist (404)."""
    nodes: tuple[LiveNode, ...]
    plans: tuple[LivePlan, ...] | None = None
    helm_charts: frozenset[str] | None = None
    server: str = ""
    addons: frozenset[str] | None = None  # Addons the deploy controller has applied (a checksum is set)

    @property
    def etcd_members(self) -> tuple[str, ...]:
        """Nodes with the etcd role still registered: etcd drops a member when its Node is deleted."""
        return tuple(sorted(n.name for n in self.nodes if n.etcd))

    @property
    def not_ready(self) -> tuple[str, ...]:
        return tuple(sorted(n.name for n in self.nodes if not n.ready))

    def versions(self, servers_only: bool = False) -> dict[str, str]:
        return {n.name: n.kubelet_version for n in self.nodes if n.control_plane or n.etcd or not servers_only}

    @property
    def applying(self) -> tuple[str, ...]:
        return tuple(sorted({a for p in self.plans or () for a in p.applying}))


@dataclass(frozen=True)
class Unreadable:
    reason: str


Reading = LiveCluster | Unreadable


@dataclass(frozen=True)
class Access:
    server: str
    ca_pem: str | None = None
    cert_pem: str | None = None
    key_pem: str | None = None
    token: str | None = None


# ---- the kubeconfig ---------------------------------------------------------------------------

# What the reader uses; anything else that changes how to connect or authenticate makes it refuse.
_CLUSTER_KEYS = {"server", "certificate-authority-data", "extensions"}
_USER_KEYS = {"client-certificate-data", "client-key-data", "token", "extensions"}


def _named(doc: dict, kind: str, name: str | None) -> dict | None:
    items = [i for i in doc.get(kind) or [] if isinstance(i, dict)]
    if name is None and len(items) == 1:
        return items[0]
    return next((i for i in items if i.get("name") == name), None)


def _pem(value: Any, what: str) -> str:
    try:
        text = base64.b64decode(str(value), validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"its {what} is not base64-encoded PEM") from None
    if "-----BEGIN " not in text:
        raise ValueError(f"its {what} is not PEM")
    return text


def parse_kubeconfig(text: str | None) -> Access | str:
    """How to reach the cluster, or why the reader will not (a sentence)."""
    if not text or not text.strip():
        return "no kubeconfig"
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return "the kubeconfig is not YAML"
    if not isinstance(doc, dict):
        return "the kubeconfig is not a kubeconfig"
    context = _named(doc, "contexts", doc.get("current-context"))
    if context is None and doc.get("current-context"):
        return f"its current-context {doc['current-context']!r} is not among its contexts"
    ctx = (context or {}).get("context") or {}
    cluster = (_named(doc, "clusters", ctx.get("cluster") if context else None) or {}).get("cluster")
    user = (_named(doc, "users", ctx.get("user") if context else None) or {}).get("user")
    if not isinstance(cluster, dict) or not cluster.get("server"):
        return "the kubeconfig names no cluster server"
    if not isinstance(user, dict):
        return "the kubeconfig names no user"
    server = str(cluster["server"]).rstrip("/")
    if not server.startswith("https://"):
        return f"its server {server!r} is not https"
    extra = sorted((set(cluster) - _CLUSTER_KEYS) | (set(user) - _USER_KEYS))
    if extra:
        # exec / auth-provider run commands; file paths, proxies, skipped verification and
        # server-name overrides are not what this reader does: it does not guess.
        return f"it uses {', '.join(extra)}, which this read-only check does not (client certificates or a token only)"
    try:
        ca = _pem(cluster["certificate-authority-data"], "certificate-authority-data") \
            if cluster.get("certificate-authority-data") else None
        if user.get("client-certificate-data") or user.get("client-key-data"):
            if not (user.get("client-certificate-data") and user.get("client-key-data")):
                return "it has half a client certificate (certificate and key go together)"
            return Access(server, ca, _pem(user["client-certificate-data"], "client-certificate-data"),
                          _pem(user["client-key-data"], "client-key-data"))
    except ValueError as err:
        return str(err)
    if user.get("token"):
        return Access(server, ca, token=str(user["token"]))
    return "it has no client certificate and no token"


# ---- what is read -----------------------------------------------------------------------------

def _ready(node: dict) -> bool:
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _is(labels: dict, key: str) -> bool:
    # RKE2 and RKE1 set the role labels to "true"; an empty value (kubeadm's style) counts too.
    return key in labels and str(labels[key]).lower() in ("true", "")


def snapshot(get: Get, rke2: bool, server: str = "") -> LiveCluster:
    """The cluster as the day-2 guards need it. Raises on a malformed answer (read() reports it)."""
    nodes_doc = get(NODES_PATH)
    if not isinstance(nodes_doc, dict) or not isinstance(nodes_doc.get("items"), list):
        raise ValueError(f"{NODES_PATH} answered no Node list")
    nodes = []
    for item in nodes_doc["items"]:
        meta, status = item.get("metadata") or {}, item.get("status") or {}
        labels = meta.get("labels") or {}
        nodes.append(LiveNode(
            name=str(meta.get("name")),
            kubelet_version=str((status.get("nodeInfo") or {}).get("kubeletVersion") or ""),
            etcd=_is(labels, ETCD_LABEL),
            control_plane=any(_is(labels, k) for k in CONTROL_PLANE_LABELS),
            ready=_ready(item),
        ))
    plans = charts = addons = None
    if rke2:
        plans_doc = get(PLANS_PATH)
        plans = tuple(
            LivePlan(
                name=str((p.get("metadata") or {}).get("name")),
                version=str((p.get("spec") or {}).get("version") or ""),
                latest_version=str((p.get("status") or {}).get("latestVersion") or ""),
                complete=next(({"True": True, "False": False}.get(c.get("status"))
                               for c in (p.get("status") or {}).get("conditions") or []
                               if c.get("type") == "Complete"), None),
                applying=tuple((p.get("status") or {}).get("applying") or ()),
            )
            for p in (plans_doc or {}).get("items") or [])
        charts_doc = get(HELMCHARTS_PATH)
        charts = frozenset(str((c.get("metadata") or {}).get("name")) for c in (charts_doc or {}).get("items") or [])
        addons_doc = get(ADDONS_PATH)
        addons = frozenset(str((a.get("metadata") or {}).get("name")) for a in (addons_doc or {}).get("items") or []
                           if (a.get("spec") or {}).get("checksum"))
    return LiveCluster(tuple(sorted(nodes, key=lambda n: n.name)), plans, charts, server, addons=addons)


# ---- the transport ----------------------------------------------------------------------------

def tls_context(access: Access) -> ssl.SSLContext:
    """A TLS context that trusts the kubeconfig's CA (else the system's) and presents its client certificate.
    The ssl module loads a certificate chain from files only: the PEMs go to 0600 temp files, deleted before
    this returns. The rotation's client (components/ops/kube.py) connects the same way."""
    ctx = ssl.create_default_context(cadata=access.ca_pem) if access.ca_pem else ssl.create_default_context()
    if access.cert_pem:
        paths = []
        try:
            for pem in (access.cert_pem, access.key_pem or ""):
                fd, path = tempfile.mkstemp(prefix="rke-aws-", suffix=".pem")  # mode 0600
                paths.append(path)
                with os.fdopen(fd, "w") as f:
                    f.write(pem)
            ctx.load_cert_chain(paths[0], paths[1])
        finally:
            for path in paths:
                os.unlink(path)
    return ctx


def request_headers(access: Access, user_agent: str) -> dict[str, str]:
    """JSON, who asks, and the kubeconfig's bearer token when it has one."""
    headers = {"Accept": "application/json", "User-Agent": user_agent}
    if access.token:
        headers["Authorization"] = f"Bearer {access.token}"
    return headers


def https(access: Access) -> Get:
    """GET over TLS with the kubeconfig's CA and client certificate (or token)."""
    ctx = tls_context(access)
    headers = request_headers(access, "rke-aws-day2-check")
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))

    def get(path: str) -> dict | None:
        request = urllib.request.Request(access.server + path, headers=headers, method="GET")
        try:
            with opener.open(request, timeout=REQUEST_SECONDS) as response:
                return json.loads(response.read(MAX_BYTES))
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise
    return get


def _why(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"it answered HTTP {err.code} ({err.reason})"
    if isinstance(err, urllib.error.URLError):
        return f"it did not answer ({err.reason})"
    return " ".join(f"{type(err).__name__}: {err}".split())[:300]


def read(kubeconfig: str | None, rke2: bool, *, deadline: float = READ_SECONDS,
         transport: Transport | None = None) -> Reading:
    """The running cluster, or why it could not be read. Never raises, never waits past `deadline`."""
    access = parse_kubeconfig(kubeconfig)
    if isinstance(access, str):
        return Unreadable(access)
    transport = transport or https
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["value"] = snapshot(transport(access), rke2, access.server)
        except BaseException as err:  # noqa: BLE001 - every failure is a reason, never a crash
            result["error"] = err

    worker = threading.Thread(target=work, name="rke-aws-cluster-read", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        return Unreadable(f"{access.server} gave no complete answer within {deadline:g} s")
    if "error" in result:
        return Unreadable(f"{access.server}: {_why(result['error'])}")
    return result["value"]
