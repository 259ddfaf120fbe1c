"""Hostile and malformed stack files (issue 22): every one is refused before any resource exists,
with one message per problem naming the key and what is allowed; none reaches a resource input,
user data, a policy or a flag.

Each class of the issue is a table. A row plants its values in the valid rke2-dev configuration and
lists the problems expected, as (key, fragment): a problem line `rke-aws:<key>: ...` containing the
fragment. Every problem reported must be expected (nothing else is refused), and the same row run
through the whole program (harness.run_program) ends in one RunError listing them, with nothing
registered. Plan-time rows (look-ups) run through the program only.
"""

# split: this module mixes levels (issue 33 §7.2); the rows judged by the settings alone -> tests/unit/settings.

from __future__ import annotations

import copy
import json

import pulumi
import pytest

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import fields as config_model
from rke_aws.settings import stackfile
from rke_aws.settings.rules import access as access_rules
from rke_aws.settings.sections import Access
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import EmulatedAwsError, MotoMocks
from tests.support.configs import both, extra_pool, net, pool, put, set_key
from tests.support.configs import parse_config as parse
from tests.support.diagnostics import program_refusal
from tests.support.hostile import (
    ALLOWED,
    BUCKETS,
    CCM,
    CCM_REPO,
    CIDRS,
    KMS_ROWS,
    NAMES,
    NAMESPACES,
    NULLS,
    PIECES,
    PROGRAM_ROWS,
    REASONS,
    SECRETS,
    TAG_ROWS,
    UNICODE,
    Expected,
    access,
    assert_problems,
    ccm,
    row,
    run_refused,
    tags,
)
from tests.support.runs import run_cached


def refused(cfg: dict, expected: tuple[Expected, ...], stack: str = "test") -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(cfg, stack)
    assert_problems(info.value.problems, expected)
    return info.value.problems


# --- CIDRs in forms AWS refuses or that collide with the cluster's own networks ----------------------


# --- the internet in pieces, and the security group rule quota ---------------------------------------

CONSENT = "set access.allowWorldAdmin true if that is really meant"

# --- names passed unchecked ----------------------------------------------------------------------------


# --- S3 names and the snapshot folder (S3 User Guide, "General purpose bucket naming rules") -------------

BUCKET = "expected an S3 bucket name"

# --- Unicode where AWS, a shell, a flag or a URL want ASCII ----------------------------------------------


# --- CCM settings ---------------------------------------------------------------------------------------


# --- KMS key ARNs ------------------------------------------------------------------------------------------


# --- blank reasons -------------------------------------------------------------------------------------------


# --- tags IAM, EC2, SSM, KMS, S3 or the CCM refuse -------------------------------------------------------------


# --- configuration keys in a namespace nothing reads -------------------------------------------------------


# --- null, empty and too-deep values ------------------------------------------------------------------------


# --- a secret used as plain text ----------------------------------------------------------------------------


# The rows the whole program evaluates (test_hostile_value_registers_nothing): one per class of the issue (a
# refusal family), two for secrets (an encrypted value used as text, a plain value that must be a secret: both
# depend on which keys the engine hands the program as secret). Every row is judged through the program's own
# steps without the Pulumi runtime (program_refusal); a refusal there is raised before anything is registered,
# which these runs show once per class.
FAMILIES = {"cidrs": CIDRS, "pieces": PIECES, "names": NAMES, "buckets": BUCKETS, "unicode": UNICODE, "ccm": CCM,
            "kms": KMS_ROWS, "reasons": REASONS, "tags": TAG_ROWS, "namespaces": NAMESPACES, "nulls": NULLS,
            "secrets": SECRETS}
END_TO_END = {
    "cidrs": ("vpc-is-the-pod-network",),
    "pieces": ("three-slash-9s-together",),
    "names": ("user-command",),
    "buckets": ("bucket-ip-address",),
    "unicode": ("extra-arg-zero-width",),
    "ccm": ("program-flag",),
    "kms": ("kms-china-partition-for-us-region",),
    "reasons": ("reason-newline",),
    "tags": ("tag-keys-differ-by-case",),
    "namespaces": ("rke-aws-key-typo",),
    "nulls": ("deep-network",),
    "secrets": ("secret-tags", "plain-kubeconfig"),
}


@pytest.mark.parametrize("mutate, expected", PROGRAM_ROWS)
def test_hostile_value_is_refused_naming_the_key(base_config, mutate, expected):
    mutate(base_config)
    problems = refused(base_config, expected)
    # The program's own steps (program_refusal) refuse with the same problems.
    _, err = program_refusal(base_config)
    assert str(err).startswith("invalid stack configuration")
    assert_problems(err.problems, expected)
    assert sorted(err.problems) == sorted(problems)


def test_every_class_runs_through_the_program():
    assert set(END_TO_END) == set(FAMILIES)
    for family, ids in END_TO_END.items():
        assert ids and set(ids) <= {p.id for p in FAMILIES[family]}, family
    assert PROGRAM_ROWS == [p for table in FAMILIES.values() for p in table]


@pytest.mark.parametrize("mutate, expected", [p for family, table in FAMILIES.items() for p in table
                                              if p.id in END_TO_END[family]])
def test_hostile_value_registers_nothing(base_config, mutate, expected):
    mutate(base_config)
    run_refused(base_config, expected)


