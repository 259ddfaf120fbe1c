"""The emulated AWS account (offline/engine/emulated_account.py): AWS's answers and refusals, stable IDs."""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit.

from __future__ import annotations

import json
import re

import pulumi
import pytest
import yaml
from pulumi.runtime import MockCallArgs, MockResourceArgs

from rke_aws.settings import stackfile
from rke_aws_offline.engine import emulated_account, harness
from rke_aws_offline.engine.emulated_account import EmulatedAwsError, MotoMocks
from rke_aws_offline.report import plan_report

VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
INSTANCE = "aws:ec2/instance:Instance"


def new(mocks: MotoMocks, typ: str, name: str, **inputs):
    return mocks.new_resource(MockResourceArgs(typ, name, inputs, custom=True))


@pytest.fixture
def account():
    with MotoMocks("us-west-2") as mocks:
        yield mocks


@pytest.fixture
def subnet(account):
    vpc_id, _ = new(account, VPC, "v", cidrBlock="10.0.0.0/16", enableDnsSupport=True, enableDnsHostnames=True)
    subnet_id, state = new(account, SUBNET, "s", vpcId=vpc_id, cidrBlock="10.0.1.0/24", availabilityZone="us-west-2a")
    return subnet_id


def instance(account, name, subnet_id, ip, **extra):
    ami = account.call(MockCallArgs("aws:ec2/getAmi:getAmi", {
        "mostRecent": True, "owners": ["099720109477"],
        "filters": [{"name": "name", "values": ["ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"]}]}, ""))["id"]
    return new(account, INSTANCE, name, ami=ami, instanceType="m6i.large", subnetId=subnet_id, privateIp=ip, **extra)


def test_instance_gets_moto_ids_and_the_private_dns_name_ec2_derives(account, subnet):
    rid, state = instance(account, "node-a", subnet, "10.0.1.70",
                          metadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 2, "httpEndpoint": "enabled"})
    assert re.fullmatch(r"i-[0-9a-f]{17}", rid), rid
    assert state["privateIp"] == "10.0.1.70"
    assert state["privateDns"] == "ip-10-0-1-70.us-west-2.compute.internal"
    assert state["availabilityZone"] == "us-west-2a" and state["publicIp"] == ""
    (desc,) = account.session().client("ec2").describe_instances(InstanceIds=[rid])["Reservations"][0]["Instances"]
    assert desc["MetadataOptions"]["HttpTokens"] == "required" and desc["MetadataOptions"]["HttpPutResponseHopLimit"] == 2


def test_a_spot_instance_has_the_request_ec2_creates_for_it(account, subnet):
    """RunInstances with spot market options creates a spot request (EC2 User Guide, "Spot Instance
    requests"); DescribeInstances filters by it (spot-instance-request-id), which the plan uses to find
    an instance a persistent request launched again (moto creates no request: closed in the account)."""
    spot = {"marketType": "spot", "spotOptions": {"spotInstanceType": "persistent", "instanceInterruptionBehavior": "stop"}}
    rid, state = instance(account, "spot-a", subnet, "10.0.1.80", instanceMarketOptions=spot)
    plain, plain_state = instance(account, "plain", subnet, "10.0.1.81")
    assert state["spotInstanceRequestId"].startswith("sir-") and state["instanceLifecycle"] == "spot", state
    assert "spotInstanceRequestId" not in plain_state
    (desc,) = account.session().client("ec2").describe_instances(InstanceIds=[rid])["Reservations"][0]["Instances"]
    assert desc.get("InstanceLifecycle") == "spot"
    found = account.call(MockCallArgs("aws:ec2/getInstances:getInstances", {
        "filters": [{"name": "spot-instance-request-id", "values": [state["spotInstanceRequestId"]]}],
        "instanceStateNames": ["pending", "running", "stopping", "stopped"]}, ""))
    assert found["ids"] == [rid] and found["privateIps"] == ["10.0.1.80"], found


