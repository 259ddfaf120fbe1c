"""The proxy environment every process of the cluster that goes out gets (`proxy`): what bypasses it. Pure.

Who reads what:
- the boot scripts' curl reads `http_proxy` (lower case only: curl ignores HTTP_PROXY, the CGI
  "httpoxy" rule), `HTTPS_PROXY`/`https_proxy` and `NO_PROXY`/`no_proxy`; a CIDR in no_proxy
  needs curl >= 7.86 (Ubuntu 24.04 has 8.5), so the scripts also pass `--noproxy '*'` on every
  call to IMDS and to other servers;
- RKE2 reads /etc/default/rke2-server or rke2-agent (its units' `EnvironmentFile=-/etc/default/%N`,
  rancher/rke2 bundle/lib/systemd/system/rke2-server.service) and passes HTTP_PROXY, HTTPS_PROXY and
  NO_PROXY on to containerd, the kubelet and the static pods; CONTAINERD_-prefixed copies are what
  containerd alone reads (rancher/rke2-docs docs/advanced.md "Configuring an HTTP proxy"; rancher/rke2
  pkg/executor/pebinary/pebinary.go strips the prefix). RKE2 adds the pod and service networks,
  .svc and the cluster domain on servers only (k3s pkg/server/server.go setNoProxyEnv): the list
  below carries them for agents too;
- Docker (RKE1) reads them from its unit's environment (docs.docker.com/engine/daemon/proxy);
- pods get nothing of this: the CCM's chart takes `env`, the EBS CSI chart `proxy.http_proxy` and
  `proxy.no_proxy`. Both call AWS through aws-sdk-go-v2, whose default transport is
  http.ProxyFromEnvironment (aws/aws-sdk-go-v2 aws/transport/http/client.go): without
  169.254.169.254 in NO_PROXY their instance-metadata calls would go to the proxy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..settings.fields import POD_CIDR, SERVICE_CIDR
from ..settings.resolve import ProxyConfig
from ..state.model import ClusterState

# Always bypassed: the node itself, instance metadata (IMDS answers only on the link), the cluster's
# pod and service networks and names, and EC2's private DNS names (.internal is reserved for private
# use, never on the internet; node names end in ec2.internal or <region>.compute.internal).
LOCAL = ("localhost", "127.0.0.1", "169.254.169.254")
CLUSTER = (POD_CIDR, SERVICE_CIDR, ".svc", ".cluster.local", ".internal")


@dataclass(frozen=True)
class ProxyEnv:
    http_proxy: str
    https_proxy: str
    no_proxy: tuple[str, ...]

    @property
    def no_proxy_text(self) -> str:
        return ",".join(self.no_proxy)

    def variables(self) -> dict[str, str]:
        """The upper-case variables (RKE2, Docker, Go programs)."""
        return {"HTTP_PROXY": self.http_proxy, "HTTPS_PROXY": self.https_proxy, "NO_PROXY": self.no_proxy_text}

    def shell_variables(self) -> dict[str, str]:
        """Both cases: curl reads only the lower-case http_proxy, wget and apt the lower-case ones."""
        upper = self.variables()
        return {**upper, **{k.lower(): v for k, v in upper.items()}}

    def rke2_environment(self) -> str:
        """/etc/default/rke2-server or rke2-agent (a systemd EnvironmentFile: KEY=value lines)."""
        upper = self.variables()
        lines = [f"{k}={v}" for k, v in upper.items()] + [f"CONTAINERD_{k}={v}" for k, v in upper.items()]
        return "".join(line + "\n" for line in lines)

    def systemd_drop_in(self) -> str:
        """A unit's drop-in with the variables: Docker's (RKE1), the SSM agent's."""
        return "[Service]\n" + "".join(f'Environment="{k}={v}"\n' for k, v in self.variables().items())

    def pod_env(self) -> list[dict[str, Any]]:
        """A container's `env` (the CCM chart's `env` value)."""
        return [{"name": k, "value": v} for k, v in self.variables().items()]

    def ebs_csi_values(self) -> dict[str, Any]:
        """The EBS CSI chart's `proxy` value: one URL for HTTP_PROXY and HTTPS_PROXY (kubernetes-sigs/
        aws-ebs-csi-driver charts/aws-ebs-csi-driver/templates/_helpers.tpl "aws-ebs-csi-driver.http-proxy",
        429e202e); the driver calls only https endpoints, so it is the https proxy."""
        return {"http_proxy": self.https_proxy, "no_proxy": self.no_proxy_text}


def proxy_env(proxy: ProxyConfig | None, vpc_cidrs: tuple[str, ...], endpoint: str) -> ProxyEnv | None:
    """`vpc_cidrs`: the VPC's CIDR blocks (nodes and the endpoint's addresses); `endpoint`: the
    control-plane name nodes join and kubectl uses."""
    if proxy is None:
        return None
    entries: list[str] = []
    for entry in (*LOCAL, *vpc_cidrs, *CLUSTER, endpoint, *proxy.no_proxy):
        if entry.lower() not in (e.lower() for e in entries):
            entries.append(entry)
    return ProxyEnv(proxy.http_proxy, proxy.https_proxy, tuple(entries))


def proxy_warnings(previous: ClusterState | None, proxy: ProxyEnv | None) -> tuple[Diagnostic, ...]:
    """The proxy is in the user data, read at first boot only (nodes.IGNORED_ON_UPDATE): running nodes keep
    the one they booted with in RKE2's or Docker's environment and in their boot and manifest-sync
    scripts; the CCM and the EBS CSI driver take the new one with this update."""
    before = dict(previous.proxy or {}) if previous else {}
    now = proxy.variables() if proxy else {}
    if previous is None or before == now or not previous.nodes:
        return ()

    def shown(v: Mapping[str, str]) -> str:
        return f"{v.get('HTTPS_PROXY')} (NO_PROXY {v.get('NO_PROXY')})" if v else "no proxy"
    return (Diagnostic(
        "proxy", f"{shown(before)} -> {shown(now)} reaches nodes as they first boot; the running "
        f"{len(previous.nodes)} keep {shown(before)} in /etc/default/rke2-* (RKE2, containerd) or Docker's drop-in, "
        "and in the manifest sync, until replaced (servers one at a time, then agents: "
        "docs/operations/replace-node.md, 'Replacing a node'); keep the old proxy serving until then. The CCM and the EBS CSI driver use the new one "
        "after this update (manifest mode: once the servers' sync, still through the old proxy, has mirrored "
        "their manifests)", "proxy.first-boot", Severity.WARNING),)
