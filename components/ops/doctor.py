"""`rke-aws doctor <stack>`: check an AWS account for what the cloud controller manager needs.

Reads what to expect from the stack's outputs (node names, cluster ID, VPC, subnets, instance
profiles) and checks the account through boto3, read-only:

  instances       each node's instance exists and its PrivateDnsName is the node name
  cluster-tag     each instance carries exactly one kubernetes.io/cluster/* tag, this cluster's
  security-group  exactly one cluster-tagged security group is attached to each instance
  iam             the instance profile's role allows every action its node role needs, by name (a
                  necessary condition only: Resource and Condition are not evaluated here)
  iam-simulate    what AWS decides: iam:SimulatePrincipalPolicy for the role, each call the node
                  makes on this cluster's resources (their ARNs and tags as context); WARN, never
                  PASS, when AWS cannot be asked (no permission, or the emulated account: moto does
                  not implement the simulator)
  imds            IMDSv2 required, endpoint on, hop limit 1 (2 only with a stated reason: a warning)
  vpc-dns         the VPC has DNS support and DNS hostnames on
  subnets         per AZ: a public subnet (route to an igw-) tagged kubernetes.io/role/elb and a
                  private one tagged kubernetes.io/role/internal-elb, all with the cluster tag
  rancher         (stacks with `rancher`, real runs only) Rancher answers at its URL; with RANCHER_TOKEN
                  set, the imported cluster exists and its version-management annotation still says
                  who upgrades (someone flipping it in Rancher's UI makes both sides write Plans)

Where the expectations come from:
  default     real credentials (boto3's usual chain, or --profile); outputs from
              `pulumi stack output --json` when the Pulumi CLI is installed, else --outputs FILE
  --emulated  builds the stack in an emulated account (moto, as `rke-aws plan` does) and checks that
              account; no credentials, no network (the command's option: this package never imports moto)

Each check prints PASS / WARN / FAIL, and on FAIL the fix. Exit status 1 on any FAIL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..aws import iam_policies as iam_policy
from ..settings import tags as tagsets
from ..state.migrations import from_outputs
from .doctor_iam import allowed_actions, role_documents, simulate, simulations
from .doctor_rancher import VERSION_MANAGEMENT, RancherGet, check_rancher_cluster, rancher_get
from .results import FAIL, PASS, WARN, Result, failed, report

# Names other modules read from here (the CLI, the tests): the results and the Rancher check's constants.
__all__ = ["FAIL", "PASS", "VERSION_MANAGEMENT", "WARN", "Result", "failed", "report"]

LIVE_STATES = ["pending", "running", "stopping", "stopped"]


@dataclass(frozen=True)
class NodeExpectation:
    name: str  # node name = EC2 private DNS name
    roles: tuple[str, ...]
    instance_id: str = ""
    rke2: bool = False

    @property
    def iam_role(self) -> str:
        """RKE2 etcd-only servers have a role of their own (components/plan/nodes.py)."""
        if "controlplane" in self.roles:
            return "controlplane"
        return "etcd" if self.rke2 and "etcd" in self.roles else "worker"


@dataclass(frozen=True)
class Expectations:
    cluster_id: str
    nodes: tuple[NodeExpectation, ...]
    vpc_id: str = ""
    subnet_ids: dict[str, str] = field(default_factory=dict)  # "public-0" -> subnet ID
    security_group_id: str = ""
    instance_profile_names: dict[str, str] = field(default_factory=dict)
    stack: str = ""
    rancher: dict[str, str] = field(default_factory=dict)  # rancherCluster: name, upgrades, id, url

    @property
    def cluster_tag(self) -> str:
        return tagsets.cluster_tag_key(self.cluster_id)

    @classmethod
    def from_outputs(cls, outputs: dict, stack: str = "") -> Expectations:
        """What the stack's last outputs say should exist, read through the typed state (rke_aws.state: the one
        place output keys are spelled, with the migrations of older releases' outputs)."""
        missing = [k for k in ("clusterId", "nodes") if k not in outputs]
        if missing:
            raise ValueError(f"stack outputs lack {', '.join(missing)}; run `pulumi up` first")
        state = from_outputs(outputs)
        if state is None or not state.cluster_id:
            raise ValueError("stack outputs lack clusterId, nodes; run `pulumi up` first")
        rke2 = state.distribution == "rke2"
        nodes = tuple(NodeExpectation(n.name, tuple(n.roles), n.instance_id or "", rke2) for n in state.nodes)
        rancher = state.rancher_cluster
        return cls(cluster_id=state.cluster_id, nodes=nodes, vpc_id=state.vpc_id or "", subnet_ids=dict(state.subnet_ids),
                   security_group_id=state.security_group_id or "",
                   instance_profile_names=dict(state.instance_profile_names), stack=stack,
                   rancher={k: v for k, v in (("name", rancher.name), ("upgrades", rancher.upgrades), ("id", rancher.id),
                                              ("url", rancher.url)) if v} if rancher else {})


