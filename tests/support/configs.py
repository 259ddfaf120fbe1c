"""Flat stack configs as the Pulumi CLI hands them: parse them as the program does (`parse_config`,
`config_problems`), set keys, and the builders and tables of planted mistakes tests share."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import stackfile, versions
from rke_aws.settings.rules import tags as tags_rules
from rke_aws_offline.engine.stacks import PROJECT  # not the harness: it loads the Pulumi runtime
from tests.support.stackconfig import parse_flat


def parse_config(cfg: dict[str, str], stack: str = "test", **kw):
    """parse_flat as the program calls it: the keys the CLI decrypted are secret (a `secure:`
    kubeconfig is refused as plain text otherwise)."""
    kw.setdefault("secret_keys", stackfile.secret_keys_of(cfg))
    return parse_flat(cfg, project=PROJECT, stack=stack, region=cfg.get("aws:region"), **kw)


def config_problems(cfg: dict[str, str], stack: str = "test", **kw) -> list[str]:
    """The problems parse_flat reports for `cfg` (it must refuse it)."""

    with pytest.raises(ConfigError) as info:
        parse_config(cfg, stack, **kw)
    return info.value.problems


# Scenario tests build on configs the tests own, never on stacks/<name> (a user's stacks/ may hold anything, and
# tests/tooling/test_user_stacks.py runs the suite against such a folder): tests/stacks (fixture stacks, planned
# and snapshotted) or tests/data/scenarios (copies of the sample environments as they were shipped; not planned).
SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"


def scenario_config(stack: str) -> dict[str, str]:
    """The flat config of a scenario `stack`: tests/data/scenarios/Pulumi.<stack>.yaml, or a fixture stack of
    tests/stacks. A name only stacks/ holds is refused (use one of those, or add a copy to tests/data/scenarios)."""
    from rke_aws_offline.engine import harness

    path = SCENARIOS / f"Pulumi.{stack}.yaml"
    if path.exists():
        flat, _ = stackfile.load_stack_text(path.read_text(), path.name, project=PROJECT)
        return flat
    if (harness.FIXTURE_STACKS_DIR / f"Pulumi.{stack}.yaml").exists():
        return harness.stack_config(stack)
    raise ValueError(f"{stack}: not a scenario (tests/data/scenarios) or fixture (tests/stacks) stack; "
                     "scenario tests do not read stacks/")


def with_pools(stack: str, mutate) -> dict[str, str]:
    """Scenario `stack`'s flat config (scenario_config) with `mutate(pools)` applied to its node pools."""
    cfg = scenario_config(stack)
    pools = json.loads(cfg["rke-aws:nodePools"])
    mutate(pools)
    cfg["rke-aws:nodePools"] = json.dumps(pools)
    return cfg


def set_key(config: dict[str, str], key: str, value) -> dict[str, str]:
    """Set `rke-aws:<key>` in a flat config map, JSON-encoding structured values as Pulumi does."""
    config[f"rke-aws:{key}" if ":" not in key else key] = value if isinstance(value, str) else json.dumps(value)
    return config


ROLE_HINT = "use controlplane, etcd or worker"


NO_CP = "rke-aws:nodePools: no node has the controlplane role; add a pool with controlplane and count >= 1"


NO_ETCD = "rke-aws:nodePools: no node has the etcd role; add a pool with etcd and count >= 1"


NO_WORKER = "rke-aws:nodePools: no node can run workloads; add a pool with the worker role and count >= 1"


BYO_KEYS = "vpcId, publicSubnetIds, privateSubnetIds"


TOP_KEYS = ("distribution, clusterId, network, access, nodePools, kubernetesVersion, ccm, controlPlane, etcdBackup, addons, proxy, "
            "rancher, ingress, rotation, hardening, kubeconfig, tags, allowUninstall, protectServers, confirmClusterState, fips, identity, registry, airgap")


NAT_NONE = (
    "rke-aws:nodePools[{i}].subnet: 'private' needs a way out for the bootstrap downloads, but "
    "network.natGateways is none; use single or perAz, or subnet public"
)


CLUSTER_ID_RULE = "use 1-43 chars of a-z, 0-9 and -, starting with a letter, not sg-"


OLD_CCM_IMAGE = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.9"


