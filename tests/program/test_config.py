"""Configuration contract: every mistake is reported with its key, the bad value and what is allowed.

Each invalid row plants one mistake in the valid rke2-dev stack config and states the exact set of
problem lines reading the stack (settings/resolve.py from_flat) must report. Program-level tests check that a bad config stops the
program before anything is registered, and that warnings reach the Pulumi log.
"""

# split: this module mixes levels (issue 33 §7.2); the tests that run the program (a config reaching it) ->
# tests/program/test_config_reaches_program.py.

from __future__ import annotations

import pulumi
import pytest
from pydantic import SecretStr

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import (
    CLUSTER_ID_RULE,
    INVALID,
    OLD_CCM_IMAGE,
    PRIVATE_IDS,
    PUBLIC_IDS,
    RESERVED_TAG,
    ROLE_HINT,
    VPC_ID,
    _byo_config,
    _existing_subnets,
    drop,
    net,
    pool,
    put,
    set_key,
)
from tests.support.configs import config_problems as problems_of
from tests.support.configs import parse_config as parse
from tests.support.diagnostics import program_refusal

PROJECT = "rke-aws"


# --- mutation helpers: each returns a function that plants one change in a flat config ------------


def test_table_is_large_enough():
    assert len(INVALID) >= 35
    assert len({p.id for p in INVALID}) == len(INVALID)


def test_base_config_is_valid(base_config):
    """The rows below would prove nothing if the base config already failed."""
    cfg = parse(base_config)
    assert cfg.distribution == "rke2" and len(cfg.node_pools) == 2 and cfg.warnings == ()


# The rows the whole program evaluates (test_invalid_config_registers_nothing): at least one of each refusal
# family, (the step of the program that refuses, the concerns of its codes) as program_refusal finds it, and the rows
# whose value reaches the program by another way (aws:region, the stack's name, a key outside the model). Every other
# row is judged through the program's own two steps without the Pulumi runtime (program_refusal): a refusal of
# either step is raised before RkeCluster registers anything, which these runs show once per family.
END_TO_END = {
    ("read", ("access",)): ("admin-cidr-world",),
    ("read", ("backups",)): ("etcdBackup-kms-other-region",),
    ("read", ("ccm",)): ("manifest-install-with-rke",),
    ("read", ("config",)): ("unknown-top-level-typo", "aws-region-missing", "clusterId-default-from-bad-stack-name"),
    ("read", ("endpoint",)): ("rke2-split-roles-with-dns-endpoint",),
    ("read", ("network",)): ("vpcCidr-public",),
    ("read", ("pool",)): ("imds-hop-2-without-reason",),
    ("read", ("pools",)): ("no-controlplane",),
    ("read", ("secrets",)): ("kubeconfig-blank",),
    ("read", ("tags",)): ("tag-reserved-cluster-key",),
    ("read", ("versions",)): ("kubernetesVersion-malformed",),
    ("resolve", ("ccm",)): ("leader-migration-on-1.33",),
}
END_TO_END_ROWS = [p for p in INVALID if any(p.id in ids for ids in END_TO_END.values())]


@pytest.mark.parametrize("mutate, expected, stack", INVALID)
def test_invalid_config_reports_exactly(base_config, mutate, expected, stack, request):
    mutate(base_config)
    problems = problems_of(base_config, stack)
    assert set(problems) == expected
    assert len(problems) == len(set(problems)), f"a problem is reported twice: {problems}"
    # The program reads the stack in two steps of its own (program_refusal): they refuse with the same lines.
    step, err = program_refusal(base_config, stack)
    assert set(err.problems) == expected and str(err).startswith("invalid stack configuration"), err.problems
    family = (step, tuple(sorted({d.code.split(".")[0] for d in err.diagnostics})))
    assert family in END_TO_END, f"no row of the refusal family {family} runs through the program: add one to END_TO_END"
    row_id = request.node.callspec.id
    assert row_id not in {i for ids in END_TO_END.values() for i in ids} or row_id in END_TO_END[family], \
        f"{row_id} is listed in END_TO_END under another family than its own, {family}"


def test_every_end_to_end_row_is_in_the_table():
    listed = {i for ids in END_TO_END.values() for i in ids}
    assert listed == {p.id for p in END_TO_END_ROWS}, listed - {p.id for p in END_TO_END_ROWS}