class Clients:
    """The boto3 clients the checks use, plus a cache of what several checks read."""

    def __init__(self, ec2: Any, iam: Any):
        self.ec2 = ec2
        self.iam = iam
        self.cache: dict[str, Any] = {}

    @classmethod
    def from_session(cls, session: Any) -> Clients:
        return cls(session.client("ec2"), session.client("iam"))


def _tags(obj: dict) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in obj.get("Tags") or []}


def _cluster_tags(obj: dict) -> list[str]:
    return tagsets.cluster_tags_in(_tags(obj))


def _create_tags_fix(resource: str, pairs: dict[str, str]) -> str:
    return (f"aws ec2 create-tags --resources {resource} --tags "
            + " ".join(f"Key={k},Value={v}" for k, v in pairs.items()) + " (or `pulumi up` to restore it)")


# ---- reading the account ----------------------------------------------------------------------

# Node names per DescribeInstances, as the CCM asks (kubernetes/cloud-provider-aws pkg/providers/v1/aws.go
# filterNodeLimit, "The AWS limit is 200 but we are using a lower limit on purpose"): a cluster of N nodes costs
# N/150 requests against EC2's request limit, not N.
FILTER_NODE_LIMIT = 150


def node_instances(c: Clients, exp: Expectations) -> dict[str, dict | None]:
    """Node name -> its instance, found the way the CCM finds it: by private-dns-name, FILTER_NODE_LIMIT names a
    request, every page."""
    if "instances" in c.cache:
        return c.cache["instances"]
    names = list(dict.fromkeys(node.name for node in exp.nodes))
    by_name: dict[str, list[dict]] = {}
    for start in range(0, len(names), FILTER_NODE_LIMIT):
        for inst in _describe_instances(c, [{"Name": "private-dns-name", "Values": names[start:start + FILTER_NODE_LIMIT]},
                                            {"Name": "instance-state-name", "Values": LIVE_STATES}]):
            by_name.setdefault(inst.get("PrivateDnsName", ""), []).append(inst)
    found: dict[str, dict | None] = {}
    for node in exp.nodes:
        insts = by_name.get(node.name, [])
        if exp.vpc_id and len(insts) > 1:
            insts = [i for i in insts if i.get("VpcId") == exp.vpc_id] or insts
        found[node.name] = next((i for i in insts if i["InstanceId"] == node.instance_id), insts[0] if insts else None)
    c.cache["instances"] = found
    return found


def _describe_instances(c: Clients, filters: list[dict]) -> list[dict]:
    """Every instance DescribeInstances finds, page after page (NextToken), as the CCM reads it
    (kubernetes/cloud-provider-aws pkg/providers/v1/aws_sdk.go DescribeInstances)."""
    out: list[dict] = []
    token: str | None = None
    while True:
        res = c.ec2.describe_instances(Filters=filters, **({"NextToken": token} if token else {}))
        out += [i for r in res["Reservations"] for i in r["Instances"]]
        token = res.get("NextToken")
        if not token:
            return out