@pytest.mark.parametrize("ip, refusal", [
    ("10.0.2.10", r"InvalidParameterValue: instance node-b: address 10\.0\.2\.10 does not fall within"),
    ("10.0.1.2", r"InvalidParameterValue: instance node-b: address 10\.0\.1\.2 is reserved by AWS"),
    ("10.0.1.70", r"InvalidIPAddress\.InUse: instance node-b: .*10\.0\.1\.70"),
])
def test_refusals_surface_with_the_resource_name(account, subnet, ip, refusal):
    instance(account, "node-a", subnet, "10.0.1.70")
    with pytest.raises(EmulatedAwsError, match=refusal):
        instance(account, "node-b", subnet, ip)


def test_unknown_subnet_and_unknown_key_pair_are_refused(account, subnet):
    with pytest.raises(EmulatedAwsError, match=r"InvalidSubnetID\.NotFound: instance n1: .*subnet-0000"):
        instance(account, "n1", "subnet-00000000000000000", "10.0.1.70")
    account.create_missing_key_pairs = False
    with pytest.raises(EmulatedAwsError, match=r"InvalidKeyPair\.NotFound: instance n2: the key pair 'nope'"):
        instance(account, "n2", subnet, "10.0.1.71", keyName="nope")


def test_ids_do_not_depend_on_registration_order():
    def ids(order):
        with MotoMocks("eu-central-1") as m:
            return {n: new(m, VPC, n, cidrBlock=c)[0] for n, c in order}

    forward = ids([("a", "10.1.0.0/16"), ("b", "10.2.0.0/16")])
    backward = ids([("b", "10.2.0.0/16"), ("a", "10.1.0.0/16")])
    assert forward == backward, "moto IDs depend on the order resources are registered"


def test_a_stack_naming_a_missing_key_pair_fails_the_plan():
    """Looked up at plan time (plan_report.key_pair_problems): a config error naming access.sshKeyName, before
    anything is registered, not InvalidKeyPair.NotFound from RunInstances half-way through."""
    config = harness.stack_config("rke-dev")
    mocks = MotoMocks("us-west-2", create_missing_key_pairs=False)
    with pytest.raises(pulumi.RunError, match=r"rke-aws:access\.sshKeyName: looking up the key pair 'rke-dev' in "
                                              r"us-west-2 failed \(.*InvalidKeyPair\.NotFound"):
        emulated_account.build(config, "rke-dev", mocks=mocks)
    assert not mocks.active, "a failed build left the emulated account running"
    assert mocks.resources == []


