"""The plan a person reads, rendered from hand-made plan data (no program run): summary first, the node table
with type, architecture, market and OS, the warnings and second steps, then the resources by component; values
as YAML shows them; emulated identifiers visibly fake."""

from __future__ import annotations

from rke_aws_offline.report import plan_text, values

AMD64 = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"  # rke_aws.settings.versions.UBUNTU_AMI_NAMES
ARM64 = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-*"


def _ami_lookup(pattern: str, ami: str) -> dict:
    return {"token": "aws:ec2/getAmi:getAmi", "args": {"filters": [{"name": "name", "values": [pattern]}],
                                                       "owners": ["099720109477"], "mostRecent": True},
            "result": {"id": ami, "name": pattern.replace("*", "20250101")}}


def _instance(name: str, ip: str, typ: str, ami: str, spot: bool = False) -> dict:
    inputs = {"ami": ami, "instanceType": typ, "privateIp": ip, "rootBlockDevice": {"volumeSize": 50.0},
              "associatePublicIpAddress": False}
    if spot:
        inputs["instanceMarketOptions"] = {"marketType": "spot"}
    return {"component": "c (Nodes)", "type": "Instance", "name": name, "inputs": inputs, "id": "i-0123456789abcdef0"}


def plan(messages: list[str] = ()) -> dict:
    resources = [
        {"component": "c (Network)", "type": "Vpc", "name": "c-vpc", "inputs": {"cidrBlock": "10.0.0.0/16"},
         "id": "vpc-02e3f6b8a78100b6f"},
        {"component": "c (EbsCsiCredentials)", "type": "AccessKey", "name": "c-ebs-csi", "inputs": {"user": "u"},
         "id": "AKIARZPUZDIKE54BMZOM"},
        _instance("c-servers-0", "10.0.4.10", "m6i.large", "ami-0aaaaaaaaaaaaaaaa"),
        _instance("c-spot-0", "10.0.5.10", "m6i.large", "ami-0aaaaaaaaaaaaaaaa", spot=True),
        _instance("c-arm-0", "10.0.6.10", "m7g.large", "ami-0bbbbbbbbbbbbbbbb"),
        _instance("c-own-0", "10.0.7.10", "m6i.large", "ami-0cccccccccccccccc"),
    ]
    nodes = [{"name": f"ip-{ip}", "pool": pool, "roles": roles, "availabilityZone": "us-east-1a", "privateIp": ip}
             for ip, pool, roles in (("10.0.4.10", "servers", "controlplane,etcd"), ("10.0.5.10", "spot", "worker"),
                                     ("10.0.6.10", "arm", "worker"), ("10.0.7.10", "own", "worker"))]
    return {"stack": "c", "resources": resources, "nodes": nodes, "clusterTagged": [], "ccm": {}, "addons": {},
            "configs": [], "lookups": [_ami_lookup(AMD64, "ami-0aaaaaaaaaaaaaaaa"), _ami_lookup(ARM64, "ami-0bbbbbbbbbbbbbbbb")],
            "outputs": {"distribution": "rke2", "kubernetesVersion": "v1.35.7+rke2r1", "region": "us-east-1",
                        "clusterId": "c", "enabled": True, "size": 30.0},
            "messages": list(messages)}


def table(s: dict) -> dict[str, dict[str, str]]:
    lines = plan_text.node_table(s)
    headers = lines[0].split()
    return {row.split()[0]: dict(zip(headers, row.split(), strict=False)) for row in lines[1:]}


def test_the_summary_comes_first_with_counts_per_kind():
    head = plan_text.render(plan()).splitlines()[:2]
    assert head[0] == ("c: 6 resources to create (rke2 v1.35.7+rke2r1 · us-east-1 · cluster c · emulated account: "
                       "IDs are fake)"), head
    assert head[1] == "  network 1 · nodes 4 · add-ons 1", head


def test_the_node_table_has_type_architecture_market_and_os():
    rows = table(plan())
    assert rows["ip-10.0.4.10"] | {} == {"name": "ip-10.0.4.10", "pool": "servers", "role": "controlplane,etcd",
                                         "zone": "us-east-1a", "address": "10.0.4.10", "type": "m6i.large",
                                         "arch": "x86_64", "market": "on-demand", "OS": "Ubuntu"}, rows
    assert "Ubuntu 24.04" in plan_text.node_table(plan())[1]
    assert rows["ip-10.0.5.10"]["market"] == "spot"
    assert rows["ip-10.0.6.10"]["arch"] == "arm64"  # the image the program chose for the type's architecture
    assert "own image ami-0cccccccccccccccc" in plan_text.node_table(plan())[4]