def _instance_profile(c: Clients, name: str) -> dict:
    """An instance profile, read once per doctor run: every node of a role carries the same one."""
    key = f"profile:{name}"
    if key not in c.cache:
        c.cache[key] = c.iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
    return c.cache[key]


def _security_groups(c: Clients, ids: list[str]) -> list[dict]:
    """The security groups of `ids`, read once per doctor run and set of groups: the nodes share them."""
    key = "groups:" + ",".join(sorted(set(ids)))
    if key not in c.cache:
        c.cache[key] = c.ec2.describe_security_groups(GroupIds=ids)["SecurityGroups"] if ids else []
    return c.cache[key]


def _instance_by_id(c: Clients, instance_id: str) -> dict | None:
    try:
        res = c.ec2.describe_instances(InstanceIds=[instance_id])
    except Exception:  # noqa: BLE001 - InvalidInstanceID.NotFound and friends
        return None
    return next((i for r in res["Reservations"] for i in r["Instances"]), None)


def _present(c: Clients, exp: Expectations):
    for node in exp.nodes:
        inst = node_instances(c, exp).get(node.name)
        if inst is not None:
            yield node, inst


def _subject(node: NodeExpectation, inst: dict) -> str:
    return f"{inst['InstanceId']} ({node.name})"


# ---- checks: each takes the clients and the expectations, returns results -----------------------

def check_instances(c: Clients, exp: Expectations) -> list[Result]:
    out = []
    for node in exp.nodes:
        inst = node_instances(c, exp).get(node.name)
        if inst is not None:
            out.append(Result("instances", PASS, node.name, f"{inst['InstanceId']} has PrivateDnsName {inst['PrivateDnsName']}"))
            continue
        other = _instance_by_id(c, node.instance_id) if node.instance_id else None
        if other is not None:
            out.append(Result("instances", FAIL, node.name,
                              f"instance {other['InstanceId']} has PrivateDnsName {other.get('PrivateDnsName')!r}, not the node name; "
                              "the CCM finds nodes by private-dns-name and never initialises this one",
                              "use the EC2 private DNS name as node name (no custom DHCP domain-name in the VPC); "
                              f"replace the instance: pulumi up --replace <urn of {node.name}>"))
        else:
            out.append(Result("instances", FAIL, node.name, "no instance has this PrivateDnsName",
                              "run `pulumi up` (the instance is missing or was replaced outside Pulumi), then `pulumi refresh`"))
    return out


def check_cluster_tag(c: Clients, exp: Expectations) -> list[Result]:
    out = []
    for node, inst in _present(c, exp):
        found = _cluster_tags(inst)
        subject = _subject(node, inst)
        if found == [exp.cluster_tag]:
            out.append(Result("cluster-tag", PASS, subject, f"exactly one cluster tag, {exp.cluster_tag}"))
        elif not found:
            out.append(Result("cluster-tag", FAIL, subject,
                              "no kubernetes.io/cluster/* tag: the CCM cannot find its cluster ID on this instance and "
                              "leaves it out of load balancer backends",
                              _create_tags_fix(inst["InstanceId"], {exp.cluster_tag: tagsets.OWNED})))
        elif len(found) > 1:
            extra = [k for k in found if k != exp.cluster_tag] or found[1:]
            out.append(Result("cluster-tag", FAIL, subject,
                              f"{len(found)} kubernetes.io/cluster/* tags ({', '.join(found)}): the CCM refuses to start",
                              f"aws ec2 delete-tags --resources {inst['InstanceId']} --tags "
                              + " ".join(f"Key={k}" for k in extra)))
        else:
            out.append(Result("cluster-tag", FAIL, subject, f"tagged for another cluster ({found[0]}), not {exp.cluster_tag}",
                              f"aws ec2 delete-tags --resources {inst['InstanceId']} --tags Key={found[0]}; "
                              + _create_tags_fix(inst["InstanceId"], {exp.cluster_tag: tagsets.OWNED})))
    return out


