"""Everything decided before the first resource is registered: zones, subnets, node identities.

Look-ups (availability zones, existing subnets) are plain invokes, so their answers are
ordinary values at preview time and every node name is known in `pulumi preview`. Others check,
before anything is registered, what EC2 would refuse only at RunInstances: the key pair, each
pool's instance type (offered where its nodes go, the image's architecture and virtualization).
"""

from __future__ import annotations

import json

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

import pulumi_aws as aws

from . import versions
from .config import ConfigError, StackConfig
from .network_plan import SubnetPlan, plan_subnets
from .history import Previous, parse_version, quorum_problems, version_problems
from .node_plan import CapacityError, NodePlan, plan_nodes

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterPlan:
    azs: tuple[str, ...]
    subnets: tuple[SubnetPlan, ...]
    nodes: tuple[NodePlan, ...]
    default_ami: str = ""
    previous: Optional[Previous] = None
    ccm_image: str = ""
    notes: tuple[str, ...] = ()  # what the user should know about this update (logged)
    warnings: tuple[str, ...] = ()  # what may surprise the user (logged as warnings)
    backup: Optional["BackupPlan"] = None
    ebs_csi: bool = False
    published_kubeconfig: Optional[str] = None  # RKE2: what the first server published (secret)
    account_id: str = ""

    @property
    def server_ips(self) -> tuple[str, ...]:
        """The addresses behind the control-plane endpoint: RKE2 servers, RKE1 controlplane nodes."""
        return tuple(n.private_ip for n in self.nodes if n.pool.is_controlplane)

    @property
    def first_deployment(self) -> bool:
        return self.previous is None


@dataclass(frozen=True)
class BackupPlan:
    bucket: str
    folder: str
    created: bool  # this program creates (and tags) the bucket
    etcd_s3: Any = None  # bootstrap.EtcdS3: what the snapshotting nodes are configured with
    notes: tuple[str, ...] = ()


def _looked_up(key: str, what: str, fix: str, call: Callable[[], T]) -> T:
    """Run one look-up (an invoke); a failure becomes a ConfigError naming the key and the fix.

    The provider's answer for an unknown region, missing credentials or a missing object is an
    exception from deep inside the SDK; the user needs the key that caused it and what to do.
    """
    try:
        return call()
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - any invoke failure ends the same way
        detail = " ".join(str(err).split()).replace(" ()", "")  # an invoke failure names no property
        raise ConfigError([f"{key}: {what} failed ({detail}); {fix}"]) from None


def _available_zones(cfg: StackConfig, regular_only: bool) -> list[str]:
    """The region's available zones: the first call to AWS, so an unknown region or missing
    credentials surface here, named as such."""
    # Local and wavelength zones need opt-in; only regular zones host a cluster's subnets by default.
    filters = [{"name": "opt-in-status", "values": ["opt-in-not-required"]}] if regular_only else []
    return _looked_up(
        "aws:region", f"looking up the availability zones of '{cfg.region}'",
        "check aws:region (a region your credentials can use, like us-west-2) and your AWS credentials",
        lambda: aws.get_availability_zones(state="available", filters=filters).names,
    )


def _zones(cfg: StackConfig) -> list[str]:
    explicit = cfg.network.availability_zones
    found = _available_zones(cfg, regular_only=not explicit)
    if explicit:
        missing = [z for z in explicit if z not in found]
        if missing:
            raise ConfigError([
                f"rke-aws:network.availabilityZones: {', '.join(repr(z) for z in missing)} not available in "
                f"{cfg.region}; available: {', '.join(sorted(found))}"
            ])
        return list(explicit)
    if len(found) < cfg.network.az_count:
        raise ConfigError([
            f"rke-aws:network.availabilityZones: {cfg.network.az_count} zones asked for, but {cfg.region} offers "
            f"{len(found)} ({', '.join(found)}); use at most {len(found)}"
        ])
    return sorted(found)[: cfg.network.az_count]


HOSTNAME_FIX = "aws ec2 modify-subnet-attribute --subnet-id {sid} --private-dns-hostname-type-on-launch ip-name"


