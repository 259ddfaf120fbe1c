"""`make diff`: a pull request's changes per stack and resource, judged as the providers would.

Two kinds of test. Pull-request tests: a scratch git repository holds this program and its fixture
stacks (tests/stacks/, never the user's stacks/); its committed state is the base, edits to its
working tree the head, and `diff_stacks` compares them as `make diff` does. Rule tests: one
evaluated run of a fixture stack is the base, the same run with one input planted is the head, and
`compare` (what `make diff` runs on the two evaluations) must report what the provider's own source
decides; each rule test names the upstream file it encodes.
"""

# split: this module mixes levels (issue 33 §7.2); compare() on hand-made runs -> tests/unit/report; the
# git/subprocess path -> tests/tooling/test_diff_cli.py.

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from rke_aws_offline.report import diff
from tests.support.diff import NLB_STACK, base_of, change_of, res
from tests.support.once import once_per_run, workers_dir
from tests.support.runs import run_stack_cached

HELM_STACK = "rke-phase2"  # tests/stacks: a kubeconfig set (secure), so the CCM and EBS CSI go in through Helm
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: default
  cluster: {server: "https://api.rke-phase2.rke-aws.internal:6443", certificate-authority-data: Q0E=}
users:
- name: default
  user: {client-certificate-data: Y2VydA==, client-key-data: a2V5LXNlY3JldC10ZXh0}
contexts:
- name: default
  context: {cluster: default, user: default}
current-context: default
"""
SECRET_TEXT = "a2V5LXNlY3JldC10ZXh0"  # in KUBECONFIG: must never appear in a rendered diff


# ---- pull requests: two commits of a scratch repository -------------------------------------------

@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    for name in ("__main__.py", "Pulumi.yaml"):
        shutil.copy(harness.ROOT / name, root / name)
    for name in ("components", "stacks", "tests/stacks"):
        shutil.copytree(harness.ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    # What the interpreters that evaluate it write (bytecode) is no part of any commit, as in a real checkout.
    (root / ".gitignore").write_text("__pycache__/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(root)]
    subprocess.run(git[:-2] + ["init", "-q", str(root)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    return root


def by_action(d: diff.StackDiff, action: str) -> set[str]:
    return {c.name for c in d.changes if c.action == action}


def pools_with(config: dict, **by_name) -> None:
    for pool in config["rke-aws:nodePools"]:
        pool.update(by_name.get(pool["name"], {}))


# One pull request holds every change the tests below judge, one stack each, and `make diff` runs it as it runs
# any pull request: diff_stacks over the stacks, the base (git HEAD) and the head (the working tree) each
# evaluated in one fresh interpreter (diff.evaluate_all). Changes a stack file of its own cannot carry are made
# on a copy of NLB_STACK that the base commit adds under another name of the same length (resource names
# carry the stack's name; the same length keeps every length limit where it was).
TWO_ZONES = "rke2-twozones"  # NLB_STACK on two zones in the base; the change adds the third
ONE_SERVER = "rke2-gov-etcd"  # NLB_STACK; the change leaves one server of three
AGENT_TYPE = "rke2-gov-type"  # NLB_STACK; the change gives the agents another instance type


def _move_private_1(c: dict) -> None:
    """private-1 moves to another block; the others stay where they are."""
    cidrs = {k: v["cidr"] for k, v in run_stack_cached(NLB_STACK).outputs["subnets"].items()}
    c["rke-aws:network"].update(publicSubnetCidrs=[cidrs[f"public-{i}"] for i in range(3)],
                                privateSubnetCidrs=[cidrs["private-0"], "10.70.112.0/20", cidrs["private-2"]])


def _reencrypt(c: dict) -> None:
    c["rke-aws:kubeconfig"] = {"secure": "v1:bmV3LWNpcGhlcnRleHQtb2YtYW5vdGhlci1rdWJlY29uZmln"}


CHANGES = {  # stack: (the stack the base commit copies it from, or None: its own file; the edit of the change)
    TWO_ZONES: (NLB_STACK, lambda c: c["rke-aws:network"].update(availabilityZones=3)),
    NLB_STACK: (None, _move_private_1),
    ONE_SERVER: (NLB_STACK, lambda c: pools_with(c, servers={"count": 1})),
    AGENT_TYPE: (NLB_STACK, lambda c: pools_with(c, agents={"instanceType": "m6i.xlarge"})),
    HELM_STACK: (None, _reencrypt),
}


def _pull_request(repo: Path) -> dict[str, diff.StackDiff]:
    """`make diff` of the pull request CHANGES makes to `repo`; the repository's tree is as before afterwards."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    stacks = repo / "tests" / "stacks"
    copies = {stack: stacks / f"Pulumi.{stack}.yaml" for stack, (source, _) in CHANGES.items() if source}
    for stack, path in copies.items():
        doc = yaml.safe_load((stacks / f"Pulumi.{CHANGES[stack][0]}.yaml").read_text())
        if stack == TWO_ZONES:
            doc["config"]["rke-aws:network"]["availabilityZones"] = 2
        path.write_text(yaml.safe_dump(doc))
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "copies of the NLB stack"], check=True)
    originals = {stack: (stacks / f"Pulumi.{stack}.yaml").read_text() for stack in CHANGES}
    try:
        for stack, (_, change) in CHANGES.items():
            doc = yaml.safe_load(originals[stack])
            change(doc["config"])
            (stacks / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(doc))
        diffs = diff.diff_stacks("HEAD", repo, list(CHANGES), include_fixtures=True)
    finally:
        for stack, text in originals.items():
            (stacks / f"Pulumi.{stack}.yaml").write_text(text)
        for path in copies.values():
            path.unlink()
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "copies gone"], check=True)
    return {d.stack: d for d in diffs}


