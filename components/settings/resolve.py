"""`ClusterConfig`: the arguments resolved against the cluster's name, region and running state, the one
configuration components read.

`resolve(args, ...)` fills what depends on them (the cluster ID, the Kubernetes release a running stack stays
on, the default pools, each section's derived values), judges every rule of settings/rules/ with what runs
known (an unknown release the stack runs is kept, etcd members above the limit go down one at a time), and
raises ConfigError with every problem, or returns the resolved configuration with its warnings.
`from_flat(...)` does both steps for a flat Pulumi config at once (every problem of both in one error): the
stack program, the tools and the tests read a stack that way.

The resolved types narrow the arguments' (a pool's name, roles and count are set; a proxy has both URLs; a
Rancher registration its token): the fields are the same, so attribute names do not change on the way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

from pydantic import SecretStr

from ..diagnostics import ConfigError, Diagnostic, Severity
from . import partitions, stackconfig, tags
from .args import RkeClusterArgs, region_problems
from .fields import CLUSTER_ID_RULE, DEFAULT_CCM_INSTALL, DEFAULT_KUBERNETES_VERSION, json_text
from .rules import Context, Keys, Running, judge
from .rules.base import given
from .rules.network import BYO_KEYS, zones
from .rules.versions import effective, kubernetes_minor
from .sections import ROLES, Ccm, Network, NodePool, Proxy, Rancher, Role
from .stackconfig import CLUSTER_ID_RE, REGION_RE

__all__ = ["CcmConfig", "ClusterConfig", "NetworkConfig", "PoolConfig", "ProxyConfig", "RancherConfig", "Running",
           "ccm_install", "from_flat", "resolve"]


class PoolConfig(NodePool):
    """A pool as components read it: named, its roles in canonical order, its count known."""
    name: str
    roles: tuple[Role, ...]
    count: int


class NetworkConfig(Network):
    """The network as components read it: explicit zone names (or None: look up `az_count`); a brought VPC has
    no CIDR keys and no NAT of this program's."""
    availability_zones: tuple[str, ...] | None = None
    az_count: int


class CcmConfig(Ccm):
    install: Literal["helm", "manifest"]


class ProxyConfig(Proxy):
    """proxy: one URL given stands for both (most proxies take http and CONNECT alike)."""
    http_proxy: str
    https_proxy: str


class RancherConfig(Rancher):
    url: str  # without a trailing /
    token: SecretStr
    cluster_name: str  # rancher.clusterName, else the cluster ID


class ClusterConfig(RkeClusterArgs):
    """The resolved configuration (module docstring)."""
    distribution: Literal["rke", "rke2"]
    cluster_id: str
    kubernetes_version: str
    region: str
    node_pools: tuple[PoolConfig, ...]
    network: NetworkConfig
    ccm: CcmConfig
    proxy: ProxyConfig | None = None
    rancher: RancherConfig | None = None
    tags: dict[str, str]
    project: str
    stack: str
    diagnostics: tuple[Diagnostic, ...] = ()  # warnings and notes, in order

    @property
    def warnings(self) -> tuple[str, ...]:
        """The warnings and notes as messages (keys named as `prefix` names them)."""
        return tuple(d.render(self.prefix or "") for d in self.diagnostics)

    @property
    def endpoint(self) -> Literal["dns", "nlb"]:
        return self.control_plane.endpoint

    @property
    def cluster_tag_key(self) -> str:
        return tags.cluster_tag_key(self.cluster_id)

    @property
    def partition(self) -> partitions.Partition:
        return partitions.of_region(self.region)

    @property
    def kubernetes_minor(self) -> int:
        return kubernetes_minor(self.distribution, self.kubernetes_version) or 0


def ccm_install(given_install: Literal["helm", "manifest"] | None, distribution: str,
                running: Running) -> Literal["helm", "manifest"]:
    """How the CCM is installed: as set; else as the running cluster's was recorded; else the distribution's
    default for a new cluster (DEFAULT_CCM_INSTALL)."""
    if given_install is not None:
        return given_install
    if running.ccm_install is not None:
        return running.ccm_install
    return "manifest" if DEFAULT_CCM_INSTALL.get(distribution) == "manifest" else "helm"