def test_sg_cluster_id_from_the_stack_name(base_config):
    base_config.pop("rke-aws:clusterId", None)
    refused(base_config, (("clusterId", '"sg-1" is not a cluster ID (defaulted from the stack name; set clusterId); '
                                        "use 1-43 chars of a-z, 0-9 and -, starting with a letter, not sg-"),), stack="sg-1")


def test_every_class_has_several_cases():
    for table in (CIDRS, PIECES, NAMES, BUCKETS, UNICODE, CCM, KMS_ROWS, REASONS, TAG_ROWS, NAMESPACES, NULLS, SECRETS):
        assert len(table) >= 4
    ids = [p.id for p in PROGRAM_ROWS]
    assert len(ids) == len(set(ids))


def test_secret_text_never_reaches_a_message(base_config):
    set_key(base_config, "tags", stackfile.secret('{"team": "s3cr3t-marker\\t"}'))
    set_key(base_config, "network", stackfile.secret('{"vpcCidr": "s3cr3t-marker/99"}'))
    with pytest.raises(ConfigError) as info:
        parse(base_config)
    assert "s3cr3t-marker" not in str(info.value)


# --- what stays allowed (the rules above must not refuse these) ---------------------------------------------


@pytest.mark.parametrize("mutate", ALLOWED)
def test_legitimate_values_stay_allowed(base_config, mutate):
    mutate(base_config)
    parse(base_config)


def test_world_with_consent_is_warned(base_config):
    access(adminCidrs=["0.0.0.0/1", "128.0.0.0/1"], allowWorldAdmin=True)(base_config)
    warnings = parse(base_config).warnings
    assert sum(w.endswith(" (access.allowWorldAdmin is true)") for w in warnings) == 2, warnings
    access(adminCidrs=["11.0.0.0/9", "11.128.0.0/9", "12.0.0.0/9"], allowWorldAdmin=True)(base_config)
    (warning,) = [w for w in parse(base_config).warnings if "allowWorldAdmin" in w]
    assert warning.startswith("rke-aws:access.adminCidrs: together open SSH (22) and the Kubernetes API (6443) to "
                              "25,165,824 public addresses") and warning.endswith("(access.allowWorldAdmin is true)")


def test_accepted_values_reach_the_configuration_unchanged(base_config):
    access(adminCidrs=["203.0.113.0/24"], sshKeyName="dev key", sshUser="_svc", sshKeyPath="~/k.pem", ssm=False,
           allowWorldAdmin=True)(base_config)
    tags(team="platform", Owner="a b")(base_config)
    cfg = parse(base_config)
    assert cfg.access == Access(admin_cidrs=("203.0.113.0/24",), ssh_key_name="dev key", ssh_user="_svc",
                                             ssh_key_path="~/k.pem", ssm=False, allow_world_admin=True)
    assert dict(cfg.tags) == {"team": "platform", "Owner": "a b"}


def test_kubernetes_namespace_is_warned_as_unused(base_config):
    base_config["kubernetes:context"] = "prod"
    (warning,) = [w for w in parse(base_config).warnings if w.startswith("kubernetes:context")]
    assert "ignores kubernetes:* settings" in warning


def test_image_with_a_moving_tag_is_warned(base_config):
    ccm(image=f"{CCM_REPO}:stable")(base_config)
    assert any("ccm.image" in w and "pin the digest" in w for w in parse(base_config).warnings)
    ccm(image=f"{CCM_REPO}:v1.33.4")(base_config)
    assert not any("ccm.image" in w for w in parse(base_config).warnings)


# --- the rule quota the program counts is the one it registers -------------------------------------------

@pytest.mark.parametrize("endpoint", ["dns", "nlb"])
@pytest.mark.parametrize("distribution", ["rke", "rke2"])
def test_inbound_rule_count_is_what_the_program_registers(base_config, endpoint, distribution):
    cidrs = [f"203.0.{i}.0/24" for i in range(3)]
    access(adminCidrs=cidrs)(base_config)
    put("controlPlane", {"endpoint": endpoint})(base_config)
    if distribution == "rke":
        set_key(base_config, "distribution", "rke")
        set_key(base_config, "ccm", {})
    run = harness.run_program(base_config, stack="quota")
    groups = {r.id: r for r in run.of_type("aws:ec2/securityGroup:SecurityGroup")}
    (node_group,) = [g for g in groups.values() if any(k.startswith("kubernetes.io/cluster/") for k in g.inputs["tags"])]
    inbound = [r for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
               if r.inputs["securityGroupId"] == node_group.id]
    assert len(inbound) == access_rules.node_group_inbound_rules(len(cidrs), endpoint, distribution)
    for gid, group in groups.items():  # no group of this program holds more than the node group
        count = len([r for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
                     if r.inputs["securityGroupId"] == gid])
        assert count <= len(inbound), group.urn


def test_quota_constants_leave_the_documented_headroom():
    assert config_model.MAX_ADMIN_CIDRS == 19
    for endpoint in ("dns", "nlb"):
        rules = access_rules.node_group_inbound_rules(config_model.MAX_ADMIN_CIDRS, endpoint, "rke")
        assert rules + config_model.CCM_RULE_HEADROOM <= config_model.SG_INBOUND_RULE_QUOTA