@pytest.mark.parametrize("mutate, expected, stack", END_TO_END_ROWS)
def test_invalid_config_registers_nothing(base_config, mutate, expected, stack):
    """One row per refusal family (END_TO_END) through the whole program: one RunError listing every problem, no
    resource."""
    mutate(base_config)
    mocks = MotoMocks(base_config.get("aws:region") or "us-east-1")
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(base_config, stack=stack, mocks=mocks)
    message = str(info.value)
    assert message.startswith("invalid stack configuration"), message
    for line in expected:
        assert f"  - {line}" in message, f"missing from the program's error: {line}"
    assert mocks.resources == [], f"registered before failing: {[t for t, _, _ in mocks.resources]}"


def test_all_problems_reported_at_once(base_config):
    for m in (
        put("distribution", "k3s"),
        put("clusterId", "Prod"),
        net(vpcCidr="8.8.0.0/16"),
        pool(1, roles=["worker", "master"]),
        put("tags", {"aws:owner": "me"}),
        put("protectServers", "maybe"),
        drop("aws:region"),
    ):
        m(base_config)
    with pytest.raises(ConfigError) as info:
        parse(base_config)
    expected = {
        'rke-aws:distribution: "k3s" is not a distribution; use rke or rke2',
        f'rke-aws:clusterId: "Prod" is not a cluster ID; {CLUSTER_ID_RULE}',
        "rke-aws:network.vpcCidr: '8.8.0.0/16' is not a private (RFC 1918) range; "
        "use a block inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16",
        f"rke-aws:nodePools[agents].roles: 'master' is not a role; {ROLE_HINT}",
        f"rke-aws:tags.aws:owner: {RESERVED_TAG}",
        'rke-aws:protectServers: "maybe" is not a boolean; use true or false',
        "aws:region: missing; set it with `pulumi config set aws:region <region>`",
    }
    assert set(info.value.problems) == expected
    message = str(info.value)
    assert message.startswith(f"invalid stack configuration ({len(expected)} problem(s)):")
    for line in expected:
        assert f"  - {line}" in message


# --- program level: a bad config registers nothing ----------------------------------------------

def put_region(cfg: dict, region: str) -> dict:
    cfg["aws:region"] = region
    return cfg


PROGRAM_CASES = [
    # Refused by reading the stack: the END_TO_END rows of the table above (one per refusal family).
    # Found only while planning (plan/machine_checks.py, plan/nodes.py), after parse() succeeded.
    pytest.param(pool(1, count=300),
                 "rke-aws:nodePools[agents].count: 300 nodes need 150 addresses per private subnet, but a pool block "
                 "there holds 117; use fewer nodes per pool, more zones or larger subnets", id="capacity"),
    # us-west-2 has four zones (usw2-az1 to usw2-az4; moto's zone table lists us-west-2a to d).
    pytest.param(lambda c: net(availabilityZones=5)(put_region(c, "us-west-2")),
                 "rke-aws:network.availabilityZones: 5 zones asked for, but us-west-2 offers 4", id="too-many-zones"),
]


@pytest.mark.parametrize("mutate, line", PROGRAM_CASES)
def test_program_stops_before_registering_anything(base_config, mutate, line):
    mutate(base_config)
    mocks = MotoMocks(base_config.get("aws:region") or "us-east-1")
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(base_config, stack="test", mocks=mocks)
    assert line in str(info.value)
    assert str(info.value).startswith("invalid stack configuration")
    assert mocks.resources == []


# --- warnings ------------------------------------------------------------------------------------

def test_even_etcd_count_parses_with_quorum_warning(base_config):
    pool(0, count=2)(base_config)
    cfg = parse(base_config)
    assert len(cfg.warnings) == 1
    (warning,) = cfg.warnings
    # etcd tolerates (m - 1) // 2 failed members: 2 tolerate none, like 1.
    assert warning.startswith("rke-aws:nodePools: 2 etcd members tolerate 0 failure(s), like 1") and "odd" in warning


def test_odd_etcd_count_has_no_warning(base_config):
    pool(0, count=3)(base_config)
    assert parse(base_config).warnings == ()


def test_even_etcd_warning_reaches_pulumi_log(base_config):
    pool(0, count=2)(base_config)
    run = harness.run_program(base_config, stack="test")
    warnings = [msg for level, msg in run.logs if level == "warning"]
    assert any("2 etcd members tolerate 0 failure(s)" in m for m in warnings), run.logs
    assert run.resources, "a warning must not stop the program"


# --- valid edge cases ----------------------------------------------------------------------------