def _existing_subnets(cfg: StackConfig) -> tuple[list[SubnetPlan], dict[str, Any]]:
    """Bring-your-own subnets as SubnetPlans (keys follow the lists' order), and what was looked up."""
    plans: list[SubnetPlan] = []
    found_by_key: dict[str, Any] = {}
    problems: list[str] = []
    zones: dict[str, dict[int, str]] = {"public": {}, "private": {}}
    for tier, ids in (("public", cfg.network.public_subnet_ids), ("private", cfg.network.private_subnet_ids)):
        for i, sid in enumerate(ids or ()):
            key = f"rke-aws:network.{tier}SubnetIds[{i}]"
            found = _looked_up(key, f"looking up subnet '{sid}' in {cfg.region}",
                               "list subnets that exist in this region and account",
                               lambda sid=sid: aws.ec2.get_subnet(id=sid))
            if found.vpc_id != cfg.network.vpc_id:
                problems.append(f"{key}: '{sid}' is in {found.vpc_id}, not {cfg.network.vpc_id}; list subnets of that VPC")
            if found.availability_zone in zones[tier].values():
                other = next(j for j, z in zones[tier].items() if z == found.availability_zone)
                problems.append(f"{key}: '{sid}' is in {found.availability_zone} like {tier}SubnetIds[{other}]; give one "
                                f"{tier} subnet per zone")
            if (found.private_dns_hostname_type_on_launch or "ip-name") != "ip-name":
                # resource-name hostnames make node names i-....compute.internal: the CCM finds no instance.
                problems.append(f"{key}: '{sid}' launches instances with {found.private_dns_hostname_type_on_launch} "
                                "hostnames, so node names would not be ip-... private DNS names; set it to ip-name: "
                                + HOSTNAME_FIX.format(sid=sid))
            zones[tier][i] = found.availability_zone
            plans.append(SubnetPlan(tier, i, found.availability_zone, found.cidr_block))
            found_by_key[f"{tier}-{i}"] = found
    for i, az in zones["private"].items():
        if zones["public"].get(i) not in (None, az):
            problems.append(
                f"rke-aws:network.privateSubnetIds[{i}]: in {az} but publicSubnetIds[{i}] is in {zones['public'][i]}; list both in the same zone order"
            )
    explicit = cfg.network.availability_zones
    if explicit and list(zones["private"].values()) != list(explicit):
        problems.append(f"rke-aws:network.availabilityZones: {list(explicit)}, but the private subnets are in "
                        f"{list(zones['private'].values())}; list the zones in the subnets' order, or leave them out")
    if problems:
        raise ConfigError(problems)
    return plans, found_by_key


def _route_table(cfg: StackConfig, key: str, sid: str) -> Any:
    """The subnet's route table: its own association, else the VPC's main table."""
    try:
        return aws.ec2.get_route_table(subnet_id=sid)
    except Exception:  # noqa: BLE001 - no explicit association: the main table applies
        return _looked_up(key, f"looking up the route table of '{sid}'", "check the VPC's route tables",
                          lambda: aws.ec2.get_route_table(vpc_id=cfg.network.vpc_id,
                                                          filters=[{"name": "association.main", "values": ["true"]}]))


def _default_route(table: Any) -> Any:
    return next((r for r in table.routes or [] if r.cidr_block == "0.0.0.0/0"), None)


def _check_existing_network(cfg: StackConfig, subnets: list[SubnetPlan], found: dict[str, Any],
                            nodes: list[NodePlan], previous: Optional[Previous]) -> list[str]:
    """What a bring-your-own VPC must offer the nodes and the CCM, checked with look-ups; each
    problem names the key, the subnet and the fix."""
    problems: list[str] = []
    vpc = _looked_up("rke-aws:network.vpcId", f"looking up '{cfg.network.vpc_id}'", "check the VPC ID",
                     lambda: aws.ec2.get_vpc(id=cfg.network.vpc_id))
    for flag, attribute in (("enable_dns_support", "enable-dns-support"), ("enable_dns_hostnames", "enable-dns-hostnames")):
        if not getattr(vpc, flag):
            problems.append(f"rke-aws:network.vpcId: '{cfg.network.vpc_id}' has {attribute} off; node names are EC2 "
                            f"private DNS names and need it: aws ec2 modify-vpc-attribute --vpc-id {cfg.network.vpc_id} "
                            f"--{attribute}")
    for plan in subnets:
        sid = found[plan.key].id
        key = f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]"
        route = _default_route(_route_table(cfg, key, sid))
        if plan.tier == "public" and not (route and (route.gateway_id or "").startswith("igw-")):
            problems.append(f"{key}: '{sid}' has no route to an internet gateway, so it is not public (the CCM puts "
                            "internet-facing load balancers there); list a public subnet or add 0.0.0.0/0 via an igw-")
        if plan.tier == "private" and not (route and (route.nat_gateway_id or route.transit_gateway_id or
                                                       route.network_interface_id or route.instance_id)):
            problems.append(f"{key}: '{sid}' has no default route (NAT gateway, transit gateway or appliance); its "
                            "nodes download RKE2/Docker at boot and call SSM: add 0.0.0.0/0 via a NAT gateway")
    # New nodes' planned addresses must be free (no reservation protects them in subnets not ours).
    running = {n.private_ip for n in previous.nodes} if previous else set()
    for plan in subnets:
        wanted = sorted(n.private_ip for n in nodes if n.subnet.key == plan.key and n.private_ip not in running)
        if not wanted:
            continue
        sid = found[plan.key].id
        key = f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]"
        used = _looked_up(key, f"looking up network interfaces in '{sid}'", "check the subnet",
                          lambda sid=sid, wanted=wanted: aws.ec2.get_network_interfaces(filters=[
                              {"name": "subnet-id", "values": [sid]},
                              {"name": "addresses.private-ip-address", "values": wanted}]))
        if used.ids:
            problems.append(f"{key}: planned node addresses in '{sid}' ({', '.join(wanted)}) are taken by "
                            f"{', '.join(sorted(used.ids))}; give the pools there another ipBlock")
    return problems