def test_public_address_count_is_exact():
    import ipaddress

    count = access_rules.public_addresses
    net4 = ipaddress.IPv4Network
    assert count([net4("0.0.0.0/0")]) == 2**32 - sum(n.num_addresses for n in ipaddress.collapse_addresses(access_rules.NOT_PUBLIC))
    assert count([net4("10.0.0.0/8"), net4("192.168.0.0/16")]) == 0
    assert count([net4("10.1.0.0/16"), net4("8.0.0.0/7")]) == 2**25  # a private piece smaller than its block
    assert count([net4("11.0.0.0/8"), net4("11.0.0.0/9")]) == 2**24  # overlaps once
    assert count([net4("203.0.113.0/24")]) == 0  # TEST-NET-3
    assert count([net4("8.0.0.0/7")]) == 2**25


# --- plan time: key pairs, instance types, images, the CCM manifest, bring-your-own subnets -----------------

def _plan_refused(base_config, expected, **mock_kwargs) -> str:
    mocks = MotoMocks(base_config["aws:region"], **mock_kwargs)
    return run_refused(base_config, expected, mocks=mocks)


PLAN_ROWS = [
    row("missing-key-pair", access(sshKeyName="nobody-has-it"),
        ("access.sshKeyName", "looking up the key pair 'nobody-has-it' in us-east-1 failed (DescribeKeyPairs in the "
                              "emulated account answered InvalidKeyPair.NotFound")),
    row("unknown-instance-type", pool(1, instanceType="m9z.large"),
        ("nodePools[agents].instanceType", "looking up instance type 'm9z.large' in us-east-1 failed (DescribeInstanceTypes "
                                      "in the emulated account answered InvalidInstanceType")),
    # A pool's own image must suit its type (the default image follows the type's architecture: test_graviton).
    row("arm-type-with-x86-image", pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"),
        ("nodePools[agents].instanceType", "'m7g.large' runs arm64, but the pool's image ami-0ccccccccccccccc1 "
                                      "is x86_64; use an instance type for x86_64, or set "
                                      "nodePools[agents].ami to an image for arm64")),
    row("arm-server-and-agents-with-x86-images", both(pool(0, instanceType="c7g.medium", ami="ami-0ccccccccccccccc1"),
                                                      pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1")),
        ("nodePools[server].instanceType", "runs arm64"), ("nodePools[agents].instanceType", "runs arm64")),
    row("missing-image", pool(1, ami="ami-0123456789abcdef0"),
        ("nodePools[agents].ami", "looking up image 'ami-0123456789abcdef0' in us-east-1 failed")),
    row("ccm-manifest-too-large", ccm(extraArgs=[f"--flag-{i:03d}={'x' * 120}" for i in range(70)]),
        ("ccm.extraArgs", "the CCM manifest (ccm.install manifest) is")),
]

PLAN_MOCKS = {
    "missing-key-pair": {"key_pairs": ["dev"]},
    "missing-image": {"images": {}},
}


@pytest.mark.parametrize("mutate, expected", PLAN_ROWS)
def test_plan_time_look_ups_refuse_before_anything(base_config, mutate, expected, request):
    mutate(base_config)
    _plan_refused(base_config, expected, **PLAN_MOCKS.get(request.node.callspec.id, {}))


def test_type_not_offered_in_a_zone_of_the_pool(base_config):
    # The one server is in us-east-1a; the two agents in us-east-1a and us-east-1b.
    _plan_refused(base_config, (("nodePools[agents].instanceType", "'m6i.large' is not offered in us-east-1b, where the pool's "
                                                              "new nodes go"),),
                  unoffered=[("m6i.large", "us-east-1b")])


def test_type_offered_elsewhere_only_is_fine_when_no_node_goes_there(base_config):
    net(availabilityZones=["us-east-1a", "us-east-1c"])(base_config)
    harness.run_program(base_config, mocks=MotoMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))


def test_paravirtual_image_on_an_hvm_only_type(base_config):
    pool(1, ami="ami-0aaaaaaaaaaaaaaa1")(base_config)
    _plan_refused(base_config, (("nodePools[agents].instanceType", "'m6i.large' supports hvm virtualization, but the pool's "
                                                              "image ami-0aaaaaaaaaaaaaaa1 is paravirtual"),),
                  images={"ami-0aaaaaaaaaaaaaaa1": {"architecture": "x86_64", "virtualizationType": "paravirtual"}})


def test_arm_image_on_arm_type_plans(base_config):
    pool(1, instanceType="m7g.large", ami="ami-0bbbbbbbbbbbbbbb1")(base_config)
    run = harness.run_program(base_config, mocks=MotoMocks(
        "us-east-1", images={"ami-0bbbbbbbbbbbbbbb1": {"architecture": "arm64", "virtualizationType": "hvm"}}))
    assert {r.inputs["instanceType"] for r in run.of_type("aws:ec2/instance:Instance")} == {"m6i.large", "m7g.large"}


def test_small_rke2_server_is_warned_not_refused(base_config):
    pool(0, instanceType="t3.small")(base_config)
    run = harness.run_program(base_config)
    warnings = [m for level, m in run.logs if level == "warning"]
    assert any(m.startswith("rke-aws:nodePools[server].instanceType: 't3.small' has 2 vCPU and 2 GiB; RKE2 servers need at "
                            "least 2 vCPU and 4 GiB") for m in warnings), warnings
    pool(0, instanceType="t3.medium")(base_config)
    run = harness.run_program(base_config)
    assert not any("RKE2 servers need" in m for _, m in run.logs)