def test_explicit_availability_zones(base_config):
    net(availabilityZones=["us-east-1a", "us-east-1c"])(base_config)
    cfg = parse(base_config)
    assert cfg.network.availability_zones == ("us-east-1a", "us-east-1c")
    assert cfg.network.az_count == 2


def test_leader_migration_allowed_before_1_27(base_config):
    put("kubernetesVersion", "v1.26.15+rke2r1")(base_config)
    put("ccm", {"install": "manifest", "leaderMigration": True, "image": OLD_CCM_IMAGE})(base_config)
    cfg = parse(base_config)
    assert cfg.ccm.leader_migration is True and cfg.kubernetes_minor == 26


def test_bring_your_own_network_parses(base_config):
    cfg = parse(_byo_config(base_config))
    n = cfg.network
    assert n.bring_your_own and n.vpc_id == VPC_ID
    assert n.public_subnet_ids == tuple(PUBLIC_IDS) and n.private_subnet_ids == tuple(PRIVATE_IDS)
    assert n.vpc_cidr is None and n.public_subnet_cidrs is None and n.private_subnet_cidrs is None


def test_bring_your_own_network_program_tags_instead_of_creating(base_config):
    mocks = MotoMocks("us-east-1", existing_subnets=_existing_subnets())
    run = harness.run_program(_byo_config(base_config), stack="test", mocks=mocks)
    assert run.of_type("aws:ec2/vpc:Vpc") == []
    assert run.of_type("aws:ec2/subnet:Subnet") == []
    tagged = {r.inputs["resourceId"] for r in run.of_type("aws:ec2/tag:Tag")}
    assert tagged == {VPC_ID, *PUBLIC_IDS, *PRIVATE_IDS}
    assert run.outputs["vpcId"] == VPC_ID


def test_empty_kubeconfig_means_unset(base_config):
    put("kubeconfig", "")(base_config)
    assert parse(base_config).kubeconfig is None


def test_kubeconfig_set_is_a_secret(base_config):
    put("kubeconfig", stackfile.secret("apiVersion: v1\nkind: Config\n"))(base_config)
    kc = parse(base_config).kubeconfig
    assert isinstance(kc, SecretStr) and kc.get_secret_value() == "apiVersion: v1\nkind: Config\n"
    assert "apiVersion" not in repr(kc)


@pytest.mark.parametrize("explicit", [None, ""], ids=["absent", "empty"])
def test_cluster_id_defaults_to_stack_name(base_config, explicit):
    if explicit is not None:
        put("clusterId", explicit)(base_config)
    cfg = parse(base_config, stack="staging-2")
    assert cfg.cluster_id == "staging-2"
    assert cfg.cluster_tag_key == "kubernetes.io/cluster/staging-2"


def test_explicit_cluster_id_wins_over_stack_name(base_config):
    put("clusterId", "prod-eu")(base_config)
    assert parse(base_config, stack="Prod_1").cluster_id == "prod-eu"


def test_world_admin_cidr_with_consent_is_a_warning(base_config):
    put("access", {"adminCidrs": ["0.0.0.0/0"], "allowWorldAdmin": True})(base_config)
    cfg = parse(base_config)
    assert cfg.access.admin_cidrs == ("0.0.0.0/0",)
    assert any("whole internet" in w for w in cfg.warnings), cfg.warnings


def test_imds_hop_limit_two_with_a_reason(base_config):
    pool(1, imdsHopLimit=2, imdsHopLimitReason="legacy SDK without IRSA")(base_config)
    cfg = parse(base_config)
    assert cfg.node_pools[1].imds_hop_limit == 2
    assert cfg.node_pools[1].imds_hop_limit_reason == "legacy SDK without IRSA"
    assert any("imdsHopLimit: 2" in w and "credentials" in w for w in cfg.warnings), cfg.warnings
    run = harness.run_program(base_config, stack="hop")
    agents = [r for r in run.of_type("aws:ec2/instance:Instance") if r.inputs["tags"]["rke-aws/pool"] == "agents"]
    assert agents and all(r.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 2 and
                          r.inputs["tags"]["rke-aws/imds-hop-limit-reason"] == "legacy SDK without IRSA" for r in agents)


def test_explicit_ccm_image_allows_a_minor_without_a_known_release(base_config):
    put("kubernetesVersion", "v1.29.15+rke2r1")(base_config)
    put("ccm", {"install": "manifest", "image": OLD_CCM_IMAGE})(base_config)
    assert parse(base_config).ccm.image == OLD_CCM_IMAGE


