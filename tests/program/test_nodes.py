"""Nodes: plan-time names equal to EC2 private DNS names, instance settings, bootstrap configs."""

# split: this module mixes levels (issue 33 §7.2); the pure placement and naming tests -> tests/unit/plan.

from __future__ import annotations

import functools
import ipaddress
import json
import re

import pytest
import yaml

from rke_aws.diagnostics import ConfigError
from rke_aws.node import rke2_config, scripts
from rke_aws.plan import nodes as node_plan
from rke_aws.plan.network import plan_subnets
from rke_aws.settings import fields, resolve
from rke_aws_offline.engine import harness
from tests.support import rke1_keys
from tests.support.configs import set_key
from tests.support.rke2_keys import RKE2_AGENT_KEYS, RKE2_SERVER_KEYS
from tests.support.runs import run_cached, run_stack_cached
from tests.support.stackconfig import parse_flat
from tests.support.userdata import cloud_config, user_data, written_file

# Kubernetes 1.26 has no entry in versions.CCM_IMAGE_TAGS: leader migration names its CCM image.
OLD_CCM_IMAGE = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.9"
DNS_RE = {
    "us-east-1": re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)\.ec2\.internal$"),
    "other": re.compile(r"^ip-(\d+)-(\d+)-(\d+)-(\d+)\.([a-z]{2}(?:-[a-z]+)+-\d)\.compute\.internal$"),
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
    run = run_stack_cached("rke2-dev")
    assert run.outputs["region"] == "us-east-1"
    assert all(n["name"].endswith(".ec2.internal") for n in run.outputs["nodes"])


def test_node_addresses_valid_unique_and_spread(stack_run):
    subnets = {r.state.get("id") or r.name: r for r in stack_run.of_type("aws:ec2/subnet:Subnet")}
    by_id = {sid: ipaddress.ip_network(r.inputs["cidrBlock"]) for sid, r in zip(stack_run.outputs["subnetIds"].values(),
             [next(s for s in stack_run.of_type("aws:ec2/subnet:Subnet") if s.name.endswith(k)) for k in stack_run.outputs["subnetIds"]], strict=False)}
    assert subnets
    seen = set()
    for _name, inst in instances(stack_run).items():
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
        # One private and one public subnet per zone; an air-gapped cluster has private ones only.
        zones = len(set(stack_run.outputs["subnetIds"])) // (1 if "rke-aws:airgap" in stack_run.config else 2)
        assert len(set(got)) == min(len(got), zones), f"{pool['name']}: AZs {got}"


def test_instance_settings(stack_run):
    pools = {p["name"]: p for p in json.loads(stack_run.config["rke-aws:nodePools"])}
    access = json.loads(stack_run.config.get("rke-aws:access", "{}"))
    cid = stack_run.outputs["clusterId"]
    for node in stack_run.outputs["nodes"]:
        inst = instances(stack_run)[node["name"]]
        pool = pools[node["pool"]]
        meta = inst.inputs["metadataOptions"]
        # Hop limit 1 unless the pool says why pods need the node's credentials (domain.md section 6).
        hop = pool.get("imdsHopLimit", 1)
        assert meta["httpTokens"] == "required" and meta["httpPutResponseHopLimit"] == hop, inst.urn
        assert (inst.inputs["tags"].get("rke-aws/imds-hop-limit-reason") is not None) is (hop == 2), inst.urn
        root = inst.inputs["rootBlockDevice"]
        assert root["encrypted"] is True and root["volumeType"] == "gp3", inst.urn
        assert root["volumeSize"] == pool.get("rootVolumeGb", fields.DEFAULT_ROOT_VOLUME_GB), inst.urn
        assert inst.inputs.get("keyName") == access.get("sshKeyName"), inst.urn
        public = pool.get("subnet", "private") == "public"
        assert bool(inst.inputs.get("associatePublicIpAddress")) is public, inst.urn
        assert bool(node["publicIp"]) is public, inst.urn
        cluster_tags = {k: v for k, v in inst.inputs["tags"].items() if k.startswith("kubernetes.io/cluster/")}
        assert cluster_tags == {f"kubernetes.io/cluster/{cid}": "owned"}, inst.urn
        assert inst.inputs["tags"]["rke-aws/pool"] == node["pool"]
        assert inst.delete_before_replace, f"{inst.urn}: fixed IPs need delete-before-replace"
        assert {"ami", "userData", "userDataBase64"} <= set(inst.ignore_changes), f"{inst.urn}: a new AMI or script would replace the node"
        servers = "controlplane" in node["roles"] or "etcd" in node["roles"]
        protect = json.loads(stack_run.config.get("rke-aws:protectServers", "false"))
        assert inst.protect is (protect and servers), inst.urn