def check_security_group(c: Clients, exp: Expectations) -> list[Result]:
    out = []
    for node, inst in _present(c, exp):
        ids = [g["GroupId"] for g in inst.get("SecurityGroups") or []]
        groups = _security_groups(c, ids)
        tagged = sorted(g["GroupId"] for g in groups if exp.cluster_tag in _tags(g))
        subject = _subject(node, inst)
        if len(tagged) == 1:
            out.append(Result("security-group", PASS, subject, f"one cluster-tagged security group attached ({tagged[0]})"))
        elif not tagged:
            want = exp.security_group_id or "<the cluster's security group>"
            out.append(Result("security-group", FAIL, subject,
                              f"none of its security groups ({', '.join(ids) or 'none'}) carries {exp.cluster_tag}: "
                              "the CCM has no group to open for load balancer traffic",
                              f"attach {want}: aws ec2 modify-instance-attribute --instance-id {inst['InstanceId']} "
                              f"--groups {' '.join(sorted(set(ids) | {want}))} (or `pulumi up`)"))
        else:
            keep = exp.security_group_id if exp.security_group_id in tagged else tagged[0]
            rest = [g for g in tagged if g != keep]
            out.append(Result("security-group", FAIL, subject,
                              f"{len(tagged)} cluster-tagged security groups attached ({', '.join(tagged)}): "
                              "\"Multiple tagged security groups found for instance\", no load balancer is created",
                              f"detach {', '.join(rest)}: aws ec2 modify-instance-attribute --instance-id {inst['InstanceId']} "
                              f"--groups {' '.join(g for g in ids if g not in rest)}; or remove {exp.cluster_tag} from "
                              f"{', '.join(rest)}"))
    return out


def _documents(c: Clients, role_name: str) -> list[tuple[str, dict]]:
    return role_documents(c.iam, role_name)


def check_iam(c: Clients, exp: Expectations) -> list[Result]:
    out = []
    for node, inst in _present(c, exp):
        subject = _subject(node, inst)
        arn = (inst.get("IamInstanceProfile") or {}).get("Arn")
        expected_profile = exp.instance_profile_names.get(node.iam_role, "<the cluster's instance profile>")
        if not arn:
            out.append(Result("iam", FAIL, subject, "no instance profile: the CCM and the node have no AWS credentials",
                              f"aws ec2 associate-iam-instance-profile --instance-id {inst['InstanceId']} "
                              f"--iam-instance-profile Name={expected_profile}"))
            continue
        profile_name = arn.rsplit("/", 1)[-1]
        roles = _instance_profile(c, profile_name)["Roles"]
        if not roles:
            out.append(Result("iam", FAIL, subject, f"instance profile {profile_name} holds no role",
                              f"aws iam add-role-to-instance-profile --instance-profile-name {profile_name} --role-name <role>"))
            continue
        role_name = roles[0]["RoleName"]
        needed = iam_policy.actions_for(node.iam_role)
        if f"docs:{role_name}" not in c.cache:
            c.cache[f"docs:{role_name}"] = _documents(c, role_name)
        docs = c.cache[f"docs:{role_name}"]
        missing = sorted(set(needed) - allowed_actions((d for _, d in docs), needed), key=str.lower)
        if missing:
            out.append(Result("iam", FAIL, subject,
                              f"role {role_name} (profile {profile_name}) does not allow {len(missing)} of the {len(needed)} "
                              f"actions a {node.iam_role} node needs: {', '.join(missing)}",
                              f"add them to {role_name}'s inline policy (components/aws/iam_policies.py lists them; "
                              "`pulumi up` restores the policy)"))
        else:
            out.append(Result("iam", PASS, subject,
                              f"role {role_name} (profile {profile_name}) allows all {len(needed)} {node.iam_role} actions "
                              "by name (what AWS decides on this cluster's resources: iam-simulate)"))
    return out