def build(cfg: StackConfig, previous: Optional[Previous] = None) -> ClusterPlan:
    """Everything before the first resource; `previous`: the stack's last outputs (history.read())."""
    problems = version_problems(previous, cfg.distribution, cfg.kubernetes_version)
    if problems:
        raise ConfigError(problems)
    found: dict[str, Any] = {}
    if cfg.network.bring_your_own:
        _available_zones(cfg, regular_only=False)
        subnets, found = _existing_subnets(cfg)
        azs = [s.az for s in subnets if s.tier == "private"]
    else:
        azs = _zones(cfg)
        try:
            subnets = plan_subnets(cfg.network.vpc_cidr, azs, cfg.network.public_subnet_cidrs,
                                   cfg.network.private_subnet_cidrs, previous.subnet_zones if previous else None)
        except ValueError as err:
            raise ConfigError([f"rke-aws:network.availabilityZones: {err}"]) from None
    ebs_csi = _ebs_csi(cfg, previous)
    try:
        nodes = plan_nodes(cfg, subnets, previous)
    except CapacityError as exc:
        raise ConfigError(exc.problems) from None
    problems = _check_existing_network(cfg, subnets, found, nodes, previous) if found else []
    problems += quorum_problems(previous, [n.member(cfg.access.ssh_key_name) for n in nodes])
    kubeconfig, more = _published_kubeconfig(cfg, previous)
    problems += upgrade_problems(cfg, previous, nodes, kubeconfig_published=kubeconfig is not None)
    problems += in_cluster_problems(cfg, previous, kubeconfig is not None or cfg.kubeconfig is not None)
    problems += cluster_network_problems(cfg, subnets) if found else []
    image, notes = ccm_image(cfg, previous)
    problems += manifest_size_problems(cfg, image)
    try:
        default_image = _default_image(cfg)
    except ConfigError as err:  # reported with the rest
        problems, default_image = problems + err.problems, None
    problems += key_pair_problems(cfg)
    machine, machine_warnings = machine_problems(cfg, nodes, previous, default_image)
    problems += machine
    if problems:
        raise ConfigError(problems)
    account = _account(cfg)
    backup = _backup(cfg, account, previous)
    return ClusterPlan(tuple(azs), tuple(subnets), tuple(nodes), default_image.id if default_image else "", previous,
                       image, notes + more,
                       warnings=(_hardening_warnings(cfg, previous) + instance_type_warnings(cfg, previous, nodes)
                                 + machine_warnings
                                 + _snapshot_warnings(cfg, previous, backup)
                                 + in_cluster_warnings(cfg, previous) + (backup.notes if backup else ())),
                       backup=backup, account_id=account,
                       ebs_csi=ebs_csi,
                       published_kubeconfig=kubeconfig)


def _ebs_csi(cfg: StackConfig, previous: Optional[Previous]) -> bool:
    """addons.ebsCsi; unset: on for a new stack, then whatever the stack last deployed; a cluster
    from before the option gains a storage driver only when asked."""
    if cfg.addons.ebs_csi is not None:
        return cfg.addons.ebs_csi
    if previous is None:
        return True
    return bool(previous.ebs_csi)


