"""`make doctor`: the account checks pass on the emulated account each stack builds, and each fault
planted there with boto3 (what users report breaking the CCM) fails the right check, naming the
resource and the fix.
"""

# split: this module mixes levels (issue 33 §7.2); the check logic on canned answers -> tests/unit/ops.

from __future__ import annotations

import collections
import json

import pytest

from rke_aws.ops import doctor
from rke_aws_offline import cli
from rke_aws_offline.engine import emulated_account, harness

STACKS = harness.stack_names()
FAULT_STACK = "rke2-govcloud"  # a fixture stack (tests/stacks): what a user puts in stacks/ changes nothing here
CHECK_NAMES = {"instances", "cluster-tag", "security-group", "iam", "iam-simulate", "imds", "vpc-dns", "subnets"}
# moto does not implement iam:SimulatePrincipalPolicy (moto/iam/responses.py has no handler): the
# emulated account can only say that AWS was not asked.
NOT_ASKED = "could not ask AWS (iam:SimulatePrincipalPolicy)"


@pytest.mark.parametrize("stack", STACKS)
def test_doctor_passes_on_the_account_each_stack_builds(stack, emulated):
    results = emulated(stack).doctor
    assert not doctor.failed(results), f"{stack}: doctor fails on its own emulated account:\n" + doctor.report(list(results), stack)
    assert {r.check for r in results} == CHECK_NAMES, f"{stack}: checks that did not run: {CHECK_NAMES - {r.check for r in results}}"
    # The only warnings: dedicated control-plane nodes at hop limit 2 for the EBS CSI controller, which
    # state their reason (components/cluster/ebs_csi.py), and the simulator the emulated account lacks.
    warnings = [r for r in results if r.status == doctor.WARN]
    assert all((r.check == "imds" and "aws-ebs-csi-driver controller" in r.detail)
               or (r.check == "iam-simulate" and NOT_ASKED in r.detail) for r in warnings), doctor.report(list(results), stack)
    assert not [r for r in results if r.check == "iam-simulate" and r.status == doctor.PASS], "an allowed verdict nobody gave"


def test_make_doctor_emulated_prints_every_check_and_exits_zero(capsys):
    stack = "rke-dev"  # public nodes: their groups come through a network interface spec
    code = cli.doctor([stack, "--emulated"])
    out = capsys.readouterr().out
    assert code == 0, f"{stack}: doctor --emulated failed:\n{out}"
    checked = {line.split()[1] for line in out.splitlines() if line.startswith(("PASS", "WARN", "FAIL"))}
    assert checked == CHECK_NAMES, f"{stack}: checks missing from the report: {CHECK_NAMES - checked}"
    assert out.splitlines()[-1].endswith("0 failed"), out


class Built:
    """One stack built in an emulated account, with boto3 at hand to plant a fault (and undo it)."""

    def __init__(self, stack: str):
        self.run, self.mocks = emulated_account.build_stack(stack)
        self.stack = stack
        self.ec2 = self.mocks.client("ec2")
        self.iam = self.mocks.client("iam")
        self.exp = doctor.Expectations.from_outputs(self.run.outputs, stack)
        self.outputs = self.run.outputs
        self.undos: list = []
        self.clean: list[doctor.Result] = []

    def node(self, i: int = 0) -> dict:
        return self.outputs["nodes"][i]

    def agent(self) -> dict:
        """A node at the default IMDS settings (not a dedicated control-plane node)."""
        return next(n for n in self.outputs["nodes"] if "controlplane" not in n["roles"])

    def results(self) -> list[doctor.Result]:
        return doctor.check_account(doctor.Clients.from_session(self.mocks), self.exp)

    def only_failure(self) -> doctor.Result:
        failures = doctor.failed(self.results())
        assert len(failures) == 1, f"{self.stack}: expected one failed check, got:\n" + "\n".join(r.line() for r in failures)
        assert failures[0].fix, f"{self.stack}: {failures[0].line()} names no fix"
        return failures[0]


@pytest.fixture(scope="module")
def account():
    b = Built(FAULT_STACK)
    yield b
    b.mocks.stop()


@pytest.fixture
def built(account):
    """The module's account, checked clean before each test (`clean`: that pass's results, for a test that only reads
    the clean account); each test's fault is undone after it."""
    account.clean = account.results()
    failures = doctor.failed(account.clean)
    assert not failures, f"{FAULT_STACK}: fails before the fault is planted:\n" + "\n".join(r.line() for r in failures)
    yield account
    while account.undos:
        account.undos.pop()()