def test_look_ups_are_per_type_not_per_node(base_config):
    # Thirteen nodes of one type over three zones (four agents in each): one look-up per node would be 13.
    pool(1, count=12)(base_config)
    net(availabilityZones=3)(base_config)
    run = harness.run_program(base_config)
    tokens = [lk.token.rsplit(":", 1)[-1] for lk in run.lookups]
    assert tokens.count("getInstanceType") == 1 and tokens.count("getInstanceTypeOfferings") == 1, tokens
    assert tokens.count("getAmi") == 1, tokens


def test_key_pair_is_looked_up_once(base_config):
    access(sshKeyName="dev")(base_config)
    run = harness.run_program(base_config, mocks=MotoMocks("us-east-1", key_pairs=["dev"]))
    assert [lk.args.get("keyName") for lk in run.lookups if lk.token.endswith("getKeyPair")] == ["dev"]


def test_bring_your_own_subnet_in_the_pod_network(base_config):
    from tests.support.configs import PRIVATE_IDS, PUBLIC_IDS, VPC_ID, _byo_config, _existing_subnets

    subnets = _existing_subnets()
    subnets[PRIVATE_IDS[1]]["cidr"] = "10.42.16.0/20"
    mocks = MotoMocks("us-east-1", existing_subnets=subnets)
    run_refused(_byo_config(base_config), (("network.privateSubnetIds[1]", "the subnet's 10.42.16.0/20 overlaps "
                                                                           "10.42.0.0/16, the cluster's pod or service network"),),
                mocks=mocks)
    assert VPC_ID and PUBLIC_IDS


def test_manifest_size_limit_counts_what_main_renders(base_config):
    """The check renders the same manifest __main__ stores: the parameter registered is at most the limit."""
    from rke_aws.plan import addons as plan

    ccm(extraArgs=[f"--flag-{i:03d}={'x' * 120}" for i in range(40)])(base_config)
    run = harness.run_program(base_config)
    (param,) = [r for r in run.of_type("aws:ssm/parameter:Parameter") if r.inputs["name"].endswith("/ccm.yaml")]
    size = len(param.inputs["insecureValue"].encode())
    assert 4096 < size <= plan.ADVANCED_TIER_MAX and param.inputs["tier"] == "Advanced"


# --- names the program derives: never one AWS refuses ------------------------------------------------------

def test_internal_cluster_gets_a_load_balancer_name_elbv2_accepts(base_config):
    put("clusterId", "internal-prod")(base_config)
    put("controlPlane", {"endpoint": "nlb"})(base_config)
    run = harness.run_program(base_config, stack="internal-prod")
    (lb,) = run.of_type("aws:lb/loadBalancer:LoadBalancer")
    assert not lb.inputs["name"].startswith("internal-") and len(lb.inputs["name"]) <= 32
    for tg in run.of_type("aws:lb/targetGroup:TargetGroup"):  # allowed to start so: unchanged
        assert tg.inputs["name"].startswith("internal-prod-")


# --- the policy pack judges the union too ------------------------------------------------------------------

def _admin_rule_records(stack: str, cidrs: list[str]):
    """The stack's records with the node group's first admin rule repeated once per CIDR."""
    from policies import rules
    from tests.support.policies import node_group, records

    recs = records(stack)
    group = node_group(recs)
    template = next(r for r in recs if r.type == rules.SG_INGRESS_RULE and r.props.get("cidrIpv4")
                    and r.props.get("securityGroupId") == group.props["id"])
    for i, cidr in enumerate(cidrs):
        rec = copy.deepcopy(template)
        rec.urn, rec.name = f"{template.urn}-planted-{i}", f"{template.name}-planted-{i}"
        rec.props["cidrIpv4"] = cidr
        recs.append(rec)
    return recs, group


@pytest.mark.parametrize("cidrs", [["11.0.0.0/9", "11.128.0.0/9", "12.0.0.0/9"],
                                   [f"{20 + i // 16}.{(i % 16) * 16}.0.0/12" for i in range(17)]],
                         ids=["three-slash-9s", "seventeen-slash-12s"])
def test_policy_pack_catches_the_internet_in_pieces(cidrs):
    """No piece reaches the per-rule threshold (sg-no-public-admin-ports passes each); together they do.
    Pieces that are each larger (0.0.0.0/1 + 128.0.0.0/1) are caught one by one, below."""
    from policies import rules
    from tests.support.policies import POLICY, run_stack_policy

    recs, group = _admin_rule_records("rke-prod", cidrs)
    found = run_stack_policy(POLICY["sg-no-public-admin-union"], recs)
    assert found and all(urn == group.urn for _, urn in found), found
    assert rules.WORLD_IPV4_ADDRESSES == config_model.WORLD_ADMIN_PUBLIC_ADDRESSES