def _hardening_warnings(cfg: StackConfig, previous: Optional[Previous]) -> tuple[str, ...]:
    """Node configuration is read at first boot only: a changed profile reaches new nodes only."""
    before = previous.hardening if previous else None
    if before is None or before == cfg.hardening or not previous.nodes:
        return ()
    return (f"rke-aws:hardening: {before} -> {cfg.hardening} applies to nodes as they first boot; the running "
            f"{len(previous.nodes)} keep '{before}' until replaced (servers one at a time, then agents: README "
            "'Replacing nodes deliberately'); until then the cluster mixes both",)


def instance_type_warnings(cfg: StackConfig, previous: Optional[Previous], nodes: Sequence[NodePlan]) -> tuple[str, ...]:
    """Running servers keep their instance type (nodes.IGNORED_ON_SERVERS): say which ones differ
    from their pool, and how to roll them, on every update until they are replaced."""
    if previous is None:
        return ()
    before = {n.key: n for n in previous.nodes}
    out = []
    for i, pool in enumerate(cfg.node_pools):
        if not pool.is_server:
            continue
        running = [before.get((pool.name, n.index)) for n in nodes if n.pool.name == pool.name]
        stale = [(r.name, r.instance_type) for r in running
                 if r is not None and r.instance_type not in (None, pool.instance_type)]
        if stale:
            names = ", ".join(f"{name} ({old})" for name, old in stale)
            out.append(f"rke-aws:nodePools[{i}].instanceType: {pool.instance_type}, but the running {names} keep "
                       "their type: EC2 changes it by stopping the instance, and one update would stop every server "
                       "of the pool together (etcd quorum, the API). Replace them one at a time (`pulumi up --replace <urn>`, README "
                       f"'Replacing nodes deliberately'); nodes created from now on are {pool.instance_type}")
    return tuple(out)


def _account(cfg: StackConfig) -> str:
    return _looked_up("aws:region", "looking up the AWS account (for names that must be unique, key policies)",
                      "check your AWS credentials", lambda: aws.get_caller_identity().account_id)


def _backup(cfg: StackConfig, account: str, previous: Optional[Previous]) -> Optional[BackupPlan]:
    b = cfg.etcd_backup
    if not b.enabled:
        return None
    from .backups import bucket_name
    from .bootstrap import EtcdS3

    bucket = b.bucket or bucket_name(cfg.cluster_id, account, cfg.region)
    folder = b.folder or cfg.cluster_id
    created, notes = not b.bucket, ()
    ours = previous is not None and (previous.snapshot_location or "").startswith(f"s3://{bucket}/")
    if created and not ours and _bucket_exists(bucket):
        # Kept by an earlier `pulumi destroy` (retain_on_delete), or snapshots turned off and on:
        # creating it again would fail (or, in us-east-1, silently succeed).
        created = False
        notes = (f"rke-aws:etcdBackup: the bucket {bucket} exists already (kept when snapshots were last removed "
                 "from this stack): snapshots go there, and this stack does not manage it; to manage it again, "
                 f"`pulumi import aws:s3/bucket:Bucket {cfg.cluster_id}-etcd-snapshots {bucket}` and its settings",)
    return BackupPlan(bucket, folder, created=created, notes=notes, etcd_s3=EtcdS3(
        bucket=bucket, region=cfg.region, folder=folder, endpoint=cfg.partition.endpoint("s3", cfg.region),
        interval_hours=b.interval_hours, retention=b.retention))


def _bucket_exists(bucket: str) -> bool:
    try:
        aws.s3.get_bucket(bucket=bucket)
    except Exception:  # noqa: BLE001 - not found (or not ours to see): it is created, and S3 says why if not
        return False
    return True


def _snapshot_warnings(cfg: StackConfig, previous: Optional[Previous], backup: Optional[BackupPlan]) -> tuple[str, ...]:
    """Snapshots turned on for a running cluster: its nodes read their configuration at first boot
    only, so they need the keys by hand (RKE2) or the next `rke up` (RKE1)."""
    if backup is None or previous is None or previous.has_snapshots or not previous.nodes:
        return ()
    if cfg.distribution == "rke":
        return (f"rke-aws:etcdBackup: the running cluster takes no S3 snapshots until `rke up` runs with the new "
                f"rkeClusterYml (services.etcd.backup_config, to s3://{backup.bucket}/{backup.folder})",)
    from .bootstrap import etcd_s3_keys

    keys = etcd_s3_keys(backup.etcd_s3, cfg.kubernetes_version)
    lines = "; ".join(f"{k}: {json.dumps(v)}" for k, v in keys.items())
    return (f"rke-aws:etcdBackup: the running servers read /etc/rancher/rke2/config.yaml at first boot only and take "
            f"no S3 snapshots yet: on each server add {lines} to it and `systemctl restart rke2-server`, one server "
            "at a time (servers booted from now on have them)",)