def test_subnet_without_cluster_tag_fails_subnets(built):
    subnet = built.outputs["subnetIds"]["private-0"]
    built.ec2.delete_tags(Resources=[subnet], Tags=[{"Key": built.exp.cluster_tag}])
    built.undos.append(lambda: built.ec2.create_tags(Resources=[subnet], Tags=[{"Key": built.exp.cluster_tag, "Value": "owned"}]))
    f = built.only_failure()
    assert f.check == "subnets" and f.subject.endswith(" private"), f.line()
    assert f"subnet {subnet} (private-0) lacks {built.exp.cluster_tag}" in f.detail, f.line()
    assert f"create-tags --resources {subnet} --tags Key={built.exp.cluster_tag},Value=owned" in f.fix, f.line()


def test_public_subnet_without_elb_role_fails_subnets(built):
    subnet = built.outputs["subnetIds"]["public-1"]
    built.ec2.delete_tags(Resources=[subnet], Tags=[{"Key": "kubernetes.io/role/elb"}])
    built.undos.append(lambda: built.ec2.create_tags(Resources=[subnet], Tags=[{"Key": "kubernetes.io/role/elb", "Value": "1"}]))
    f = built.only_failure()
    assert f.check == "subnets" and f.subject.endswith(" public"), f.line()
    assert f"subnet {subnet} (public-1) lacks kubernetes.io/role/elb" in f.detail, f.line()


def test_instance_without_cluster_tag_fails_cluster_tag(built):
    node = built.node(1)
    built.ec2.delete_tags(Resources=[node["instanceId"]], Tags=[{"Key": built.exp.cluster_tag}])
    built.undos.append(lambda: built.ec2.create_tags(Resources=[node["instanceId"]],
                                                     Tags=[{"Key": built.exp.cluster_tag, "Value": "owned"}]))
    f = built.only_failure()
    assert f.check == "cluster-tag" and f.subject == f"{node['instanceId']} ({node['name']})", f.line()
    assert "no kubernetes.io/cluster/* tag" in f.detail, f.line()
    assert f"create-tags --resources {node['instanceId']}" in f.fix, f.line()


def test_second_cluster_tag_on_an_instance_fails_cluster_tag(built):
    node = built.node(0)
    built.ec2.create_tags(Resources=[node["instanceId"]], Tags=[{"Key": "kubernetes.io/cluster/other", "Value": "owned"}])
    built.undos.append(lambda: built.ec2.delete_tags(Resources=[node["instanceId"]], Tags=[{"Key": "kubernetes.io/cluster/other"}]))
    f = built.only_failure()
    assert f.check == "cluster-tag" and node["instanceId"] in f.subject, f.line()
    assert "2 kubernetes.io/cluster/* tags" in f.detail and "delete-tags" in f.fix and "kubernetes.io/cluster/other" in f.fix, f.line()


def test_second_cluster_tagged_security_group_fails_security_group(built):
    node = built.node(2)
    extra = built.ec2.create_security_group(
        GroupName="extra", Description="second tagged group", VpcId=built.outputs["vpcId"],
        TagSpecifications=[{"ResourceType": "security-group", "Tags": [{"Key": built.exp.cluster_tag, "Value": "owned"}]}],
    )["GroupId"]
    built.ec2.modify_instance_attribute(InstanceId=node["instanceId"], Groups=[built.outputs["securityGroupId"], extra])
    built.undos.append(lambda: built.ec2.delete_security_group(GroupId=extra))
    built.undos.append(lambda: built.ec2.modify_instance_attribute(InstanceId=node["instanceId"],
                                                                   Groups=[built.outputs["securityGroupId"]]))
    f = built.only_failure()
    assert f.check == "security-group" and f.subject == f"{node['instanceId']} ({node['name']})", f.line()
    assert "2 cluster-tagged security groups" in f.detail and extra in f.detail, f.line()
    assert f"detach {extra}" in f.fix, f.line()


def test_vpc_without_dns_hostnames_fails_vpc_dns(built):
    vpc = built.outputs["vpcId"]
    built.ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": False})
    built.undos.append(lambda: built.ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True}))
    f = built.only_failure()
    assert f.check == "vpc-dns" and f.subject == vpc and "enableDnsHostnames is off" in f.detail, f.line()
    assert f"modify-vpc-attribute --vpc-id {vpc} --enable-dns-hostnames" in f.fix, f.line()