@pytest.fixture(scope="module")
def pull_request(repo, tmp_path_factory) -> dict[str, diff.StackDiff]:
    """The pull request's diffs by stack, made once per test run (tests.support.once: one xdist worker makes it,
    the other reads it)."""
    shared = workers_dir(tmp_path_factory)
    return _pull_request(repo) if shared is None else once_per_run(shared, "test_diff-pull-request",
                                                                  lambda: _pull_request(repo))


def test_adding_a_zone_replaces_nothing(pull_request):
    # The diff runs in the emulated account, which has each region's real zones (us-gov-west-1: three, all in use
    # by NLB_STACK; the light mocks, since removed, had four anywhere). So the base commit gets a copy of NLB_STACK on
    # two zones, and the change adds the third.
    stack = TWO_ZONES
    d = pull_request[stack]
    assert d.refused is None, d.refused
    text = diff.render_text([d])
    assert not {c.name for c in d.changes if c.action in ("replace", "delete", "unknown")}, text
    assert {f"{stack}-private-2", f"{stack}-public-2"} <= by_action(d, "add"), text
    assert not any(c.type == diff.INSTANCE for c in d.changes if c.action != "unchanged"), text


def test_changing_a_subnet_replaces_exactly_the_nodes_in_it(pull_request):
    d = pull_request[NLB_STACK]
    assert d.refused is None, d.refused
    text = diff.render_text([d])
    assert {c.name for c in d.changes if c.action == "replace" and c.type == diff.INSTANCE} == {
        f"{NLB_STACK}-servers-1", f"{NLB_STACK}-agents-1", f"{NLB_STACK}-spot-1"}, text
    assert f"{NLB_STACK}-private-1" in by_action(d, "replace")
    # The NLB loses a subnet ID (a new one takes its place): customizeDiffLoadBalancerNLB cannot
    # judge a value unknown until the apply, so it is reported as such, never as an update.
    assert f"{NLB_STACK}-api" in by_action(d, "unknown"), text
    (server,) = [c.node for c in d.changes if c.action == "replace" and c.name == f"{NLB_STACK}-servers-1"]
    old_name = server.split(" -> ")[0]
    assert old_name in {n["name"] for n in run_stack_cached(NLB_STACK).outputs["nodes"]}, server
    assert d.etcd == [f"{old_name} (replaced)"], d.etcd
    assert "etcd members deleted, replaced or stopped" in text


def test_a_refused_change_is_the_result(pull_request):
    d = pull_request[ONE_SERVER]
    assert d.refused and "2 of the 3 etcd members" in d.refused
    assert "would stop" in diff.render_markdown([d], "HEAD")


def test_an_agent_type_change_updates_nothing_and_shows_the_agents_stale(pull_request):
    """Running nodes keep their type (nodes.IGNORED_ON_UPDATE: EC2 would stop every agent of the pool at
    once, undrained; across architectures replace them all): the diff shows no update, names each agent
    stale with the type it keeps and the one rotation gives it (components/plan/stale.py)."""
    same = pull_request[AGENT_TYPE]
    agents = {f"{AGENT_TYPE}-agents-0", f"{AGENT_TYPE}-agents-1"}
    assert not agents & (by_action(same, "update") | by_action(same, "replace")), diff.render_text([same])
    assert all(any(s.startswith("ip-") and f"({name})" in s and "instance type m6i.large → m6i.xlarge" in s
                   for s in same.stale) for name in agents), same.stale
    md = diff.render_markdown([same], "origin/main")
    assert md.startswith("### Offline estimate: plan diff against `origin/main`") and "**This is an estimate**" in md
    assert "**Stale nodes**" in md and "stale (kept until `rke-aws rotate <stack>`)" in diff.render_text([same])
    # Across architectures the same (tests/program/test_graviton.py, tests/program/test_hostile.py).


def test_a_re_encrypted_kubeconfig_is_a_secret_change(pull_request):
    """`pulumi config set --secret kubeconfig` with a new kubeconfig changes only the ciphertext in
    the stack file: the provider's input changes, shown as secret, and what it means for the
    resources the provider manages is stated."""
    d = pull_request[HELM_STACK]
    text = diff.render_text([d])
    (provider,) = [c for c in d.changes if c.type == "pulumi:providers:kubernetes"]
    assert provider.changed == ["kubeconfig"] and provider.secret == ["kubeconfig"], text
    assert "kubeconfig (secret)" in text and "bmV3LWNpcGhlcnRleHQ" not in text
    managed = {c.name for c in d.changes if c.type.startswith("kubernetes:")}
    if provider.action == "update":  # clusterIdentifier set: the provider is never replaced for a kubeconfig
        assert not managed, text
    else:  # offline the kubeconfig's cluster cannot be read: may replace, and so may all it manages
        assert provider.action == "unknown", text
        assert managed == {f"{HELM_STACK}-release", f"{HELM_STACK}-ebs-csi", f"{HELM_STACK}-ebs-csi-credentials"}, text
        assert all(c.action == "unknown" for c in d.changes if c.name in managed), text