def test_bring_your_own_subnets_are_looked_up_and_tagged_shared_in_the_account():
    net = {"availabilityZones": 1}

    def setup(session):
        ec2 = session.client("ec2")
        vpc = ec2.create_vpc(CidrBlock="10.50.0.0/16")["Vpc"]["VpcId"]
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
        pub = ec2.create_subnet(VpcId=vpc, CidrBlock="10.50.0.0/20", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
        priv = ec2.create_subnet(VpcId=vpc, CidrBlock="10.50.16.0/20", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
        igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
        ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
        public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
        ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
        ec2.associate_route_table(RouteTableId=public_rt, SubnetId=pub)
        eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
        nat = ec2.create_nat_gateway(SubnetId=pub, AllocationId=eip)["NatGateway"]["NatGatewayId"]
        private_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
        ec2.create_route(RouteTableId=private_rt, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
        ec2.associate_route_table(RouteTableId=private_rt, SubnetId=priv)
        net.update(vpcId=vpc, publicSubnetIds=[pub], privateSubnetIds=[priv])

    mocks = MotoMocks("us-east-1", setup=setup).start()
    config = harness.stack_config("rke2-dev")
    config["rke-aws:network"] = json.dumps(net)
    run, mocks = emulated_account.build(config, "rke2-dev", mocks=mocks)
    try:
        assert [n["privateIp"].startswith("10.50.20.") for n in run.outputs["nodes"]] == [True] * 3, run.outputs["nodes"]
        (subnet,) = mocks.session().client("ec2").describe_subnets(SubnetIds=net["privateSubnetIds"])["Subnets"]
        tags = {t["Key"]: t["Value"] for t in subnet["Tags"]}
        assert tags == {"kubernetes.io/cluster/rke2-dev": "shared", "kubernetes.io/role/internal-elb": "1"}, subnet["SubnetId"]
    finally:
        mocks.stop()


def test_make_plan_json_is_the_snapshot_and_masks_the_token(capsys):
    assert plan_report.main(["rke2-dev", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["outputs"]["rke2Token"] == plan_report.MASK
    assert printed == json.loads((harness.ROOT / "tests" / "snapshots" / "rke2-dev.json").read_text()), \
        "`plan rke2-dev --json` differs from tests/snapshots/rke2-dev.json"


def test_ccm_release_is_faked_as_deployed_once_kubeconfig_is_set():
    config = harness.stack_config("rke2-prod")
    config["rke-aws:kubeconfig"] = stackfile.secret("apiVersion: v1\nkind: Config\n")
    run, mocks = emulated_account.build(config, "rke2-prod")
    mocks.stop()
    releases = run.of_type("kubernetes:helm.sh/v3:Release")
    assert {r.inputs["chart"] for r in releases} == {"aws-cloud-controller-manager", "aws-ebs-csi-driver"}
    for release in releases:
        assert release.state["status"]["status"] == "deployed", release.state
    assert run.outputs["ccmReleaseStatus"] == "deployed", run.outputs.get("ccmReleaseStatus")
    for password in run.of_type("random:index/randomPassword:RandomPassword"):
        assert len(password.state["result"]) == 48 and password.state["result"].isalnum(), f"{password.name}: not 48 alphanumerics"


# --- look-ups that fail: one clear message naming the key, no traceback, nothing registered --------

def _refused(config: dict, stack: str = "lookup", **mocks_kwargs) -> str:
    mocks = MotoMocks(config["aws:region"], **mocks_kwargs)
    with pytest.raises(pulumi.RunError) as info:
        emulated_account.build(config, stack, mocks=mocks)
    assert not mocks.active, "a failed build left the emulated account running"
    assert not mocks.resources, f"registered before failing: {mocks.resources}"
    message = str(info.value)
    assert "Traceback" not in message and message.startswith("invalid stack configuration (1 problem(s))"), message
    return message


def test_unknown_region_is_named_as_the_problem():
    """Well-formed but not a region AWS has: the provider refuses every call ("invalid AWS Region"), so the
    configuration is refused first, against the provider's own list (settings/partitions.py REGIONS), with the
    nearest region of the partition."""
    config = harness.stack_config("rke2-dev")
    config["aws:region"] = "eu-north-9"
    message = _refused(config)
    assert "aws:region: 'eu-north-9' is not a region the AWS provider knows; did you mean eu-north-1?" in message, message


def test_malformed_region_is_a_config_error():
    config = harness.stack_config("rke2-dev")
    config["aws:region"] = "mars-north-1"
    assert "aws:region: 'mars-north-1' is not an AWS region; write it like us-west-2" in _refused(config)


def test_missing_default_image_names_the_pools_and_the_fix():
    config = harness.stack_config("rke2-dev")

    def no_ubuntu(session):
        ec2 = session.client("ec2")
        for image in ec2.describe_images(Owners=["099720109477"])["Images"]:
            ec2.deregister_image(ImageId=image["ImageId"])

    message = _refused(config, setup=no_ubuntu)
    assert "rke-aws:nodePools[].ami: looking up the default image" in message, message
    assert "set `ami` on nodePools[server], nodePools[agents]" in message, message


def test_missing_bring_your_own_subnet_is_named():
    config = harness.stack_config("rke2-dev")
    config["rke-aws:network"] = json.dumps({"availabilityZones": 1, "vpcId": "vpc-0123456789abcdef0",
                                            "publicSubnetIds": ["subnet-0123456789abcdef0"],
                                            "privateSubnetIds": ["subnet-0123456789abcdef1"]})
    message = _refused(config)
    assert "rke-aws:network.publicSubnetIds[0]: looking up subnet 'subnet-0123456789abcdef0'" in message, message
    assert "InvalidSubnetID.NotFound" in message, message


def test_make_plan_prints_the_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    doc = yaml.safe_load(harness.stack_file("rke2-dev").read_text())
    doc["config"]["aws:region"] = "mars-north-1"
    path = tmp_path / "Pulumi.rke2-dev.yaml"
    path.write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(harness, "stack_file", lambda stack: path)
    assert plan_report.main(["rke2-dev"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "aws:region: 'mars-north-1' is not an AWS region" in captured.err, captured.err
    assert "Traceback" not in captured.err and "the plan failed" not in captured.err, captured.err


def test_the_diff_runs_the_program_in_the_plans_account_so_every_real_instance_type_is_known():
    """`rke-aws diff` runs both checkouts through harness.run_program with no mocks given
    (rke_aws_offline.report.diff). That default was the light mocks, whose table of 15 instance types
    refused m5.xlarge, a type EC2 has in every commercial region (the plan, in the emulated account,
    accepted it). Now the default is the emulated account: one backend, one answer."""
    from tests.support.configs import with_pools

    def bigger(pools):
        pools[2]["instanceType"] = "m5.xlarge"

    cfg = with_pools("rke2-split", bigger)  # a test fixture (tests/stacks), not a user's stack
    run = harness.run_program(cfg, stack="rke2-split")
    assert isinstance(run.mocks, MotoMocks) and not run.mocks.active
    types = {r.inputs.get("instanceType") for r in run.resources if r.type == INSTANCE}
    assert "m5.xlarge" in types, types


def test_a_tls_key_another_worker_generated_is_read_not_searched_again(tmp_path, monkeypatch):
    """share_keys: the key a process stored for a seed is what the next process answers, without the prime search;
    the stored key is the one the search gives (the same for the same seed), so sharing changes no plan."""
    from rke_aws_offline.engine.emulated import provider_checks as pc

    monkeypatch.setattr(pc, "_KEYS", {})
    before = pc._SHARED
    pc.share_keys(tmp_path / "keys")
    try:
        first = pc.tls_private_key("share-test", 512)
        assert len(list((tmp_path / "keys").glob("*.json"))) == 1
        monkeypatch.setattr(pc, "_KEYS", {})  # another process: nothing in memory

        def no_search(rng, bits):
            raise AssertionError("searched for a prime the shared directory holds")
        with monkeypatch.context() as m:
            m.setattr(pc, "_probable_prime", no_search)
            assert pc.tls_private_key("share-test", 512) == first
        pc.share_keys(None)
        monkeypatch.setattr(pc, "_KEYS", {})
        assert pc.tls_private_key("share-test", 512) == first  # searched again: the same key
    finally:
        pc.share_keys(before)


def test_an_interpreter_a_test_starts_reads_the_keys_of_the_run(tmp_path, monkeypatch):
    """The CLI, `make diff`'s checkouts and a nested pytest run are child interpreters: share_keys hands them its
    directory (KEYS_ENV), so a key the run holds is read there, not searched for again."""
    import os
    import subprocess
    import sys

    from rke_aws_offline.engine.emulated import provider_checks as pc

    monkeypatch.setattr(pc, "_KEYS", {})
    before = pc._SHARED
    pc.share_keys(tmp_path / "keys")
    try:
        key = pc.tls_private_key("child-test", 512)
        child = ("import json, sys\n"
                 "from rke_aws_offline.engine.emulated import provider_checks as pc\n"
                 "def no_search(rng, bits): sys.exit('searched for a prime the run holds')\n"
                 "pc._probable_prime = no_search\n"
                 "print(json.dumps(pc.tls_private_key('child-test', 512)))\n")
        out = subprocess.run([sys.executable, "-c", child], env=dict(os.environ), capture_output=True, text=True,
                             check=False)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == key
    finally:
        pc.share_keys(before)


def _textbook_prime(rng, bits: int) -> int:
    """The seeded search's definition, written out here on its own (not the program's code): draw `bits` bits with
    the top two and the lowest set, skip a multiple of an odd prime below 50, then 24 Miller-Rabin rounds, each
    base drawn from the same generator in [2, n - 2); the first number no round shows composite is the prime."""
    while True:
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if any(n % p == 0 for p in (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)):
            continue
        s, d = 0, n - 1
        while d % 2 == 0:
            s, d = s + 1, d // 2
        probable = True
        for _ in range(24):
            powers = [pow(rng.randrange(2, n - 2), d, n)]  # a**d, a**(2d), ..., a**(2**(s-1) d)
            while len(powers) < s:
                powers.append(powers[-1] ** 2 % n)
            if powers[0] != 1 and n - 1 not in powers:
                probable = False
                break
        if probable:
            return n


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_the_key_search_finds_the_primes_its_definition_finds(bits):
    """provider_checks' search (a gcd with the small primes' product, then three full rounds) gives the primes the
    definition gives, draw for draw: the keys of golden plans and stored outputs stay what they were. Many seeds at
    small sizes, where a shortcut's wrong verdict would be likeliest, a few at a key's own prime size."""
    import random

    from rke_aws_offline.engine.emulated import provider_checks as pc

    for i in range({256: 20, 512: 3, 1024: 1}[bits]):
        ours, theirs = random.Random(f"tls:def-{bits}-{i}"), random.Random(f"tls:def-{bits}-{i}")  # noqa: S311
        for _ in range(2):  # p, then q: the generator's state after p is the definition's too
            assert pc._probable_prime(ours, bits) == _textbook_prime(theirs, bits)
        assert ours.getstate() == theirs.getstate()


OFFERINGS = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"


def _offerings(account: MotoMocks, types: list[str], zones: list[str]) -> set[tuple[str, str]]:
    answer = account.call(MockCallArgs(OFFERINGS, {"locationType": "availability-zone", "filters": [
        {"name": "instance-type", "values": types}, {"name": "location", "values": zones}]}, ""))
    return set(zip(answer["instanceTypes"], answer["locations"], strict=True))


def test_offerings_are_asked_of_moto_once_and_each_account_still_applies_its_own_zones_and_gaps(monkeypatch):
    """moto filters its static offerings table per call (moto 5 ec2/models/instance_types.py
    InstanceTypeOfferingBackend); offline/engine/emulated/invokes.py asks it once per process and key. Each
    answer is still EC2's as boto3 reads it from moto, and an account's own overlay (zones it has,
    pairs EC2 does not offer there) applies after the shared answer, whichever account asked first."""
    from rke_aws_offline.engine.emulated import invokes

    monkeypatch.setattr(invokes, "_OFFERINGS", {})
    types, zones = ["m6i.large", "m7g.large"], ["us-east-1a", "us-east-1b", "us-east-1c"]
    with MotoMocks("us-east-1") as plain:
        # imported once the account has loaded moto (offline/engine/emulated/moto_import.py trims that import)
        from moto.ec2.models.instance_types import InstanceTypeOfferingBackend

        asked = []
        real = InstanceTypeOfferingBackend.describe_instance_type_offerings

        def counted(self, location_type=None, filters=None):
            asked.append(location_type)
            return real(self, location_type, filters)

        monkeypatch.setattr(InstanceTypeOfferingBackend, "describe_instance_type_offerings", counted)
        seen = _offerings(plain, types, zones)
        assert _offerings(plain, types, zones) == seen and asked == ["availability-zone"]
        described = plain.client("ec2").describe_instance_type_offerings(LocationType="availability-zone", Filters=[
            {"Name": "instance-type", "Values": types}, {"Name": "location", "Values": zones}])["InstanceTypeOfferings"]
        assert seen == {(o["InstanceType"], o["Location"]) for o in described} and ("m6i.large", "us-east-1b") in seen
        other = _offerings(plain, ["c7g.large"], zones)  # another question: its own answer
        assert other and {t for t, _ in other} == {"c7g.large"} and len(asked) == 3  # ours, boto3's, this one
    asked.clear()
    with MotoMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")], zones=["us-east-1a", "us-east-1b"]) as gaps:
        assert _offerings(gaps, types, zones) == {(t, z) for t, z in seen if z != "us-east-1c"} - {("m6i.large", "us-east-1b")}
    assert asked == []  # the second account's answer came from the first's question