def test_nodes_do_not_wait_for_nat_gateways(stack_run):
    """The NAT gateway (~105 s) is the slowest resource; nodes boot meanwhile and their boot scripts
    retry (tests/tooling/test_bootstrap.py). Public nodes still wait for their (fast) internet route."""
    routes = {r.urn: r for r in stack_run.of_type("aws:ec2/route:Route")}
    nats = {r.urn for r in stack_run.of_type("aws:ec2/natGateway:NatGateway")}
    assocs = {r.urn: r for r in stack_run.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")}
    for node in stack_run.outputs["nodes"]:
        inst = instances(stack_run)[node["name"]]
        deps = [routes[u] for u in inst.dependencies if u in routes]
        assert not nats & set(inst.dependencies), f"{inst.urn} waits for a NAT gateway"
        assert not any(d.inputs.get("natGatewayId") for d in deps), f"{inst.urn} waits for a NAT route"
        assert any(u in assocs for u in inst.dependencies), f"{inst.urn} may boot before its subnet's route table"
        if node["publicIp"]:
            assert any(d.inputs.get("gatewayId", "").startswith("igw-") for d in deps), inst.urn


def test_no_instance_depends_on_another_instance(stack_run):
    inst_urns = {r.urn for r in stack_run.of_type("aws:ec2/instance:Instance")}
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        assert not inst_urns & set(inst.dependencies), f"{inst.urn} waits for another instance"


def test_hostname_is_the_full_node_name(stack_run):
    for name, inst in instances(stack_run).items():
        doc = cloud_config(inst)
        assert doc["fqdn"] == name and doc["prefer_fqdn_over_hostname"] is True, inst.urn
        assert doc["hostname"] == name.split(".")[0] and doc["preserve_hostname"] is False, inst.urn


def test_boot_runs_one_script_that_retries_every_download(stack_run):
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        doc = cloud_config(inst)
        assert doc["runcmd"] == [[scripts.BOOTSTRAP_PATH]], inst.urn
        script = written_file(doc, scripts.BOOTSTRAP_PATH)
        downloads = [line.strip() for line in script.splitlines() if line.strip().startswith(("retry download", "download "))]
        assert downloads and all(d.startswith("retry ") for d in downloads), f"{inst.urn}: {downloads}"


# ---- RKE1 -------------------------------------------------------------------------------------

@functools.cache
def rke_runs() -> tuple[str, ...]:
    return tuple(s for s in harness.stack_names() if harness.stack_config(s)["rke-aws:distribution"] == "rke")


@pytest.mark.parametrize("stack", rke_runs())
def test_rke_cluster_yml_matches_nodes_and_uses_only_known_keys(stack):
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    doc = yaml.safe_load(run.outputs["rkeClusterYml"])
    assert set(doc) <= rke1_keys.RKE_CLUSTER_KEYS, f"{stack}: unknown cluster.yml keys {set(doc) - rke1_keys.RKE_CLUSTER_KEYS}"
    assert doc["cloud_provider"] == {"name": "external-aws"}
    assert doc["kubernetes_version"] == run.outputs["kubernetesVersion"]
    kube_api = doc.get("services", {}).get("kube-api", {})
    assert set(kube_api) <= rke1_keys.RKE_KUBE_API_KEYS, f"{stack}: unknown kube-api keys {set(kube_api) - rke1_keys.RKE_KUBE_API_KEYS}"
    by_name = {n["name"]: n for n in run.outputs["nodes"]}
    assert [n["hostname_override"] for n in doc["nodes"]] == [n["name"] for n in run.outputs["nodes"]]
    for n in doc["nodes"]:
        assert set(n) <= rke1_keys.RKE_NODE_KEYS, f"{stack}: unknown node keys {set(n) - rke1_keys.RKE_NODE_KEYS}"
        out = by_name[n["hostname_override"]]
        assert n["internal_address"] == out["privateIp"]
        assert n["address"] == (out["publicIp"] or out["privateIp"])
        assert n["role"] == out["roles"] and n["user"] == "ubuntu"
    access = json.loads(run.config.get("rke-aws:access", "{}"))
    assert doc.get("ssh_key_path") == access.get("sshKeyPath")


def test_rke_key_lists_catch_the_seed_spelling():
    # The seed's snake_case spelling is silently ignored by RKE; the list must not accept it.
    assert "use_instance_metadata_hostname" not in rke1_keys.RKE_CLOUD_PROVIDER_KEYS
    assert "useInstanceMetadataHostname" in rke1_keys.RKE_CLOUD_PROVIDER_KEYS
    assert "hostname" not in rke1_keys.RKE_NODE_KEYS


def test_rke_leader_migration_keeps_in_tree_provider(base_config):
    cfg = harness.stack_config("rke-dev")
    set_key(cfg, "kubernetesVersion", "v1.26.15-rancher1-1")
    set_key(cfg, "ccm", {"leaderMigration": True, "image": OLD_CCM_IMAGE})
    run = harness.run_program(cfg, stack="migrate")
    doc = yaml.safe_load(run.outputs["rkeClusterYml"])
    assert doc["cloud_provider"] == {"name": "aws"}
    services = {k: v for k, v in doc["services"].items() if k != "etcd"}  # etcd: snapshots (test_backups.py)
    assert services == {"kube-controller": {"extra_args": {"enable-leader-migration": "true"}}}
    assert set(doc) <= rke1_keys.RKE_CLUSTER_KEYS
    assert run.outputs["ccmImage"] == OLD_CCM_IMAGE


def test_rke_user_data_prepares_docker_and_kernel():
    run = run_stack_cached("rke-dev")
    for inst in run.of_type("aws:ec2/instance:Instance"):
        doc = cloud_config(inst)
        sysctl = written_file(doc, "/etc/sysctl.d/90-rke.conf")
        assert "net.bridge.bridge-nf-call-iptables = 1" in sysctl and "net.ipv4.ip_forward = 1" in sysctl, inst.urn
        script = written_file(doc, scripts.BOOTSTRAP_PATH)
        assert "DOCKER_INSTALL_URL='https://releases.rancher.com/install-docker/" in script, inst.urn
        assert "SSH_USER='ubuntu'" in script and 'usermod -aG docker "$SSH_USER"' in script, inst.urn


# ---- RKE2 -------------------------------------------------------------------------------------

def rke2_configs(run) -> dict[str, dict]:
    out = {}
    for name, inst in instances(run).items():
        out[name] = yaml.safe_load(written_file(cloud_config(inst), rke2_config.RKE2_CONFIG_PATH))
    return out


def rke2_stacks() -> list[str]:
    rke = set(rke_runs())  # once, not once per stack: every stack file read again per stack cost each collection ~6 s
    return [s for s in harness.stack_names() if s not in rke]


@pytest.mark.parametrize("stack", rke2_stacks())
def test_rke2_configs(stack):
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    configs = rke2_configs(run)
    nodes = run.outputs["nodes"]
    servers = [n for n in nodes if {"controlplane", "etcd"} & set(n["roles"])]
    # The initialiser runs etcd: a control-plane-only server cannot be the first (rke2-docs install/server_roles.md).
    first = next(n for n in servers if "etcd" in n["roles"])
    endpoint = run.outputs["controlPlaneEndpoint"]
    reg = f"https://{endpoint}:9345"
    assert run.outputs["rke2RegistrationAddress"] == reg
    assert endpoint == f"api.{run.outputs['clusterId']}.rke-aws.internal"
    for n in nodes:
        cfg = configs[n["name"]]
        is_server = n in servers
        allowed = RKE2_SERVER_KEYS if is_server else RKE2_AGENT_KEYS  # from RKE2's sources, tests/support/rke2_keys.py
        assert set(cfg) <= allowed, f"{stack} {n['name']}: keys not valid for its type: {set(cfg) - allowed}"
        assert cfg["node-name"] == n["name"] and cfg["node-ip"] == n["privateIp"]
        assert cfg["cloud-provider-name"] == "external"
        if n is first:
            assert "server" not in cfg  # its boot script decides (tests/tooling/test_bootstrap.py)
        else:
            assert cfg["server"] == reg, n["name"]
        # Split roles (rke2-docs install/server_roles.md): etcd-only servers disable every control-plane
        # component, control-plane-only ones etcd, and always with `server:` (without it RKE2 starts a
        # single-node SQLite server: rke2-docs datastore/embedded.md).
        # `disable-default-registry-endpoint` (air-gapped stacks) is a containerd setting, not a component.
        disabled = {k for k, v in cfg.items() if k.startswith("disable-") and v
                    and k not in ("disable-cloud-controller", "disable-default-registry-endpoint")}
        if is_server and "controlplane" not in n["roles"]:
            assert disabled == {"disable-apiserver", "disable-controller-manager", "disable-scheduler"}, n["name"]
        elif is_server and "etcd" not in n["roles"]:
            assert disabled == {"disable-etcd"} and cfg["server"] == reg, n["name"]
        else:
            assert not disabled, n["name"]
        assert ("etcd" in n["roles"]) or not any(k.startswith("etcd-") for k in cfg), \
            f"{n['name']}: snapshot settings on a node without etcd"
        if is_server:
            assert cfg["disable-cloud-controller"] is True, n["name"]
            assert endpoint in cfg["tls-san"] and n["name"] in cfg["tls-san"], n["name"]
            assert first["privateIp"] not in cfg["tls-san"] or n is first, "tls-san still names the first server"
        inst = instances(run)[n["name"]]
        script = written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)
        kind = "server" if is_server else "agent"
        assert f"KIND='{kind}'" in script, inst.urn
        # Exactly the configured version (not the pinned default).
        assert f"INSTALL_VERSION='{run.outputs['kubernetesVersion']}'" in script, inst.urn
        assert 'INSTALL_RKE2_VERSION="$INSTALL_VERSION"' in script, inst.urn