def _published_kubeconfig(cfg: StackConfig, previous: Optional[Previous]) -> tuple[Optional[str], tuple[str, ...]]:
    """RKE2: the admin kubeconfig the first server published, when no kubeconfig is configured.

    Readable only with kms:Decrypt on its key. Not published yet, or not readable with these
    credentials: the update goes on without the cluster, and says so (in_cluster_problems refuses
    it when that would uninstall what the last update installed). A published copy that is not
    what RKE2 writes (every server may overwrite the parameter) is refused outright.
    """
    if (cfg.distribution != "rke2" or cfg.kubeconfig is not None or previous is None
            or not previous.has_kubeconfig_parameter):
        return None, ()
    from .endpoint import KUBE_API_PORT, endpoint_name
    from .secrets import KUBECONFIG_PENDING, kubeconfig_parameter_name, published_kubeconfig_problem

    name = kubeconfig_parameter_name(cfg.cluster_id)
    try:
        value = aws.ssm.get_parameter(name=name, with_decryption=True).value
    except Exception as err:  # noqa: BLE001 - not published yet, or not readable by this user
        return None, (f"no kubeconfig: not set, and {name} could not be read ({' '.join(str(err).split())[:200]}); "
                      "things that need the cluster wait for the next `pulumi up`",)
    if not value or value == KUBECONFIG_PENDING:
        return None, (f"no kubeconfig yet: the first server has not published {name}; `pulumi up` again once it runs",)
    problem = published_kubeconfig_problem(value, f"https://{endpoint_name(cfg.cluster_id)}:{KUBE_API_PORT}")
    if problem:
        raise ConfigError([f"rke-aws:kubeconfig: not set, and the kubeconfig published in {name} is refused: "
                           f"{problem}. Someone with write access to it (a server's role) changed it; check the "
                           "servers, then set kubeconfig explicitly or delete the parameter's value"])
    return value, (f"using the admin kubeconfig the first server published ({name}); set kubeconfig to override it",)


def in_cluster_problems(cfg: StackConfig, previous: Optional[Previous], available: bool) -> list[str]:
    """Pulumi deletes what a program stops declaring: an update that would leave out what the last
    one installed in the cluster (installedInCluster) is refused unless allowUninstall says so."""
    if previous is None or not previous.has_cluster_releases or cfg.allow_uninstall:
        return []
    what = ", ".join(previous.installed_in_cluster) or "the CCM"
    if cfg.ccm.install == "manifest":
        return [f"rke-aws:ccm.install: manifest on a cluster where the last update installed {what} as Helm "
                "releases: Pulumi would uninstall them while the servers' helm-controller installs the same charts. "
                "To hand them over, remove them from this stack's state without uninstalling (`pulumi state delete "
                "--target-dependents <URN>` for the rke-aws:ccm:CloudControllerManager, rke-aws:upgrades:SystemUpgrades "
                "and rke-aws:addons:EbsCsiDriver components; `pulumi stack --show-urns`), then run this update once "
                "with allowUninstall: true"]
    if available:
        return []
    how = ("let these credentials read the published kubeconfig (ssm:GetParameter on "
           f"/rke-aws/{cfg.cluster_id}/admin-kubeconfig and kms:Decrypt on its key) or set it"
           if cfg.distribution == "rke2" and previous.has_kubeconfig_parameter else "set it")
    return [f"rke-aws:kubeconfig: the last update installed {what} in the cluster through a kubeconfig, but none "
            f"is available now; without one this update would uninstall them from the running cluster. "
            f"{how[0].upper() + how[1:]} (`pulumi config set --secret kubeconfig < kubeconfig.yaml`); if the "
            "cluster is gone, `pulumi state delete` what was in it and set allowUninstall: true for one update"]