RESERVED_TAG = tags_rules.RESERVED_TAG


TAG_CHARS = ("has characters AWS does not take in tag values of every service (IAM, SSM); use ASCII letters, digits, "
             "space and _ . : / = + - @")


BUCKET_RULE = ("an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens, by S3's general purpose bucket "
               "naming rules)")


FOLDER_RULE = "a key prefix like prod/etcd (no leading, trailing or double /, no . or .. segment)"


KMS_RULE = ("a KMS key ARN (not an alias) in its region's partition, like "
            "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")


KEY_ID = "1234abcd-12ab-34cd-56ef-1234567890ab"


FLAG_RULE = ("write each flag as one --name=value entry (ASCII, no spaces or invisible characters: each entry is one "
             "argument)")


RKE2_FORM = f"write it like {versions.RKE2_VERSION} (v1.X.Y+rke2rN, digits 0-9 without leading zeros)"


VPC_ID = "vpc-0123456789abcdef0"


PUBLIC_IDS = ["subnet-0a0a0a0a0a0a0a0a1", "subnet-0a0a0a0a0a0a0a0a2"]


PRIVATE_IDS = ["subnet-0b0b0b0b0b0b0b0b1", "subnet-0b0b0b0b0b0b0b0b2"]


Mutation = Callable[[dict], None]


def _get(cfg: dict, key: str):
    return json.loads(cfg[f"rke-aws:{key}"])


def put(key: str, value) -> Mutation:
    return lambda cfg: set_key(cfg, key, value)


def drop(key: str) -> Mutation:
    return lambda cfg: cfg.pop(key if ":" in key else f"rke-aws:{key}")


def net(**changes) -> Mutation:
    """Update keys of `network` (value None removes the key)."""
    def apply(cfg: dict) -> None:
        n = _get(cfg, "network")
        for k, v in changes.items():
            if v is None:
                n.pop(k, None)
            else:
                n[k] = v
        set_key(cfg, "network", n)
    return apply


def pool(i: int, **changes) -> Mutation:
    """Update keys of nodePools[i] (value None removes the key)."""
    def apply(cfg: dict) -> None:
        pools = _get(cfg, "nodePools")
        for k, v in changes.items():
            if v is None:
                pools[i].pop(k, None)
            else:
                pools[i][k] = v
        set_key(cfg, "nodePools", pools)
    return apply


def extra_pool(**fields) -> Mutation:
    """Append nodePools[2], a worker pool, with `fields`: a bad field there cannot hide a role."""
    def apply(cfg: dict) -> None:
        pools = _get(cfg, "nodePools")
        pools.append({"name": "extra", "roles": ["worker"], "count": 1, **fields})
        set_key(cfg, "nodePools", pools)
    return apply


def byo(**network) -> Mutation:
    return put("network", network)


def rke() -> Mutation:
    """Switch to RKE1 (the base installs the CCM as an RKE2 manifest, which RKE1 cannot)."""
    def apply(cfg: dict) -> None:
        set_key(cfg, "distribution", "rke")
        set_key(cfg, "ccm", {})
    return apply


def both(*mutations: Mutation) -> Mutation:
    def apply(cfg: dict) -> None:
        for m in mutations:
            m(cfg)
    return apply


def row(id: str, mutation: Mutation, *expected: str, stack: str = "test", marks=()):
    return pytest.param(mutation, set(expected), stack, id=id, marks=marks)


