"""RKE1's cluster.yml for `rke up`, and what an RKE1 node needs before it. Pure.

RKE1 ignores configuration keys it does not know (silently), so every key written here is checked
against the lists below by the tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..plan.cluster_documents import dump_yaml
from ..plan.identity_apiserver import rke1_args
from ..plan.nodes import PlannedNode
from ..plan.snapshots import EtcdS3
from ..settings import os_images

RKE_EXTERNAL_PROVIDER = "external-aws"  # RKE >= v1.5.0 / v1.4.15: --cloud-provider=external


RKE_IN_TREE_PROVIDER = "aws"  # refused by RKE for Kubernetes >= 1.27


# Kernel settings RKE1 nodes need for pod networking through bridges.
RKE_SYSCTLS = {
    "net.bridge.bridge-nf-call-iptables": "1",
    "net.bridge.bridge-nf-call-ip6tables": "1",
    "net.ipv4.ip_forward": "1",
}


RKE_KERNEL_MODULES = ("br_netfilter", "overlay")


# ingress.controller -> cluster.yml ingress.provider (RKE has no Traefik: config.py refuses it for rke).
RKE_INGRESS_PROVIDERS = {"ingress-nginx": "nginx", "none": "none"}


@dataclass(frozen=True)
class Rke1Identity:
    """identity.serviceAccounts irsa on RKE1 (new clusters only: plan/identity.py rke1_running_problems): the
    issuer's kube-api arguments in cluster.yml, and the SSM parameters the controlplane nodes' boot script writes
    the key files from (node/scripts.py rke_boot_script; `rke up` never writes host files itself)."""
    issuer_url: str
    signing: bool
    key_parameter: str
    trusted_parameter: str
    region: str
    ssm_host: str


def merge_service(service: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra` (a service's extra_args / extra_args_array / extra_binds ...) added to what `service` already holds,
    without dropping any of it: maps merged (a flag set in both must agree: two values for one map flag is a
    program error, RKE would keep only one), arrays' lists concatenated per flag, lists concatenated."""
    out: dict[str, Any] = {}
    for key in [*service, *(k for k in extra if k not in service)]:
        have, add = service.get(key), extra.get(key)
        if add is None or have is None:
            value = have if add is None else add
            out[key] = dict(value) if isinstance(value, Mapping) else list(value) if isinstance(value, list) else value
        elif key == "extra_args":
            clash = sorted(f for f in add if f in have and have[f] != add[f])
            if clash:
                raise ValueError(f"services: {clash} set twice with different values")
            out[key] = {**have, **add}
        elif isinstance(have, Mapping):  # extra_args_array (and the like): each flag's values, in order
            out[key] = {f: [*have.get(f, []), *(v for v in add.get(f, []) if v not in have.get(f, []))]
                        for f in [*have, *(f for f in add if f not in have)]}
        elif isinstance(have, list):
            out[key] = [*have, *(v for v in add if v not in have)]
        else:
            raise ValueError(f"services: {key} set twice")
    return out


def rke_cluster_config(
    nodes: Sequence[PlannedNode],
    public_ips: Mapping[str, str],
    *,
    cluster_id: str,
    kubernetes_version: str,
    ssh_user: str,
    ssh_key_path: str | None,
    leader_migration: bool,
    api_endpoint: str | None = None,
    etcd_s3: EtcdS3 | None = None,
    ingress: str | None = None,
    proxy: Mapping[str, str] | None = None,
    private_registries: Sequence[Mapping[str, Any]] = (),
    identity: Rke1Identity | None = None,
) -> dict[str, Any]:
    """cluster.yml for `rke up`. `public_ips` maps node name to its public IP (absent: private only)."""
    doc: dict[str, Any] = {
        "cluster_name": cluster_id,
        "kubernetes_version": kubernetes_version,
        "nodes": [
            {
                "address": public_ips.get(n.name) or n.private_ip,
                "internal_address": n.private_ip,
                # Standalone `rke up` with external-aws needs this equal to the private DNS name.
                "hostname_override": n.name,
                "user": os_images.login_user(n.pool.os, ssh_user),
                "role": list(n.roles),
            }
            for n in nodes
        ],
    }
    if ssh_key_path:
        doc["ssh_key_path"] = ssh_key_path
    if api_endpoint:
        # The API server's certificate must name the endpoint kubectl and nodes use.
        doc["authentication"] = {"strategy": "x509", "sans": [api_endpoint]}
    services: dict[str, Any] = {}
    if etcd_s3:
        # No access_key/secret_key: RKE's backup container then uses the etcd nodes' instance role.
        # snapshot: true is RKE's default; explicit because it, not backup_config.enabled, starts
        # the rolling snapshot container (rke services/etcd.go).
        services["etcd"] = {"snapshot": True, "backup_config": {
            "enabled": True, "interval_hours": etcd_s3.interval_hours, "retention": etcd_s3.retention,
            "s3backupconfig": {"bucket_name": etcd_s3.bucket, "region": etcd_s3.region, "folder": etcd_s3.folder,
                               "endpoint": etcd_s3.endpoint}}}
        if proxy:
            # The snapshot container's environment is services.etcd.extra_env and nothing else (rancher/rke
            # services/etcd.go RunEtcdSnapshotSave: Env es.ExtraEnv); Docker's proxy drop-in serves image
            # pulls, not containers. Behind `proxy` the upload to S3 goes through it (NO_PROXY keeps IMDS,
            # where the instance role's credentials come from, and the VPC, where etcd's peers are, direct).
            services["etcd"]["extra_env"] = [f"{k}={v}" for k, v in sorted(proxy.items())]
    if leader_migration:
        # Migration phase: the in-tree provider keeps running, handing its controllers to the CCM.
        doc["cloud_provider"] = {"name": RKE_IN_TREE_PROVIDER}
        services["kube-controller"] = {"extra_args": {"enable-leader-migration": "true"}}
    else:
        doc["cloud_provider"] = {"name": RKE_EXTERNAL_PROVIDER}
    if identity is not None:
        # identity.serviceAccounts irsa: the issuer's flags and the key directory (plan/identity_apiserver.py
        # rke1_args), added to whatever else kube-api gets here.
        services["kube-api"] = merge_service(services.get("kube-api", {}),
                                             rke1_args(identity.issuer_url, identity.signing))
    if services:
        doc["services"] = services
    if private_registries:
        # registry (issue 35): rancher/rke types/rke_types.go PrivateRegistry (url, user, password, is_default);
        # the docker.io mirror is the default registry, prefixing RKE's system images (registries.py).
        doc["private_registries"] = [dict(r) for r in private_registries]
    if ingress is not None:
        # ingress.controller: RKE deploys its ingress-nginx for provider nginx (its default) and, on `rke up`
        # with none, removes the one it deployed (rancher/rke cluster/addons.go deployIngress).
        doc["ingress"] = {"provider": RKE_INGRESS_PROVIDERS[ingress]}
    return doc


def rke_cluster_yml(*args: Any, **kwargs: Any) -> str:
    return dump_yaml(rke_cluster_config(*args, **kwargs))