def in_cluster_warnings(cfg: StackConfig, previous: Optional[Previous]) -> tuple[str, ...]:
    if previous is None or not previous.manifest_mode or cfg.ccm.install != "helm" or cfg.distribution != "rke2":
        return ()
    return ("rke-aws:ccm.install: helm on a cluster whose servers' helm-controller installed the charts from "
            "manifests: removing the manifests does not remove those HelmCharts, and Helm refuses to install a "
            "release name still in use. Delete them first (`kubectl -n kube-system delete helmchart "
            "aws-cloud-controller-manager aws-ebs-csi-driver`: the CCM is down until this update installs it), "
            "or keep ccm.install: manifest",)


def upgrade_problems(cfg: StackConfig, previous: Optional[Previous], nodes: list[NodePlan],
                     kubeconfig_published: bool = False) -> list[str]:
    """A version change must have a way to the running nodes, and come alone: a node added in the
    same update would boot the new version before the servers run it (a kubelet must not be newer
    than its kube-apiserver)."""
    if previous is None or previous.kubernetes_version in (None, cfg.kubernetes_version):
        return []
    problems = []
    running = {n.key for n in previous.nodes}
    added = [n.name for n in nodes if (n.pool.name, n.index) not in running]
    if added:
        problems.append(f"rke-aws:kubernetesVersion: changed from {previous.kubernetes_version} together with new nodes "
                        f"({', '.join(added)}), which would boot {cfg.kubernetes_version} before the servers are "
                        "upgraded; change the version in an update of its own, wait until every node runs it, then add nodes")
    if cfg.distribution == "rke2" and cfg.ccm.install == "helm" and cfg.kubeconfig is None and not kubeconfig_published:
        problems.append(f"rke-aws:kubernetesVersion: changed from {previous.kubernetes_version}, but the upgrade Plans "
                        "reach the cluster through its kubeconfig, which is neither set nor published by the first "
                        "server (or not readable with your credentials); set it (`pulumi config set --secret "
                        "kubeconfig < kubeconfig.yaml`) or use ccm.install: manifest")
    return problems


def ccm_image(cfg: StackConfig, previous: Optional[Previous]) -> tuple[str, tuple[str, ...]]:
    """The CCM image for this update: the cluster's minor, except while a minor upgrade is rolling
    out: the CCM may be one minor older than kube-apiserver, never newer, so it stays on the running
    minor until the next `pulumi up` after the upgrade."""
    if cfg.ccm.image:
        return cfg.ccm.image, ()
    minor = cfg.kubernetes_minor
    old = parse_version(previous.kubernetes_version or "") if previous else None
    if old and old[0] == minor - 1 and old[0] in versions.CCM_IMAGE_TAGS:
        held = cfg.ccm.image_for(old[0])
        return held, (f"Kubernetes 1.{old[0]} -> 1.{minor}: the CCM stays on {held} while the nodes upgrade; once "
                      f"`kubectl get nodes` shows every server on {cfg.kubernetes_version}, `pulumi up` again moves it "
                      f"to {cfg.ccm.image_for(minor)}",)
    return cfg.ccm.image_for(minor), ()


def _default_image(cfg: StackConfig) -> Any:
    """Latest Canonical Ubuntu 24.04 LTS (amd64), or None when every pool with nodes names its own
    image; nodes ignore later AMI changes (see nodes.py)."""
    if not any(p.ami is None and p.count for p in cfg.node_pools):
        return None
    pools = ", ".join(f"nodePools[{i}]" for i, p in enumerate(cfg.node_pools) if p.ami is None and p.count)
    owner = cfg.partition.ubuntu_owner  # Canonical publishes from another account per partition
    return _looked_up(
        "rke-aws:nodePools[].ami", f"looking up the default image ({versions.UBUNTU_AMI_NAME} by owner "
        f"{owner}) in {cfg.region}",
        f"set `ami` on {pools} to an image that exists in {cfg.region}",
        lambda: aws.ec2.get_ami(
            most_recent=True,
            owners=[owner],
            filters=[
                {"name": "name", "values": [versions.UBUNTU_AMI_NAME]},
                {"name": "state", "values": ["available"]},
            ],
        ),
    )


def _collect(problems: list[str], key: str, what: str, fix: str, call: Callable[[], T]) -> Optional[T]:
    """A look-up whose failure is one more problem (all of them are reported together), not the end."""
    try:
        return _looked_up(key, what, fix, call)
    except ConfigError as err:
        problems += err.problems
        return None