def plant_imds(built, instance_id: str, *, tokens: str, hop_limit: int) -> None:
    """Change an instance's metadata options, restoring the program's (required, 1) afterwards."""
    def set_options(t: str, hops: int) -> None:
        built.ec2.modify_instance_metadata_options(InstanceId=instance_id, HttpTokens=t,
                                                   HttpPutResponseHopLimit=hops, HttpEndpoint="enabled")
    set_options(tokens, hop_limit)
    built.undos.append(lambda: set_options("required", 1))


def test_imds_optional_fails_imds(built):
    node = built.agent()
    plant_imds(built, node["instanceId"], tokens="optional", hop_limit=1)
    f = built.only_failure()
    assert f.check == "imds" and node["instanceId"] in f.subject, f.line()
    assert "IMDSv2 is not required (HttpTokens='optional')" in f.detail, f.line()
    assert "--http-tokens required" in f.fix and "--http-put-response-hop-limit 1" in f.fix, f.line()


def test_imds_hop_limit_two_without_a_reason_fails(built):
    node = built.agent()
    plant_imds(built, node["instanceId"], tokens="required", hop_limit=2)
    f = built.only_failure()
    assert f.check == "imds" and "hop limit 2 lets every pod" in f.detail, f.line()


def test_imds_hop_limit_two_with_a_reason_is_a_warning_only(built):
    node = built.agent()
    plant_imds(built, node["instanceId"], tokens="required", hop_limit=2)
    built.ec2.create_tags(Resources=[node["instanceId"]], Tags=[{"Key": doctor.IMDS_REASON_TAG, "Value": "legacy SDK"}])
    built.undos.append(lambda: built.ec2.delete_tags(Resources=[node["instanceId"]], Tags=[{"Key": doctor.IMDS_REASON_TAG}]))
    results = built.results()
    assert not doctor.failed(results), [r.line() for r in doctor.failed(results)]
    (warn,) = [r for r in results if r.status == doctor.WARN and node["instanceId"] in r.subject]
    assert warn.check == "imds" and node["instanceId"] in warn.subject and "legacy SDK" in warn.detail, warn.line()


def test_policy_missing_an_action_fails_iam(built):
    node = built.node(0)  # the server: controlplane role
    role = next(r for r in built.run.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("controlplane-cloud-provider"))
    doc = json.loads(role.inputs["policy"])
    # An action only the CCM's policy grants (the EBS CSI policy also allows some EC2 reads).
    missing = "elasticloadbalancing:DescribeLoadBalancers"
    (stmt,) = [st for st in doc["Statement"] if missing in st["Action"]]
    stmt["Action"].remove(missing)
    built.iam.put_role_policy(RoleName=role.inputs["role"], PolicyName=role.state["name"], PolicyDocument=json.dumps(doc))
    built.undos.append(lambda: built.iam.put_role_policy(RoleName=role.inputs["role"], PolicyName=role.state["name"],
                                                         PolicyDocument=role.inputs["policy"]))
    failures = doctor.failed(built.results())  # one per node of the role: the servers
    servers = [n["instanceId"] for n in built.outputs["nodes"] if "controlplane" in n["roles"]]
    assert sorted(f.subject.split()[0] for f in failures) == sorted(servers), [f.line() for f in failures]
    f = next(f for f in failures if node["instanceId"] in f.subject)
    assert f.check == "iam" and f.fix, f.line()
    assert "does not allow 1 of the" in f.detail and f.detail.endswith(missing), f.line()


def test_node_name_that_is_not_the_private_dns_name_fails_instances(built):
    node = built.node(0)
    wrong = node["name"].split(".")[0] + ".corp.example"
    exp = doctor.Expectations.from_outputs(
        {**built.outputs, "nodes": [{**node, "name": wrong}] + built.outputs["nodes"][1:]}, FAULT_STACK)
    failures = doctor.failed(doctor.check_account(doctor.Clients.from_session(built.mocks), exp))
    assert [(r.check, r.subject) for r in failures] == [("instances", wrong)], [r.line() for r in failures]
    assert f"has PrivateDnsName '{node['name']}', not the node name" in failures[0].detail, failures[0].line()