@pytest.mark.parametrize("cidrs, policy_config", [
    (["11.0.0.0/9", "11.128.0.0/9"], None),  # exactly a /8: not more
    (["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"], None),  # not public
    (["0.0.0.0/1", "128.0.0.0/1"], {"adminCidrs": ["0.0.0.0/1", "128.0.0.0/1"]}),  # allowed by the policy's config
], ids=["a-slash-8", "private", "allowed"])
def test_policy_pack_union_allows(cidrs, policy_config):
    from tests.support.policies import POLICY, run_stack_policy

    recs, _ = _admin_rule_records("rke-prod", cidrs)
    assert run_stack_policy(POLICY["sg-no-public-admin-union"], recs, policy_config) == []


@pytest.mark.parametrize("cidr, caught", [("0.0.0.0/1", True), ("128.0.0.0/1", True), ("4.0.0.0/6", True), ("11.0.0.0/8", False),
                                          ("10.0.0.0/8", False), ("2000::/2", True), ("2001:db8::/32", False)])
def test_policy_pack_one_cidr_larger_than_a_slash_8_is_the_internet(cidr, caught):
    from policies import rules
    from tests.support.policies import POLICY, _world_rule, run_resource_policy

    reg, props = _world_rule("rke2-dev", ipProtocol="tcp", fromPort=22.0, toPort=22.0,
                             **({"cidrIpv4": None, "cidrIpv6": cidr} if ":" in cidr else {"cidrIpv4": cidr}))
    found = run_resource_policy(POLICY["sg-no-public-admin-ports"], reg.type, reg.urn, props)
    assert bool(found) == caught, found
    assert rules._world(cidr) == caught


# --- the look-ups in detail: what they ask, day 2, several pools, exact messages ------------------------------

def _lookups(run, token: str) -> list:
    return [lk for lk in run.lookups if lk.token.endswith(token)]


def test_image_look_ups_ask_what_ec2_needs(base_config):
    """The default image: Canonical's account of the partition, the name of Ubuntu 24.04 amd64, available,
    newest. An explicit image: by id, deprecated ones included (DescribeImages leaves them out unless
    asked, although EC2 still launches them)."""
    from rke_aws.settings import versions

    pool(1, ami="ami-0ccccccccccccccc1")(base_config)
    run = harness.run_program(base_config)
    default, explicit = _lookups(run, "getAmi")
    assert default.args == {"mostRecent": True, "owners": ["099720109477"], "filters": [
        {"name": "name", "values": [versions.UBUNTU_AMI_NAME]}, {"name": "state", "values": ["available"]}]}
    assert explicit.args == {"filters": [{"name": "image-id", "values": ["ami-0ccccccccccccccc1"]}], "includeDeprecated": True}


def test_offerings_look_up_asks_for_the_types_in_the_new_nodes_zones(base_config):
    pool(0, instanceType="m6i.xlarge")(base_config)
    run = harness.run_program(base_config)
    (offerings,) = _lookups(run, "getInstanceTypeOfferings")
    assert offerings.args == {"locationType": "availability-zone", "filters": [
        {"name": "instance-type", "values": ["m6i.large", "m6i.xlarge"]},
        {"name": "location", "values": ["us-east-1a", "us-east-1b"]}]}


def test_running_nodes_are_not_judged_by_todays_offerings(base_config):
    """Day 2: a node that runs is not refused because its type is no longer offered in its zone;
    only new nodes are, and with no new node there is no offerings look-up at all."""
    first = run_cached(base_config, "day2")  # read only: shared with the other day-2 tests here
    later = harness.run_program(base_config, stack="day2", previous_outputs=first.outputs,
                                mocks=MotoMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))
    assert later.resources and not _lookups(later, "getInstanceTypeOfferings")
    pool(1, count=3)(base_config)  # one more agent, in us-east-1a
    grown = harness.run_program(base_config, stack="day2", previous_outputs=first.outputs,
                                mocks=MotoMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))
    (offerings,) = _lookups(grown, "getInstanceTypeOfferings")
    assert offerings.args["filters"][1] == {"name": "location", "values": ["us-east-1a"]}


def _day2(base_config, **mock_kwargs):
    """The stack as deployed (everything exists), then the same stack judged against an account
    where something it was deployed with has gone since. The first run is read only (its outputs, the names of
    what it launched), so the same deployed stack is shared (run_cached)."""
    first = run_cached(base_config, "day2")
    return first, lambda cfg: harness.run_program(cfg, stack="day2", previous_outputs=first.outputs,
                                                  mocks=MotoMocks("us-east-1", created_before=launched(first),
                                                                  **mock_kwargs))


def launched(run: harness.ProgramRun) -> list[str]:
    """The instances `run` launched: an update registers them again without launching them."""
    return [r.name for r in run.of_type("aws:ec2/instance:Instance")]


def test_a_key_pair_deleted_since_warns_until_a_node_is_launched(base_config):
    """Review finding 4: only RunInstances reads the key pair (keyName is ForceNew on aws_instance,
    terraform-provider-aws internal/service/ec2/ec2_instance.go), so a key deleted after the nodes
    booted must not refuse a tag or version update; renaming the key would replace every node."""
    access(sshKeyName="dev")(base_config)
    first, later = _day2(base_config, key_pairs=[])
    run = later(base_config)
    assert run.resources and any(
        m.startswith("rke-aws:access.sshKeyName: looking up the key pair 'dev' in us-east-1 failed")
        and m.endswith("no instance is launched by this update, so it goes ahead, but the next new or replaced node "
                       "would be refused") for m in _warnings(run)), _warnings(run)
    pool(1, count=3)(base_config)  # one more agent: RunInstances with the missing key
    message = run_refused_day2(base_config, first, key_pairs=[])
    assert "rke-aws:access.sshKeyName: looking up the key pair 'dev'" in message


