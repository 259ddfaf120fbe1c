"""User data within EC2's limit for every configuration the model allows, compressed deterministically,
and the switch from plain `userData` on running nodes a no-op.

The limit: EC2 RunInstances takes at most 16 KiB of user data "in raw form, before it is
base64-encoded" (EC2 API reference, RunInstances, UserData). terraform-provider-aws checks
`user_data` against 16,384 characters and `user_data_base64` only for being base64
(internal/service/ec2/ec2_instance.go), so only this program can keep the payload small.
cloud-init decompresses gzip user data before it parses it (canonical/cloud-init
cloudinit/user_data.py convert_string -> util.decomp_gzip, which opens it with gzip.GzipFile).
"""

# split: this module mixes levels (issue 33 §7.2); the pure user-data tests -> tests/unit/node.

from __future__ import annotations

import base64
import copy
import gzip
import io
import json
import struct

import pulumi
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws import diagnostics
from rke_aws.aws import nodes
from rke_aws.node import cloud_init
from rke_aws.settings import fields, stackfile
from rke_aws.settings.rules import pools as pools_rules
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated.provider_checks import EC2_USER_DATA_LIMIT, user_data_refusal
from rke_aws_offline.engine.emulated_account import MotoMocks
from rke_aws_offline.report.review import decode_user_data, review_inputs
from tests.support.configs import set_key
from tests.support.runs import run_after_cached, run_cached, run_stack_cached
from tests.support.stackconfig import parse_flat
from tests.support.userdata import cloud_config, raw, user_data

INSTANCE = "aws:ec2/instance:Instance"
# Written out from the EC2 API reference, not taken from the program.
EC2_LIMIT = 16384
GZIP_MAGIC = b"\x1f\x8b"


def cloud_init_reads(payload: bytes) -> str:
    """The text cloud-init parses from a raw payload: util.decomp_gzip opens gzip data with
    gzip.GzipFile(None, "rb", 1, buf) and falls back to the data itself when it is not gzip."""
    try:
        with io.BytesIO(payload) as buf, gzip.GzipFile(None, "rb", 1, buf) as gh:
            return gh.read().decode()
    except OSError:
        return payload.decode()


# ---- every stack: compressed, deterministic, decodes to the cloud-config ---------------------------

def test_instances_send_gzip_user_data_base64_only(stack_run):
    for inst in stack_run.of_type(INSTANCE):
        assert "userData" not in inst.inputs, f"{inst.urn}: plain userData next to userDataBase64 (they conflict)"
        payload = raw(inst)
        assert payload[:2] == GZIP_MAGIC, f"{inst.urn}: not gzip"
        assert len(payload) <= EC2_LIMIT, f"{inst.urn}: {len(payload)} bytes of user data"
        text = cloud_init_reads(payload)
        assert text.startswith("#cloud-config\n") and text == user_data(inst), inst.urn


def test_gzip_header_carries_no_time_and_no_platform(stack_run):
    """The same text gives the same bytes on every run and every machine: mtime 0, no file name,
    OS byte 255 (RFC 1952 2.3), maximum-compression flag."""
    for inst in stack_run.of_type(INSTANCE):
        payload = raw(inst)
        flags, mtime, xfl, os_byte = payload[3], struct.unpack("<I", payload[4:8])[0], payload[8], payload[9]
        assert (flags, mtime, xfl, os_byte) == (0, 0, 2, 255), inst.urn
        assert cloud_init.encode_user_data(user_data(inst)) == inst.inputs["userDataBase64"], inst.urn


def test_a_second_evaluation_gives_the_same_payload():
    first = run_stack_cached("rke2-prod")
    again = harness.run_program(harness.stack_config("rke2-prod"), stack="rke2-prod")
    payload = {i.name: i.inputs["userDataBase64"] for i in first.of_type(INSTANCE)}
    assert payload == {i.name: i.inputs["userDataBase64"] for i in again.of_type(INSTANCE)}


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_encoding_round_trips_any_text(text):
    encoded = cloud_init.encode_user_data(text)
    assert cloud_init_reads(base64.b64decode(encoded)) == text
    assert decode_user_data({"userDataBase64": encoded}) == text
    assert cloud_init.raw_size(encoded) == len(base64.b64decode(encoded))