def cluster_network_problems(cfg: StackConfig, subnets: Sequence[SubnetPlan]) -> list[str]:
    """Bring-your-own subnets (looked up) must stay clear of the cluster's pod and service networks,
    as network.vpcCidr and the subnet CIDRs this program creates must (config.py)."""
    import ipaddress

    from .config_model import CLUSTER_NETWORKS

    problems = []
    for plan in subnets:
        net = ipaddress.ip_network(plan.cidr)
        for cluster_net in map(ipaddress.ip_network, CLUSTER_NETWORKS):
            if net.overlaps(cluster_net):
                problems.append(f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]: the subnet's {plan.cidr} overlaps "
                                f"{cluster_net}, the cluster's pod or service network (RKE2 and RKE1 default): its nodes "
                                f"would send traffic for those addresses into the cluster; use subnets outside "
                                f"{' and '.join(CLUSTER_NETWORKS)}")
    return problems


def key_pair_problems(cfg: StackConfig) -> list[str]:
    """access.sshKeyName must name a key pair of this region and account: EC2 refuses RunInstances
    for every node otherwise (InvalidKeyPair.NotFound), after the network and roles exist."""
    name = cfg.access.ssh_key_name
    if not name:
        return []
    problems: list[str] = []
    _collect(problems, "rke-aws:access.sshKeyName", f"looking up the key pair '{name}' in {cfg.region}",
             f"create or import it in {cfg.region} (aws ec2 import-key-pair --key-name ...), or fix the name",
             lambda: aws.ec2.get_key_pair(key_name=name))
    return problems


# RKE2's documented minimum for a server (docs.rke2.io install/requirements, "Hardware": "RAM: 4GB
# Minimum (we recommend at least 8GB), CPU: 2 Minimum"), and its VM sizing guide: how many agents a
# server of that size carries.
RKE2_SERVER_MIN_VCPUS, RKE2_SERVER_MIN_MIB = 2, 4096
RKE2_SIZING_GUIDE = ((2, 4096, 225), (4, 8192, 450), (8, 16384, 1300))