def _existing_resources(c: Clients, exp: Expectations, partition: str, region: str, account: str) -> dict:
    out = {}
    vpc = _vpc_id(c, exp)
    if vpc:
        (v,) = c.ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]
        out["vpc"] = (f"arn:{partition}:ec2:{region}:{account}:vpc/{vpc}", _tags(v))
    if exp.security_group_id:
        (g,) = _security_groups(c, [exp.security_group_id])
        out["security-group"] = (f"arn:{partition}:ec2:{region}:{account}:security-group/{g['GroupId']}", _tags(g))
    return out


def check_iam_simulate(c: Clients, exp: Expectations) -> list[Result]:
    """What AWS decides for each node role: the action-name check above cannot see a tag-scoped
    policy that names this cluster wrongly, a Resource that misses its resources, or a Deny."""
    out = []
    roles: dict[str, tuple[str, str, str]] = {}  # role name -> (node role, role ARN, profile)
    for node, inst in _present(c, exp):
        arn = (inst.get("IamInstanceProfile") or {}).get("Arn")
        if not arn:
            continue  # the iam check reports it
        profile = _instance_profile(c, arn.rsplit("/", 1)[-1])
        if profile["Roles"]:
            roles.setdefault(profile["Roles"][0]["RoleName"], (node.iam_role, profile["Roles"][0]["Arn"], profile["InstanceProfileName"]))
    for role_name, (node_role, role_arn, profile) in sorted(roles.items()):
        partition, account = role_arn.split(":")[1], role_arn.split(":")[4]
        region = c.ec2.meta.region_name
        subject = f"role {role_name} (profile {profile})"
        try:
            sims = simulations(node_role, exp.cluster_id, partition, region, account,
                               _existing_resources(c, exp, partition, region, account))
            denied = simulate(c.iam, role_arn, sims)
        except Exception as err:  # noqa: BLE001 - no permission, or an API the account does not implement
            out.append(Result("iam-simulate", WARN, subject,
                              f"could not ask AWS (iam:SimulatePrincipalPolicy): {' '.join(str(err).split())[:300]}; "
                              "only the action names were checked (iam), not Resource, Condition or Deny",
                              "run the doctor with credentials allowed iam:SimulatePrincipalPolicy on this role"))
            continue
        calls = sum(len(s.actions) for s in sims)
        if denied:
            shown = "; ".join(f"{a} on {r} ({d}, {w})" for a, r, d, w in denied[:8])
            out.append(Result("iam-simulate", FAIL, subject,
                              f"AWS denies {len(denied)} of the {calls} {node_role} calls on this cluster's resources: {shown}"
                              + (" ..." if len(denied) > 8 else ""),
                              f"`pulumi up` restores {role_name}'s policy (components/aws/iam_policies.py); look for a Deny, "
                              "a permissions boundary or a condition that names another cluster"))
        else:
            out.append(Result("iam-simulate", PASS, subject,
                              f"AWS's policy simulator allows all {calls} {node_role} calls on this cluster's resources"))
    return out


# Instance tag a pool sets when it opts into hop limit 2 (components/aws/nodes.py IMDS_REASON_TAG).
IMDS_REASON_TAG = "rke-aws/imds-hop-limit-reason"