def resolve(args: RkeClusterArgs, *, project: str, stack: str, name: str | None = None,
            running: Running | None = None, prefix: str | None = None) -> ClusterConfig:
    """`args` resolved (module docstring). `name`: what the cluster ID defaults to (the component's name; the
    stack's when None); `running`: the running cluster (None: a new stack); `prefix`: how messages name keys
    (default: the one `args` were read with, else `cluster <name>: `)."""
    default = name if name is not None else stack
    prefix = prefix or args.prefix or f"cluster {default}: "
    found: list[Diagnostic] = list(args.notes) + region_problems(args.region, required=True)
    if args.cluster_id is None:
        if CLUSTER_ID_RE.fullmatch(default):
            args = args.model_copy(update={"cluster_id": default})
        else:
            what = "the stack name" if name is None else "the cluster's name"
            found.append(Diagnostic("clusterId", f"{json_text(default)} is not a cluster ID (defaulted from {what}; set "
                                                 f"clusterId); {CLUSTER_ID_RULE}", "config.pattern", value=default))
    keys = Keys.of(args)
    running = running or Running()
    region = args.region if isinstance(args.region, str) and REGION_RE.fullmatch(args.region) else None
    found += judge(keys, Context(region=region, kubernetes_version=effective(keys, running), running=running,
                                 namespace=project))
    return _resolved(keys, found, project=project, stack=stack, region=args.region, running=running, prefix=prefix)


def from_flat(flat: Mapping[str, Any], *, project: str, stack: str, secret_keys: Collection[str] = (),
              running: Running | None = None) -> ClusterConfig:
    """A flat Pulumi config (`"<project>:<key>" -> text`, `aws:region`) read and resolved in one step: every
    problem of both in one ConfigError."""
    read = stackconfig.read_flat(flat, namespace=project, secret_keys=secret_keys)
    running = running or Running()
    found = list(read.found) + region_problems(read.region, required=True)
    checked = stackconfig.check(read.config, secret_keys=read.secret_keys, region=read.region, written=read.written,
                                default_cluster_id=(stack, "the stack name"), running=running, namespace=project,
                                cls=RkeClusterArgs)
    return _resolved(checked.keys, found + checked.found, project=project, stack=stack, region=read.region,
                     running=running, prefix=f"{project}:")


def _resolved(keys: Keys, found: list[Diagnostic], *, project: str, stack: str, region: Any, running: Running,
              prefix: str) -> ClusterConfig:
    errors = [d for d in found if d.severity == Severity.ERROR]
    if errors:
        raise ConfigError(errors, prefix=prefix)
    valid = keys.valid
    distribution = valid.distribution
    assert distribution is not None and valid.cluster_id is not None and isinstance(region, str)
    kver = effective(keys, running) or DEFAULT_KUBERNETES_VERSION[distribution]
    values = dict(valid)
    values.update(
        distribution=distribution, kubernetes_version=kver, region=region, project=project, stack=stack,
        diagnostics=tuple(d for d in found if d.severity != Severity.ERROR),
        node_pools=tuple(_pool(p) for p in keys.complete_pools),
        network=_network(valid.network),
        ccm=CcmConfig.model_construct(**{**dict(valid.ccm), "install": ccm_install(valid.ccm.install, distribution,
                                                                                   running)}),
        proxy=_proxy(valid.proxy), rancher=_rancher(valid.rancher, valid.cluster_id), tags=dict(valid.tags or {}),
    )
    config = ClusterConfig.model_construct(_fields_set=set(valid.model_fields_set), **values)
    config._prefix = prefix
    return config


def _pool(pool: NodePool) -> PoolConfig:
    assert pool.name is not None and pool.roles is not None and pool.count is not None
    reason = pool.imds_hop_limit_reason
    return PoolConfig.model_construct(_fields_set=set(pool.model_fields_set), **{
        **dict(pool), "roles": tuple(r for r in ROLES if r in pool.roles),
        "imds_hop_limit_reason": reason.strip(" ") if pool.imds_hop_limit == 2 and reason else None})


def _network(net: Network) -> NetworkConfig:
    names, count, _ = zones(net.availability_zones)
    values = dict(net)
    if given(net) & set(BYO_KEYS):
        # The zones are the subnets' (looked up at plan time): one per private subnet unless given.
        if net.availability_zones is None and net.public_subnet_ids and net.private_subnet_ids is not None:
            count = len(net.private_subnet_ids) or count
        values.update(vpc_cidr=None, nat_gateways="none", public_subnet_cidrs=None, private_subnet_cidrs=None)
    else:
        values.update(vpc_id=None, public_subnet_ids=None, private_subnet_ids=None)
    values.update(availability_zones=names, az_count=count)
    return NetworkConfig.model_construct(_fields_set=set(net.model_fields_set), **values)


def _proxy(px: Proxy | None) -> ProxyConfig | None:
    url = px.https_proxy or px.http_proxy if px is not None else None
    if px is None or url is None:
        return None
    return ProxyConfig.model_construct(_fields_set=set(px.model_fields_set),
                                       **{**dict(px), "http_proxy": px.http_proxy or url, "https_proxy": url})


def _rancher(section: Rancher | None, cluster_id: str) -> RancherConfig | None:
    if section is None or section.url is None or section.token is None:
        return None
    return RancherConfig.model_construct(_fields_set=set(section.model_fields_set), **{
        **dict(section), "url": section.url.rstrip("/"), "cluster_name": section.cluster_name or cluster_id})