def test_review_shows_the_decoded_user_data_of_both_forms():
    text = "#cloud-config\nwrite_files:\n- path: /usr/local/sbin/rke-aws-bootstrap\n  content: |\n    NODE_NAME='n1'\nruncmd: [[x]]\n"
    assert decode_user_data({"userData": text}) == text  # nodes created before compression
    reg = harness.Registration(urn="u", type=INSTANCE, name="n", inputs={"userDataBase64": cloud_init.encode_user_data(text)},
                               state={}, parent="", dependencies=[], protect=False, delete_before_replace=True,
                               ignore_changes=[], provider="", custom=True)
    shown = review_inputs(reg)["userDataBase64"]
    assert shown["bootSettings"] == {"NODE_NAME": "n1"} and shown["runcmd"] == [["x"]], shown


# ---- the worst case the model allows ----------------------------------------------------------------

LONGEST_CLUSTER_ID = "c" + "-x" * ((fields.MAX_CLUSTER_ID - 1) // 2)
LONGEST_BUCKET = "b" * 63  # S3: 3-63 characters
LONGEST_FOLDER = "/".join(["f" * 49] * 4)  # 199 of the model's 200
# The longest region name of each partition (AWS's region lists, 2026): the region is in every node
# name, the SSM host and the S3 endpoint. A longer name is no AWS region; its zones' look-up fails.
LONGEST_REGIONS = ("ap-southeast-5", "us-gov-west-1", "cn-northwest-1")


def _incompressible(seed: str, n: int) -> str:
    """`n` characters of a-f0-9 that gzip cannot shorten much (hex of hashes)."""
    import hashlib
    out = ""
    while len(out) < n:
        out += hashlib.sha256(f"{seed}{len(out)}".encode()).hexdigest()
    return out[:n]


def _longest_host(seed: str) -> str:
    # 253 characters, labels of at most 63 (the model's host rule), none all digits.
    labels = ["h" + _incompressible(f"{seed}{i}", 62) for i in range(3)] + ["h" + _incompressible(f"{seed}3", 60)]
    return ".".join(labels)


# The longest proxy the model allows: two different 253-character hosts with 5-digit ports, and
# noProxy at its joined limit in 32 entries that do not compress.
WORST_PROXY = json.dumps({
    "httpProxy": f"https://{_longest_host('http')}:65535/",
    "httpsProxy": f"https://{_longest_host('https')}:65534/",
    "noProxy": ["h" + _incompressible(f"np{i}", 62) for i in range(31)] + ["h" + _incompressible("np31", 61) + ".x"],
})


def worst_rke2(region: str, servers: int = pools_rules.MAX_ETCD_MEMBERS, workers: int = 2) -> dict[str, str]:
    return {
        "aws:region": region,
        "rke-aws:distribution": "rke2",
        "rke-aws:clusterId": LONGEST_CLUSTER_ID,
        "rke-aws:network": json.dumps({"vpcCidr": "10.0.0.0/16", "availabilityZones": 3, "natGateways": "perAz"}),
        "rke-aws:controlPlane": json.dumps({"endpoint": "nlb"}),
        "rke-aws:nodePools": json.dumps([
            {"name": "s" * 31, "roles": ["controlplane", "etcd"], "count": servers, "instanceType": "m6i.xlarge"},
            {"name": "w" * 31, "roles": ["worker"], "count": workers, "subnet": "public"}]),
        "rke-aws:ccm": json.dumps({"install": "manifest"}),
        "rke-aws:hardening": "cis",
        "rke-aws:etcdBackup": json.dumps({"bucket": LONGEST_BUCKET, "folder": LONGEST_FOLDER}),
        "rke-aws:proxy": WORST_PROXY,
    }


def worst_rke2_split(region: str) -> dict[str, str]:
    """Split roles: the most etcd-only servers, control-plane-only servers beside them (the initialiser
    lists only the etcd members it probes, so their number is not in any user data)."""
    cfg = worst_rke2(region)
    cfg["rke-aws:nodePools"] = json.dumps([
        {"name": "c" * 31, "roles": ["controlplane"], "count": 5, "instanceType": "m6i.xlarge"},
        {"name": "e" * 31, "roles": ["etcd"], "count": pools_rules.MAX_ETCD_MEMBERS, "instanceType": "m6i.xlarge"},
        {"name": "w" * 31, "roles": ["worker"], "count": 2, "subnet": "public"}])
    return cfg


def worst_everything(region: str) -> dict[str, str]:
    """Every issue-26 feature at once: split roles and the proxy at their worst, spot and Graviton
    workers, Rancher registration (this program owning upgrades: Rancher-owned ones are refused with
    etcd-only servers). Spot and Graviton add nothing to user data, Rancher its Pod Security exemptions
    on CIS servers; the test proves it fits instead of assuming it."""
    cfg = worst_rke2_split(region)
    pools = json.loads(cfg["rke-aws:nodePools"])
    pools += [{"name": "p" * 31, "roles": ["worker"], "count": 2, "market": "spot"},
              {"name": "g" * 31, "roles": ["worker"], "count": 2, "instanceType": "m7g.large"}]
    cfg["rke-aws:nodePools"] = json.dumps(pools)
    cfg["rke-aws:rancher"] = stackfile.secret(json.dumps({"url": "https://rancher.example.com", "upgrades": "rke-aws",
                                                        "token": "token-abcde:" + "x" * 54}))
    return cfg


def worst_everything_os(region: str) -> dict[str, str]:
    """worst_everything with every pool on the OS whose boot adds the most (issue 35): SLE Micro (SELinux policy
    from Rancher's repository, the SSM agent's rpm, transactional-update and the resume unit) where SUSE publishes
    it, else RHEL 9 with FIPS switched on at first boot (x86_64: RKE2's FIPS claim is linux/amd64 only)."""
    cfg = worst_everything(region)
    micro = not region.startswith(("us-gov-", "cn-"))
    pools = json.loads(cfg["rke-aws:nodePools"])
    for p in pools:
        p["os"] = "sle-micro-6" if micro else "rhel-9"
        if not micro and p.get("instanceType") == "m7g.large":
            p["instanceType"] = "m6i.large"
    cfg["rke-aws:nodePools"] = json.dumps(pools)
    if not micro:
        cfg["rke-aws:fips"] = "true"
    return cfg


def worst_rke(region: str) -> dict[str, str]:
    return {
        "aws:region": region,
        "rke-aws:distribution": "rke",
        "rke-aws:clusterId": LONGEST_CLUSTER_ID,
        "rke-aws:network": json.dumps({"vpcCidr": "10.0.0.0/16", "availabilityZones": 3, "natGateways": "perAz"}),
        "rke-aws:controlPlane": json.dumps({"endpoint": "nlb"}),
        "rke-aws:access": json.dumps({"sshUser": "u" * 32, "sshKeyPath": "/" + "k" * 200}),  # useradd: 32 characters
        "rke-aws:nodePools": json.dumps([
            {"name": "s" * 31, "roles": ["controlplane", "etcd"], "count": pools_rules.MAX_ETCD_MEMBERS},
            {"name": "w" * 31, "roles": ["worker"], "count": 2}]),
        "rke-aws:etcdBackup": json.dumps({"bucket": LONGEST_BUCKET, "folder": LONGEST_FOLDER}),
        "rke-aws:proxy": WORST_PROXY,
    }


def test_the_worst_proxy_is_at_the_models_limits():
    proxy = json.loads(WORST_PROXY)
    assert len(proxy["noProxy"]) == fields.MAX_NO_PROXY_ITEMS
    assert len(",".join(proxy["noProxy"])) == fields.MAX_NO_PROXY_CHARS
    assert all(len(u.split("//")[1].split(":")[0]) == 253 for u in (proxy["httpProxy"], proxy["httpsProxy"]))


@pytest.mark.parametrize("region", LONGEST_REGIONS)
@pytest.mark.parametrize("build", [worst_rke2, worst_rke2_split, worst_everything, worst_everything_os, worst_rke],
                         ids=["rke2", "rke2-split", "rke2-everything", "rke2-everything-os", "rke"])
def test_the_worst_case_the_model_allows_fits_with_margin(build, region):
    """Longest cluster ID, manifest mode, CIS, snapshots with the longest bucket and folder, the longest proxy, the NLB,
    every partition, the most servers (the etcd limit) and the longest names: the raw payload stays
    under EC2's limit with a quarter of it to spare. The number of workers is not in any node's user
    data (test below), so more workers cannot make it larger."""
    run = run_cached(build(region), stack="worst")  # read only; test_workers_do_not_change_any_servers_user_data shares one
    sizes = {i.inputs["tags"]["Name"]: len(raw(i)) for i in run.of_type(INSTANCE)}
    biggest = max(sizes, key=sizes.get)
    assert sizes[biggest] <= cloud_init.USER_DATA_BUDGET <= 0.75 * EC2_LIMIT, (biggest, sizes[biggest])
    # ... while the same text uncompressed would not fit for RKE2: the compression is what keeps it in.
    if build in (worst_rke2, worst_rke2_split, worst_everything, worst_everything_os):
        assert max(len(user_data(i).encode()) for i in run.of_type(INSTANCE)) > EC2_LIMIT


def test_workers_do_not_change_any_servers_user_data():
    few = run_cached(worst_rke2("us-gov-west-1"), stack="worst")  # the worst case's row (two workers), shared
    many = harness.run_program(worst_rke2("us-gov-west-1", workers=4), stack="worst")
    servers = lambda r: {i.name: i.inputs["userDataBase64"] for i in r.of_type(INSTANCE)  # noqa: E731
                         if "worker" != i.inputs["tags"]["rke-aws/roles"]}
    assert servers(few) == servers(many)
    agents = lambda r: {len(raw(i)) for i in r.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker"}  # noqa: E731
    assert max(agents(many)) < max(len(raw(i)) for i in many.of_type(INSTANCE)), "an agent's user data outgrew the servers'"


def test_more_etcd_members_than_etcd_recommends_are_refused_before_anything_is_registered():
    cfg = worst_rke2("us-gov-west-1", servers=pools_rules.MAX_ETCD_MEMBERS + 1)
    mocks = MotoMocks("us-gov-west-1")
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(cfg, stack="worst", mocks=mocks)
    assert mocks.resources == [], "registered before refusing"
    assert (f"rke-aws:nodePools: 8 etcd members (pools with etcd: {'s' * 31}: 8); at most 7: etcd recommends no "
            "more than 7 (etcd FAQ, \"What is maximum cluster size?\"): every member slows every write, and every RKE2 "
            "server's user data lists the others (EC2 takes 16 KiB); use 3, 5 or 7") in str(info.value), str(info.value)


def _pools(servers: int) -> str:
    return json.dumps([{"name": "a", "roles": ["controlplane", "etcd"], "count": servers - 1},
                       {"name": "b", "roles": ["controlplane", "etcd"], "count": 1},
                       {"name": "w", "roles": ["worker"], "count": 1}])


def test_the_etcd_limit_counts_every_pool_and_lets_a_running_cluster_shrink(base_config):
    parse = lambda cfg, running=0: parse_flat(cfg, project="rke-aws", stack="rke2-dev",  # noqa: E731
                                                region=cfg["aws:region"], running_etcd_members=running)
    base_config["rke-aws:nodePools"] = _pools(pools_rules.MAX_ETCD_MEMBERS)
    parse(base_config)
    base_config["rke-aws:nodePools"] = _pools(pools_rules.MAX_ETCD_MEMBERS + 2)
    with pytest.raises(diagnostics.ConfigError, match=r"rke-aws:nodePools: 9 etcd members \(pools with etcd: a: 8, b: 1\)"):
        parse(base_config)
    # A cluster that runs 9 members from before the limit keeps them (warned) and may go down ...
    assert any("lower the count one member per `pulumi up`" in w for w in parse(base_config, running=9).warnings)
    base_config["rke-aws:nodePools"] = _pools(pools_rules.MAX_ETCD_MEMBERS + 1)
    parse(base_config, running=9)
    # ... but not grow.
    base_config["rke-aws:nodePools"] = _pools(pools_rules.MAX_ETCD_MEMBERS + 3)
    with pytest.raises(diagnostics.ConfigError, match="10 etcd members"):
        parse(base_config, running=9)


def test_the_node_guard_stops_a_payload_ec2_would_refuse(monkeypatch):
    text = "#cloud-config\n" + "".join(f"# {i:08x} {i * 2654435761 % 2**32:08x}\n" for i in range(3000))
    assert len(base64.b64decode(cloud_init.encode_user_data(text))) > 0
    size = len(base64.b64decode(cloud_init.encode_user_data(text)))
    monkeypatch.setattr(cloud_init, "USER_DATA_LIMIT", size)
    assert nodes.user_data_base64("n1", text) == cloud_init.encode_user_data(text)  # exactly the limit: accepted
    monkeypatch.setattr(cloud_init, "USER_DATA_LIMIT", size - 1)
    with pytest.raises(pulumi.RunError, match=rf"node n1: user data is {size} bytes compressed; EC2 accepts at most {size - 1}"):
        nodes.user_data_base64("n1", text)


@pytest.mark.parametrize("inputs, refused", [
    ({"userDataBase64": base64.b64encode(b"x" * EC2_LIMIT).decode()}, None),
    ({"userDataBase64": base64.b64encode(b"x" * (EC2_LIMIT + 1)).decode()}, "User data is limited to 16384 bytes"),
    ({"userData": "x" * (EC2_LIMIT + 1)}, "expected length of user_data"),
    ({"userData": "x", "userDataBase64": "eA=="}, "conflicts with user_data_base64"),
    ({"userDataBase64": "not base64!"}, "must be base64-encoded"),
])
def test_the_emulated_accounts_refuse_user_data_like_ec2_and_the_provider(inputs, refused):
    assert EC2_USER_DATA_LIMIT == EC2_LIMIT
    answer = user_data_refusal("n", inputs)
    assert (answer is None) if refused is None else (refused in answer), answer


# ---- day 2: running nodes created with plain userData --------------------------------------------

def ignore_changes(new_inputs: dict, old_inputs: dict, ignored: list[str]) -> dict:
    """The engine's processIgnoreChanges for top-level keys (pulumi/pulumi pkg/resource/deploy/
    step_generator.go; sdk/go/common/resource/properties_path.go PropertyPath.reset): an ignored
    input takes its old value, and one the old inputs lack is deleted from the new ones."""
    out = copy.deepcopy(new_inputs)
    for key in ignored:
        if key in old_inputs:
            out[key] = old_inputs[key]
        else:
            out.pop(key, None)
    return out


def as_before_compression(run: harness.ProgramRun) -> dict[str, dict]:
    """The instance inputs the program registered before user data was compressed: the same
    cloud-config as plain `userData`."""
    out = {}
    for inst in run.of_type(INSTANCE):
        inputs = {k: v for k, v in inst.inputs.items() if k != "userDataBase64"}
        inputs["userData"] = user_data(inst)
        out[inst.urn] = inputs
    return out


@pytest.mark.parametrize("stack", ["rke2-prod", "rke-prod"])
def test_running_nodes_with_plain_user_data_are_neither_replaced_nor_updated(stack):
    base = run_stack_cached(stack)
    old = as_before_compression(base)
    # the next `pulumi up` of this program, with the stack's last outputs fed back
    after = run_after_cached(harness.stack_config(stack), base, stack)  # shared with the other files that read it
    instances = after.of_type(INSTANCE)
    assert {i.urn for i in instances} == set(old)
    for inst in instances:
        assert {"userData", "userDataBase64"} <= set(inst.ignore_changes), inst.urn
        sent = ignore_changes(inst.inputs, old[inst.urn], inst.ignore_changes)
        # what the provider then sees: the node's own userData, unchanged, and never both inputs
        assert sent.get("userData") == old[inst.urn]["userData"] and "userDataBase64" not in sent, inst.urn
        changed = {k for k in sent.keys() | old[inst.urn].keys() if sent.get(k) != old[inst.urn].get(k)}
        assert changed == set(), f"{inst.urn}: {changed} would change"
        assert user_data_refusal(inst.name, sent) is None, inst.urn


def test_without_ignore_changes_the_switch_would_touch_every_node():
    """The test above can fail: without the ignore, the provider would get both inputs from
    different runs' views, or a changed one (stop and start of the instance)."""
    base = run_stack_cached("rke2-prod")
    old = as_before_compression(base)
    for inst in base.of_type(INSTANCE):
        ignored = [k for k in inst.ignore_changes if k not in ("userData", "userDataBase64")]
        sent = ignore_changes(inst.inputs, old[inst.urn], ignored)
        assert sent.get("userDataBase64") != old[inst.urn].get("userDataBase64"), inst.urn


def test_a_new_node_boots_with_the_same_cloud_config_as_before_compression():
    """The decoded user data is the cloud-config text the program wrote before (sha256 of the text as
    the review shows it), and it validates as before (test_bootstrap runs cloud-init's schema on it)."""
    run = run_stack_cached("rke2-govcloud")
    for inst in run.of_type(INSTANCE):
        doc = cloud_config(inst)
        assert yaml.safe_load(cloud_init._cloud_config(doc)) == doc
        summary = review_inputs(inst)["userDataBase64"]
        import hashlib

        assert summary["sha256"] == hashlib.sha256(user_data(inst).encode()).hexdigest()[:16], inst.urn


def test_user_data_changes_with_its_text_only(base_config):
    run1 = run_cached(base_config, stack="rke2-dev")  # read only, shared
    changed = set_key(copy.deepcopy(base_config), "etcdBackup", {"folder": "elsewhere"})
    run2 = harness.run_program(changed, stack="rke2-dev")
    for a, b in zip(run1.of_type(INSTANCE), run2.of_type(INSTANCE), strict=False):
        same_text = user_data(a) == user_data(b)
        assert same_text == (a.inputs["userDataBase64"] == b.inputs["userDataBase64"]), a.urn