def test_the_pull_request_left_the_repository_as_it_was(pull_request, repo):
    """The tests after it see the scratch repository's first tree again: no copy, no edit left behind."""
    git = ["git", "-C", str(repo)]
    first = subprocess.run(git + ["rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True, check=True)
    changed = subprocess.run(git + ["diff", "--name-only", first.stdout.strip()], capture_output=True, text=True,
                             check=True)
    assert changed.stdout == "", changed.stdout


# ---- the providers' rules, planted into one evaluated run ------------------------------------------


def planted(stack: str, plant) -> tuple[diff.StackDiff, dict]:
    base = base_of(stack)
    head = copy.deepcopy(base)
    plant(head)
    return diff.compare(stack, base, head), head


def agent(result: dict) -> dict:
    return res(result, diff.INSTANCE, f"{NLB_STACK}-agents-0")


@pytest.mark.parametrize("new_type, action", [
    ("m6i.2xlarge", "update"),  # x86_64 -> x86_64: stop, change type, start
    ("m7a.large", "update"),  # AMD, still x86_64
    ("m6g.large", "replace"),  # Graviton: arm64 only
    ("t4g.medium", "replace"),
    ("z9zz.large", "unknown"),  # not in the table: cannot be judged offline
])
def test_instance_type_replaces_only_across_cpu_architectures(new_type, action):
    """terraform-provider-aws internal/service/ec2/ec2_instance.go: CustomizeDiff
    ForceNewIf(instance_type) unless hasCommonElement(SupportedArchitectures). Judged on an instance
    registered without the program's ignore_changes (running nodes ignore their type: nodes.py)."""
    def plant(h):
        agent(h)["ignore_changes"] = []
        agent(h)["inputs"].update(instanceType=new_type)
    d, _ = planted(NLB_STACK, plant)
    c = change_of(d, f"{NLB_STACK}-agents-0")
    assert c.action == action, diff.render_text([d])
    assert c.stops == (action == "update"), c
    assert ("instanceType" in c.replaced_by) == (action == "replace")


def test_the_architecture_table_is_aws_data_not_ours():
    assert diff.instance_architectures("m6i.xlarge") == {"x86_64"}
    assert diff.instance_architectures("m6g.xlarge") == {"arm64"}
    assert diff.instance_architectures("nonexistent.large") is None
    assert diff.instance_architectures(None) is None


@pytest.mark.parametrize("key, value, action", [
    ("encrypted", False, "replace"),
    ("kmsKeyId", "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/abc", "replace"),
    ("volumeSize", 200, "update"),  # ModifyVolume, in place
    ("volumeType", "io2", "update"),
])
def test_root_volume_encryption_replaces_size_does_not(key, value, action):
    """ec2_instance.go root_block_device: only encrypted and kms_key_id are ForceNew."""
    d, _ = planted(NLB_STACK, lambda h: agent(h)["inputs"]["rootBlockDevice"].update({key: value}))
    c = change_of(d, f"{NLB_STACK}-agents-0")
    assert (c.action, c.changed) == (action, [f"rootBlockDevice.{key}"]), diff.render_text([d])


@pytest.mark.parametrize("replace_on_change", [False, True])
def test_user_data_updates_by_stopping_unless_replace_on_change(replace_on_change):
    """ec2_instance.go CustomizeDiff ForceNewIf(user_data / user_data_base64) only with
    user_data_replace_on_change; otherwise stop/start. For servers the stop is called out."""
    server = f"{NLB_STACK}-servers-0"

    def plant(h):
        r = res(h, diff.INSTANCE, server)
        r["ignore_changes"] = []  # what the program would register without its ignore_changes
        r["inputs"]["userData"] = r["inputs"].get("userData", "") + "\n# changed\n"
        if replace_on_change:
            r["inputs"]["userDataReplaceOnChange"] = True
    d, _ = planted(NLB_STACK, plant)
    c = change_of(d, server)
    node = c.node
    if replace_on_change:
        assert c.action == "replace" and "userData" in c.replaced_by and not c.stops, diff.render_text([d])
        assert d.etcd == [f"{node} (replaced)"]
    else:
        assert c.action == "update" and c.stops, diff.render_text([d])
        assert d.etcd == [f"{node} (stopped)"], d.etcd
        assert "STOPS the instance" in diff.render_text([d])


def test_ignored_inputs_never_count():
    d, _ = planted(NLB_STACK, lambda h: res(h, diff.INSTANCE, f"{NLB_STACK}-servers-0")["inputs"].update(ami="ami-0ffffffffffffffff"))
    c = change_of(d, f"{NLB_STACK}-servers-0")
    assert (c.action, c.ignored) == ("unchanged", ["ami"]) and d.count("replace") == 0


def _lb(h: dict) -> dict:
    return res(h, "aws:lb/loadBalancer:LoadBalancer")["inputs"]


@pytest.mark.parametrize("plant, action", [
    (lambda lb: lb.update(subnets=lb["subnets"][:2]), "replace"),  # removed
    (lambda lb: lb.update(subnets=lb["subnets"][:2] + ["subnet-0aaaaaaaaaaaaaaaa"]), "replace"),  # swapped
    (lambda lb: lb.update(subnets=lb["subnets"] + ["subnet-0aaaaaaaaaaaaaaaa"]), "update"),  # added
    (lambda lb: lb.update(securityGroups=[]), "replace"),  # some -> none
    (lambda lb: lb.update(securityGroups=["sg-0bbbbbbbbbbbbbbbb"]), "update"),  # some -> other
    (lambda lb: lb.update(internal=False), "replace"),  # ForceNew
    (lambda lb: lb.update(enableCrossZoneLoadBalancing=False), "update"),
], ids=["subnet-removed", "subnet-swapped", "subnet-added", "sg-some-to-none", "sg-some-to-other", "internal",
        "cross-zone"])
def test_network_load_balancer_as_customize_diff_nlb_decides(plant, action):
    """elbv2/load_balancer.go customizeDiffLoadBalancerNLB: subnets change in place only when their
    number grows; security groups none <-> some replace; internal is ForceNew."""
    d, _ = planted(NLB_STACK, lambda h: plant(_lb(h)))
    assert change_of(d, f"{NLB_STACK}-api").action == action, diff.render_text([d])
    if action == "replace":  # the listeners take the new load balancer's ARN (ForceNew load_balancer_arn)
        assert {f"{NLB_STACK}-api-6443", f"{NLB_STACK}-api-9345"} <= by_action(d, "replace")


def test_security_groups_from_none_to_some_replace_a_network_load_balancer():
    base = base_of(NLB_STACK)
    _lb(base)["securityGroups"] = []
    head = copy.deepcopy(base)
    _lb(head)["securityGroups"] = ["sg-0bbbbbbbbbbbbbbbb"]
    assert change_of(diff.compare(NLB_STACK, base, head), f"{NLB_STACK}-api").action == "replace"


@pytest.mark.parametrize("old, new, action", [
    ("Advanced", "Standard", "replace"),  # SSM refuses the downgrade
    ("Standard", "Advanced", "update"),
    (None, "Standard", "update"),  # tier set explicitly on a parameter created without one
    ("Advanced", "Intelligent-Tiering", None),  # suppressed: SSM picks the tier
])
def test_ssm_parameter_tier_downgrade_replaces(old, new, action):
    """ssm/parameter.go CustomizeDiff ForceNewIfChange("tier", Advanced -> Standard)."""
    name = f"{NLB_STACK}-manifest-ccm"
    base = base_of(NLB_STACK)
    res(base, "aws:ssm/parameter:Parameter", name)["inputs"]["tier"] = old
    head = copy.deepcopy(base)
    res(head, "aws:ssm/parameter:Parameter", name)["inputs"]["tier"] = new
    d = diff.compare(NLB_STACK, base, head)
    assert [c.action for c in d.changes if c.name == name] == ([action] if action else []), diff.render_text([d])


@pytest.mark.parametrize("plant, action", [
    (lambda r: r.update(referencedSecurityGroupId=None, cidrIpv4="10.0.0.0/8"), "replace"),  # group -> CIDR
    (lambda r: r.update(referencedSecurityGroupId=None, prefixListId="pl-0123456789abcdef0"), "replace"),
    (lambda r: r.update(referencedSecurityGroupId="sg-0ccccccccccccccccc"), "update"),  # same kind
    (lambda r: r.update(fromPort=6444, toPort=6444), "update"),
    (lambda r: r.update(securityGroupId="sg-0ddddddddddddddddd"), "replace"),
], ids=["group-to-cidr", "group-to-prefix-list", "other-group", "ports", "security-group-id"])
def test_security_group_rule_source_kind_change_replaces(plant, action):
    """ec2/vpc_security_group_ingress_rule.go securityGroupRuleResource.ModifyPlan: "you cannot
    change the rule's source type" -> RequiresReplace."""
    name = f"{NLB_STACK}-nodes-from-endpoint-6443"
    d, _ = planted(NLB_STACK, lambda h: plant(res(h, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", name)["inputs"]))
    assert change_of(d, name).action == action, diff.render_text([d])


@pytest.mark.parametrize("key, value, action", [
    ("type", "A", "update"),  # resourceRecordUpdate: DELETE + CREATE in one change batch, same resource
    ("records", ["10.70.0.10"], "update"),
    ("ttl", 60, "update"),
    ("name", "api2.rke2-govcloud.rke-aws.internal", "replace"),
    ("zoneId", "Z0000000000000000000", "replace"),
    ("setIdentifier", "blue", "replace"),
])
def test_route53_record_replaces_only_on_name_zone_and_set_identifier(key, value, action):
    """route53/record.go: name and zone_id ForceNew; type changes in place."""
    d, _ = planted(NLB_STACK, lambda h: res(h, "aws:route53/record:Record")["inputs"].update({key: value}))
    assert [c.action for c in d.changes if c.type == "aws:route53/record:Record"] == [action], diff.render_text([d])


def _secret(h: dict) -> dict:
    return res(h, "kubernetes:core/v1:Secret")


@pytest.mark.parametrize("plant, action", [
    (lambda s: s["inputs"]["stringData"].update({"key_id": "AKIAOTHERKEY0000000"}), "replace"),
    (lambda s: s["inputs"].update(type="kubernetes.io/opaque-other"), "replace"),
    (lambda s: s["inputs"]["metadata"].update(labels={"team": "platform"}), "update"),
    (lambda s: s["inputs"]["metadata"].update(annotations={"note": "x"}), "update"),
    (lambda s: s["inputs"]["metadata"].update(namespace="other"), "replace"),
], ids=["stringData", "type", "labels", "annotations", "namespace"])
def test_kubernetes_secret_data_replaces_labels_do_not(plant, action):
    """pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties: a Secret's .type,
    .stringData and .data replace (immutable unless enableSecretMutable); identity replaces."""
    d, _ = planted(HELM_STACK, lambda h: plant(_secret(h)))
    c = change_of(d, f"{HELM_STACK}-ebs-csi-credentials")
    assert c.action == action, diff.render_text([d])


def test_a_changed_secret_value_is_shown_as_changed_without_its_value():
    new_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYNEWSECRET"
    d, _ = planted(HELM_STACK, lambda h: _secret(h)["inputs"]["stringData"].update({"access_key": new_key}))
    c = change_of(d, f"{HELM_STACK}-ebs-csi-credentials")
    assert c.action == "replace" and c.secret == ["stringData"], c
    for text in (diff.render_text([d]), diff.render_markdown([d], "main")):
        assert "stringData (secret)" in text and new_key not in text


def _provider(h: dict) -> dict:
    return res(h, "pulumi:providers:kubernetes")["inputs"]


@pytest.mark.parametrize("server, identifiers, action", [
    ("https://api.other-cluster.example:6443", (None, None), "replace"),  # another cluster
    ("https://api.rke-phase2.rke-aws.internal:6443", (None, None), "update"),  # same cluster, new credentials
    ("https://api.other-cluster.example:6443", ("c1", "c1"), "update"),  # clusterIdentifier set and unchanged
    ("https://api.rke-phase2.rke-aws.internal:6443", ("c1", "c2"), "replace"),  # clusterIdentifier changed
])
def test_kubernetes_provider_is_replaced_when_its_cluster_changes(server, identifiers, action):
    """pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig: replace iff the active
    cluster of the kubeconfig changes, unless clusterIdentifier is set and unchanged (and always when
    it changes). Every resource a replaced provider manages is replaced (the engine)."""
    base = base_of(HELM_STACK)
    _provider(base).update(kubeconfig=KUBECONFIG)
    head = copy.deepcopy(base)
    _provider(head).update(kubeconfig=KUBECONFIG.replace("https://api.rke-phase2.rke-aws.internal:6443", server)
                           .replace("a2V5LXNlY3JldC10ZXh0", "bmV3LWtleQ=="))
    for result, ident in zip((base, head), identifiers, strict=False):
        if ident:
            _provider(result)["clusterIdentifier"] = ident
        else:  # a Provider without one (the program sets one: components/cluster/ccm.py)
            _provider(result).pop("clusterIdentifier", None)
    d = diff.compare(HELM_STACK, base, head)
    text = diff.render_text([d]) + diff.render_markdown([d], "main")
    (provider,) = [c for c in d.changes if c.type == "pulumi:providers:kubernetes"]
    assert provider.action == action, text
    assert "kubeconfig" in provider.secret and SECRET_TEXT not in text and "bmV3LWtleQ==" not in text
    assert "kubeconfig (secret)" in text, text  # named, marked secret, whether it forces the replacement or not
    managed = {f"{HELM_STACK}-release", f"{HELM_STACK}-ebs-csi", f"{HELM_STACK}-ebs-csi-credentials"}
    if action == "replace":
        assert managed <= by_action(d, "replace"), text
        assert "its provider is replaced" in text
    else:
        assert not managed & {c.name for c in d.changes}, text


def test_a_kubeconfig_that_cannot_be_read_offline_is_unknown_and_so_is_all_it_manages():
    """An encrypted stack value is a placeholder offline: whether its cluster changed cannot be told
    for a Provider without clusterIdentifier; with one (what the program registers, components/cluster/ccm.py)
    only the identifier decides (provider.go DiffConfig)."""
    base = base_of(HELM_STACK)
    _provider(base).update(kubeconfig=KUBECONFIG)
    head = copy.deepcopy(base)
    _provider(head).update(kubeconfig=stackfile.SECURE_PLACEHOLDER + " (ciphertext 0123456789ab)")
    assert _provider(base).get("clusterIdentifier") and _provider(base)["clusterIdentifier"] == _provider(head)["clusterIdentifier"]
    d = diff.compare(HELM_STACK, base, head)
    assert change_of(d, f"{HELM_STACK}-cluster").action == "update", diff.render_text([d])
    for result in (base, head):
        _provider(result).pop("clusterIdentifier")
    d = diff.compare(HELM_STACK, base, head)
    assert change_of(d, f"{HELM_STACK}-cluster").action == "unknown", diff.render_text([d])
    managed = {f"{HELM_STACK}-release", f"{HELM_STACK}-ebs-csi", f"{HELM_STACK}-ebs-csi-credentials"}
    assert managed <= by_action(d, "unknown") and "its provider may be replaced" in diff.render_text([d])


def test_provider_rules_follow_diff_config():
    """provider.go DiffConfig: a kubeconfig not known at preview replaces; context and cluster
    overrides pick the active cluster (util.go getActiveClusterFromConfig)."""
    rule = diff.RULES["pulumi:providers:kubernetes"].conditions[0][1]
    assert [v.action for v in rule({"kubeconfig": KUBECONFIG}, {"kubeconfig": KUBECONFIG}, set(), {"kubeconfig"})] == ["replace"]
    two = KUBECONFIG.replace("clusters:\n", "clusters:\n- name: other\n  cluster: {server: \"https://other:6443\"}\n") \
        .replace("contexts:\n", "contexts:\n- name: o\n  context: {cluster: other, user: default}\n")
    assert diff._active_cluster(two)["server"] == "https://api.rke-phase2.rke-aws.internal:6443"
    assert diff._active_cluster(two, context="o")["server"] == "https://other:6443"
    assert diff._active_cluster(two, cluster="other")["server"] == "https://other:6443"
    assert diff._active_cluster("not: [yaml") is None and diff._active_cluster(None) is None
    switched = rule({"kubeconfig": two}, {"kubeconfig": two, "context": "o"}, {"context"}, set())
    assert [v.action for v in switched] == ["replace"], switched
    assert [v.action for v in rule({"clusterIdentifier": "a"}, {"clusterIdentifier": "a", "kubeconfig": "x"},
                                   {"kubeconfig"}, set())] == ["update"]


def test_a_type_without_rules_is_unknown_never_an_update(monkeypatch):
    monkeypatch.delitem(diff.RULES, "aws:route53/record:Record")
    d, _ = planted(NLB_STACK, lambda h: res(h, "aws:route53/record:Record")["inputs"].update(ttl=60))
    (c,) = [c for c in d.changes if c.type == "aws:route53/record:Record"]
    assert c.action == "unknown" and d.count("update") == 0, diff.render_text([d])
    assert "unknown (may replace)" in diff.render_text([d]) and "unknown: may replace" in diff.render_markdown([d], "x")


def test_replacement_propagates_through_ids():
    """A replaced subnet gets a new ID: instances in it (subnet_id ForceNew) are replaced too; the
    NLB's subnet list then holds an ID known only at apply, which customizeDiffLoadBalancerNLB
    cannot judge (IsWhollyKnown): unknown, not an update."""
    d, _ = planted(NLB_STACK, lambda h: res(h, "aws:ec2/subnet:Subnet", f"{NLB_STACK}-private-0")["inputs"].update(
        cidrBlock="10.70.96.0/20"))
    replaced = {c.name for c in d.changes if c.action == "replace" and c.type == diff.INSTANCE}
    assert replaced == {f"{NLB_STACK}-servers-0", f"{NLB_STACK}-agents-0", f"{NLB_STACK}-spot-0"}, diff.render_text([d])
    lb = change_of(d, f"{NLB_STACK}-api")
    assert (lb.action, lb.changed) == ("unknown", ["subnets"]), diff.render_text([d])


def test_an_application_load_balancers_subnets_and_groups_update_in_place():
    """customizeDiffLoadBalancerNLB applies to network load balancers only."""
    base = base_of(NLB_STACK)
    _lb(base)["loadBalancerType"] = "application"
    head = copy.deepcopy(base)
    _lb(head).update(subnets=_lb(head)["subnets"][:2], securityGroups=[])
    c = change_of(diff.compare(NLB_STACK, base, head), f"{NLB_STACK}-api")
    assert (c.action, c.changed) == ("update", ["securityGroups", "subnets"]), c


def test_a_volume_change_that_also_encrypts_replaces_and_lists_both():
    d, _ = planted(NLB_STACK, lambda h: agent(h)["inputs"]["rootBlockDevice"].update(encrypted=False, volumeSize=80))
    c = change_of(d, f"{NLB_STACK}-agents-0")
    assert c.action == "replace" and c.replaced_by == ["rootBlockDevice.encrypted"], c
    assert c.changed == ["rootBlockDevice.encrypted", "rootBlockDevice.volumeSize"], c


# ---- the table itself ---------------------------------------------------------------------------------

def test_every_rule_cites_its_upstream_file():
    for typ, rules in diff.RULES.items():
        assert rules.source.startswith(("hashicorp/terraform-provider-aws internal/service/",
                                        "pulumi/pulumi-kubernetes provider/pkg/provider/",
                                        "hashicorp/terraform-provider-random internal/provider/",
                                        "hashicorp/terraform-provider-tls internal/provider/",
                                        "rancher/terraform-provider-rancher2 v13.1.4 rancher2/",
                                        "pulumi/pulumi-terraform-bridge pkg/tfbridge/")), typ
        assert ".go" in rules.source, typ


def test_every_type_the_program_registers_is_declared_once_for_every_tool():
    """One declaration per resource type (offline/engine/resource_types.py): its replace rules, the AWS-like
    mocks' shape, the emulated account's handler; the diff and both mocks read their views from it."""
    from rke_aws_offline.engine import resource_types
    from tests.support.configs import set_key
    from tests.support.day2 import KUBECONFIG as ANY_KUBECONFIG
    from tests.support.runs import STACKS, run_stack_cached

    types = {r.type for s in STACKS for r in run_stack_cached(s).resources if r.custom}
    with_plans = set_key(harness.stack_config(NLB_STACK), "ccm", {"install": "helm"})
    set_key(with_plans, "kubeconfig", ANY_KUBECONFIG)
    types |= {r.type for r in harness.run_program(with_plans, stack="types").resources if r.custom}
    assert "kubernetes:upgrade.cattle.io/v1:Plan" in types
    declared = {t for t, r in resource_types.TYPES.items() if r.replace and r.emulate}
    assert not types - declared, f"offline/engine/resource_types.py does not declare {sorted(types - declared)} fully"
    assert diff.RULES is resource_types.RULES
    assert set(diff.RULES) == MotoMocks.KNOWN_TYPES == declared


def test_the_emulated_account_refuses_a_resource_type_it_does_not_know():
    import pulumi

    # (aws:ec2/vpcEndpoint:VpcEndpoint was this example until issue 35's air-gapped VPCs used it.)
    args = pulumi.runtime.MockResourceArgs(typ="aws:ec2/transitGateway:TransitGateway", name="x", inputs={},
                                           provider=None, resource_id=None, custom=True)
    with MotoMocks("us-west-2") as mocks:
        with pytest.raises(ValueError, match="UnknownResourceType: aws:ec2/transitGateway:TransitGateway"):
            mocks.new_resource(args)


# ---- plumbing -------------------------------------------------------------------------------------------

def test_dump_is_plain_json(tmp_path):
    out = tmp_path / "run.json"
    diff.dump(harness.ROOT, harness.stack_file(NLB_STACK), None, out)
    data = json.loads(out.read_text())
    assert data["resources"] and "nodes" in data["outputs"]


def test_encrypted_values_differ_by_ciphertext_only(tmp_path):
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text("config:\n  rke-aws:kubeconfig:\n    secure: v1:AAAA\n  rke-aws:other:\n    a:\n      secure: v1:BBBB\n")
    config, secret = diff.stack_config(stack)
    stack.write_text(stack.read_text().replace("v1:AAAA", "v1:CCCC"))
    again, _ = diff.stack_config(stack)
    assert secret == ["rke-aws:kubeconfig", "rke-aws:other"]
    assert config["rke-aws:kubeconfig"] != again["rke-aws:kubeconfig"] and config["rke-aws:other"] == again["rke-aws:other"]
    assert stackfile.SECURE_PLACEHOLDER in config["rke-aws:kubeconfig"] and "AAAA" not in json.dumps(config)


def test_checkout_works_without_tarfile_filters(tmp_path, monkeypatch, repo):
    """Debian 12's Python 3.11.2 predates tarfile's extraction filters (3.11.4); the fallback
    extracts the same files and still refuses members that would land outside the target."""
    import io
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    out = diff.checkout("HEAD", repo, tmp_path / "tree")
    assert (out / "__main__.py").read_text() == (repo / "__main__.py").read_text()
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w") as tar:
        info = tarfile.TarInfo("../outside")
        tar.addfile(info, io.BytesIO(b""))
    monkeypatch.setattr(diff.subprocess, "run", lambda *a, **k: type("P", (), {"stdout": evil.getvalue(), "returncode": 0})())
    with pytest.raises(RuntimeError, match="refusing archive member '../outside'"):
        diff.checkout("HEAD", diff.ROOT, tmp_path / "evil")
    assert not (tmp_path / "outside").exists()


def test_markdown_names_the_real_preview_when_there_is_one():
    d = diff.StackDiff("s")
    linked = diff.render_markdown([d], "main", "https://github.com/o/r/actions/runs/1")
    assert "[this workflow run](https://github.com/o/r/actions/runs/1)" in linked and "authoritative" in linked
    assert "No real `pulumi preview` runs for this pull request" in diff.render_markdown([d], "main")


def _renamed(result: dict, typ: str, name: str, new_name: str, alias: bool) -> None:
    reg = res(result, typ, name)
    old_urn = reg["urn"]
    reg["urn"], reg["name"] = old_urn[: -len(name)] + new_name, new_name
    reg["aliases"] = [old_urn] if alias else []


def test_a_child_renamed_with_an_alias_is_the_same_resource():
    """pulumi/pulumi pkg/resource/deploy/step_generator.go getOldResource: URN first, then each alias,
    an old resource claimed once. Admin rules and bring-your-own subnet tags were renamed from list
    positions to what they are (components/aws/security.py, network.py) with aliases to the old names."""
    rule = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    name = next(r["name"] for r in base_of(HELM_STACK)["resources"] if r["type"] == rule)
    d, _ = planted(HELM_STACK, lambda h: _renamed(h, rule, name, name + "-renamed", alias=True))
    assert not d.changes, diff.render_text([d])
    d, _ = planted(HELM_STACK, lambda h: _renamed(h, rule, name, name + "-renamed", alias=False))
    assert by_action(d, "add") == {name + "-renamed"} and by_action(d, "delete") == {name}, diff.render_text([d])


# ---- components a provider implements (remote components) ----------------------------------------
#
# kubernetes:yaml/v2:ConfigFile is a component of the kubernetes package: the engine hands it to the
# provider's Construct (pulumi/pulumi pkg/resource/deploy/source_eval.go, `remote`), and pulumi-kubernetes
# provider/pkg/provider/provider_construct.go (resourceProviders: yaml/v2 ConfigFile and ConfigGroup,
# helm.sh/v4 Chart, kustomize/v2 Directory) reads the manifest at preview time and registers the
# children with the component's provider. The mocks never see those children; the diff must not skip
# the component that stands for them.

SUC = "kubernetes:yaml/v2:ConfigFile"


@cache
def _with_upgrades(suc_urls: tuple[str, str] | None = None) -> str:
    """An RKE2 fixture stack with a kubeconfig (so system-upgrade-controller goes in), evaluated;
    with `suc_urls`, the program's pinned manifest URLs replaced (a version bump in a pull request)."""
    from rke_aws.settings import versions
    from tests.support.configs import set_key
    from tests.support.day2 import KUBECONFIG as ANY_KUBECONFIG

    config = set_key(set_key(harness.stack_config(NLB_STACK), "ccm", {"install": "helm"}), "kubeconfig", ANY_KUBECONFIG)
    config.pop("rke-aws:rancher", None)  # its registration is a ConfigFile too; these tests follow the SUC's
    saved = versions.SUC_MANIFEST_URLS
    try:
        if suc_urls:
            versions.SUC_MANIFEST_URLS = suc_urls
        run = harness.run_program(config, stack=NLB_STACK)
    finally:
        versions.SUC_MANIFEST_URLS = saved
    return json.dumps(diff.result_of(run), default=str)


def upgrades_base() -> dict:
    base = json.loads(_with_upgrades())
    assert {r["name"] for r in base["resources"] if r["type"] == SUC} == {f"{NLB_STACK}-suc-crd", f"{NLB_STACK}-suc"}
    return base


def test_a_bumped_manifest_url_of_a_remote_component_is_shown_as_may_replace():
    """The review's experiment: SUC_MANIFEST_URLS v0.20.1 -> v0.21.0 changes the controller's
    Deployment, RBAC and CRDs in a real preview; offline it showed "0 to add, 0 to replace". The head
    is the program itself with the pinned URLs bumped, not an edited registration."""
    from rke_aws.settings import versions

    bumped = tuple(u.replace(versions.SUC_VERSION, "v0.99.0") for u in versions.SUC_MANIFEST_URLS)
    assert bumped != versions.SUC_MANIFEST_URLS
    base = upgrades_base()
    head = json.loads(_with_upgrades(bumped))
    d = diff.compare(NLB_STACK, base, head)
    text = diff.render_text([d])
    assert by_action(d, "unknown") == {f"{NLB_STACK}-suc-crd", f"{NLB_STACK}-suc"}, text
    assert not {c.name for c in d.changes} - by_action(d, "unknown"), text
    assert change_of(d, f"{NLB_STACK}-suc").changed == ["file"], text
    assert "children decided by the provider: may replace" in text and "1 unknown" not in text, text
    assert "2 unknown (may replace)" in text, text


def test_a_remote_component_is_listed_when_added_or_deleted():
    base = upgrades_base()
    without = copy.deepcopy(base)
    without["resources"] = [r for r in without["resources"] if r["type"] != SUC]
    added = diff.compare(NLB_STACK, without, base)
    deleted = diff.compare(NLB_STACK, base, without)
    names = {f"{NLB_STACK}-suc-crd", f"{NLB_STACK}-suc"}
    assert by_action(added, "add") == names, diff.render_text([added])
    assert by_action(deleted, "delete") == names, diff.render_text([deleted])
    # The program's own components are groupings, with nothing for a provider to do: never listed.
    own = copy.deepcopy(base)
    own["resources"] = [r for r in own["resources"] if not r["type"].startswith("rke-aws:")]
    assert not diff.compare(NLB_STACK, base, own).changes
    assert not diff.compare(NLB_STACK, own, base).changes


def test_a_replaced_kubernetes_provider_replaces_what_its_remote_components_created():
    """The engine replaces every resource of a replaced provider; a ConfigFile's children are
    registered with the ConfigFile's provider (source_eval.go: a remote component's provider is the
    one its children get), so they are replaced with it."""
    base = upgrades_base()
    head = copy.deepcopy(base)
    provider = res(head, "pulumi:providers:kubernetes")["inputs"]
    provider["clusterIdentifier"] = str(provider.get("clusterIdentifier")) + "-another-cluster"
    d = diff.compare(NLB_STACK, base, head)
    text = diff.render_text([d])
    assert change_of(d, f"{NLB_STACK}-cluster").action == "replace", text
    assert {f"{NLB_STACK}-suc-crd", f"{NLB_STACK}-suc"} <= by_action(d, "replace"), text
    assert "every child it created" in text, text


# ---- aliases the engine refuses -------------------------------------------------------------------

def _aliased(result: dict, typ: str, name: str, new_name: str, alias: str) -> None:
    """A copy of registration `name` as `new_name` with an alias to `alias`."""
    reg = copy.deepcopy(res(result, typ, name))
    reg["urn"], reg["name"], reg["aliases"] = reg["urn"][: -len(name)] + new_name, new_name, [alias]
    result["resources"].append(reg)


RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def test_two_resources_claiming_one_old_resource_stop_the_diff():
    """pulumi/pulumi pkg/resource/deploy/step_generator.go getOldResource: a second resource whose
    alias names an old resource already claimed through an alias is diag 2008 "Duplicate resource
    alias" (sdk/go/common/diag/errors.go); the preview stops. Not given to the first claimant."""
    name = next(r["name"] for r in base_of(HELM_STACK)["resources"] if r["type"] == RULE)

    def plant(h):
        old_urn = res(h, RULE, name)["urn"]
        _aliased(h, RULE, name, name + "-a", old_urn)
        _aliased(h, RULE, name, name + "-b", old_urn)
        h["resources"] = [r for r in h["resources"] if r["urn"] != old_urn]

    d, _ = planted(HELM_STACK, plant)
    assert d.refused and "Duplicate resource alias" in d.refused, diff.render_text([d])
    assert name + "-a" in d.refused and name + "-b" in d.refused and not d.changes
    assert "would stop" in diff.render_text([d])


def test_an_alias_to_an_old_urn_that_is_also_registered_stops_the_diff():
    """step_generator.go getOldResource: an alias naming an old URN that a resource of this run
    registers as it is: diag 2008 when the URN came first, 2016 "Duplicate resource URN ...
    conflicting with alias" when the alias did; either order stops the preview."""
    name = next(r["name"] for r in base_of(HELM_STACK)["resources"] if r["type"] == RULE)
    for first in (True, False):
        def plant(h):
            old_urn = res(h, RULE, name)["urn"]
            _aliased(h, RULE, name, name + "-copy", old_urn)
            if first:  # the aliasing resource registers before the one keeping the URN
                h["resources"].insert(0, h["resources"].pop())

        d, _ = planted(HELM_STACK, plant)
        assert d.refused and "Duplicate resource alias" in d.refused, diff.render_text([d])
        assert name + "-copy" in d.refused and res(base_of(HELM_STACK), RULE, name)["urn"] in d.refused


def test_an_alias_to_an_old_urn_nobody_else_holds_is_still_the_same_resource():
    """The refusal is only for a second claim: one alias per old resource matches as before, and an
    alias to a URN not in the old state matches nothing (a create)."""
    name = next(r["name"] for r in base_of(HELM_STACK)["resources"] if r["type"] == RULE)

    def plant(h):
        reg = res(h, RULE, name)
        old_urn = reg["urn"]
        reg["urn"], reg["name"] = old_urn[: -len(name)] + name + "-renamed", name + "-renamed"
        reg["aliases"] = [old_urn + "-never-existed", old_urn]

    d, _ = planted(HELM_STACK, plant)
    assert not d.refused and not d.changes, diff.render_text([d])


def test_the_first_alias_found_in_the_old_state_is_the_one_taken():
    """getOldResource walks the URN, then the aliases in order, and stops at the first old resource
    it finds; an old resource named only by a later alias is not claimed, so it is deleted."""
    first, second = [r["name"] for r in base_of(HELM_STACK)["resources"] if r["type"] == RULE][:2]

    def plant(h):
        a, b = res(h, RULE, first), res(h, RULE, second)
        a["aliases"] = [a["urn"], b["urn"]]
        a["urn"], a["name"] = a["urn"][: -len(first)] + first + "-renamed", first + "-renamed"
        h["resources"].remove(b)

    d, _ = planted(HELM_STACK, plant)
    assert not d.refused and by_action(d, "delete") == {second}, diff.render_text([d])
    assert not by_action(d, "add"), diff.render_text([d])