def test_partition_follows_the_region(base_config):
    for region, name, owner in (("us-east-1", "aws", "099720109477"), ("us-gov-west-1", "aws-us-gov", "513442679011"),
                                ("cn-north-1", "aws-cn", "837727238323")):
        base_config["aws:region"] = region
        net(availabilityZones=2)(base_config)
        part = parse(base_config).partition
        assert (part.name, part.ubuntu_owner) == (name, owner), region
    assert part.ec2_principal == "ec2.amazonaws.com" and part.endpoint("ssm", region) == "ssm.cn-north-1.amazonaws.com.cn"


def test_bring_your_own_zones_come_from_the_subnets(base_config):
    """Two public and two private subnets without availabilityZones: two zones (not the default 3)."""
    set_key(base_config, "network", {"vpcId": VPC_ID, "publicSubnetIds": PUBLIC_IDS, "privateSubnetIds": PRIVATE_IDS})
    assert parse(base_config).network.az_count == 2


# --- bring-your-own network: what the look-ups find ------------------------------------------------

def _byo_run(base_config, change=None):
    mocks = MotoMocks("us-east-1", existing_subnets=_existing_subnets())
    if change:
        change(mocks)
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(_byo_config(base_config), stack="test", mocks=mocks)
    assert mocks.resources == [], "registered before failing"
    return str(info.value)


@pytest.mark.parametrize("change, expected", [
    (lambda m: m.existing[PRIVATE_IDS[1]].update(hostnameType="resource-name"),
     f"rke-aws:network.privateSubnetIds[1]: '{PRIVATE_IDS[1]}' launches instances with resource-name hostnames, so "
     "node names would not be ip-... private DNS names; set it to ip-name: aws ec2 modify-subnet-attribute "
     f"--subnet-id {PRIVATE_IDS[1]} --private-dns-hostname-type-on-launch ip-name"),
    (lambda m: m.existing[PRIVATE_IDS[0]].update(route="none"),
     f"rke-aws:network.privateSubnetIds[0]: '{PRIVATE_IDS[0]}' has no default route (NAT gateway, transit gateway or "
     "appliance); its nodes download RKE2/Docker at boot and call SSM: add 0.0.0.0/0 via a NAT gateway"),
    (lambda m: m.existing[PUBLIC_IDS[1]].update(route="nat"),
     f"rke-aws:network.publicSubnetIds[1]: '{PUBLIC_IDS[1]}' has no route to an internet gateway, so it is not public"),
    (lambda m: m.vpc_dns.update({VPC_ID: (True, False)}),
     f"rke-aws:network.vpcId: '{VPC_ID}' has enable-dns-hostnames off; node names are EC2 private DNS names and need "
     f"it: aws ec2 modify-vpc-attribute --vpc-id {VPC_ID} --enable-dns-hostnames"),
    (lambda m: m.existing[PRIVATE_IDS[1]].update(az="us-east-1a"),
     f"rke-aws:network.privateSubnetIds[1]: '{PRIVATE_IDS[1]}' is in us-east-1a like privateSubnetIds[0]; give one "
     "private subnet per zone"),
    (lambda m: m.taken_ips.add("10.50.132.10"),
     f"rke-aws:network.privateSubnetIds[0]: planned node addresses in '{PRIVATE_IDS[0]}' (10.50.132.10, "
     "10.50.132.138) are taken by eni-"),
], ids=["resource-name-hostnames", "private-without-route", "public-without-igw", "vpc-dns-off", "two-subnets-one-zone",
        "address-taken"])
def test_bring_your_own_network_is_checked_before_anything(base_config, change, expected):
    assert expected in _byo_run(base_config, change)


def test_own_subnets_use_ip_name_hostnames(stack_run):
    for subnet in stack_run.of_type("aws:ec2/subnet:Subnet"):
        assert subnet.inputs["privateDnsHostnameTypeOnLaunch"] == "ip-name", subnet.urn


def test_rke1_warns_of_its_end_of_life_and_refuses_the_rke2_cis_profile():
    rke = harness.stack_config("rke-dev")
    (eol,) = [w for w in parse(rke).warnings if "end of life" in w]
    assert eol.startswith("rke-aws:distribution: rke: RKE1 reached end of life on 2025-07-31") and "RKE2" in eol, eol
    assert not [w for w in parse(harness.stack_config("rke2-dev")).warnings if "end of life" in w]
    set_key(rke, "hardening", "cis")
    assert problems_of(rke) == [
        "rke-aws:hardening: 'cis' applies RKE2's CIS profile; RKE1 clusters are hardened through cluster.yml by hand"]