def test_a_deregistered_image_warns_until_its_pool_launches_a_node(base_config):
    pool(1, ami="ami-0aaaaaaaaaaaaaaa9")(base_config)
    first, later = _day2(base_config, images={})
    run = later(base_config)
    assert run.resources and any(m.startswith("rke-aws:nodePools[agents].ami: looking up image 'ami-0aaaaaaaaaaaaaaa9'")
                                 and "launches none of the pool's" in m for m in _warnings(run)), _warnings(run)
    servers = copy.deepcopy(base_config)
    pool(0, count=3)(servers)  # more servers; the agents' pool launches nothing: still a warning
    assert later(servers).resources
    pool(1, count=3)(base_config)
    message = run_refused_day2(base_config, first, images={})
    assert "rke-aws:nodePools[agents].ami: looking up image 'ami-0aaaaaaaaaaaaaaa9'" in message


def test_an_image_for_another_architecture_is_refused_only_where_a_node_launches(base_config):
    """A pool's `ami` changed to an arm64 image: running nodes ignore it (nodes.IGNORED_ON_UPDATE), so
    only its next node would be refused by EC2."""
    first, later = _day2(base_config, images={"ami-0bbbbbbbbbbbbbbb9": {"architecture": "arm64",
                                                                        "virtualizationType": "hvm"}})
    pool(1, ami="ami-0bbbbbbbbbbbbbbb9")(base_config)
    run = later(base_config)
    assert any(m.startswith("rke-aws:nodePools[agents].instanceType: 'm6i.large' runs x86_64") for m in _warnings(run))
    pool(1, count=3)(base_config)
    assert "rke-aws:nodePools[agents].instanceType: 'm6i.large' runs x86_64" in run_refused_day2(
        base_config, first, images={"ami-0bbbbbbbbbbbbbbb9": {"architecture": "arm64", "virtualizationType": "hvm"}})


def test_an_agent_type_changed_in_place_must_be_offered_in_its_zone(base_config):
    """An agent's instanceType changes by stop / modify / start of the running instance (no
    ForceNew within one architecture, ec2_instance.go CustomizeDiff), which EC2 refuses in a zone
    that does not offer the type: judged although no node is new."""
    first, _ = _day2(base_config)
    pool(1, instanceType="m6i.xlarge")(base_config)
    message = run_refused_day2(base_config, first, unoffered=[("m6i.xlarge", "us-east-1b")])
    assert "rke-aws:nodePools[agents].instanceType: 'm6i.xlarge' is not offered in us-east-1b" in message


def test_an_agent_type_for_another_architecture_waits_for_rotation(base_config):
    """Running agents keep their type (nodes.IGNORED_ON_UPDATE), so an arm64 type no longer replaces them
    all at once with the image they booted (ec2_instance.go CustomizeDiff ForceNewIf instance_type): the
    update goes ahead, and rotation launches each with the pool's type and its arm64 default image. A
    pinned amd64 image would be refused: rotation launches these nodes (machine_problems judges the pool)."""
    first, later = _day2(base_config)
    pool(1, instanceType="m7g.large")(base_config)
    run = later(base_config)
    assert not [r for r in run.of_type("aws:ec2/instance:Instance") if r.inputs["instanceType"] == "m7g.large"
                and "instanceType" not in r.ignore_changes]
    pool(1, ami="ami-0aaaaaaaaaaaaaaa1")(base_config)
    assert "rke-aws:nodePools[agents].instanceType: 'm7g.large' runs arm64" in run_refused_day2(
        base_config, first, images={"ami-0aaaaaaaaaaaaaaa1": {"architecture": "x86_64", "virtualizationType": "hvm"}})


def run_refused_day2(cfg, first, **mock_kwargs) -> str:
    mocks = MotoMocks("us-east-1", created_before=launched(first), **mock_kwargs)
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(cfg, stack="day2", mocks=mocks, previous_outputs=first.outputs)
    assert mocks.resources == [], "registered before refusing"
    return str(info.value)