INVALID = [
    # --- types -------------------------------------------------------------------------------
    row("count-string", extra_pool(count="two"),
        'rke-aws:nodePools[extra].count: "two" is not a whole number; use an integer from 0 to 500'),
    row("count-bool", extra_pool(count=True),
        "rke-aws:nodePools[extra].count: true is not a whole number; use an integer from 0 to 500"),
    row("protectServers-garbage", put("protectServers", "maybe"),
        'rke-aws:protectServers: "maybe" is not a boolean; use true or false'),
    row("ssm-garbage", put("access", {"ssm": "yes"}),
        'rke-aws:access.ssm: "yes" is not a boolean; use true or false'),
    row("nodePools-object", put("nodePools", {"name": "x"}),
        'rke-aws:nodePools: {"name": "x"} is not a non-empty list of pools; each pool is {name, roles, count, ...}'),
    row("adminCidrs-object", put("access", {"adminCidrs": {"office": "203.0.113.0/24"}}),
        'rke-aws:access.adminCidrs: {"office": "203.0.113.0/24"} is not a list of strings; '
        "expected a list of IPv4 CIDRs like 203.0.113.0/24"),
    row("network-list", put("network", ["10.0.0.0/16"]),
        'rke-aws:network: ["10.0.0.0/16"] is not an object; expected a map of network settings'),
    # --- ranges ------------------------------------------------------------------------------
    row("count-negative", extra_pool(count=-1),
        "rke-aws:nodePools[extra].count: -1 is out of range; use an integer from 0 to 500"),
    row("count-fraction", extra_pool(count=1.5),
        "rke-aws:nodePools[extra].count: 1.5 is not a whole number; use an integer from 0 to 500"),
    row("count-too-many", extra_pool(count=501),
        "rke-aws:nodePools[extra].count: 501 is out of range; use an integer from 0 to 500"),
    row("rootVolumeGb-too-small", extra_pool(rootVolumeGb=4),
        "rke-aws:nodePools[extra].rootVolumeGb: 4 is out of range; use an integer from 8 to 16384"),
    row("az-count-0", net(availabilityZones=0),
        "rke-aws:network.availabilityZones: 0 is out of range; use an integer from 1 to 6"),
    row("az-count-7", net(availabilityZones=7),
        "rke-aws:network.availabilityZones: 7 is out of range; use an integer from 1 to 6"),
    row("az-list-malformed", net(availabilityZones=["us-east-1a", "useast1b"]),
        "rke-aws:network.availabilityZones: 'useast1b' is not an availability zone name; write it like us-west-2a"),
    row("ipBlock-out-of-range", extra_pool(ipBlock=8),
        "rke-aws:nodePools[extra].ipBlock: 8 is out of range; use an integer from 0 to 7"),
    # --- CIDRs -------------------------------------------------------------------------------
    row("vpcCidr-unparseable", net(vpcCidr="10.0.0.0/33"),
        "rke-aws:network.vpcCidr: '10.0.0.0/33' is not an IPv4 CIDR ('33' is not a valid netmask); write it like 10.0.0.0/16"),
    row("vpcCidr-host-bits", net(vpcCidr="10.30.0.1/16"),
        "rke-aws:network.vpcCidr: '10.30.0.1/16' is not a network address (host bits set); the network is 10.30.0.0/16: "
        "write that, or the CIDR you meant"),
    row("vpcCidr-public", net(vpcCidr="8.8.0.0/16"),
        "rke-aws:network.vpcCidr: '8.8.0.0/16' is not a private (RFC 1918) range; "
        "use a block inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"),
    row("vpcCidr-prefix-8", net(vpcCidr="10.0.0.0/8"),
        "rke-aws:network.vpcCidr: '10.0.0.0/8' has prefix /8; use /16 to /24"),
    row("vpcCidr-prefix-28", net(vpcCidr="10.0.0.0/28"),
        "rke-aws:network.vpcCidr: '10.0.0.0/28' has prefix /28; use /16 to /24"),
    row("subnet-outside-vpc", net(publicSubnetCidrs=["10.30.128.0/20", "10.30.144.0/20"], privateSubnetCidrs=["10.30.0.0/20", "10.31.0.0/20"]),
        "rke-aws:network.privateSubnetCidrs[1]: '10.31.0.0/20' is outside the VPC 10.30.0.0/16; use a block inside it"),
    row("subnets-overlap", net(publicSubnetCidrs=["10.30.128.0/20", "10.30.144.0/20"],
                               privateSubnetCidrs=["10.30.0.0/20", "10.30.136.0/21"]),
        "rke-aws:network.privateSubnetCidrs[1]: '10.30.136.0/21' overlaps network.publicSubnetCidrs[0] "
        "(10.30.128.0/20); subnets must not overlap"),
    row("subnet-cidr-count", net(publicSubnetCidrs=["10.30.128.0/20", "10.30.144.0/20"], privateSubnetCidrs=["10.30.0.0/20"]),
        "rke-aws:network.privateSubnetCidrs: 1 CIDR(s) for 2 availability zone(s); give one per zone, in zone order"),
    row("subnet-smaller-than-28", net(publicSubnetCidrs=["10.30.128.0/20", "10.30.144.0/20"], privateSubnetCidrs=["10.30.0.0/29", "10.30.16.0/20"]),
        "rke-aws:network.privateSubnetCidrs[0]: '10.30.0.0/29' has prefix /29; AWS subnets are /16 to /28"),
    row("natGateways-unknown", net(natGateways="perAZ"),
        'rke-aws:network.natGateways: "perAZ" is not a NAT layout; did you mean perAz? use none, single, perAz'),
    # --- roles -------------------------------------------------------------------------------
    row("role-master", pool(1, roles=["master"]),
        f"rke-aws:nodePools[agents].roles: 'master' is not a role; {ROLE_HINT}"),
    row("role-master-beside-worker", pool(1, roles=["worker", "master"]),
        f"rke-aws:nodePools[agents].roles: 'master' is not a role; {ROLE_HINT}"),
    row("role-duplicate", pool(1, roles=["worker", "worker"]),
        "rke-aws:nodePools[agents].roles: 'worker' is listed twice; list each role once"),
    row("no-controlplane", both(rke(), pool(0, roles=["etcd"])), NO_CP),
    row("no-etcd", both(rke(), pool(0, roles=["controlplane"])), NO_ETCD),
    row("no-worker-capable-pool", pool(1, count=0), NO_WORKER),
    row("no-worker-role-at-all", pool(1, roles=["controlplane", "etcd"]), NO_WORKER),
    # --- distribution rules ------------------------------------------------------------------
    # Split roles are allowed (rke2-docs install/server_roles.md) but not behind one DNS name for every port.
    row("rke2-split-roles-with-dns-endpoint", pool(1, roles=["controlplane", "worker"]),
        "rke-aws:controlPlane.endpoint: 'dns' cannot serve split RKE2 server roles (pools agents): one DNS name "
        "answers every port with the same addresses, but the API (6443) runs only on controlplane nodes and joining "
        "servers need etcd nodes' supervisors (9345); use nlb (a target group per port), or give every server pool "
        "both controlplane and etcd"),
    row("manifest-install-with-rke", put("distribution", "rke"),
        "rke-aws:ccm.install: 'manifest' needs RKE2's manifests directory; with rke use helm"),
    row("distribution-unknown", put("distribution", "k3s"),
        'rke-aws:distribution: "k3s" is not a distribution; use rke or rke2'),
    row("distribution-missing", drop("distribution"), "rke-aws:distribution: missing; set rke or rke2"),
    # --- bring-your-own network --------------------------------------------------------------
    row("byo-mixed-with-cidr", net(vpcId=VPC_ID, publicSubnetIds=PUBLIC_IDS, privateSubnetIds=PRIVATE_IDS),
        f"rke-aws:network.vpcCidr: cannot be combined with bring-your-own network ({BYO_KEYS}); remove vpcCidr or the IDs",
        f"rke-aws:network.natGateways: cannot be combined with bring-your-own network ({BYO_KEYS}); remove natGateways or the IDs"),
    row("byo-missing-private-ids", byo(availabilityZones=2, vpcId=VPC_ID, publicSubnetIds=PUBLIC_IDS),
        f"rke-aws:network.privateSubnetIds: missing; bring-your-own network needs all of {BYO_KEYS}"),
    row("byo-malformed-subnet-id", byo(availabilityZones=2, vpcId=VPC_ID, publicSubnetIds=[PUBLIC_IDS[0], "subnet-xyz"],
                                       privateSubnetIds=PRIVATE_IDS),
        "rke-aws:network.publicSubnetIds: 'subnet-xyz' is not a subnet ID; write it like subnet-0123456789abcdef0"),
    row("byo-subnet-public-and-private", byo(availabilityZones=2, vpcId=VPC_ID, publicSubnetIds=PUBLIC_IDS,
                                             privateSubnetIds=[PUBLIC_IDS[1], PRIVATE_IDS[1]]),
        f"rke-aws:network.privateSubnetIds[0]: '{PUBLIC_IDS[1]}' is already listed as network.publicSubnetIds[1]; "
        "each subnet is either public or private, once"),
    row("only-public-subnet-cidrs", net(publicSubnetCidrs=["10.30.0.0/20", "10.30.16.0/20"]),
        "rke-aws:network.privateSubnetCidrs: missing; network.publicSubnetCidrs is set, and derived "
        "privateSubnetCidrs could overlap it: give both lists or neither"),
    row("zone-of-another-region", net(availabilityZones=["us-west-2a", "us-east-1b"]),
        "rke-aws:network.availabilityZones: 'us-west-2a' is not a zone of us-east-1; use zones like us-east-1a"),
    row("byo-id-count-vs-azs", byo(availabilityZones=3, vpcId=VPC_ID, publicSubnetIds=PUBLIC_IDS, privateSubnetIds=PRIVATE_IDS),
        "rke-aws:network.publicSubnetIds: 2 subnet(s) for 3 availability zone(s); give one per zone, in zone order",
        "rke-aws:network.privateSubnetIds: 2 subnet(s) for 3 availability zone(s); give one per zone, in zone order"),
    row("byo-public-private-count-mismatch", byo(vpcId=VPC_ID, publicSubnetIds=PUBLIC_IDS, privateSubnetIds=PRIVATE_IDS[:1]),
        "rke-aws:network.publicSubnetIds: 2 subnet(s) for 1 private subnet(s), one per zone; give one per zone, in zone order"),
    row("byo-malformed-vpc-id", byo(availabilityZones=2, vpcId="vpc-XYZ", publicSubnetIds=PUBLIC_IDS,
                                    privateSubnetIds=PRIVATE_IDS),
        "rke-aws:network.vpcId: 'vpc-XYZ' is not valid; expected a VPC ID like vpc-0123456789abcdef0"),
    # --- Kubernetes version and CCM ----------------------------------------------------------
    row("leader-migration-on-1.33", put("ccm", {"install": "manifest", "leaderMigration": True}),
        f"rke-aws:ccm.leaderMigration: true needs the in-tree aws provider, which Kubernetes {versions.RKE2_VERSION} "
        "(>= 1.27) no longer has; migrate on 1.26 or earlier, or set leaderMigration false"),
    row("leader-migration-on-1.27", both(put("kubernetesVersion", "v1.27.16+rke2r2"),
                                         put("ccm", {"install": "manifest", "leaderMigration": True, "image": OLD_CCM_IMAGE})),
        "rke-aws:ccm.leaderMigration: true needs the in-tree aws provider, which Kubernetes v1.27.16+rke2r2 "
        "(>= 1.27) no longer has; migrate on 1.26 or earlier, or set leaderMigration false"),
    row("kubernetesVersion-malformed", put("kubernetesVersion", "v1.33.5"),
        f'rke-aws:kubernetesVersion: "v1.33.5" is not an RKE2 release name; {RKE2_FORM}'),
    row("kubernetesVersion-rke-form-for-rke2", put("kubernetesVersion", "v1.32.5-rancher1-1"),
        f'rke-aws:kubernetesVersion: "v1.32.5-rancher1-1" is not an RKE2 release name; {RKE2_FORM}'),
    row("extraArgs-cloud-provider", put("ccm", {"install": "manifest", "extraArgs": ["--cloud-provider=aws"]}),
        "rke-aws:ccm.extraArgs[0]: '--cloud-provider=aws' is set by this program; remove it"),
    row("extraArgs-not-a-flag", put("ccm", {"install": "manifest", "extraArgs": ["v=4"]}),
        f"rke-aws:ccm.extraArgs[0]: 'v=4' is not a flag; {FLAG_RULE}"),
    row("extraArgs-flag-with-space", put("ccm", {"install": "manifest", "extraArgs": ["--cloud-provider aws"]}),
        f"rke-aws:ccm.extraArgs[0]: '--cloud-provider aws' is not a flag; {FLAG_RULE}"),
    row("kubernetesVersion-looks-like-number", put("kubernetesVersion", "1.30"),
        f'rke-aws:kubernetesVersion: "1.30" is not an RKE2 release name; {RKE2_FORM}'),
    row("ccm-install-unknown", put("ccm", {"install": "kubectl"}),
        'rke-aws:ccm.install: "kubectl" is not an install mode; use helm or manifest'),
    # --- unknown keys ------------------------------------------------------------------------
    row("unknown-top-level-typo",
        lambda cfg: cfg.__setitem__("rke-aws:nodepools", cfg.pop("rke-aws:nodePools")),
        f"rke-aws:nodepools: unknown key; did you mean nodePools? allowed keys are {TOP_KEYS}"),
    row("unknown-network-key", net(vpcCIDR="10.30.0.0/16"),
        "rke-aws:network.vpcCIDR: unknown key; did you mean vpcCidr? allowed keys are vpcCidr, availabilityZones, natGateways, "
        "publicSubnetCidrs, privateSubnetCidrs, vpcId, publicSubnetIds, privateSubnetIds"),
    row("unknown-access-key", put("access", {"sshKey": "dev"}),
        "rke-aws:access.sshKey: unknown key; did you mean sshKeyPath? allowed keys are adminCidrs, sshKeyName, sshUser, sshKeyPath, ssm, allowWorldAdmin"),
    row("unknown-pool-key", pool(0, instancetype="m6i.large"),
        "rke-aws:nodePools[server].instancetype: unknown key; did you mean instanceType? allowed keys are name, roles, count, instanceType, "
        "subnet, rootVolumeGb, ami, ipBlock, imdsHopLimit, imdsHopLimitReason, market, os"),
    row("unknown-ccm-key", put("ccm", {"install": "manifest", "version": "0.0.11"}),
        "rke-aws:ccm.version: unknown key; did you mean chartVersion? allowed keys are chartVersion, leaderMigration, extraArgs, install, image"),
    # --- clusterId ---------------------------------------------------------------------------
    row("clusterId-uppercase", put("clusterId", "Prod"),
        f'rke-aws:clusterId: "Prod" is not a cluster ID; {CLUSTER_ID_RULE}'),
    row("clusterId-too-long", put("clusterId", "c" * 64),
        f'rke-aws:clusterId: "{"c" * 64}" is not a cluster ID; {CLUSTER_ID_RULE}'),
    # IAM role names are "<clusterId>-controlplane-" + 7 characters, at most 64 (AWS refuses longer).
    row("clusterId-too-long-for-iam", put("clusterId", "c" * 44),
        f'rke-aws:clusterId: "{"c" * 44}" is not a cluster ID; {CLUSTER_ID_RULE}'),
    row("clusterId-trailing-newline", put("clusterId", "prod\n"),
        f'rke-aws:clusterId: "prod\\n" is not a cluster ID; {CLUSTER_ID_RULE}'),
    row("clusterId-leading-digit", put("clusterId", "1prod"),
        f'rke-aws:clusterId: "1prod" is not a cluster ID; {CLUSTER_ID_RULE}'),
    row("clusterId-default-from-bad-stack-name", lambda cfg: None,
        f'rke-aws:clusterId: "Prod_1" is not a cluster ID (defaulted from the stack name; set clusterId); {CLUSTER_ID_RULE}',
        stack="Prod_1"),
    # --- access, tags, pools, NAT, region ----------------------------------------------------
    row("adminCidr-malformed", put("access", {"adminCidrs": ["203.0.113.0/33"]}),
        "rke-aws:access.adminCidrs[0]: '203.0.113.0/33' is not an IPv4 CIDR ('33' is not a valid netmask); "
        "write it like 203.0.113.0/24"),
    row("tag-reserved-cluster-key", put("tags", {"kubernetes.io/cluster/x": "owned"}),
        f"rke-aws:tags.kubernetes.io/cluster/x: {RESERVED_TAG}"),
    row("tag-reserved-role-key", put("tags", {"kubernetes.io/role/elb": "1"}), f"rke-aws:tags.kubernetes.io/role/elb: {RESERVED_TAG}"),
    row("tag-empty-key", put("tags", {"": "x"}), "rke-aws:tags.: is empty; tag keys need 1 to 128 characters"),
    row("tag-bad-characters", put("tags", {"team": "a;b"}), f"rke-aws:tags.team: value 'a;b' {TAG_CHARS}"),
    row("tag-value-too-long", put("tags", {"team": "x" * 257}),
        f'rke-aws:tags.team: value "{"x" * 79}... (257 characters) is 257 characters long; AWS allows 128-character keys '
        "and 256-character values"),
    row("too-many-tags", put("tags", {f"t{i}": "v" for i in range(45)}),
        "rke-aws:tags: 45 tags; AWS allows 50 per resource and this program sets up to 6 itself (Name, "
        "kubernetes.io/cluster/<id>, rke-aws/pool, rke-aws/roles, rke-aws/imds-hop-limit-reason, kubernetes.io/role/*): "
        "use at most 44"),
    # --- hardened inputs -------------------------------------------------------------------------
    row("region-trailing-newline", put("aws:region", "us-east-1\n"),
        'aws:region: "us-east-1\\n" is not an AWS region; write it like us-west-2'),
    row("admin-cidr-world", put("access", {"adminCidrs": ["0.0.0.0/0"]}),
        "rke-aws:access.adminCidrs[0]: '0.0.0.0/0' opens SSH (22) and the Kubernetes API (6443) to the whole "
        "internet; list your networks, or set access.allowWorldAdmin true if that is really meant"),
    row("admin-cidr-duplicate", put("access", {"adminCidrs": ["10.0.0.0/8", "10.0.0.0/8"]}),
        "rke-aws:access.adminCidrs[1]: '10.0.0.0/8' is already listed as access.adminCidrs[0]; list each CIDR once"),
    row("admin-cidr-ipv6-world", put("access", {"adminCidrs": ["::/0"]}),
        "rke-aws:access.adminCidrs[0]: '::/0' is not an IPv4 CIDR (Expected 4 octets in '::'); write it like 203.0.113.0/24"),
    row("imds-hop-2-without-reason", pool(1, imdsHopLimit=2),
        "rke-aws:nodePools[agents].imdsHopLimitReason: missing; imdsHopLimit 2 lets every pod on the pool's nodes take "
        "the node role's credentials: state why in imdsHopLimitReason, or keep 1"),
    row("imds-hop-3", pool(1, imdsHopLimit=3), "rke-aws:nodePools[agents].imdsHopLimit: 3 is out of range; use an integer from 1 to 2"),
    row("imds-reason-without-hop-2", pool(1, imdsHopLimitReason="x"),
        "rke-aws:nodePools[agents].imdsHopLimitReason: is set but imdsHopLimit is not 2; remove it"),
    row("kubernetes-minor-without-ccm", put("kubernetesVersion", "v1.29.15+rke2r1"),
        "rke-aws:kubernetesVersion: v1.29.15+rke2r1: no aws-cloud-controller-manager release is known for Kubernetes "
        "1.29 (a CCM must not be newer than the cluster); use a minor with one (1.30, 1.31, 1.32, 1.33, 1.34, 1.35, "
        "1.36) or set ccm.image to a cloud-controller-manager image for 1.29"),
    row("ccm-image-without-tag", put("ccm", {"install": "manifest", "image": "registry.k8s.io/provider-aws/cloud-controller-manager"}),
        "rke-aws:ccm.image: 'registry.k8s.io/provider-aws/cloud-controller-manager' is not valid; expected an image "
        "reference pinned by a tag other than latest and/or an @sha256: digest, like "
        "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4"),
    row("endpoint-unknown", put("controlPlane", {"endpoint": "alb"}),
        'rke-aws:controlPlane.endpoint: "alb" is not an endpoint kind; did you mean nlb? use dns or nlb'),
    row("tag-value-not-string", put("tags", {"replicas": 3}),
        "rke-aws:tags.replicas: 3 is not a string; tag values are strings"),
    row("pool-name-duplicate", pool(1, name="server"),
        "rke-aws:nodePools[1].name: 'server' is already used by nodePools[0]; pool names are unique"),
    row("ipBlock-duplicate", both(pool(0, ipBlock=0), pool(1, ipBlock=0)),
        "rke-aws:nodePools[agents].ipBlock: 0 is already used by pool 'server'; give each pool its own ipBlock (0 to 7)"),
    row("private-pools-without-nat", net(natGateways="none"), NAT_NONE.format(i="server"), NAT_NONE.format(i="agents")),
    row("aws-region-missing", drop("aws:region"),
        "aws:region: missing; set it with `pulumi config set aws:region <region>`"),
    row("aws-region-malformed", put("aws:region", "useast1"),
        "aws:region: 'useast1' is not an AWS region; write it like us-west-2"),
    row("kubeconfig-blank", put("kubeconfig", "   "),
        "rke-aws:kubeconfig: is blank; set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml` or remove it"),
    # --- etcd snapshots, add-ons, hardening ------------------------------------------------------
    row("etcdBackup-list", put("etcdBackup", ["x"]),
        'rke-aws:etcdBackup: ["x"] is not an object; expected a map of etcdBackup settings'),
    row("etcdBackup-typo", put("etcdBackup", {"bukket": "x"}),
        "rke-aws:etcdBackup.bukket: unknown key; did you mean bucket? allowed keys are enabled, bucket, folder, intervalHours, retention, "
        "expireDays, kmsKeyArn"),
    row("etcdBackup-bucket-name", put("etcdBackup", {"bucket": "My_Bucket"}),
        "rke-aws:etcdBackup.bucket: 'My_Bucket' has characters other than lowercase letters, digits, dots and hyphens; "
        f"expected {BUCKET_RULE}"),
    row("etcdBackup-expiry-on-foreign-bucket", put("etcdBackup", {"bucket": "my-bucket", "expireDays": 7}),
        "rke-aws:etcdBackup.expireDays: applies to the bucket this program creates, but etcdBackup.bucket names "
        "'my-bucket'; set expiry on that bucket, or remove one of the keys"),
    row("etcdBackup-interval-zero", put("etcdBackup", {"intervalHours": 0}),
        "rke-aws:etcdBackup.intervalHours: 0 is not an interval that divides a day; use 1, 2, 3, 4, 6, 8, 12 or 24"),
    row("etcdBackup-folder-absolute", put("etcdBackup", {"folder": "/abs"}),
        f"rke-aws:etcdBackup.folder: '/abs' has an empty segment (a leading, trailing or double /); expected {FOLDER_RULE}"),
    row("etcdBackup-folder-trailing-slash", put("etcdBackup", {"folder": "prod/"}),
        f"rke-aws:etcdBackup.folder: 'prod/' has an empty segment (a leading, trailing or double /); expected {FOLDER_RULE}"),
    row("etcdBackup-kms-alias", put("etcdBackup", {"kmsKeyArn": "arn:aws:kms:us-east-1:123456789012:alias/etcd"}),
        f"rke-aws:etcdBackup.kmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:alias/etcd' is not valid; expected {KMS_RULE}"),
    row("etcdBackup-kms-other-region", put("etcdBackup", {"kmsKeyArn": f"arn:aws:kms:eu-west-1:123456789012:key/{KEY_ID}"}),
        f"rke-aws:etcdBackup.kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/{KEY_ID}' is a key in eu-west-1, but the "
        "cluster and its snapshot bucket are in us-east-1; use a key of us-east-1"),
    row("addons-ebsCsi-string", put("addons", {"ebsCsi": "yes"}),
        'rke-aws:addons.ebsCsi: "yes" is not a boolean; use true or false'),
    row("addons-typo", put("addons", {"efs": True}),
        "rke-aws:addons.efs: unknown key; allowed keys are ebsCsi, loadBalancerController"),
    row("hardening-unknown", put("hardening", "stig"),
        'rke-aws:hardening: "stig" is not a hardening profile; use none or cis'),
    # --- a pool rejected for one field must not make its roles look missing --------------------
    row("rootVolumeGb-on-only-server-pool", pool(0, rootVolumeGb=4),
        "rke-aws:nodePools[server].rootVolumeGb: 4 is out of range; use an integer from 8 to 16384"),
]


def _byo_config(base_config: dict) -> dict:
    return set_key(base_config, "network", {
        "availabilityZones": 2, "vpcId": VPC_ID, "publicSubnetIds": PUBLIC_IDS, "privateSubnetIds": PRIVATE_IDS,
    })


def _existing_subnets() -> dict[str, dict[str, str]]:
    zones = ("us-east-1a", "us-east-1b")
    subnets = {sid: {"cidr": f"10.50.{16 * i}.0/20", "az": zones[i], "vpc": VPC_ID, "public": True}
               for i, sid in enumerate(PUBLIC_IDS)}
    subnets.update({sid: {"cidr": f"10.50.{128 + 16 * i}.0/20", "az": zones[i], "vpc": VPC_ID}
                    for i, sid in enumerate(PRIVATE_IDS)})
    return subnets
