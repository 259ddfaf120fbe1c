"""The policy pack in policies/: every rule passes on every stack and catches the mistake it exists for.

Rules are evaluated the way the analyzer evaluates them, on the resources the program registers
(offline harness): resource policies get `ResourceValidationArgs` built from a registration's
inputs, stack policies get `StackValidationArgs` whose resources carry inputs + mock outputs + the
id the mocks returned. Props are wrapped in the SDK's unknown-checking proxy, as the engine does.
Constructing `PolicyPack` starts a gRPC server, so the pack's entry point is only inspected.
"""

# split: this module mixes levels (issue 33 §7.2); the rule tests on hand-made inputs -> tests/unit.

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from importlib import metadata as importlib_metadata
from pathlib import Path

import pytest
import yaml
from pulumi_policy import (
    ResourceValidationPolicy,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_STRING_VALUE

from policies import rules
from tests.support.policies import (
    POLICY,
    Rec,
    _world_rule,
    node_group,
    of_type,
    records,
    registrations,
    run_resource_policy,
    run_stack_policy,
)
from tests.support.runs import STACKS, run_stack_cached

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies"


# --- stubs --------------------------------------------------------------------------------------


def caught(found: list[str], urn: str, policy: str) -> None:
    assert found, f"{policy} did not catch the planted violation on {urn}"
    assert all(urn in m for m in found), f"{policy}: messages do not name {urn}: {found}"


# --- the pack itself ----------------------------------------------------------------------------

def test_pack_files_are_a_python_policy_pack():
    doc = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    runtime = doc["runtime"]
    assert (runtime if isinstance(runtime, str) else runtime["name"]) == "python"
    main = (PACK / "__main__.py").read_text()
    assert "PolicyPack(" in main and "rules.POLICIES" in main, "__main__.py must hand rules.POLICIES to PolicyPack"
    names = [p.name for p in rules.POLICIES]
    assert len(names) == len(set(names)), f"duplicate policy names: {names}"
    assert all(isinstance(p, (ResourceValidationPolicy, StackValidationPolicy)) for p in rules.POLICIES)


def test_pack_requirements_match_uv_lock():
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    locked = {p["name"]: p["version"] for p in lock["package"]}
    pins = {}
    for line in (PACK / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    assert {"pulumi", "pulumi-policy", "cfn-lint"} <= set(pins), pins
    wrong = {n: (v, locked.get(n)) for n, v in pins.items() if locked.get(n) != v}
    assert not wrong, f"requirements.txt pins differ from uv.lock (pin, lock): {wrong}"


def test_action_database_loads_from_cfn_lint():
    db = rules.action_database()
    assert "describeinstances" in db["ec2"] and "passrole" in db["iam"]


def test_the_iam_reference_is_cfn_lints_file_read_without_importing_cfn_lint():
    """rules.iam_reference reads cfn-lint's data file from the installed package's folder (found by the import
    system). The installed distribution's own record of its files (importlib.metadata, the wheel's RECORD) names the
    same document, found without importing cfn-lint either: its resource API (importlib.resources) would import it,
    and its __init__ loads the whole linter (~0.3-0.5 s of this process's CPU) for nothing the test checks. In a fresh
    interpreter the policy pack's action database imports no cfn-lint module."""
    dist = importlib_metadata.distribution("cfn-lint")
    (recorded,) = [f for f in dist.files or () if f.as_posix() == "cfnlint/data/AdditionalSpecs/Policies.json"]
    assert rules.iam_reference() == json.loads(recorded.read_text(encoding="utf-8"))
    code = ("import sys; from policies import rules; assert 'passrole' in rules.action_database()['iam']; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cfnlint'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=PACK.parent, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# --- every rule passes on every stack ---------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("policy", rules.RESOURCE_POLICIES, ids=lambda p: p.name)
def test_resource_policy_passes_on_stack(policy, stack):
    found = []
    for reg in run_stack_cached(stack).resources:
        if reg.custom:
            found += run_resource_policy(policy, reg.type, reg.urn, reg.inputs)
    assert not found, f"{stack}: {policy.name}:\n" + "\n".join(found)


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("policy", rules.STACK_POLICIES, ids=lambda p: p.name)
def test_stack_policy_passes_on_stack(policy, stack):
    found = run_stack_policy(policy, records(stack))
    assert not found, f"{stack}: {policy.name}:\n" + "\n".join(m for m, _ in found)


@pytest.mark.parametrize("stack", STACKS)
def test_stub_security_group_id_is_the_id_the_program_saw(stack):
    sg = node_group(records(stack))
    assert sg.props.get("id") == run_stack_cached(stack).outputs["securityGroupId"]


# --- instances ---------------------------------------------------------------------------------------

INSTANCE_PLANTS = [
    ("instance-imdsv2-required", lambda p: p["metadataOptions"].update(httpTokens="optional")),
    ("instance-imdsv2-required", lambda p: p.pop("metadataOptions")),
    ("instance-imds-hop-limit", lambda p: p["metadataOptions"].update(httpPutResponseHopLimit=3.0)),
    # Hop limit 2 without a stated reason: every pod could take the node role's credentials.
    ("instance-imds-hop-limit", lambda p: (p["metadataOptions"].update(httpPutResponseHopLimit=2.0),
                                           p["tags"].pop("rke-aws/imds-hop-limit-reason", None))),
    ("instance-root-volume-encrypted", lambda p: p["rootBlockDevice"].update(encrypted=False)),
    ("instance-root-volume-encrypted", lambda p: p.pop("rootBlockDevice")),
    ("instance-one-cluster-tag", lambda p: p["tags"].update({"kubernetes.io/cluster/other": "shared"})),
    ("instance-one-cluster-tag", lambda p: p.update(tags={k: v for k, v in p["tags"].items()
                                                           if not k.startswith("kubernetes.io/cluster/")})),
    ("instance-profile-attached", lambda p: p.pop("iamInstanceProfile")),
    ("instance-profile-attached", lambda p: p.update(iamInstanceProfile="")),
    # A hand-edited program (or an old one) putting proxy credentials where DescribeInstanceAttribute shows them.
    ("instance-user-data-no-proxy-credentials", lambda p: _with_user_data(p, "export https_proxy='http://u:pw@proxy:3128'")),
    ("instance-user-data-no-proxy-credentials", lambda p: _with_user_data(p, 'Environment="HTTPS_PROXY=https://user@p:1"')),
    ("instance-user-data-no-proxy-credentials", lambda p: _with_user_data(p, "HTTP_PROXY=http://a:b@p:1", plain=True)),
    ("instance-servers-on-demand", lambda p: (p["tags"].update({"rke-aws/roles": "controlplane,etcd"}),
                                              p.update(instanceMarketOptions={"marketType": "spot"}))),
]


def _with_user_data(props: dict, line: str, plain: bool = False) -> None:
    """Append a line to the instance's user data, re-encoded as the program encodes it (or as plain userData)."""
    from rke_aws.node import cloud_init
    from rke_aws_offline.report.review import decode_user_data
    text = decode_user_data(props) + "\n# " + line + "\n"
    props.pop("userDataBase64", None)
    if plain:
        props["userData"] = text
    else:
        props["userDataBase64"] = cloud_init.encode_user_data(text)


def test_a_proxy_without_credentials_passes_the_user_data_rule():
    reg = registrations("rke2-proxy", rules.INSTANCE)[0]
    assert "proxy.corp.example:3128" in __import__("rke_aws_offline.report.review", fromlist=["x"]).decode_user_data(reg.inputs)
    props = copy.deepcopy(reg.inputs)
    _with_user_data(props, "export NO_PROXY='user@example.com,10.0.0.0/8' # a mail address is no URL")
    assert not run_resource_policy(POLICY["instance-user-data-no-proxy-credentials"], reg.type, reg.urn, props)


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("name,plant", INSTANCE_PLANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INSTANCE_PLANTS)])
def test_instance_policy_catches_planted_violation(name, plant, stack):
    for reg in registrations(stack, rules.INSTANCE):
        props = copy.deepcopy(reg.inputs)
        plant(props)
        caught(run_resource_policy(POLICY[name], reg.type, reg.urn, props), reg.urn, name)


def test_hop_limit_two_with_a_stated_reason_passes():
    reg = registrations("rke2-dev", rules.INSTANCE)[0]
    props = copy.deepcopy(reg.inputs)
    props["metadataOptions"]["httpPutResponseHopLimit"] = 2.0
    props["tags"]["rke-aws/imds-hop-limit-reason"] = "legacy SDK without pod identity"
    assert not run_resource_policy(POLICY["instance-imds-hop-limit"], reg.type, reg.urn, props)


def test_instance_policies_accept_unknowns_that_still_answer():
    reg = registrations("rke2-dev", rules.INSTANCE)[0]
    props = copy.deepcopy(reg.inputs)
    props["iamInstanceProfile"] = UNKNOWN_STRING_VALUE  # preview: the profile's name is its output
    props["metadataOptions"].pop("httpPutResponseHopLimit")  # EC2 default: 1
    for name in ("instance-profile-attached", "instance-imds-hop-limit"):
        assert not run_resource_policy(POLICY[name], reg.type, reg.urn, props), name


# --- security groups: admin ports ------------------------------------------------------------------


WORLD_PLANTS = [
    {},  # protocol -1: every port
    {"ipProtocol": "tcp", "fromPort": 22.0, "toPort": 22.0},
    {"ipProtocol": "tcp", "fromPort": 6000.0, "toPort": 7000.0},  # range containing 6443
    {"ipProtocol": "6", "fromPort": 9345.0, "toPort": 9345.0},
    {"ipProtocol": "tcp", "fromPort": 2380.0, "toPort": 2400.0},  # overlaps etcd's 2379-2380
    {"ipProtocol": "tcp", "fromPort": 10250.0, "toPort": 10250.0, "cidrIpv4": None, "cidrIpv6": "::/0"},
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("changes", WORLD_PLANTS, ids=lambda c: json.dumps(c))
def test_public_admin_ingress_rule_caught(changes, stack):
    reg, props = _world_rule(stack, **changes)
    caught(run_resource_policy(POLICY["sg-no-public-admin-ports"], reg.type, reg.urn, props), reg.urn,
           "sg-no-public-admin-ports")


@pytest.mark.parametrize("changes,config", [
    ({"ipProtocol": "tcp", "fromPort": 443.0, "toPort": 443.0}, None),  # not an admin port
    ({"ipProtocol": "icmp", "fromPort": -1.0, "toPort": -1.0}, None),  # no ports
    ({"ipProtocol": "tcp", "fromPort": 22.0, "toPort": 22.0}, {"adminCidrs": ["0.0.0.0/0"]}),  # allowed by config
    ({"ipProtocol": "tcp", "fromPort": 22.0, "toPort": 22.0, "cidrIpv4": "198.51.100.0/24"}, None),  # not world
])
def test_public_admin_ingress_allowed_cases(changes, config):
    reg, props = _world_rule("rke2-dev", **changes)
    found = run_resource_policy(POLICY["sg-no-public-admin-ports"], reg.type, reg.urn, props, config)
    assert not found, found


@pytest.mark.parametrize("stack", STACKS)
def test_public_admin_ingress_inline_and_legacy_rule_caught(stack):
    policy = POLICY["sg-no-public-admin-ports"]
    sg = registrations(stack, rules.SECURITY_GROUP)[0]
    props = copy.deepcopy(sg.inputs)
    props["ingress"] = [{"protocol": "tcp", "fromPort": 6443, "toPort": 6443, "cidrBlocks": ["0.0.0.0/0"]}]
    caught(run_resource_policy(policy, sg.type, sg.urn, props), sg.urn, policy.name)

    urn = sg.urn.replace(rules.SECURITY_GROUP, rules.EC2_SG_RULE) + "-legacy"
    legacy = {"type": "ingress", "protocol": "tcp", "fromPort": 22, "toPort": 22, "ipv6CidrBlocks": ["::/0"],
              "securityGroupId": "sg-1"}
    caught(run_resource_policy(policy, rules.EC2_SG_RULE, urn, legacy), urn, policy.name)


# --- one cluster-tagged security group per instance ---------------------------------------------------


def _second_group(recs: list[Rec], tagged: bool = True) -> Rec:
    sg = node_group(recs)
    extra = copy.deepcopy(sg)
    extra.urn, extra.name, extra.props["id"] = sg.urn + "-extra", sg.name + "-extra", "sg-0extra"
    if not tagged:
        extra.props["tags"] = {"Name": extra.name}
    recs.append(extra)
    return extra


@pytest.mark.parametrize("stack", STACKS)
def test_second_cluster_tagged_group_caught(stack):
    recs = records(stack)
    extra = _second_group(recs)
    inst = of_type(recs, rules.INSTANCE)[0]
    inst.props["vpcSecurityGroupIds"].append(extra.props["id"])
    found = run_stack_policy(POLICY["one-cluster-security-group-per-instance"], recs)
    assert [u for _, u in found] == [inst.urn], found
    assert inst.urn in found[0][0]


@pytest.mark.parametrize("stack", STACKS)
def test_untagged_only_group_caught(stack):
    recs = records(stack)
    sg = node_group(recs)
    sg.props["tags"] = {"Name": sg.name}
    found = run_stack_policy(POLICY["one-cluster-security-group-per-instance"], recs)
    assert sorted(u for _, u in found) == sorted(i.urn for i in of_type(recs, rules.INSTANCE)), found


def test_untagged_extra_group_and_external_group_are_fine():
    recs = records("rke2-prod")
    extra = _second_group(recs, tagged=False)
    for inst in of_type(recs, rules.INSTANCE):
        inst.props["vpcSecurityGroupIds"] += [extra.props["id"], "sg-0outside0stack"]
    assert not run_stack_policy(POLICY["one-cluster-security-group-per-instance"], recs)


def test_preview_unknown_ids_resolved_through_dependencies():
    """First preview: group ids and vpcSecurityGroupIds are unknown; dependencies still say which groups."""
    policy = POLICY["one-cluster-security-group-per-instance"]
    recs = records("rke2-dev")
    for r in recs:
        if r.type == rules.SECURITY_GROUP:
            r.props["id"] = UNKNOWN_STRING_VALUE
        if r.type == rules.INSTANCE:
            r.props["vpcSecurityGroupIds"] = UNKNOWN_ARRAY_VALUE
    assert not run_stack_policy(policy, recs)
    extra = _second_group(recs)
    extra.props["id"] = UNKNOWN_STRING_VALUE
    inst = of_type(recs, rules.INSTANCE)[0]
    inst.prop_deps["vpcSecurityGroupIds"] = [extra.urn.removesuffix("-extra"), extra.urn]
    found = run_stack_policy(policy, recs)
    assert [u for _, u in found] == [inst.urn], found


# --- IAM -------------------------------------------------------------------------------------------

def _with_statement(policy_json: str, stmt: dict) -> str:
    doc = json.loads(policy_json)
    doc["Statement"].append(stmt)
    return json.dumps(doc)


IAM_PLANTS = [
    ("iam-no-wildcard-actions", {"Effect": "Allow", "Action": "*", "Resource": "*"}),
    ("iam-no-wildcard-actions", {"Effect": "Allow", "Action": ["ec2:*"], "Resource": "*"}),
    ("iam-no-wildcard-actions", {"Effect": "Allow", "NotAction": ["iam:*"], "Resource": "*"}),
    ("iam-no-passrole-on-any-resource", {"Effect": "Allow", "Action": ["iam:PassRole"], "Resource": "*"}),
    ("iam-no-passrole-on-any-resource", {"Effect": "Allow", "Action": "iam:Pass*", "Resource": ["*"]}),
    ("iam-known-actions", {"Effect": "Allow", "Action": ["ec2:DescribeInstance"], "Resource": "*"}),  # typo
    ("iam-known-actions", {"Effect": "Allow", "Action": ["elasticloadbalancing:DescribeTargetGroupAttribute"],
                           "Resource": "*"}),
    ("iam-known-actions", {"Effect": "Allow", "Action": ["ec2:Nonexistent*"], "Resource": "*"}),
    ("iam-known-actions", {"Effect": "Allow", "Action": ["kubernetes:DescribeCluster"], "Resource": "*"}),
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("as_type", [rules.IAM_ROLE_POLICY, rules.IAM_USER_POLICY, rules.IAM_POLICY, rules.IAM_ROLE])
@pytest.mark.parametrize("name,stmt", IAM_PLANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(IAM_PLANTS)])
def test_iam_policy_catches_planted_statement(name, stmt, as_type, stack):
    for reg in registrations(stack, rules.IAM_ROLE_POLICY):
        planted = _with_statement(reg.inputs["policy"], stmt)
        if as_type == rules.IAM_ROLE_POLICY:
            urn, props = reg.urn, {**copy.deepcopy(reg.inputs), "policy": planted}
        elif as_type in (rules.IAM_POLICY, rules.IAM_USER_POLICY):
            urn, props = reg.urn.replace(rules.IAM_ROLE_POLICY, as_type), {"policy": planted}
        else:  # the same document inline on a role
            urn = reg.urn.replace(rules.IAM_ROLE_POLICY, rules.IAM_ROLE)
            props = {"inlinePolicies": [{"name": "planted", "policy": planted}]}
        caught(run_resource_policy(POLICY[name], as_type, urn, props), urn, name)


@pytest.mark.parametrize("name,stmt", [
    ("iam-no-wildcard-actions", {"Effect": "Deny", "Action": "*", "Resource": "*"}),
    ("iam-no-wildcard-actions", {"Effect": "Allow", "Action": ["ec2:Describe*"], "Resource": "*"}),
    ("iam-no-passrole-on-any-resource", {"Effect": "Allow", "Action": "iam:PassRole",
                                         "Resource": "arn:aws:iam::123456789012:role/rke-*"}),
    ("iam-known-actions", {"Effect": "Allow", "Action": ["ec2:Describe*", "ECR:getauthorizationtoken"],
                           "Resource": "*"}),
])
def test_iam_policy_allowed_statements(name, stmt):
    reg = registrations("rke2-dev", rules.IAM_ROLE_POLICY)[0]
    props = {**copy.deepcopy(reg.inputs), "policy": _with_statement(reg.inputs["policy"], stmt)}
    assert not run_resource_policy(POLICY[name], reg.type, reg.urn, props)


# --- management conflicts -----------------------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("direction", ["ingress", "egress"])
def test_inline_sg_rules_beside_rule_resources_caught(direction, stack):
    recs = records(stack)
    sg = node_group(recs)
    sg.props[direction] = [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/8"]}]
    found = run_stack_policy(POLICY["sg-rules-single-owner"], recs)
    assert [u for _, u in found] == [sg.urn], found
    assert sg.urn in found[0][0]


def test_legacy_rule_resource_beside_inline_rules_caught():
    recs = [r for r in records("rke2-dev") if r.type not in (rules.SG_INGRESS_RULE, rules.SG_EGRESS_RULE)]
    sg = node_group(recs)
    sg.props["ingress"] = [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/8"]}]
    assert not run_stack_policy(POLICY["sg-rules-single-owner"], recs)  # inline only: one owner
    recs.append(Rec(rules.EC2_SG_RULE, sg.urn + "-legacy", "legacy",
                    {"type": "ingress", "protocol": "tcp", "fromPort": 22, "toPort": 22,
                     "cidrBlocks": ["10.0.0.0/8"], "securityGroupId": sg.props["id"]}, [sg.urn]))
    found = run_stack_policy(POLICY["sg-rules-single-owner"], recs)
    assert [u for _, u in found] == [sg.urn], found


@pytest.mark.parametrize("stack", STACKS)
def test_refreshed_group_listing_its_rule_resources_is_fine(stack):
    """After `pulumi refresh` a group's ingress/egress outputs list what its rule resources created."""
    recs = records(stack)
    sg = node_group(recs)
    sg.props["ingress"], sg.props["egress"] = [], []
    for r in recs:
        if r.type in (rules.SG_INGRESS_RULE, rules.SG_EGRESS_RULE) and r.props.get("securityGroupId") == sg.props["id"]:
            p = r.props
            ref = p.get("referencedSecurityGroupId")
            entry = {"protocol": p["ipProtocol"], "fromPort": p.get("fromPort", 0), "toPort": p.get("toPort", 0),
                     "cidrBlocks": [p["cidrIpv4"]] if "cidrIpv4" in p else [],
                     "self": ref == sg.props["id"], "securityGroups": [ref] if ref and ref != sg.props["id"] else []}
            sg.props["ingress" if r.type == rules.SG_INGRESS_RULE else "egress"].append(entry)
    assert not run_stack_policy(POLICY["sg-rules-single-owner"], recs)


ROLE_PLANTS = [
    lambda role, pol: role.props.update(inlinePolicies=[{"name": "extra", "policy": pol.props["policy"].replace(
        "ec2:DescribeInstances", "ec2:DescribeTags")}]),
    lambda role, pol: role.props.update(managedPolicyArns=["arn:aws:iam::aws:policy/ReadOnlyAccess"]),
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("plant", ROLE_PLANTS, ids=["inlinePolicies", "managedPolicyArns"])
def test_role_policies_on_role_beside_separate_resources_caught(plant, stack):
    recs = records(stack)
    # The node roles (an IRSA role of workload identity has policies of its own kinds).
    node_roles = [r for r in of_type(recs, rules.IAM_ROLE) if "rke-aws:identity:WorkloadIdentity" not in r.urn]
    for role in node_roles:
        # The role's cloud-provider policy (an RKE2 role has a second one, the token read; which of
        # the two registers first varies between runs, so pick by content, not by order).
        pol = next(r for r in of_type(recs, rules.IAM_ROLE_POLICY)
                   if role.urn in r.deps and "ec2:DescribeInstances" in r.props["policy"])
        plant(role, pol)
    found = run_stack_policy(POLICY["role-policies-single-owner"], recs)
    assert sorted(u for _, u in found) == sorted(r.urn for r in node_roles), found
    assert all(u in m for m, u in found)


@pytest.mark.parametrize("stack", STACKS)
def test_refreshed_role_listing_its_policy_resources_is_fine(stack):
    recs = records(stack)
    for role in of_type(recs, rules.IAM_ROLE):
        mine = [r for r in recs if r.type in (rules.IAM_ROLE_POLICY, rules.IAM_ROLE_POLICY_ATTACHMENT)
                and role.urn in r.deps]
        role.props["inlinePolicies"] = [{"name": "", "policy": ""}] + [
            {"name": r.props["name"], "policy": r.props["policy"]} for r in mine if r.type == rules.IAM_ROLE_POLICY]
        role.props["managedPolicyArns"] = [r.props["policyArn"] for r in mine
                                           if r.type == rules.IAM_ROLE_POLICY_ATTACHMENT]
    assert not run_stack_policy(POLICY["role-policies-single-owner"], recs)


# --- Rancher ------------------------------------------------------------------------------------

RANCHER_PLANTS = [
    ("rancher-cluster-imported", rules.RANCHER_CLUSTER, lambda p: p.update(rke2Config={"version": "v1.35.7+rke2r1"})),
    ("rancher-cluster-imported", rules.RANCHER_CLUSTER, lambda p: p.update(annotations={})),
    ("rancher-cluster-imported", rules.RANCHER_CLUSTER,
     lambda p: p.update(annotations={rules.VERSION_MANAGEMENT: "system-default"})),
    ("rancher-provider-verifies-tls", rules.RANCHER_PROVIDER, lambda p: p.update(insecure="true")),
    ("rancher-provider-verifies-tls", rules.RANCHER_PROVIDER, lambda p: p.update(insecure=True)),
]


@pytest.mark.parametrize("stack", ["rke-phase2", "rke2-govcloud"])  # the fixtures that register in Rancher
@pytest.mark.parametrize("name,typ,plant", RANCHER_PLANTS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RANCHER_PLANTS)])
def test_rancher_policy_catches_planted_violation(name, typ, plant, stack):
    for reg in registrations(stack, typ):
        assert not run_resource_policy(POLICY[name], reg.type, reg.urn, copy.deepcopy(reg.inputs)), reg.urn
        props = copy.deepcopy(reg.inputs)
        plant(props)
        caught(run_resource_policy(POLICY[name], reg.type, reg.urn, props), reg.urn, name)