@pytest.mark.parametrize("version", ["v1.33.5+rke2r1", "v1.34.10+rke2r1", "v1.35.7+rke2r1"])
def test_rke2_nodes_install_exactly_the_configured_version(version):
    cfg = set_key(harness.stack_config("rke2-prod"), "kubernetesVersion", version)
    run = harness.run_program(cfg, stack="rke2-prod")
    for inst in run.of_type("aws:ec2/instance:Instance"):
        script = written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)
        (line,) = [x for x in script.splitlines() if x.startswith("INSTALL_VERSION=")]
        assert line == f"INSTALL_VERSION='{version}'", f"{inst.urn}: {line}"


@pytest.mark.parametrize("stack", rke2_stacks())
def test_rke2_tokens_are_separate_and_never_in_plain_outputs(stack):
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    passwords = {p.name: p.state["result"] for p in run.of_type("random:index/randomPassword:RandomPassword")}
    params = {p.inputs["name"]: p for p in run.of_type("aws:ssm/parameter:Parameter")}
    server_param, agent_param = params[run.outputs["rke2TokenParameter"]], params[run.outputs["rke2AgentTokenParameter"]]
    for param in (server_param, agent_param):
        assert param.inputs["type"] == "SecureString" and "value" in param.secret_inputs, param.urn
    assert server_param.inputs["value"] != agent_param.inputs["value"], "agents would hold the server token"
    marker = params[run.outputs["rke2InitMarkerParameter"]]
    assert marker.inputs["type"] == "String" and marker.inputs["insecureValue"] == "pending", marker.urn
    assert "insecureValue" in marker.ignore_changes, f"{marker.urn}: pulumi would revert the first server's marker"
    for name, cfg in rke2_configs(run).items():
        assert "token" not in cfg and "agent-token" not in cfg, name
    for inst in run.of_type("aws:ec2/instance:Instance"):
        for token in passwords.values():
            assert token not in user_data(inst), f"{inst.urn}: a join token is in user data"
    assert "rke2Token" in run.secret_outputs
    plain = json.dumps({k: v for k, v in run.outputs.items() if k not in run.secret_outputs}, default=str)
    assert not any(t in plain for t in passwords.values()), f"{stack}: a token appears in a plain output"