def test_a_node_column_or_note_is_one_line(monkeypatch):
    """Issue 35 adds a per-pool OS, issue 37 a per-node "stale" note: each is one entry here."""
    monkeypatch.setattr(plan_text, "NODE_NOTES", [lambda v: "stale: user data changed" if v.node["pool"] == "arm" else None])
    lines = plan_text.node_table(plan())
    assert lines[lines.index(next(row for row in lines if row.lstrip().startswith("ip-10.0.6.10"))) + 1] == \
        "    note: stale: user data changed"


def test_warnings_notes_and_second_steps_are_on_the_first_screen():
    s = plan(["warning: rke-aws:distribution: rke: RKE1 reached end of life",
              "info: aws-cloud-controller-manager not installed yet: ... and `pulumi up` again.",
              "info: something to know"])
    lines = plan_text.render(s).splitlines()
    first = "\n".join(lines[:lines.index(next(x for x in lines if x.startswith("Resources:")))])
    assert "Warnings: 1\n  - rke-aws:distribution: rke: RKE1 reached end of life" in first, first
    assert "Notes: 1\n  - something to know" in first
    assert "Needs a second step: 1\n  - aws-cloud-controller-manager not installed yet" in first
    assert "No warnings" in plan_text.render(plan())


def test_values_read_as_yaml_shows_them():
    full = plan_text.render(plan(), full=True)
    assert "volumeSize: 50\n" in full and "50.0" not in full, full
    assert "enabled:\n    true" in full and "True" not in full
    assert values.scalar(30.0) == "30" and values.scalar(None) == "null" and values.scalar(True) == "true"


def test_emulated_ids_are_marked_and_access_key_ids_never_shown():
    """Issue 34: emulated IDs looked real (`AKIA…` in committed snapshots)."""
    for text in (plan_text.render(plan()), plan_text.render(plan(), full=True)):
        assert "AKIA" not in text and "(emulated access key)" in text
        assert "vpc-02e3… (emulated)" in text and "vpc-02e3f6b8a78100b6f" not in text
    assert values.emulated_id("ASIAABCDEFGHIJKLMNOP") == "(emulated access key)"


def test_resources_follow_the_components_by_kind_then_the_runs_order():
    s = plan()
    default = plan_text.render(s).splitlines()
    order = [x.split()[1] for x in default if x.lstrip().startswith("+ ")]
    assert order == ["Vpc", "Instance", "Instance", "Instance", "Instance", "AccessKey"], order  # network, nodes, add-ons
    layout = [{"type": "Instance", "name": n, "path": ["RkeCluster c", "Nodes c"]} for n in
              ("c-servers-0", "c-spot-0", "c-arm-0", "c-own-0")] + [
        {"type": "Vpc", "name": "c-vpc", "path": ["RkeCluster c", "Network c"]},
        {"type": "AccessKey", "name": "c-ebs-csi", "path": ["RkeCluster c", "EbsCsiCredentials c"]}]
    tree = plan_text.render(s, order=layout).splitlines()
    start = tree.index("Resources: 6, by component, in creation order")
    assert tree[start + 1:start + 4] == ["  RkeCluster c", "    Nodes c",
                                         "      + Instance c-servers-0  m6i.large 10.0.4.10  i-0123… (emulated)"], tree


def test_the_full_dump_is_behind_a_flag():
    assert plan_text.FULL_HINT in plan_text.render(plan())
    full = plan_text.render(plan(), full=True)
    assert plan_text.FULL_HINT not in full
    for section in ("Cluster-tagged:", "Look-ups:", "CCM (", "Outputs:"):
        assert section in full and section not in plan_text.render(plan())


def test_a_lookup_is_one_line():
    line = plan_text.lookup_line(_ami_lookup(AMD64, "ami-0aaaaaaaaaaaaaaaa"))
    assert line == ("  getAmi name=" + AMD64 + ' owners=["099720109477"] mostRecent=true → ami-0aaaaaaaaaaaaaaaa '
                    "(ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250101)"), line
