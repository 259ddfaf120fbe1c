"""`make doctor STACK=<stack>`: check an AWS account for what the cloud controller manager needs.

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
  --emulated  builds the stack in an emulated account (moto, as `make plan` does) and checks that
              account; no credentials, no network

Each check prints PASS / WARN / FAIL, and on FAIL the fix. Exit status 1 on any FAIL.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..aws import iam_policies as iam_policy
from ..settings import tags as tagsets

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"
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
        missing = [k for k in ("clusterId", "nodes") if k not in outputs]
        if missing:
            raise ValueError(f"stack outputs lack {', '.join(missing)}; run `pulumi up` first")
        rke2 = outputs.get("distribution") == "rke2"
        nodes = tuple(NodeExpectation(n["name"], tuple(n.get("roles") or ()), n.get("instanceId") or "", rke2)
                      for n in outputs["nodes"])
        return cls(cluster_id=outputs["clusterId"], nodes=nodes, vpc_id=outputs.get("vpcId") or "",
                   subnet_ids=dict(outputs.get("subnetIds") or {}), security_group_id=outputs.get("securityGroupId") or "",
                   instance_profile_names=dict(outputs.get("instanceProfileNames") or {}), stack=stack,
                   rancher=dict(outputs.get("rancherCluster") or {}))


@dataclass
class Result:
    check: str
    status: str
    subject: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status}  {self.check:<14} {self.subject}: {self.detail}"
        return text + (f"\n      fix: {self.fix}" if self.fix and self.status != PASS else "")


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

def node_instances(c: Clients, exp: Expectations) -> dict[str, dict | None]:
    """Node name -> its instance, found the way the CCM finds it: by private-dns-name."""
    if "instances" in c.cache:
        return c.cache["instances"]
    found: dict[str, dict | None] = {}
    for node in exp.nodes:
        res = c.ec2.describe_instances(Filters=[{"Name": "private-dns-name", "Values": [node.name]},
                                                {"Name": "instance-state-name", "Values": LIVE_STATES}])
        insts = [i for r in res["Reservations"] for i in r["Instances"]]
        if exp.vpc_id and len(insts) > 1:
            insts = [i for i in insts if i.get("VpcId") == exp.vpc_id] or insts
        pick = next((i for i in insts if i["InstanceId"] == node.instance_id), insts[0] if insts else None)
        found[node.name] = pick
    c.cache["instances"] = found
    return found


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
        groups = c.ec2.describe_security_groups(GroupIds=ids)["SecurityGroups"] if ids else []
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
    docs: list[tuple[str, dict]] = []
    for pname in c.iam.list_role_policies(RoleName=role_name)["PolicyNames"]:
        doc = c.iam.get_role_policy(RoleName=role_name, PolicyName=pname)["PolicyDocument"]
        docs.append((pname, json.loads(doc) if isinstance(doc, str) else doc))
    for att in c.iam.list_attached_role_policies(RoleName=role_name)["AttachedPolicies"]:
        try:  # managed policies count too; AWS-managed ones may be unreadable in an emulator
            version = c.iam.get_policy(PolicyArn=att["PolicyArn"])["Policy"]["DefaultVersionId"]
            doc = c.iam.get_policy_version(PolicyArn=att["PolicyArn"], VersionId=version)["PolicyVersion"]["Document"]
        except Exception:  # noqa: BLE001
            continue
        docs.append((att["PolicyName"], json.loads(doc) if isinstance(doc, str) else doc))
    return docs


def _as_list(v: Any) -> list:
    return [v] if isinstance(v, str) else list(v or [])


def allowed_actions(documents: Iterable[dict], needed: Iterable[str]) -> set[str]:
    """The needed actions the documents allow (Allow matches, no Deny matches; wildcards honoured)."""
    allow: list[str] = []
    deny: list[str] = []
    for doc in documents:
        stmts = doc.get("Statement") or []
        for st in [stmts] if isinstance(stmts, dict) else stmts:
            (allow if st.get("Effect") == "Allow" else deny).extend(a.lower() for a in _as_list(st.get("Action")))

    def matches(action: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(action.lower(), p) for p in patterns)

    return {a for a in needed if matches(a, allow) and not matches(a, deny)}


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
        roles = c.iam.get_instance_profile(InstanceProfileName=profile_name)["InstanceProfile"]["Roles"]
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


# ---- what AWS decides: the IAM policy simulator ----------------------------------------------------

@dataclass(frozen=True)
class Simulation:
    """One iam:SimulatePrincipalPolicy request: actions on resources, with a request context."""
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (key, values)
    what: str = ""

    def request(self, role_arn: str) -> dict:
        entries = [{"ContextKeyName": k, "ContextKeyValues": list(v), "ContextKeyType": "stringList" if len(v) > 1 else "string"}
                   for k, v in self.context]
        req: dict[str, Any] = {"PolicySourceArn": role_arn, "ActionNames": list(self.actions),
                               "ResourceArns": list(self.resources)}
        if entries:
            req["ContextEntries"] = entries
        return req


# A resource of each type the CCM creates (none exists before it creates one): ARNs of the shape AWS gives.
_SAMPLE_RESOURCES = {
    "security-group": "arn:{p}:ec2:{r}:{a}:security-group/sg-0123456789abcdef0",
    "vpc": "arn:{p}:ec2:{r}:{a}:vpc/vpc-0123456789abcdef0",
    "loadbalancer": "arn:{p}:elasticloadbalancing:{r}:{a}:loadbalancer/a0123456789abcdef0123456789abcdef",
    "loadbalancer/net/": "arn:{p}:elasticloadbalancing:{r}:{a}:loadbalancer/net/k8s-default-svc-0123456789/0123456789abcdef",
    "targetgroup": "arn:{p}:elasticloadbalancing:{r}:{a}:targetgroup/k8s-default-svc-0123456789/0123456789abcdef",
    "listener/net": "arn:{p}:elasticloadbalancing:{r}:{a}:listener/net/k8s-default-svc-0123456789/0123456789abcdef/0123456789abcdef",
}
# The create action whose tags a TAG call authorises, per resource type (tag-on-create).
_CREATED_BY = {"security-group": "CreateSecurityGroup", "loadbalancer": "CreateLoadBalancer",
               "loadbalancer/net/": "CreateLoadBalancer", "targetgroup": "CreateTargetGroup",
               "listener/net": "CreateListener"}


def _tag_context(tags: dict[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    return [(f"aws:ResourceTag/{k}", (v,)) for k, v in sorted(tags.items())]


def simulations(role: str, cluster_id: str, partition: str, region: str, account: str,
                existing: dict[str, tuple[str, dict[str, str]]]) -> list[Simulation]:
    """What to ask the simulator for a `role` node of this cluster: every call it makes (the CCM's
    calls, components/iam_policy.CCM_CALLS, for controlplane), on the resources it makes them on.
    `existing`: resource type -> (ARN, tags) of this cluster's own resources (its VPC, its security
    group); resources the CCM creates carry what it tags them with (the cluster tag, owned)."""
    if role != "controlplane":
        return [Simulation(tuple(iam_policy.actions_for(role)), ("*",), (), "reads")]
    key = tagsets.cluster_tag_key(cluster_id)
    owned = {key: tagsets.OWNED}

    def arn(rtype: str) -> tuple[str, dict[str, str]]:
        if rtype in existing:
            return existing[rtype]
        return _SAMPLE_RESOURCES[rtype].format(p=partition, r=region, a=account), owned

    request_tag = [(f"aws:RequestTag/{key}", (tagsets.OWNED,)), ("aws:TagKeys", (key,))]
    out = [Simulation(tuple(sorted({c.action for c in iam_policy.CCM_CALLS if c.kind == iam_policy.READ})), ("*",), (),
                      "reads")]
    for call in iam_policy.CCM_CALLS:
        if call.kind == iam_policy.CREATE:
            created = tuple(arn(r)[0] for r in call.resources)
            parent = [arn(call.parent)] if call.parent else []
            out.append(Simulation((call.action,), created + tuple(a for a, _ in parent),
                                  tuple(request_tag + [e for _, t in parent for e in _tag_context(t)]),
                                  f"creates {', '.join(call.resources) or call.parent}"))
        elif call.kind == iam_policy.MUTATE:
            for rtype in call.resources:
                where, tags = arn(rtype)
                out.append(Simulation((call.action,), (where,), tuple(_tag_context(tags)), f"on {rtype}"))
        elif call.kind == iam_policy.TAG:
            service = call.action.split(":", 1)[0]
            for rtype in call.resources:
                out.append(Simulation((call.action,), (arn(rtype)[0],),
                                      tuple(request_tag + [(f"{service}:CreateAction", (_CREATED_BY[rtype],))]),
                                      f"tags a new {rtype}"))
    out.append(Simulation((iam_policy.SERVICE_LINKED_ROLE_ACTION,), (
        f"arn:{partition}:iam::{account}:role/aws-service-role/{iam_policy.ELB_SERVICE_NAME}/"
        "AWSServiceRoleForElasticLoadBalancing",), (("iam:AWSServiceName", (iam_policy.ELB_SERVICE_NAME,)),),
        "the ELB service-linked role"))
    return out


def simulate(iam: Any, role_arn: str, sims: list[Simulation]) -> list[tuple[str, str, str, str]]:
    """Ask AWS; returns the denials (action, resource, decision, what). Raises what the API raises."""
    denied = []
    for sim in sims:
        req, marker = sim.request(role_arn), None
        while True:
            page = iam.simulate_principal_policy(**req, **({"Marker": marker} if marker else {}))
            for res in page.get("EvaluationResults") or []:
                per_resource = res.get("ResourceSpecificResults") or []
                if per_resource:
                    denied += [(res["EvalActionName"], r.get("EvalResourceName", "*"), r["EvalResourceDecision"], sim.what)
                               for r in per_resource if r.get("EvalResourceDecision") != "allowed"]
                elif res.get("EvalDecision") != "allowed":
                    denied.append((res["EvalActionName"], res.get("EvalResourceName", "*"), res.get("EvalDecision"), sim.what))
            if not page.get("IsTruncated"):
                break
            marker = page["Marker"]
    return denied


def _existing_resources(c: Clients, exp: Expectations, partition: str, region: str, account: str) -> dict:
    out = {}
    vpc = _vpc_id(c, exp)
    if vpc:
        (v,) = c.ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]
        out["vpc"] = (f"arn:{partition}:ec2:{region}:{account}:vpc/{vpc}", _tags(v))
    if exp.security_group_id:
        (g,) = c.ec2.describe_security_groups(GroupIds=[exp.security_group_id])["SecurityGroups"]
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
        profile = c.iam.get_instance_profile(InstanceProfileName=arn.rsplit("/", 1)[-1])["InstanceProfile"]
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
    for az in azs:
        for tier, role_tag, purpose in (("public", tagsets.ROLE_ELB, "internet-facing"),
                                        ("private", tagsets.ROLE_INTERNAL_ELB, "internal")):
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


# Rancher's API, through a transport tests replace: (url, token or None) -> (HTTP status, JSON body or None).
RancherGet = Callable[[str, "str | None"], "tuple[int, Any]"]
RANCHER_SECONDS = 10


def _rancher_get(url: str, token: str | None) -> tuple[int, Any]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"Accept": "application/json",
                                               **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=RANCHER_SECONDS) as resp:  # noqa: S310 - https from the stack's outputs
            body = resp.read(4 * 1024 * 1024)
            status = resp.status
    except urllib.error.HTTPError as err:
        return err.code, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


VERSION_MANAGEMENT = "rancher.io/imported-cluster-version-management"


def check_rancher(exp: Expectations, token: str | None, get: RancherGet = _rancher_get) -> list[Result]:
    """Rancher answers; with a token, the imported cluster exists and its annotation says who upgrades."""
    r = exp.rancher
    url, cid = (r.get("url") or "").rstrip("/"), r.get("id") or ""
    if not url:
        return []
    subject = f"{r.get('name') or cid} at {url}"
    try:
        if not token:
            status, body = get(f"{url}/ping", None)
            if status == 200:
                return [Result("rancher", WARN, subject, "Rancher answers /ping; the cluster was not checked",
                               "set RANCHER_TOKEN to an API token to check the imported cluster and who upgrades it")]
            return [Result("rancher", FAIL, subject, f"/ping answered HTTP {status}", "check rancher.url")]
        status, body = get(f"{url}/v3/clusters/{cid}", token)
    except Exception as err:  # noqa: BLE001 - DNS, TLS, timeout: the stack's Rancher is not reachable from here
        return [Result("rancher", FAIL, subject, f"not reachable: {err}",
                       "run where Rancher answers; its certificate must be trusted (a public CA)")]
    if status in (401, 403):
        return [Result("rancher", FAIL, subject, f"HTTP {status} for cluster {cid}",
                       "RANCHER_TOKEN must be a valid token of a user who may see the cluster")]
    if status == 404:
        return [Result("rancher", FAIL, subject, f"cluster {cid} does not exist in Rancher",
                       "`pulumi refresh` then `pulumi up` registers it again")]
    if status != 200 or not isinstance(body, dict):
        return [Result("rancher", FAIL, subject, f"HTTP {status}", "check rancher.url")]
    want = "true" if r.get("upgrades") == "rancher" else "false"
    have = (body.get("annotations") or {}).get(VERSION_MANAGEMENT)
    if have != want:
        return [Result("rancher", FAIL, subject, f"{VERSION_MANAGEMENT} is {have!r}, but rancher.upgrades is "
                       f"{r.get('upgrades')}: both Rancher and this program may write upgrade Plans",
                       f"`pulumi up` sets it back to {want!r} (or change rancher.upgrades)")]
    state = body.get("state")
    if state != "active":
        return [Result("rancher", WARN, subject, f"cluster {cid} is {state!r}, not active",
                       "check the agent: `kubectl -n cattle-system get pods`")]
    return [Result("rancher", PASS, subject, f"cluster {cid} active; version management {want} "
                                             f"({'Rancher' if want == 'true' else 'rke-aws'} upgrades)")]


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


def report(results: list[Result], title: str) -> str:
    counts = {s: sum(r.status == s for r in results) for s in (PASS, WARN, FAIL)}
    lines = [r.line() for r in results]
    lines.append(f"{title}: {counts[PASS]} passed, {counts[WARN]} warning(s), {counts[FAIL]} failed")
    return "\n".join(lines)


def failed(results: list[Result]) -> list[Result]:
    return [r for r in results if r.status == FAIL]