def check_imds(c: Clients, exp: Expectations) -> list[Result]:
    """IMDSv2 required; hop limit 1 (the CCM runs on the host network), 2 only with a stated reason:
    with 2, every pod on the pod network can take the node role's credentials."""
    out = []
    for node, inst in _present(c, exp):
        md = inst.get("MetadataOptions") or {}
        subject = _subject(node, inst)
        hop = int(md.get("HttpPutResponseHopLimit") or 1)
        reason = _tags(inst).get(IMDS_REASON_TAG, "").strip()
        fix = (f"aws ec2 modify-instance-metadata-options --instance-id {inst['InstanceId']} "
               "--http-endpoint enabled --http-tokens required --http-put-response-hop-limit 1")
        problems = []
        if md.get("HttpEndpoint", "enabled") != "enabled":
            problems.append("the metadata endpoint is disabled (the CCM reads its region and instance ID there)")
        if md.get("HttpTokens") != "required":
            problems.append(f"IMDSv2 is not required (HttpTokens={md.get('HttpTokens')!r})")
        if hop > 2:
            problems.append(f"hop limit {hop} lets containers beyond the node reach instance credentials; use 1")
        elif hop == 2 and not reason:
            problems.append(f"hop limit 2 lets every pod on the node take its role's credentials, and the instance "
                            f"states no reason ({IMDS_REASON_TAG}); use 1, or set the pool's imdsHopLimitReason")
        if problems:
            out.append(Result("imds", FAIL, subject, "; ".join(problems), fix))
        elif hop == 2:
            out.append(Result("imds", WARN, subject,
                              f"hop limit 2: pods on the pod network can take the node role's credentials (reason: {reason})", fix))
        else:
            out.append(Result("imds", PASS, subject, "IMDSv2 required, hop limit 1 (host-network pods only)"))
    return out


def _vpc_id(c: Clients, exp: Expectations) -> str:
    if exp.vpc_id:
        return exp.vpc_id
    return next((inst.get("VpcId", "") for inst in node_instances(c, exp).values() if inst), "")


def check_vpc_dns(c: Clients, exp: Expectations) -> list[Result]:
    vpc = _vpc_id(c, exp)
    if not vpc:
        return [Result("vpc-dns", FAIL, "VPC", "no VPC to check (no vpcId output and no instance found)", "run `pulumi up`")]
    out = []
    for attr, flag in (("enableDnsSupport", "--enable-dns-support"), ("enableDnsHostnames", "--enable-dns-hostnames")):
        value = c.ec2.describe_vpc_attribute(VpcId=vpc, Attribute=attr)[attr[0].upper() + attr[1:]]["Value"]
        if value:
            out.append(Result("vpc-dns", PASS, vpc, f"{attr} is on"))
        else:
            out.append(Result("vpc-dns", FAIL, vpc,
                              f"{attr} is off: instances get no private DNS names, so node names match no instance",
                              f"aws ec2 modify-vpc-attribute --vpc-id {vpc} {flag} '{{\"Value\":true}}' (or `pulumi up`)"))
    return out


