"""Nodes: plan-time names equal to EC2 private DNS names, instance settings, bootstrap configs."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re

import pytest
import yaml

from components import bootstrap, config, node_plan
from components.network_plan import plan_subnets
from offline import harness
from tests.conftest import cloud_config, set_key, written_file

DNS_RE = {
    "us-east-1": re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)\.ec2\.internal$"),
    "other": re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)\.([a-z]{2}-[a-z]+-\d)\.compute\.internal$"),
}


def instances(run) -> dict[str, harness.Registration]:
    """Instance registrations keyed by planned node name (from the Name tag)."""
    return {r.inputs["tags"]["Name"]: r for r in run.of_type("aws:ec2/instance:Instance")}


def test_node_name_is_the_private_dns_name_aws_derives(stack_run):
    region = stack_run.outputs["region"]
    for node in stack_run.outputs["nodes"]:
        assert node["name"] == node["privateDns"], f"{stack_run.stack}: planned {node['name']} but EC2 says {node['privateDns']}"
        pattern = DNS_RE["us-east-1" if region == "us-east-1" else "other"]
        m = pattern.match(node["name"])
        assert m, f"{node['name']} is not an EC2 private DNS name for {region}"
        assert ".".join(m.groups()[:4]) == node["privateIp"], node
        if region != "us-east-1":
            assert m.group(5) == region


def test_us_east_1_stacks_use_ec2_internal():
    run = harness.run_stack("rke2-dev")
    assert run.outputs["region"] == "us-east-1"
    assert all(n["name"].endswith(".ec2.internal") for n in run.outputs["nodes"])


def test_node_addresses_valid_unique_and_spread(stack_run):
    subnets = {r.state.get("id") or r.name: r for r in stack_run.of_type("aws:ec2/subnet:Subnet")}
    by_id = {sid: ipaddress.ip_network(r.inputs["cidrBlock"]) for sid, r in zip(stack_run.outputs["subnetIds"].values(),
             [next(s for s in stack_run.of_type("aws:ec2/subnet:Subnet") if s.name.endswith(k)) for k in stack_run.outputs["subnetIds"]])}
    assert subnets
    seen = set()
    for name, inst in instances(stack_run).items():
        ip = ipaddress.ip_address(inst.inputs["privateIp"])
        net = by_id[inst.inputs["subnetId"]]
        assert ip in net, f"{inst.urn}: {ip} outside {net}"
        assert int(ip) - int(net.network_address) >= 4 and ip != net.broadcast_address, f"{inst.urn}: reserved address {ip}"
        assert ip not in seen, f"{inst.urn}: duplicate {ip}"
        seen.add(ip)
    pools = json.loads(stack_run.config["rke-aws:nodePools"])
    azs = {}
    for node in stack_run.outputs["nodes"]:
        azs.setdefault(node["pool"], []).append(node["availabilityZone"])
    for pool in pools:
        got = azs.get(pool["name"], [])
        assert len(set(got)) == min(len(got), len(set(stack_run.outputs["subnetIds"])) // 2), f"{pool['name']}: AZs {got}"


def test_instance_settings(stack_run):
    pools = {p["name"]: p for p in json.loads(stack_run.config["rke-aws:nodePools"])}
    access = json.loads(stack_run.config.get("rke-aws:access", "{}"))
    cid = stack_run.outputs["clusterId"]
    for node in stack_run.outputs["nodes"]:
        inst = instances(stack_run)[node["name"]]
        pool = pools[node["pool"]]
        meta = inst.inputs["metadataOptions"]
        assert meta["httpTokens"] == "required" and meta["httpPutResponseHopLimit"] == 2, inst.urn
        root = inst.inputs["rootBlockDevice"]
        assert root["encrypted"] is True and root["volumeType"] == "gp3", inst.urn
        assert root["volumeSize"] == pool.get("rootVolumeGb", config.DEFAULT_ROOT_VOLUME_GB), inst.urn
        assert inst.inputs.get("keyName") == access.get("sshKeyName"), inst.urn
        public = pool.get("subnet", "private") == "public"
        assert bool(inst.inputs.get("associatePublicIpAddress")) is public, inst.urn
        assert bool(node["publicIp"]) is public, inst.urn
        cluster_tags = {k: v for k, v in inst.inputs["tags"].items() if k.startswith("kubernetes.io/cluster/")}
        assert cluster_tags == {f"kubernetes.io/cluster/{cid}": "owned"}, inst.urn
        assert inst.inputs["tags"]["rke-aws/pool"] == node["pool"]
        assert inst.delete_before_replace, f"{inst.urn}: fixed IPs need delete-before-replace"
        assert {"ami", "userData"} <= set(inst.ignore_changes), f"{inst.urn}: a new AMI or script would replace the node"
        servers = "controlplane" in node["roles"] or "etcd" in node["roles"]
        protect = json.loads(stack_run.config.get("rke-aws:protectServers", "false"))
        assert inst.protect is (protect and servers), inst.urn


def test_private_nodes_wait_for_their_nat_route(stack_run):
    routes = {r.urn: r for r in stack_run.of_type("aws:ec2/route:Route")}
    for node in stack_run.outputs["nodes"]:
        inst = instances(stack_run)[node["name"]]
        deps = [routes[u] for u in inst.dependencies if u in routes]
        if node["publicIp"]:
            assert any(d.inputs.get("gatewayId", "").startswith("igw-") for d in deps), inst.urn
        else:
            assert any(d.inputs.get("natGatewayId") for d in deps), f"{inst.urn} does not wait for a NAT route"


def test_no_instance_depends_on_another_instance(stack_run):
    inst_urns = {r.urn for r in stack_run.of_type("aws:ec2/instance:Instance")}
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        assert not inst_urns & set(inst.dependencies), f"{inst.urn} waits for another instance"


def test_hostname_is_the_full_node_name(stack_run):
    for name, inst in instances(stack_run).items():
        doc = cloud_config(inst)
        assert doc["fqdn"] == name and doc["prefer_fqdn_over_hostname"] is True, inst.urn
        assert doc["hostname"] == name.split(".")[0] and doc["preserve_hostname"] is False, inst.urn


def test_bootstrap_downloads_retry(stack_run):
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        cmds = [" ".join(c) if isinstance(c, list) else c for c in cloud_config(inst)["runcmd"]]
        downloads = [c for c in cmds if "curl" in c]
        assert downloads and all("--retry" in c for c in downloads), inst.urn


# ---- RKE1 -------------------------------------------------------------------------------------

def rke_runs():
    return [s for s in harness.stack_names() if harness.stack_config(s)["rke-aws:distribution"] == "rke"]


@pytest.mark.parametrize("stack", rke_runs())
def test_rke_cluster_yml_matches_nodes_and_uses_only_known_keys(stack):
    from tests.conftest import run_stack_cached

    run = run_stack_cached(stack)
    doc = yaml.safe_load(run.outputs["rkeClusterYml"])
    assert set(doc) <= bootstrap.RKE_CLUSTER_KEYS, f"{stack}: unknown cluster.yml keys {set(doc) - bootstrap.RKE_CLUSTER_KEYS}"
    assert doc["cloud_provider"] == {"name": "external-aws"}
    assert doc["kubernetes_version"] == run.outputs["kubernetesVersion"]
    by_name = {n["name"]: n for n in run.outputs["nodes"]}
    assert [n["hostname_override"] for n in doc["nodes"]] == [n["name"] for n in run.outputs["nodes"]]
    for n in doc["nodes"]:
        assert set(n) <= bootstrap.RKE_NODE_KEYS, f"{stack}: unknown node keys {set(n) - bootstrap.RKE_NODE_KEYS}"
        out = by_name[n["hostname_override"]]
        assert n["internal_address"] == out["privateIp"]
        assert n["address"] == (out["publicIp"] or out["privateIp"])
        assert n["role"] == out["roles"] and n["user"] == "ubuntu"
    access = json.loads(run.config.get("rke-aws:access", "{}"))
    assert doc.get("ssh_key_path") == access.get("sshKeyPath")


def test_rke_key_lists_catch_the_seed_spelling():
    # The seed's snake_case spelling is silently ignored by RKE; the list must not accept it.
    assert "use_instance_metadata_hostname" not in bootstrap.RKE_CLOUD_PROVIDER_KEYS
    assert "useInstanceMetadataHostname" in bootstrap.RKE_CLOUD_PROVIDER_KEYS
    assert "hostname" not in bootstrap.RKE_NODE_KEYS


def test_rke_leader_migration_keeps_in_tree_provider(base_config):
    cfg = harness.stack_config("rke-dev")
    set_key(cfg, "kubernetesVersion", "v1.26.15-rancher1-1")
    set_key(cfg, "ccm", {"leaderMigration": True})
    run = harness.run_program(cfg, stack="migrate")
    doc = yaml.safe_load(run.outputs["rkeClusterYml"])
    assert doc["cloud_provider"] == {"name": "aws"}
    assert doc["services"] == {"kube-controller": {"extra_args": {"enable-leader-migration": "true"}}}
    assert set(doc) <= bootstrap.RKE_CLUSTER_KEYS


def test_rke_user_data_prepares_docker_and_kernel():
    run = harness.run_stack("rke-dev")
    for inst in run.of_type("aws:ec2/instance:Instance"):
        doc = cloud_config(inst)
        sysctl = written_file(doc, "/etc/sysctl.d/90-rke.conf")
        assert "net.bridge.bridge-nf-call-iptables = 1" in sysctl and "net.ipv4.ip_forward = 1" in sysctl, inst.urn
        cmds = [" ".join(c) for c in doc["runcmd"]]
        assert any("install-docker/" in c for c in cmds), inst.urn
        assert "usermod -aG docker ubuntu" in cmds, inst.urn


# ---- RKE2 -------------------------------------------------------------------------------------

def rke2_configs(run) -> dict[str, dict]:
    out = {}
    for name, inst in instances(run).items():
        out[name] = yaml.safe_load(written_file(cloud_config(inst), bootstrap.RKE2_CONFIG_PATH))
    return out


@pytest.mark.parametrize("stack", [s for s in harness.stack_names() if s not in rke_runs()])
def test_rke2_configs(stack):
    from tests.conftest import run_stack_cached

    run = run_stack_cached(stack)
    configs = rke2_configs(run)
    nodes = run.outputs["nodes"]
    servers = [n for n in nodes if "controlplane" in n["roles"]]
    first = servers[0]
    reg = f"https://{first['privateIp']}:9345"
    assert run.outputs["rke2RegistrationAddress"] == reg
    for n in nodes:
        cfg = configs[n["name"]]
        is_server = n in servers
        allowed = bootstrap.RKE2_SERVER_KEYS if is_server else bootstrap.RKE2_AGENT_KEYS
        assert set(cfg) <= allowed, f"{stack} {n['name']}: keys not valid for its type: {set(cfg) - allowed}"
        assert cfg["node-name"] == n["name"] and cfg["node-ip"] == n["privateIp"]
        assert cfg["cloud-provider-name"] == "external"
        if n is first:
            assert "server" not in cfg
        else:
            assert cfg["server"] == reg, n["name"]
        if is_server:
            assert cfg["disable-cloud-controller"] is True, n["name"]
            assert first["privateIp"] in cfg["tls-san"]
        inst = instances(run)[n["name"]]
        cmds = " ".join(" ".join(c) for c in cloud_config(inst)["runcmd"])
        kind = "server" if is_server else "agent"
        assert f"INSTALL_RKE2_TYPE={kind}" in cmds and "INSTALL_RKE2_VERSION=" in cmds
        assert f"rke2-{kind}.service" in cmds


@pytest.mark.parametrize("stack", [s for s in harness.stack_names() if s not in rke_runs()])
def test_rke2_token_is_shared_and_never_in_plain_outputs(stack):
    from tests.conftest import run_stack_cached

    run = run_stack_cached(stack)
    (password,) = run.of_type("random:index/randomPassword:RandomPassword")
    token = password.state["result"]
    (param,) = run.of_type("aws:ssm/parameter:Parameter")
    assert param.inputs["type"] == "SecureString" and param.inputs["value"] == token, param.urn
    assert "value" in param.secret_inputs, param.urn
    assert run.outputs["rke2TokenParameter"] == param.inputs["name"]
    for name, cfg in rke2_configs(run).items():
        assert "token" not in cfg and cfg["token-file"] == bootstrap.RKE2_TOKEN_PATH, name
    for inst in run.of_type("aws:ec2/instance:Instance"):
        assert token not in inst.inputs["userData"], f"{inst.urn}: the join token is in user data"
        script = written_file(cloud_config(inst), "/usr/local/sbin/rke-aws-fetch-token")
        assert f'"Name": "{param.inputs["name"]}"' in script and "AmazonSSM.GetParameter" in script, inst.urn
        assert f"aws:amz:{run.outputs['region']}:ssm" in script, inst.urn
        chain = cloud_config(inst)["runcmd"][0][2]
        assert chain.index("rke-aws-fetch-token") < chain.index("install-rke2.sh") < chain.index("systemctl"), inst.urn
    assert "rke2Token" in run.secret_outputs
    plain = json.dumps({k: v for k, v in run.outputs.items() if k not in run.secret_outputs}, default=str)
    assert token not in plain, f"{stack}: the RKE2 token appears in a plain output"


@pytest.mark.parametrize("stack", [s for s in harness.stack_names() if s not in rke_runs()])
def test_node_roles_may_read_the_token_parameter_and_nothing_else(stack):
    from tests.conftest import run_stack_cached

    run = run_stack_cached(stack)
    (param,) = run.of_type("aws:ssm/parameter:Parameter")
    grants = [r for r in run.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("-join-token")]
    assert len(grants) == 2, [g.urn for g in grants]
    for grant in grants:
        (stmt,) = json.loads(grant.inputs["policy"])["Statement"]
        assert stmt["Action"] == ["ssm:GetParameter"] and stmt["Resource"] == param.state["arn"], grant.urn
    for inst in run.of_type("aws:ec2/instance:Instance"):
        assert {g.urn for g in grants} <= set(inst.dependencies), f"{inst.urn} may boot before it can read the token"


def test_token_fetch_script_is_valid_shell(tmp_path):
    import subprocess

    script = tmp_path / "fetch.sh"
    script.write_text(bootstrap.fetch_parameter_script("eu-west-1", "/rke-aws/x/rke2-join-token", "/tmp/t"))
    assert subprocess.run(["sh", "-n", str(script)]).returncode == 0
    text = script.read_text()
    assert "test -s /tmp/t.tmp" in text and text.index("test -s") < text.index("mv /tmp/t.tmp /tmp/t")


# ---- address plan -----------------------------------------------------------------------------

def _cfg(pools) -> config.StackConfig:
    raw = {
        "aws:region": "us-west-2",
        "rke-aws:distribution": "rke2",
        "rke-aws:nodePools": json.dumps(pools),
    }
    return config.parse(raw, project="rke-aws", stack="plan", region="us-west-2")


POOLS = [
    {"name": "servers", "roles": ["controlplane", "etcd"], "count": 3},
    {"name": "agents", "roles": ["worker"], "count": 4},
]


def _ips(cfg) -> dict[str, str]:
    subnets = plan_subnets("10.0.0.0/16", ["us-west-2a", "us-west-2b", "us-west-2c"])
    return {n.resource_name: n.private_ip for n in node_plan.plan_nodes(cfg, subnets)}


def test_adding_nodes_or_pools_keeps_existing_addresses():
    before = _ips(_cfg(POOLS))
    more_nodes = _ips(_cfg([POOLS[0], {**POOLS[1], "count": 9}]))
    more_pools = _ips(_cfg(POOLS + [{"name": "gpu", "roles": ["worker"], "count": 2}]))
    for after in (more_nodes, more_pools):
        assert {k: after[k] for k in before} == before
    assert len(more_nodes) == 12 and len(more_pools) == 9


def test_pool_that_does_not_fit_is_a_config_error():
    cfg = _cfg([POOLS[0], {**POOLS[1], "count": 500}])
    with pytest.raises(node_plan.CapacityError, match=r"rke-aws:nodePools\[1\].count: 500 nodes"):
        _ips(cfg)


def test_private_dns_name_rule():
    assert node_plan.private_dns_name("10.0.1.23", "us-east-1") == "ip-10-0-1-23.ec2.internal"
    assert node_plan.private_dns_name("10.0.1.23", "eu-west-1") == "ip-10-0-1-23.eu-west-1.compute.internal"


def test_first_server_is_the_registration_node():
    cfg = _cfg(POOLS)
    subnets = plan_subnets("10.0.0.0/16", ["a", "b", "c"])
    plans = node_plan.plan_nodes(cfg, subnets)
    assert [p.is_first_server for p in plans] == [True] + [False] * 6
    rke = dataclasses.replace(cfg, distribution="rke")
    assert not any(p.is_first_server for p in node_plan.plan_nodes(rke, subnets))


def test_nodes_wait_for_the_reservation_of_their_address(stack_run):
    reservations = {r.urn: r for r in stack_run.of_type("aws:ec2/subnetCidrReservation:SubnetCidrReservation")}
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        mine = [reservations[u] for u in inst.dependencies if u in reservations]
        assert len(mine) == 1, f"{inst.urn} does not wait for its subnet's address reservation"
        assert mine[0].inputs["reservationType"] == "explicit"
        assert ipaddress.ip_address(inst.inputs["privateIp"]) in ipaddress.ip_network(mine[0].inputs["cidrBlock"]), inst.urn


@pytest.mark.parametrize("delta", [+2, -1])
def test_changing_a_pool_count_touches_only_the_end_of_that_pool(delta):
    base = harness.stack_config("rke2-prod")
    pools = json.loads(base["rke-aws:nodePools"])
    changed = json.loads(base["rke-aws:nodePools"])
    changed[1]["count"] += delta
    before = instances(harness.run_program(base, stack="rke2-prod"))
    after = instances(harness.run_program(set_key(dict(base), "nodePools", changed), stack="rke2-prod"))

    def key(reg):
        return reg.name, reg.inputs["privateIp"], reg.inputs["subnetId"], reg.inputs["userData"]

    kept = set(before) & set(after)
    assert all(key(before[n]) == key(after[n]) for n in kept), "an existing node changed"
    added = {after[n].name for n in set(after) - set(before)}
    removed = {before[n].name for n in set(before) - set(after)}
    pool = pools[1]["name"]
    old = pools[1]["count"]
    if delta > 0:
        assert added == {f"rke2-prod-{pool}-{i}" for i in range(old, old + delta)} and not removed
    else:
        assert removed == {f"rke2-prod-{pool}-{i}" for i in range(old + delta, old)} and not added


def test_deployment_stops_when_ec2_names_a_node_differently():
    """A mock that answers like EC2 with a custom DHCP domain: the planned name no longer matches."""
    from pulumi import RunError

    from offline.mocks import AwsLikeMocks

    class OtherDomain(AwsLikeMocks):
        def _instance(self, name, inputs):
            out = super()._instance(name, inputs)
            out["privateDns"] = out["privateDns"].split(".")[0] + ".corp.example"
            return out

    with pytest.raises(RunError, match=r"EC2 reports private DNS name ip-.*\.corp\.example"):
        harness.run_program(harness.stack_config("rke2-dev"), stack="rke2-dev", mocks=OtherDomain("us-east-1"))