@pytest.mark.parametrize("stack", rke2_stacks())
def test_node_roles_read_only_their_own_parameters(stack):
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    arn = {p.inputs["name"]: p.state["arn"] for p in run.of_type("aws:ssm/parameter:Parameter")}
    grants = {g.name: json.loads(g.inputs["policy"]) for g in run.of_type("aws:iam/rolePolicy:RolePolicy")
              if g.name.endswith("-join-token")}
    cid = run.outputs["clusterId"]
    cp, worker = grants[f"{cid}-controlplane-join-token"], grants[f"{cid}-worker-join-token"]

    def allowed(doc, action):
        return sorted(r for st in doc["Statement"] if action in st["Action"] for r in st["Resource"])

    # registry.password (issue 35): every node reads the registry's SecureString too.
    registry = [arn[n] for n in arn if n == f"/rke-aws/{cid}/registry-password"]
    assert allowed(worker, "ssm:GetParameter") == sorted([arn[run.outputs["rke2AgentTokenParameter"]], *registry])
    assert not allowed(worker, "ssm:PutParameter") and not allowed(worker, "ssm:GetParametersByPath")
    # Workload identity: the API servers also read the issuer's signing key and trusted keys.
    identity = [p.state["arn"] for p in run.of_type("aws:ssm/parameter:Parameter") if "rke-aws:identity:" in p.urn]
    assert allowed(cp, "ssm:GetParameter") == sorted([*(arn[run.outputs[k]] for k in (
        "rke2TokenParameter", "rke2AgentTokenParameter", "rke2InitMarkerParameter")), *registry, *identity])
    # The first server writes the marker and publishes the admin kubeconfig; it may encrypt with the
    # kubeconfig's key but never decrypt (no node reads the kubeconfig back).
    assert allowed(cp, "ssm:PutParameter") == sorted(arn[run.outputs[k]] for k in (
        "rke2InitMarkerParameter", "rke2KubeconfigParameter"))
    (key,) = run.of_type("aws:kms/key:Key")
    assert allowed(cp, "kms:Encrypt") == [key.state["arn"]], f"{cid}-controlplane-join-token"
    for doc in (cp, worker):
        actions = {a for st in doc["Statement"] for a in st["Action"]}
        assert not any(a.startswith("kms:Decrypt") or a == "kms:*" for a in actions), doc
    assert not allowed(worker, "kms:Encrypt")
    grant_urns = {g.urn for g in run.of_type("aws:iam/rolePolicy:RolePolicy") if g.name.endswith("-join-token")}
    param_urns = {p.urn for p in run.of_type("aws:ssm/parameter:Parameter")}
    for inst in run.of_type("aws:ec2/instance:Instance"):
        deps = set(inst.dependencies)
        assert grant_urns <= deps, f"{inst.urn} may boot before it can read its token"
        assert param_urns <= deps, f"{inst.urn} may boot before its parameters exist"