def test_doctor_without_outputs_or_cli_explains_what_to_pass(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli.shutil, "which", lambda _: None)
    assert cli.doctor([FAULT_STACK]) == 2
    assert "--outputs FILE" in capsys.readouterr().err
    bad = tmp_path / "outputs.json"
    bad.write_text("{}")
    assert cli.doctor([FAULT_STACK, "--outputs", str(bad)]) == 2
    assert "lack clusterId, nodes" in capsys.readouterr().err


# ---- what AWS decides: iam:SimulatePrincipalPolicy ---------------------------------------------------

class PolicySimulator:
    """The emulated account's IAM client, answering iam:SimulatePrincipalPolicy from the role's
    policies as stored there with tests/support/iam_eval.py (IAM's documented evaluation logic, written
    independently of components/), where AWS would answer in a real account."""

    DECISIONS = {"allow": "allowed", "explicit-deny": "explicitDeny", "implicit-deny": "implicitDeny"}

    def __init__(self, iam):
        self.iam, self.requests = iam, []
        # A role's stored policies, read once per simulator (one doctor pass, during which no test changes them):
        # the doctor asks about each action group of a role separately (~40 requests on FAULT_STACK).
        self.documents: dict[str, list[dict]] = {}

    def __getattr__(self, name):
        return getattr(self.iam, name)

    def simulate_principal_policy(self, PolicySourceArn, ActionNames, ResourceArns, ContextEntries=(), Marker=None):  # noqa: N803
        from tests.support.iam_eval import decision

        self.requests.append({"role": PolicySourceArn, "actions": ActionNames, "resources": ResourceArns,
                              "context": ContextEntries})
        role = PolicySourceArn.rsplit("/", 1)[-1]
        if role not in self.documents:
            self.documents[role] = [d for _, d in doctor._documents(doctor.Clients(None, self.iam), role)]
        docs = self.documents[role]
        context = {e["ContextKeyName"]: (e["ContextKeyValues"] if e["ContextKeyType"] == "stringList"
                                         else e["ContextKeyValues"][0]) for e in ContextEntries}
        results = []
        for action in ActionNames:
            per = [{"EvalResourceName": r, "EvalResourceDecision": self.DECISIONS[decision(docs, action, r, context)]}
                   for r in ResourceArns]
            overall = "allowed" if all(p["EvalResourceDecision"] == "allowed" for p in per) else "implicitDeny"
            results.append({"EvalActionName": action, "EvalDecision": overall, "ResourceSpecificResults": per})
        return {"EvaluationResults": results, "IsTruncated": False}


def simulated(built) -> tuple[list[doctor.Result], PolicySimulator]:
    clients = doctor.Clients.from_session(built.mocks)
    clients.iam = PolicySimulator(clients.iam)
    return doctor.check_account(clients, built.exp), clients.iam


def test_the_emulated_account_cannot_be_asked_and_says_so(built):
    results = [r for r in built.clean if r.check == "iam-simulate"]  # the doctor's pass on the clean account
    assert {r.status for r in results} == {doctor.WARN} and len(results) == 2, [r.line() for r in results]
    assert all(NOT_ASKED in r.detail and "not Resource, Condition or Deny" in r.detail for r in results)


def test_the_programs_policies_are_allowed_on_this_clusters_resources(built):
    results, sim = simulated(built)
    assert not doctor.failed(results), [r.line() for r in doctor.failed(results)]
    passes = [r for r in results if r.check == "iam-simulate"]
    assert {r.status for r in passes} == {doctor.PASS} and len(passes) == 2, [r.line() for r in passes]
    # it asked about this cluster's own security group and VPC, with their tags as context
    asked = {r for req in sim.requests for r in req["resources"]}
    assert any(built.outputs["securityGroupId"] in r for r in asked) and any(built.outputs["vpcId"] in r for r in asked)
    keys = {e["ContextKeyName"] for req in sim.requests for e in req["context"]}
    assert f"aws:ResourceTag/kubernetes.io/cluster/{built.outputs['clusterId']}" in keys, keys