def machine_problems(cfg: StackConfig, nodes: Sequence[NodePlan], previous: Optional[Previous],
                     default_image: Any) -> tuple[list[str], tuple[str, ...]]:
    """Every pool's instance type and image, checked with look-ups before RunInstances would refuse
    them: the type exists in the region, is offered in the zones the pool's new nodes go to, runs
    the image's architecture and virtualization. One look-up per distinct type and image, one for
    all offerings, whatever the node count. RKE2 servers below RKE2's minimum are warned about, not
    refused: the documented figures are minimum recommendations, and a running cluster's servers
    keep their type, so a refusal would stop every later update of a small test cluster."""
    problems: list[str] = []
    warnings: list[str] = []
    pools = [(i, pool) for i, pool in enumerate(cfg.node_pools) if pool.count]
    first_use: dict[str, int] = {}
    for i, pool in pools:
        first_use.setdefault(pool.instance_type, i)
    types: dict[str, Any] = {}
    for itype, i in first_use.items():
        types[itype] = _collect(
            problems, f"rke-aws:nodePools[{i}].instanceType", f"looking up instance type '{itype}' in {cfg.region}",
            f"use an instance type EC2 offers in {cfg.region} (aws ec2 describe-instance-types)",
            lambda itype=itype: aws.ec2.get_instance_type(instance_type=itype))
    images: dict[str, Any] = {}
    for i, pool in pools:
        if pool.ami and pool.ami not in images:
            images[pool.ami] = _collect(
                problems, f"rke-aws:nodePools[{i}].ami", f"looking up image '{pool.ami}' in {cfg.region}",
                f"use an image that exists in {cfg.region} and this account may launch",
                lambda ami=pool.ami: aws.ec2.get_ami(filters=[{"name": "image-id", "values": [ami]}],
                                                     include_deprecated=True))
    running = {n.key for n in previous.nodes} if previous else set()
    new_zones: dict[str, set[str]] = {}
    for n in nodes:
        if (n.pool.name, n.index) not in running:
            new_zones.setdefault(n.pool.name, set()).add(n.az)
    offered: Optional[set[tuple[str, str]]] = None
    wanted_types = sorted(t for t in types if types[t] is not None)
    zones = sorted(set().union(*new_zones.values())) if new_zones else []
    if wanted_types and zones:
        found = _collect(problems, "rke-aws:nodePools[].instanceType",
                         f"looking up where {', '.join(wanted_types)} are offered in {cfg.region}",
                         "check your AWS credentials (ec2:DescribeInstanceTypeOfferings)",
                         lambda: aws.ec2.get_instance_type_offerings(
                             location_type="availability-zone",
                             filters=[{"name": "instance-type", "values": wanted_types},
                                      {"name": "location", "values": zones}]))
        if found is not None:
            offered = set(zip(found.instance_types, found.locations))
    for i, pool in pools:
        info = types.get(pool.instance_type)
        if info is None:
            continue
        key = f"rke-aws:nodePools[{i}].instanceType"
        missing = sorted(z for z in new_zones.get(pool.name, ()) if offered is not None
                         and (pool.instance_type, z) not in offered)
        if missing:
            problems.append(f"{key}: '{pool.instance_type}' is not offered in {', '.join(missing)}, where the pool's "
                            "new nodes go; use a type offered there, or other zones (aws ec2 "
                            "describe-instance-type-offerings --location-type availability-zone --filters "
                            f"Name=instance-type,Values={pool.instance_type})")
        image = images.get(pool.ami) if pool.ami else default_image
        if image is None:
            continue
        which = f"image {pool.ami}" if pool.ami else f"default image {image.id} (Ubuntu 24.04 amd64)"
        archs = list(info.supported_architectures or [])
        if image.architecture not in archs:
            problems.append(f"{key}: '{pool.instance_type}' runs {' or '.join(archs)}, but the pool's {which} is "
                            f"{image.architecture}; use an instance type for {image.architecture}, or set "
                            f"nodePools[{i}].ami to an image for {' or '.join(archs)}")
        virt = list(info.supported_virtualization_types or [])
        if image.virtualization_type not in virt:
            problems.append(f"{key}: '{pool.instance_type}' supports {' or '.join(virt)} virtualization, but the "
                            f"pool's {which} is {image.virtualization_type}; use another type or image")
        if cfg.distribution == "rke2" and pool.is_server:
            vcpus, mib = info.default_vcpus, info.memory_size
            if vcpus < RKE2_SERVER_MIN_VCPUS or mib < RKE2_SERVER_MIN_MIB:
                warnings.append(f"{key}: '{pool.instance_type}' has {vcpus} vCPU and {mib / 1024:g} GiB; RKE2 servers "
                                f"need at least {RKE2_SERVER_MIN_VCPUS} vCPU and {RKE2_SERVER_MIN_MIB // 1024} GiB "
                                "(docs.rke2.io install/requirements): etcd and the API server may not keep up")
            else:
                agents = sum(p.count for p in cfg.node_pools if not p.is_server)
                carried = max((n for v, m, n in RKE2_SIZING_GUIDE if vcpus >= v and mib >= m), default=0)
                if carried and agents > carried and carried != RKE2_SIZING_GUIDE[-1][2]:
                    warnings.append(f"{key}: {agents} agents; RKE2's sizing guide gives servers of "
                                    f"'{pool.instance_type}' ({vcpus} vCPU, {mib / 1024:g} GiB) up to {carried} "
                                    "(docs.rke2.io install/requirements, VM sizing guide): use larger servers")
    return problems, tuple(warnings)


# SSM parameters: 4 KB in the Standard tier, 8 KB in the Advanced tier (manifests.tier_for picks it).
ADVANCED_TIER_MAX = 8192


def manifest_size_problems(cfg: StackConfig, ccm_image: str) -> list[str]:
    """Manifest mode: the CCM's HelmChart manifest becomes one SSM parameter, 4 KB in the Standard
    tier and 8 KB in the Advanced tier (AWS Systems Manager quotas, "Parameter value size"); a larger
    one fails at apply, after the network and roles exist. Rendered here exactly as __main__.py
    renders it."""
    if cfg.ccm.install != "manifest":
        return []
    from . import ccm_values, charts

    values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args,
                                    ccm_image)
    text = charts.ccm(cfg.ccm.chart_version).manifest(values.merged_for_manifest(), bootstrap=True)
    size = len(text.encode())
    if size <= ADVANCED_TIER_MAX:
        return []
    extra = sum(len(a.encode()) + 8 for a in cfg.ccm.extra_args)
    return [f"rke-aws:ccm.extraArgs: the CCM manifest (ccm.install manifest) is {size:,} bytes, of which about "
            f"{extra:,} are ccm.extraArgs and {len(ccm_image)} ccm.image; an SSM parameter holds at most "
            f"{ADVANCED_TIER_MAX:,} bytes (Advanced tier): use fewer or shorter extraArgs, or ccm.install helm"]