# ---- address plan -----------------------------------------------------------------------------

def _cfg(pools) -> resolve.ClusterConfig:
    raw = {
        "aws:region": "us-west-2",
        "rke-aws:distribution": "rke2",
        "rke-aws:nodePools": json.dumps(pools),
    }
    return parse_flat(raw, project="rke-aws", stack="plan", region="us-west-2")


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
    with pytest.raises(ConfigError) as refused:
        _ips(cfg)
    assert [(d.key, d.code) for d in refused.value.diagnostics] == [("nodePools[agents].count", "pool.capacity")]
    assert "rke-aws:nodePools[agents].count: 500 nodes" in str(refused.value)


def test_private_dns_name_rule():
    assert node_plan.private_dns_name("10.0.1.23", "us-east-1") == "ip-10-0-1-23.ec2.internal"
    assert node_plan.private_dns_name("10.0.1.23", "eu-west-1") == "ip-10-0-1-23.eu-west-1.compute.internal"


def test_first_server_is_the_registration_node():
    cfg = _cfg(POOLS)
    subnets = plan_subnets("10.0.0.0/16", ["a", "b", "c"])
    plans = node_plan.plan_nodes(cfg, subnets)
    assert [p.is_first_server for p in plans] == [True] + [False] * 6
    rke = cfg.model_copy(update={"distribution": "rke"})
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
    before = instances(run_stack_cached("rke2-prod"))  # the stack's own run, made once per session
    after = instances(run_cached(set_key(dict(base), "nodePools", changed), stack="rke2-prod"))

    def key(reg):
        return reg.name, reg.inputs["privateIp"], reg.inputs["subnetId"], reg.inputs["userDataBase64"]

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

    from rke_aws_offline.engine.emulated_account import MotoMocks

    class OtherDomain(MotoMocks):
        def _other_domain(self, name, inputs):
            rid, out = MotoMocks._instance(self, name, inputs)
            out["privateDns"] = out["privateDns"].split(".")[0] + ".corp.example"
            return rid, out

        _HANDLERS = {**MotoMocks._HANDLERS, "aws:ec2/instance:Instance": _other_domain}

    with pytest.raises(RunError, match=r"EC2 reports private DNS name ip-.*\.corp\.example"):
        harness.run_program(harness.stack_config("rke2-dev"), stack="rke2-dev", mocks=OtherDomain("us-east-1"))