def test_a_policy_scoped_to_another_cluster_passes_the_name_check_but_not_aws(built):
    """The issue's case: every action named, Condition on another cluster's tag. The name check
    (iam) cannot tell; AWS (iam-simulate) denies this cluster's calls."""
    role = next(r for r in built.run.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("controlplane-cloud-provider"))
    other = role.inputs["policy"].replace(f"kubernetes.io/cluster/{built.outputs['clusterId']}", "kubernetes.io/cluster/another")
    assert other != role.inputs["policy"]
    built.iam.put_role_policy(RoleName=role.inputs["role"], PolicyName=role.state["name"], PolicyDocument=other)
    built.undos.append(lambda: built.iam.put_role_policy(RoleName=role.inputs["role"], PolicyName=role.state["name"],
                                                         PolicyDocument=role.inputs["policy"]))
    results, _ = simulated(built)
    assert not [r for r in doctor.failed(results) if r.check == "iam"], "the name check should not see it"
    (f,) = doctor.failed(results)
    assert f.check == "iam-simulate" and "controlplane" in f.subject, f.line()
    assert "ec2:DeleteSecurityGroup" in f.detail or "ec2:AuthorizeSecurityGroupIngress" in f.detail, f.line()
    assert "ec2:DescribeInstances" not in f.detail, "reads are not tag-scoped"


def test_no_permission_to_simulate_is_a_warning_naming_it(built):
    clients = doctor.Clients.from_session(built.mocks)
    iam = clients.iam

    class Refusing:
        def __getattr__(self, name):
            return getattr(iam, name) if name != "simulate_principal_policy" else self.refuse

        @staticmethod
        def refuse(**_):
            raise RuntimeError("An error occurred (AccessDenied) when calling the SimulatePrincipalPolicy operation")
    clients.iam = Refusing()
    results = [r for r in doctor.check_account(clients, built.exp) if r.check == "iam-simulate"]
    assert results and all(r.status == doctor.WARN and "AccessDenied" in r.detail for r in results), results


class _Counting:
    """A boto3 client that counts the operations asked of it."""

    def __init__(self, client):
        self.client, self.calls = client, collections.Counter()

    def __getattr__(self, name):
        attr = getattr(self.client, name)
        if name == "meta" or not callable(attr):
            return attr

        def call(*args, **kwargs):
            self.calls[name] += 1
            return attr(*args, **kwargs)
        return call


def test_the_doctor_reads_a_shared_profile_and_group_once_per_run(built):
    """Every node of a role carries its role's instance profile and the cluster's security group: the doctor asks for
    each once per run, not once per node and check (AWS throttles a large cluster's doctor otherwise: EC2 and IAM
    API request throttling, token bucket per account)."""
    clients = doctor.Clients.from_session(built.mocks)
    clients.ec2, clients.iam = _Counting(clients.ec2), _Counting(clients.iam)
    assert not doctor.failed(doctor.check_account(clients, built.exp))
    nodes, profiles = len(built.outputs["nodes"]), len(set(built.exp.instance_profile_names.values()))
    assert nodes > profiles
    assert clients.iam.calls["get_instance_profile"] == profiles, clients.iam.calls
    # the nodes' groups (one set for every node here) and the cluster's group by its ID
    assert clients.ec2.calls["describe_security_groups"] <= 2, clients.ec2.calls


def test_the_doctor_finds_the_nodes_as_the_ccm_does_a_slice_of_names_a_request(built, monkeypatch):
    """The CCM looks nodes up by private-dns-name, 150 names a DescribeInstances (kubernetes/cloud-provider-aws
    pkg/providers/v1/aws.go filterNodeLimit; AWS takes at most 200 values a filter): one request for this cluster, not
    one per node. In slices of two (planted here, so the slicing is seen at this size) every node is still found."""
    assert doctor.FILTER_NODE_LIMIT <= 200
    clients = doctor.Clients.from_session(built.mocks)
    clients.ec2 = _Counting(clients.ec2)
    assert not doctor.failed(doctor.check_account(clients, built.exp))
    assert clients.ec2.calls["describe_instances"] == 1, clients.ec2.calls
    lines = [r.line() for r in built.clean]
    monkeypatch.setattr(doctor, "FILTER_NODE_LIMIT", 2)
    clients = doctor.Clients.from_session(built.mocks)
    clients.ec2 = _Counting(clients.ec2)
    assert [r.line() for r in doctor.check_account(clients, built.exp)] == lines
    nodes = len(built.outputs["nodes"])
    assert nodes > 2 and clients.ec2.calls["describe_instances"] == -(-nodes // 2), clients.ec2.calls
