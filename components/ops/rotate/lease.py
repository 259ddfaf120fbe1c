"""One rotation at a time per cluster: a Lease (coordination.k8s.io/v1) in kube-system that the rotation takes
before its first change, renews between waits and deletes at the end. A holder that died loses it after
LEASE_SECONDS without a renewal; two rotations taking it at the same moment are told apart by the API
server's optimistic concurrency (a PUT with the resourceVersion read answers 409 to the second)."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Mapping
from typing import Any

from .. import kube as kubeapi
from .model import Clock, Stop, duration

LEASE_NAME = "rke-aws-rotation"
# A holder that stops renewing loses the lease after this; longer than one node's `pulumi up` (the lease is
# renewed between waits, not during the update), so a live rotation never loses it mid-step.
LEASE_SECONDS = 600
LEASE_RENEW_SECONDS = 60


class Lease:
    """The rotation's lease, held by `holder`; `renewed` is when this holder last wrote it."""

    def __init__(self, kube: kubeapi.Kube, clock: Clock, holder: str):
        self.kube, self.clock, self.holder = kube, clock, holder
        self.renewed = 0.0

    def body(self, current: Mapping[str, Any] | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": LEASE_NAME, "namespace": "kube-system"}
        if current is not None and (current.get("metadata") or {}).get("resourceVersion"):
            meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        now = self.clock.now()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now))
        spec = (current or {}).get("spec") or {}
        acquired = spec.get("acquireTime") if spec.get("holderIdentity") == self.holder else None
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": stamp,
                         "acquireTime": acquired or stamp}}

    def take(self, where: str, lost: Callable[[Exception], Stop]) -> None:
        """Take or renew the lease; Stop (at `where`) when another live rotation holds it or it cannot be
        written, `lost(err)` when the API server stops answering."""
        try:
            current = self.kube.lease(LEASE_NAME)
            if current is not None:
                spec = current.get("spec") or {}
                holder = spec.get("holderIdentity")
                renewed = parse_time(spec.get("renewTime"))
                alive = renewed is not None and self.clock.now() - renewed < float(spec.get("leaseDurationSeconds")
                                                                                   or LEASE_SECONDS)
                if holder and holder != self.holder and alive:
                    raise Stop(where,
                               f"another rotation runs on this cluster ({holder}, lease kube-system/{LEASE_NAME} "
                               f"renewed {duration(self.clock.now() - (renewed or 0))} ago)",
                               f"Let it finish; if it died, its lease expires {LEASE_SECONDS} s after its last renewal, "
                               "then rotate again (it resumes where that one stopped)")
                answer = self.kube.replace_lease(LEASE_NAME, self.body(current))
            else:
                answer = self.kube.create_lease(self.body(None))
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise lost(err) from None
        if answer.code == 409:
            raise Stop(where, f"another rotation took the lease kube-system/{LEASE_NAME} at the same moment",
                       "Let it finish, then rotate again")
        if answer.code not in (200, 201):
            raise Stop(where,
                       f"the lease kube-system/{LEASE_NAME} could not be written (HTTP {answer.code}: {answer.message})",
                       "rotate needs an admin kubeconfig (it cordons, evicts and deletes Nodes); rotate again with one")
        self.renewed = self.clock.now()

    def release(self) -> None:
        try:
            current = self.kube.lease(LEASE_NAME)
            if current is not None and (current.get("spec") or {}).get("holderIdentity") == self.holder:
                self.kube.delete_lease(LEASE_NAME)
        except (kubeapi.Unreachable, kubeapi.KubeError):
            pass  # it expires by itself


def parse_time(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return float(calendar.timegm(time.strptime(text.split(".")[0].rstrip("Z"), "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None