def check_subnets(c: Clients, exp: Expectations) -> list[Result]:
    vpc = _vpc_id(c, exp)
    if not vpc:
        return [Result("subnets", FAIL, "VPC", "no VPC to check", "run `pulumi up`")]
    subnets = c.ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    tables = c.ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["RouteTables"]
    main = next((t for t in tables if any(a.get("Main") for a in t.get("Associations") or [])), None)
    table_of = {a["SubnetId"]: t for t in tables for a in t.get("Associations") or [] if a.get("SubnetId")}
    key_of = {v: k for k, v in exp.subnet_ids.items()}

    def is_public(s: dict) -> bool:
        t = table_of.get(s["SubnetId"], main) or {}
        return any(str(r.get("GatewayId", "")).startswith("igw-") for r in t.get("Routes") or [])

    def name(s: dict) -> str:
        return s["SubnetId"] + (f" ({key_of[s['SubnetId']]})" if s["SubnetId"] in key_of else "")

    def other_cluster(s: dict) -> bool:
        return any(k != exp.cluster_tag for k in _cluster_tags(s))

    azs = sorted({s["AvailabilityZone"] for s in subnets if s["SubnetId"] in key_of}
                 | {i["Placement"]["AvailabilityZone"] for i in node_instances(c, exp).values() if i})
    out = []
    # An air-gapped VPC (issue 35: `airgap`) routes nowhere through an internet gateway: it has no public tier.
    airgapped = not any(str(r.get("GatewayId", "")).startswith("igw-") for t in tables for r in t.get("Routes") or [])
    for az in azs:
        if airgapped:
            out.append(Result("subnets", PASS, f"{az} public", "no route to an internet gateway in the VPC (air-gapped): "
                                                               "no internet-facing load balancers, as intended"))
        for tier, role_tag, purpose in (("public", tagsets.ROLE_ELB, "internet-facing"),
                                        ("private", tagsets.ROLE_INTERNAL_ELB, "internal")):
            if airgapped and tier == "public":
                continue
            cands = [s for s in subnets if s["AvailabilityZone"] == az and is_public(s) == (tier == "public")
                     and not other_cluster(s)]
            good = [s for s in cands if exp.cluster_tag in _tags(s) and role_tag in _tags(s)]
            subject = f"{az} {tier}"
            if good:
                out.append(Result("subnets", PASS, subject,
                                  f"{', '.join(name(s) for s in good)} tagged {role_tag} and {exp.cluster_tag}"))
                continue
            if not cands:
                what = "route to an internet gateway (igw-)" if tier == "public" else "no route to an internet gateway"
                out.append(Result("subnets", FAIL, subject, f"no subnet with {what}: no {purpose} load balancers in {az}",
                                  f"create a {tier} subnet in {az} (`pulumi up`), or list one in network.{tier}SubnetIds"))
                continue
            # Name what each candidate lacks; prefer the subnets this stack manages.
            cands.sort(key=lambda s: (s["SubnetId"] not in key_of, s["SubnetId"]))
            s = cands[0]
            lacks = {k: v for k, v in ((exp.cluster_tag, tagsets.OWNED), (role_tag, "1")) if k not in _tags(s)}
            out.append(Result("subnets", FAIL, subject,
                              f"subnet {name(s)} lacks {', '.join(lacks)}: the CCM finds no {tier} subnet in {az} for "
                              f"{purpose} load balancers (\"could not find any suitable subnets\")",
                              _create_tags_fix(s["SubnetId"], lacks)))
    for s in subnets:  # every subnet this stack manages carries the cluster tag
        if s["SubnetId"] in key_of and exp.cluster_tag not in _tags(s) and not any(
                r.status == FAIL and s["SubnetId"] in r.detail for r in out):
            out.append(Result("subnets", FAIL, name(s), f"lacks {exp.cluster_tag}",
                              _create_tags_fix(s["SubnetId"], {exp.cluster_tag: tagsets.OWNED})))
    return out


CHECKS: tuple[Callable[[Clients, Expectations], list[Result]], ...] = (
    check_instances, check_cluster_tag, check_security_group, check_iam, check_iam_simulate, check_imds, check_vpc_dns,
    check_subnets,
)


def check_rancher(exp: Expectations, token: str | None, get: RancherGet = rancher_get) -> list[Result]:
    """Rancher answers; with a token, the imported cluster exists and its annotation says who upgrades."""
    return check_rancher_cluster(exp.rancher, token, get)


def run_checks(clients: Clients, exp: Expectations,
               checks: Iterable[Callable[[Clients, Expectations], list[Result]]] = CHECKS) -> list[Result]:
    results: list[Result] = []
    for check in checks:
        name = check.__name__.removeprefix("check_").replace("_", "-")
        try:
            results += check(clients, exp)
        except Exception as err:  # noqa: BLE001 - e.g. AccessDenied: report it as a failed check
            results.append(Result(name, FAIL, "account", f"could not check: {err}",
                                  "give these credentials read access (ec2:Describe*, iam:GetInstanceProfile, "
                                  "iam:ListRolePolicies, iam:GetRolePolicy, iam:ListAttachedRolePolicies)"))
    return results


def check_account(session: Any, exp: Expectations) -> list[Result]:
    """`session`: a boto3 session (or anything with `client(service)`, as the emulated account), or ready
    `Clients`."""
    # By shape, not class: ready Clients made by whoever imported this module under another name.
    ready = hasattr(session, "ec2") and hasattr(session, "iam") and hasattr(session, "cache")
    return run_checks(session if ready else Clients.from_session(session), exp)