def test_every_pool_is_judged_after_a_failed_look_up(base_config):
    both(pool(0, instanceType="m9z.large"), pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"))(base_config)
    _plan_refused(base_config, (("nodePools[server].instanceType", "InvalidInstanceType"),
                                ("nodePools[agents].instanceType", "runs arm64")))
    both(pool(0, instanceType="m6i.large", ami="ami-0ddddddddddddddd1"),
         pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"))(base_config)
    _plan_refused(base_config, (("nodePools[server].ami", "looking up image 'ami-0ddddddddddddddd1' in us-east-1 failed (DescribeImages "
                                                     "in the emulated account answered Your query returned no results. "
                                                     "Please change your search criteria and try "
                                                     "again.); use an image that exists in us-east-1 and this account may "
                                                     "launch"),
                                ("nodePools[agents].instanceType", "runs arm64")),
                  images={"ami-0ccccccccccccccc1": {"architecture": "x86_64"}})


def test_failed_offerings_look_up_is_a_config_error(base_config, monkeypatch):
    pool(0, instanceType="m6i.xlarge")(base_config)
    mocks = MotoMocks("us-east-1")
    real = mocks._call

    def failing(tok, a):
        if tok.endswith("getInstanceTypeOfferings"):
            raise EmulatedAwsError("UnauthorizedOperation: not allowed to ec2:DescribeInstanceTypeOfferings")
        return real(tok, a)

    monkeypatch.setattr(mocks, "_call", failing)
    run_refused(base_config, (("nodePools[].instanceType",
                               "looking up where m6i.large, m6i.xlarge are offered in us-east-1 failed (DescribeInstanceTypeOfferings "
                               "in the emulated account answered UnauthorizedOperation: not allowed to "
                               "ec2:DescribeInstanceTypeOfferings); check the instance types and zones (aws ec2 "
                               "describe-instance-type-offerings)"),), mocks=mocks)


def test_look_up_messages_name_the_fix(base_config):
    access(sshKeyName="nobody")(base_config)
    pool(1, instanceType="m9z.large")(base_config)
    message = _plan_refused(base_config, (("access.sshKeyName", "InvalidKeyPair.NotFound"),
                                          ("nodePools[agents].instanceType", "InvalidInstanceType")), key_pairs=[])
    assert message.endswith(
        "  - rke-aws:access.sshKeyName: looking up the key pair 'nobody' in us-east-1 failed (DescribeKeyPairs in the "
        "emulated account answered InvalidKeyPair.NotFound: the key pair 'nobody' does not exist); create "
        "or import it in us-east-1 (aws ec2 import-key-pair --key-name ...), or fix the name\n"
        "  - rke-aws:nodePools[agents].instanceType: looking up instance type 'm9z.large' in us-east-1 failed "
        "(DescribeInstanceTypes in the emulated account answered InvalidInstanceType: The following supplied instance "
        "types do not exist: [m9z.large]); did you mean m9g.large? Or use an instance type EC2 offers in us-east-1 (aws "
        "ec2 describe-instance-types)")
    assert "invoke of" not in message and "credentials" not in message


def test_machine_messages_in_full(base_config):
    pool(1, ami="ami-0eeeeeeeeeeeeeee1", instanceType="m1.small")(base_config)
    message = _plan_refused(base_config, (("nodePools[agents].instanceType", "runs i386 or x86_64"),),
                            images={"ami-0eeeeeeeeeeeeeee1": {"architecture": "arm64", "virtualizationType": "hvm"}})
    assert ("rke-aws:nodePools[agents].instanceType: 'm1.small' runs i386 or x86_64, but the pool's image ami-0eeeeeeeeeeeeeee1 "
            "is arm64; use an instance type for arm64, or set nodePools[agents].ami to an image for i386 or x86_64") in message
    pool(1, ami="ami-0eeeeeeeeeeeeeee2", instanceType="m6i.large")(base_config)
    message = _plan_refused(base_config, (("nodePools[agents].instanceType", "virtualization"),),
                            images={"ami-0eeeeeeeeeeeeeee2": {"architecture": "x86_64", "virtualizationType": "paravirtual"}})
    assert ("rke-aws:nodePools[agents].instanceType: 'm6i.large' supports hvm virtualization, but the pool's image "
            "ami-0eeeeeeeeeeeeeee2 is paravirtual; use another type or image") in message
    pool(1, ami=None, instanceType="m6i.large")(base_config)
    message = _plan_refused(base_config, (("nodePools[server].instanceType", "not offered"),
                                          ("nodePools[agents].instanceType", "not offered")),
                            unoffered=[("m6i.large", "us-east-1a"), ("m6i.large", "us-east-1b")])
    assert ("rke-aws:nodePools[agents].instanceType: 'm6i.large' is not offered in us-east-1a, us-east-1b, where the pool's "
            "new nodes go; use a type offered there, or other zones (aws ec2 describe-instance-type-offerings "
            "--location-type availability-zone --filters Name=instance-type,Values=m6i.large)") in message


def _warnings(run) -> list[str]:
    return [m for level, m in run.logs if level == "warning"]


def test_rke2_server_size_warnings_follow_rke2s_requirements(base_config, monkeypatch):
    from rke_aws.plan import machine_checks as spec

    pool(0, instanceType="c7g.medium", ami="ami-0fffffffffffffff1")(base_config)
    images = {"ami-0fffffffffffffff1": {"architecture": "arm64", "virtualizationType": "hvm"}}
    run = harness.run_program(base_config, mocks=MotoMocks("us-east-1", images=images))
    assert ("rke-aws:nodePools[server].instanceType: 'c7g.medium' has 1 vCPU and 2 GiB; RKE2 servers need at least 2 vCPU "
            "and 4 GiB (docs.rke2.io install/requirements): etcd and the API server may not keep up") in _warnings(run)
    # RKE2's VM sizing guide: 2 vCPU / 4 GiB servers carry up to 225 agents (the boundary, on the pure rule).
    key = "nodePools[server].instanceType"

    def warn(*args):
        found = spec.rke2_server_size_warning(*args)
        return found.render() if found else None

    assert warn(key, "t3.medium", 2, 4096, 225) is None
    assert warn(key, "t3.medium", 2, 4096, 226) == (
        "rke-aws:nodePools[server].instanceType: 226 agents; RKE2's sizing guide gives servers of 't3.medium' (2 vCPU, "
        "4 GiB) up to 225 (docs.rke2.io install/requirements, VM sizing guide): use larger servers")
    assert "up to 225" in warn(key, "r6i.large", 2, 16384, 226)  # 2 vCPU and 16 GiB: both must reach a row
    assert warn(key, "m6i.2xlarge", 8, 32768, 5000) is None  # the guide's last row has no limit here
    # The program counts every agent of every pool against the servers' type as EC2 describes it: the same
    # rule with a guide whose first row ends at 3 agents, on a program small enough to run.
    monkeypatch.setattr(spec, "RKE2_SIZING_GUIDE", ((2, 4096, 3),) + spec.RKE2_SIZING_GUIDE[1:])
    both(pool(0, instanceType="t3.medium", ami=None), pool(1, count=2))(base_config)
    assert not [w for w in _warnings(harness.run_program(base_config)) if "sizing guide" in w]
    extra_pool(count=2)(base_config)
    assert ("rke-aws:nodePools[server].instanceType: 4 agents; RKE2's sizing guide gives servers of 't3.medium' (2 vCPU, "
            "4 GiB) up to 3" in " ".join(_warnings(harness.run_program(base_config))))


def test_rke1_servers_get_no_rke2_size_warning(base_config):
    both(put("distribution", "rke"), put("ccm", {}), pool(0, instanceType="t3.small"))(base_config)
    assert not [w for w in _warnings(harness.run_program(base_config)) if "RKE2 servers" in w]


def test_manifest_size_limit_is_exactly_the_parameters_size(base_config, monkeypatch):
    """Refused exactly when the parameter __main__ would store is larger than the limit: the check
    renders the same manifest, byte for byte."""
    from rke_aws.plan import addons as plan

    ccm(extraArgs=[f"--flag-{i:03d}={'x' * 60}" for i in range(10)])(base_config)
    run = harness.run_program(base_config)
    (param,) = [r for r in run.of_type("aws:ssm/parameter:Parameter") if r.inputs["name"].endswith("/ccm.yaml")]
    size = len(param.inputs["insecureValue"].encode())
    monkeypatch.setattr(plan, "ADVANCED_TIER_MAX", size)
    harness.run_program(base_config)
    monkeypatch.setattr(plan, "ADVANCED_TIER_MAX", size - 1)
    message = run_refused(base_config, (("ccm.extraArgs", "the CCM manifest (ccm.install manifest) is"),))
    extra = sum(len(a) + 8 for a in json.loads(base_config["rke-aws:ccm"])["extraArgs"])
    assert (f"the CCM manifest (ccm.install manifest) is {size:,} bytes, of which about {extra:,} are ccm.extraArgs and "
            f"{len(run.outputs['ccmImage'])} ccm.image; an SSM "
            f"parameter holds at most {size - 1:,} bytes (Advanced tier): use fewer or shorter extraArgs, or ccm.install "
            "helm") in message


def test_bring_your_own_overlap_message_in_full(base_config):
    from tests.support.configs import PRIVATE_IDS, _byo_config, _existing_subnets

    subnets = _existing_subnets()
    subnets[PRIVATE_IDS[0]]["cidr"] = "10.43.0.0/20"
    message = run_refused(_byo_config(base_config), (("network.privateSubnetIds[0]", "overlaps"),),
                          mocks=MotoMocks("us-east-1", existing_subnets=subnets))
    assert ("rke-aws:network.privateSubnetIds[0]: the subnet's 10.43.0.0/20 overlaps 10.43.0.0/16, the cluster's pod or "
            "service network (RKE2 and RKE1 default): its nodes would send traffic for those addresses into the cluster; "
            "use subnets outside 10.42.0.0/16 and 10.43.0.0/16") in message


def test_four_vcpu_servers_carry_450_agents():
    from rke_aws.plan import machine_checks

    key = "nodePools[server].instanceType"
    assert machine_checks.rke2_server_size_warning(key, "m6i.xlarge", 4, 16384, 450) is None
    found = machine_checks.rke2_server_size_warning(key, "m6i.xlarge", 4, 16384, 451)
    assert found is not None and (found.key, found.code) == (key, "pool.servers-undersized")
    assert "451 agents; RKE2's sizing guide gives servers of 'm6i.xlarge' (4 vCPU, 16 GiB) up to 450" in found.message


def test_default_image_only_for_pools_without_their_own(base_config, monkeypatch):
    both(pool(0, ami="ami-0aaaaaaaaaaaaaab1"), pool(1, ami="ami-0aaaaaaaaaaaaaab2"))(base_config)
    run = harness.run_program(base_config)
    assert [lk.args["filters"][0]["name"] for lk in _lookups(run, "getAmi")] == ["image-id", "image-id"]
    pool(1, ami=None)(base_config)

    def no_ubuntu(account):  # Canonical's images gone from the region
        ec2 = account.client("ec2")
        for image in ec2.describe_images(Owners=["099720109477"])["Images"]:
            ec2.deregister_image(ImageId=image["ImageId"])

    mocks = MotoMocks("us-east-1", setup=no_ubuntu)
    message = run_refused(base_config, (("nodePools[].ami", "looking up the default image"),), mocks=mocks)
    assert "set `ami` on nodePools[agents] to an image that exists in us-east-1" in message
