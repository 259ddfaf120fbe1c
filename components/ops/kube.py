"""A small Kubernetes API client for rotation (components/ops/rotate/): the verbs kubectl's cordon,
drain and `delete node` use, nothing more, over the standard library.

It reads the same kubeconfigs as the read-only reader (components/plan/running.py parse_kubeconfig:
client certificates or a bearer token only, never an `exec` or `auth-provider` command) and connects
with the reader's TLS context and headers (running.tls_context: certificate data in 0600 temp files,
deleted before the first request; running.request_headers).

Verbs (Kubernetes API reference; kubectl pkg/drain):
- cordon: PATCH the Node, `spec.unschedulable: true` (kubectl pkg/drain/cordon.go), with a JSON merge patch;
- evict: POST `/api/v1/namespaces/{ns}/pods/{name}/eviction` with a policy/v1 Eviction
  (kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/); the answer's HTTP status and the
  Status body's `code` both count (a failure Status may come with a 2xx);
- delete node: DELETE `/api/v1/nodes/{name}`;
- a Lease (coordination.k8s.io/v1) so that one rotation at a time works on a cluster.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..plan import running

REQUEST_SECONDS = 10.0
USER_AGENT = "rke-aws-rotate"
MERGE_PATCH = "application/merge-patch+json"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


class KubeError(Exception):
    """An answer the caller did not expect (status, the API's message)."""

    def __init__(self, status: int, message: str, body: Mapping[str, Any] | None = None):
        self.status = status
        self.body = dict(body or {})
        super().__init__(f"HTTP {status}: {message}")


class Unreachable(Exception):
    """The API server did not answer (DNS, TCP, TLS, timeout)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]

    @property
    def code(self) -> int:
        """The Status body's code when there is one (an eviction refused with a 2xx), else the HTTP status."""
        if self.body.get("kind") == "Status" and isinstance(self.body.get("code"), int) \
                and self.body.get("status") == "Failure":
            return int(self.body["code"])
        return self.status

    @property
    def message(self) -> str:
        return str(self.body.get("message") or "")


# (method, path, body, content type) -> Answer; tests hand a transport to a local server.
Transport = Callable[[str, str, Any, str], Answer]


def https_transport(access: running.Access, timeout: float = REQUEST_SECONDS) -> Transport:
    # TLS and credentials as the read-only reader uses them (plan/running.py tls_context, request_headers).
    ctx = None if access.server.startswith("http://") else running.tls_context(access)  # http: a local test server only
    headers = running.request_headers(access, USER_AGENT)
    handlers: list[Any] = [urllib.request.HTTPSHandler(context=ctx)] if ctx is not None else []
    opener = urllib.request.build_opener(*handlers)

    def send(method: str, path: str, body: Any = None, content_type: str = "application/json") -> Answer:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(access.server + path, data=data, method=method,
                                         headers={**headers, **({"Content-Type": content_type} if data else {})})
        try:
            with opener.open(request, timeout=timeout) as response:
                raw = response.read(running.MAX_BYTES)
                return Answer(response.status, json.loads(raw) if raw else {})
        except urllib.error.HTTPError as err:
            raw = err.read(running.MAX_BYTES)
            try:
                doc = json.loads(raw) if raw else {}
            except ValueError:
                doc = {"message": raw.decode("utf-8", "replace")[:300]}
            return Answer(err.code, doc if isinstance(doc, dict) else {})
        except (urllib.error.URLError, OSError, ssl.SSLError) as err:
            reason = getattr(err, "reason", err)
            raise Unreachable(f"{access.server} did not answer ({reason})") from None
    return send


class Kube:
    def __init__(self, transport: Transport, server: str = ""):
        self._send = transport
        self.server = server

    @classmethod
    def from_kubeconfig(cls, text: str | None) -> Kube:
        """A client for the kubeconfig's cluster; Unreachable with the reason when it cannot be used."""
        access = running.parse_kubeconfig(text)
        if isinstance(access, str):
            raise Unreachable(f"the kubeconfig cannot be used: {access}")
        return cls(https_transport(access), access.server)

    def _call(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
              ok: tuple[int, ...] = (200, 201, 202)) -> Answer:
        answer = self._send(method, path, body, content_type)
        if answer.code not in ok:
            raise KubeError(answer.code, answer.message or f"{method} {path}", answer.body)
        return answer

    # ---- nodes ----
    def nodes(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "/api/v1/nodes").body.get("items") or [])

    def node(self, name: str) -> dict[str, Any] | None:
        answer = self._call("GET", f"/api/v1/nodes/{_q(name)}", ok=(200, 404))
        return None if answer.code == 404 else answer.body

    def patch_node(self, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("PATCH", f"/api/v1/nodes/{_q(name)}", dict(patch), MERGE_PATCH).body

    def delete_node(self, name: str) -> bool:
        """False when it was gone already."""
        return self._call("DELETE", f"/api/v1/nodes/{_q(name)}", ok=(200, 202, 404)).code != 404

    # ---- pods ----
    def pods_on(self, node: str) -> list[dict[str, Any]]:
        selector = urllib.parse.quote(f"spec.nodeName={node}", safe="=")
        return list(self._call("GET", f"/api/v1/pods?fieldSelector={selector}").body.get("items") or [])

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        answer = self._call("GET", f"/api/v1/namespaces/{_q(namespace)}/pods/{_q(name)}", ok=(200, 404))
        return None if answer.code == 404 else answer.body

    def evict(self, namespace: str, name: str) -> Answer:
        """The eviction's answer as given (the caller decides on 429, 404, 500)."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        return self._send("POST", f"/api/v1/namespaces/{_q(namespace)}/pods/{_q(name)}/eviction", body,
                          "application/json")

    # ---- the rotation lease ----
    def lease(self, name: str) -> dict[str, Any] | None:
        answer = self._call("GET", f"{LEASES}/{_q(name)}", ok=(200, 404))
        return None if answer.code == 404 else answer.body

    def create_lease(self, lease: Mapping[str, Any]) -> Answer:
        return self._send("POST", LEASES, dict(lease), "application/json")

    def replace_lease(self, name: str, lease: Mapping[str, Any]) -> Answer:
        """PUT with the resourceVersion read: 409 when another writer came first."""
        return self._send("PUT", f"{LEASES}/{_q(name)}", dict(lease), "application/json")

    def delete_lease(self, name: str) -> None:
        self._call("DELETE", f"{LEASES}/{_q(name)}", ok=(200, 202, 404))


def _q(part: str) -> str:
    return urllib.parse.quote(part, safe="")
