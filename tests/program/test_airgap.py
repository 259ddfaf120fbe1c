"""An air-gapped RKE2 cluster with a private registry (issue 35 items 1-3), planned in the emulated account:
nothing a node reads names a public host; the registry's password never reaches user data; the network has
no way out and has the endpoints of every AWS API the nodes and add-ons are granted.

Upstream facts (research sheet 35 §1, §8):
- rancher/rke2-docs docs/install/airgap.md: nodes without internet get RKE2 from INSTALL_RKE2_ARTIFACT_PATH and
  images from a private registry (registries.yaml); a default route must exist (os_prep.sh adds one).
- rancher/rke2-docs docs/install/private_registry.md: containerd pulls `docker.io/...`, `registry.k8s.io/...`
  through the mirror listed for that registry and images keep their names: the program's images (CCM, EBS CSI
  and sidecars, SUC, kubectl, rke2-upgrade) are pulled through registries.yaml's mirrors, not renamed (the
  rule in settings/rules/registry.py demands a mirror for each of their registries).
- k3s-io/helm-controller pkg/apis/helm.cattle.io/v1/types.go: HelmChart `chart` may be an oci:// reference,
  `repoCA` the CA the download trusts.
- terraform-provider-aws website/docs/r/vpc_endpoint.html.markdown: interface endpoints take subnet_ids and
  security_group_ids, private_dns_enabled; gateway endpoints route_table_ids.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from rke_aws.aws import vpc_endpoints
from rke_aws.node import registries, scripts
from tests.support.boot import instances
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config, user_data

STACK = "rke2-airgap"
# stack -> (region, architecture, the release's key prefix in its bucket)
STACKS = {"rke2-airgap": ("us-west-2", "amd64", "rke2/v1.33.5+rke2r1/"),
          "rke2-airgap-arm": ("eu-central-1", "arm64", "mirror/rke2/v1.33.5+rke2r1/"),
          "rke2-airgap-rhel": ("us-west-2", "amd64", "rke2/v1.33.5+rke2r1/"),
          "rke2-airgap-slemicro": ("us-west-2", "amd64", "rke2/v1.33.5+rke2r1/")}
URL = re.compile(r"\b([a-z][a-z0-9+.-]*)://([^/\s'\"\\]+)")
# Hosts the internet serves this program's downloads and images from (versions.py, the charts' values,
# install.sh's defaults): none may appear where an air-gapped node reads.
PUBLIC_HOSTS = ("get.rke2.io", "github.com", "githubusercontent.com", "docker.io", "registry.k8s.io", "public.ecr.aws",
                "kubernetes.github.io", "kubernetes-sigs.github.io", "quay.io", "releases.rancher.com", "rpm.rancher.io",
                "prime.ribs.rancher.io")


MIRRORS = ("docker.io", "registry.k8s.io", "public.ecr.aws")  # the stacks' registry.mirrors (or "*")
MIRRORED_IMAGE = re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, MIRRORS)) + r")/[a-z0-9][\w./-]*")  # repository[:tag]: the tag may sit in its own key


def _allowed(scheme: str, host: str, region: str = "us-west-2") -> bool:
    host = host.split(":")[0].lower()
    return (host[:1] in ("$", "%")  # a shell or printf variable: its value is a setting, scanned where it is set
            or host in ("127.0.0.1", "localhost")
            or host == "169.254.169.254"  # instance metadata
            or host.endswith(".internal")  # the control-plane endpoint's private zone
            or host.endswith("corp.example")  # the user's registry and chart mirror
            or host.endswith(f".{region}.amazonaws.com")  # AWS APIs: the VPC's endpoints (private DNS)
            or scheme == "s3"  # the artifacts and snapshot buckets, through the gateway endpoint
            or scheme == "file")


@pytest.fixture(scope="module")
def run():
    return run_stack_cached(STACK)


def _node_texts(run) -> dict[str, str]:
    """Everything a node reads: its user data (every written file, the boot script and the manifest sync
    among them) and every manifest parameter the servers mirror (HelmCharts, Plans, URLs)."""
    texts = {f"user data of {name}": user_data(reg) for name, reg in instances(run).items()}
    for reg in run.of_type("aws:ssm/parameter:Parameter"):
        if "manifest" in reg.name:
            texts[f"manifest {reg.name}"] = str(reg.inputs.get("insecureValue") or reg.inputs.get("value"))
    return texts


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_nothing_a_node_reads_names_a_public_host(stack):
    run = run_stack_cached(stack)
    region = STACKS[stack][0]
    texts = _node_texts(run)
    assert any("HelmChart" in t for t in texts.values()) and any("Plan" in t for t in texts.values())
    bad: list[str] = []
    for where, text in texts.items():
        for scheme, host in URL.findall(text):
            if not _allowed(scheme, host, region):
                bad.append(f"{where}: {scheme}://{host}")
        # registries.yaml names the upstream registries as its map keys (what the mirror stands for); every
        # other mention of a public host is a download a node would attempt.
        for doc_text in _without_registries(where, text):
            # An image reference of a mirrored registry is pulled through the mirror under its own name
            # (containerd with registries.yaml: rke2-docs install/private_registry.md), so it may stay.
            doc_text = MIRRORED_IMAGE.sub("<mirrored image>", doc_text)
            for host in PUBLIC_HOSTS:
                if re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", doc_text):
                    bad.append(f"{where}: {host}")
    assert not bad, "\n".join(sorted(set(bad)))


def _without_registries(where: str, text: str) -> list[str]:
    if not text.startswith("#cloud-config"):
        return [text]
    doc = yaml.safe_load(text)
    return [json.dumps({k: v for k, v in doc.items() if k != "write_files"})] + [
        f["content"] for f in doc.get("write_files") or []
        if f["path"] not in (registries.REGISTRIES_PATH, registries.REGISTRIES_TEMPLATE_PATH)]


def test_the_online_stack_does_name_public_hosts():
    """The scan finds what it looks for: the same cluster online downloads RKE2 from get.rke2.io."""
    online = run_stack_cached("rke2-proxy")
    texts = _node_texts(online)
    assert any("get.rke2.io" in t for t in texts.values())


def test_the_registry_password_is_never_in_user_data_and_nodes_read_it_from_ssm(run):
    password = "offline-placeholder"
    for name, reg in instances(run).items():
        doc = cloud_config(reg)
        text = user_data(reg)
        assert password not in text, name
        template = next(f["content"] for f in doc["write_files"] if f["path"] == registries.REGISTRIES_TEMPLATE_PATH)
        assert registries.PASSWORD_PLACEHOLDER in template
        assert yaml.safe_load(template)["configs"]["registry.corp.example"]["tls"]["ca_file"] == registries.REGISTRY_CA_PATH
        script = next(f["content"] for f in doc["write_files"] if f["path"] == scripts.BOOTSTRAP_PATH)
        assert "/rke-aws/rke2-airgap/registry-password" in script
    parameter = run.named("rke2-airgap-registry-password")
    assert parameter.inputs["type"] == "SecureString"
    for policy in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        if policy.name.endswith("-join-token"):
            doc = json.loads(policy.inputs["policy"])
            reads = [r for s in doc["Statement"] for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
                     if "ssm:GetParameter" in s["Action"]]
            assert any(r.endswith(":parameter/rke-aws/rke2-airgap/registry-password") for r in reads), policy.name
            assert not any(r.endswith("*") for r in reads), policy.name


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_node_installs_from_the_bucket_with_its_architecture(stack):
    run = run_stack_cached(stack)
    _, arch, prefix = STACKS[stack]
    for name, reg in instances(run).items():
        script = next(f["content"] for f in cloud_config(reg)["write_files"] if f["path"] == scripts.BOOTSTRAP_PATH)
        assert "INSTALL_SCRIPT_URL='file:///var/lib/rke-aws/artifacts/install.sh'" in script, name
        assert f"RELEASE_PREFIX='{prefix}'" in script and f"ARCH='{arch}'" in script, name
        assert f"rke2.linux-{arch}.tar.gz" in script, name
        assert "DEFAULT_ROUTE='yes'" in script, name  # rke2-docs install/airgap.md: a default route must exist


def test_the_network_has_no_way_out_and_an_endpoint_for_every_granted_api(run):
    types = {r.type for r in run.resources}
    assert "aws:ec2/internetGateway:InternetGateway" not in types
    assert "aws:ec2/natGateway:NatGateway" not in types
    assert not [r for r in run.of_type("aws:ec2/route:Route") if r.inputs.get("destinationCidrBlock") == "0.0.0.0/0"]
    assert all(s.inputs["tags"].get("kubernetes.io/role/internal-elb") == "1" for s in run.of_type("aws:ec2/subnet:Subnet"))
    endpoints = {r.inputs["serviceName"]: r.inputs for r in run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    # From the policies the run attached (not the program's own list): every granted action's service.
    actions = [a for p in run.of_type("aws:iam/rolePolicy:RolePolicy") + run.of_type("aws:iam/policy:Policy")
               for a in vpc_endpoints.document_actions(p.inputs["policy"])]
    wanted = {e.service_name for e in vpc_endpoints.vpc_endpoints([actions], "us-west-2")}
    assert wanted <= set(endpoints), sorted(wanted - set(endpoints))
    assert {"com.amazonaws.us-west-2.ec2", "com.amazonaws.us-west-2.elasticloadbalancing", "com.amazonaws.us-west-2.ssm",
            "com.amazonaws.us-west-2.s3"} <= set(endpoints)
    for service, e in endpoints.items():
        if e["vpcEndpointType"] == "Interface":
            assert e["privateDnsEnabled"] is True and len(e["subnetIds"]) == 3 and e["securityGroupIds"], service
        else:
            assert e["vpcEndpointType"] == "Gateway" and len(e["routeTableIds"]) == 3, service
    rule = run.named("rke2-airgap-endpoints-https").inputs
    assert (rule["fromPort"], rule["toPort"], rule["cidrIpv4"]) == (443, 443, "10.96.0.0/16")


# ---- RKE1: cluster.yml private_registries ------------------------------------------------------------

# rancher/rke @ 40c5dd465677 types/rke_types.go PrivateRegistry: the yaml names RKE reads.
RKE_PRIVATE_REGISTRY_KEYS = {"url", "user", "password", "is_default", "ecr_credential_plugin"}


def test_rke1_gets_private_registries_and_the_ccm_image_from_the_mirror():
    """RKE1's Docker has no per-registry mirrors: cluster.yml lists the mirrors (the docker.io one as
    is_default, which prefixes RKE's own system images: rke cluster/defaults.go), and the CCM's image names
    the mirror itself. The password makes the cluster.yml output a secret."""
    from rke_aws_offline.engine import harness
    from tests.support.configs import scenario_config, set_key
    from tests.support.runs import run_cached

    cfg = scenario_config("rke-phase2")
    set_key(cfg, "registry", {"mirrors": {"docker.io": "https://registry.corp.example/hub",
                                          "registry.k8s.io": "https://registry.corp.example/k8s"},
                              "username": "pull", "password": "s3cr3t-rke1"})
    from rke_aws.settings import stackfile
    cfg["rke-aws:registry"] = stackfile.secret(cfg["rke-aws:registry"])
    run = run_cached(cfg, "rke-phase2")
    raw = run.outputs["rkeClusterYml"]
    assert "rkeClusterYml" in run.secret_outputs, "cluster.yml holds the password: a secret output"
    doc = yaml.safe_load(harness.unwrap_secrets(raw))
    entries = doc["private_registries"]
    assert all(set(e) <= RKE_PRIVATE_REGISTRY_KEYS for e in entries), entries
    assert entries[0] == {"url": "registry.corp.example/hub", "user": "pull", "password": "s3cr3t-rke1", "is_default": True}
    assert [e["url"] for e in entries] == ["registry.corp.example/hub", "registry.corp.example/k8s"]
    for reg in instances(run).values():
        assert "s3cr3t" not in user_data(reg)
    release = next(r for r in run.of_type("kubernetes:helm.sh/v3:Release") if "cloud-controller" in r.inputs["chart"])
    image = harness.unwrap_secrets(release.inputs["values"])["image"]
    assert image["repository"] == "registry.corp.example/k8s/provider-aws/cloud-controller-manager", image


def test_rke1_names_the_ebs_csi_images_through_the_mirror():
    """The EBS CSI chart's images live on public.ecr.aws (kubernetes-sigs/aws-ebs-csi-driver chart values.yaml:
    image.repository, sidecars.<name>.image.repository). RKE1's Docker pulls them from there unless the values
    name the mirror; RKE2's containerd rewrites by registry (rke2-docs install/private_registry.md)."""
    from rke_aws_offline.engine import harness
    from tests.support.configs import scenario_config, set_key
    from tests.support.runs import run_cached

    cfg = scenario_config("rke-phase2")
    set_key(cfg, "registry", {"mirrors": {"public.ecr.aws": "https://registry.corp.example/ecr"}})
    set_key(cfg, "addons", {"ebsCsi": True})
    run = run_cached(cfg, "rke-phase2")
    release = next(r for r in run.of_type("kubernetes:helm.sh/v3:Release") if "ebs-csi" in r.inputs["chart"])
    values = harness.unwrap_secrets(release.inputs["values"])
    repos = [values["image"]["repository"], *(c["image"]["repository"] for c in values["sidecars"].values())]
    assert len(repos) == 8 and all(r.startswith("registry.corp.example/ecr/") for r in repos), repos


def test_an_air_gapped_cluster_with_identity_takes_the_webhook_chart_from_the_mirror_and_calls_sts_inside():
    """Manifest mode: RKE2's helm-controller fetches the webhook's chart inside the cluster (k3s-io/helm-controller
    HelmChart: repo, or an oci:// chart), so it must name registry.charts; IRSA pods exchange their token at
    STS's regional endpoint (the webhook's stsRegionalEndpoint), an interface endpoint of the VPC."""
    from rke_aws_offline.engine import harness
    from tests.support.configs import scenario_config, set_key
    from tests.support.runs import run_cached

    cfg = scenario_config(STACK)
    set_key(cfg, "identity", {"serviceAccounts": "irsa"})
    run = run_cached(cfg, STACK)
    texts = [harness.unwrap_secrets(p.inputs.get("value") or p.inputs.get("insecureValue"))
             for p in run.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("/pod-identity-webhook.yaml")]
    charts = [d["spec"]["chart"] for t in texts for d in yaml.safe_load_all(t) if isinstance(d, dict)
              and d.get("kind") == "HelmChart"]
    assert charts == ["oci://registry.corp.example/charts/amazon-eks-pod-identity-webhook"], charts
    names = {r.inputs["serviceName"] for r in run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert "com.amazonaws.us-west-2.sts" in names, names


# ---- what the account must show, at plan time (components/assembly/preflight.py) ----------------------

RELEASE = "v1.33.5+rke2r1"


def _artifacts(*archs: str) -> list[str]:
    """What the README's commands upload for `archs` (listed here by hand, as a user's bucket would hold)."""
    keys = [f"rke2/{RELEASE}/install.sh", "rke2/system-upgrade-controller/v0.20.1/crd.yaml",
            "rke2/system-upgrade-controller/v0.20.1/system-upgrade-controller.yaml"]
    for a in archs:
        keys += [f"rke2/{RELEASE}/sha256sum-{a}.txt", f"rke2/{RELEASE}/rke2.linux-{a}.tar.gz",
                 f"rke2/{RELEASE}/rke2-images.linux-{a}.tar.zst"]
    return keys


def _refusal(config, **account) -> str:
    import pulumi

    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks

    mocks = MotoMocks(config["aws:region"], **account)
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(config, stack=STACK, mocks=mocks)
    assert not [r for r in mocks.resources if not r[0].startswith("pulumi:")], "registered before refusing"
    return str(info.value)


def _config(**changes):
    from tests.support.configs import scenario_config, set_key

    cfg = scenario_config(STACK)
    for key, value in changes.items():
        set_key(cfg, key, value)
    return cfg


def test_an_selinux_pool_needs_its_policy_rpms_in_the_bucket():
    """A RHEL 9 pool installs rke2-selinux (el9 build) and container-selinux from the bucket (rke2-docs
    install/airgap.md, RPM method; rancher/rke2-selinux release assets): without them the plan stops, naming them."""
    pools = [{**p, "os": "rhel-9"} for p in json.loads(_config()["rke-aws:nodePools"])]
    text = _refusal(_config(nodePools=pools), objects={"corp-rke2-artifacts": _artifacts("amd64")})
    assert "rke-aws:airgap.artifactsBucket: 'corp-rke2-artifacts' lacks what the nodes install from" in text, text
    assert "s3://corp-rke2-artifacts/rke2/rpms/el9/rke2-selinux-*.el9.noarch.rpm" in text, text
    assert "container-selinux" in text, text


def test_missing_artifacts_for_a_pool_architecture_are_listed_before_any_resource():
    """A Graviton pool installs rke2.linux-arm64.tar.gz (rancher/rke2 install.sh: aarch64 -> arm64)."""
    pools = json.loads(_config()["rke-aws:nodePools"]) + [
        {"name": "graviton", "roles": ["worker"], "count": 1, "instanceType": "m7g.large"}]
    text = _refusal(_config(nodePools=pools), objects={"corp-rke2-artifacts": _artifacts("amd64")})
    assert "rke-aws:airgap.artifactsBucket: 'corp-rke2-artifacts' lacks what the nodes install from" in text, text
    for f in ("sha256sum-arm64.txt", "rke2.linux-arm64.tar.gz", "rke2-images.linux-arm64.tar.zst"):
        assert f"s3://corp-rke2-artifacts/rke2/{RELEASE}/{f}" in text, text
    assert "amd64.tar.gz" not in text


def test_a_bucket_in_another_region_is_refused():
    """A gateway endpoint reaches buckets of its own region only (AWS SSM User Guide setup-create-vpc.md)."""
    text = _refusal(_config(), objects={"corp-rke2-artifacts@us-east-1": _artifacts("amd64")})
    assert ("rke-aws:airgap.artifactsBucket: 'corp-rke2-artifacts': the bucket is in us-east-1, the cluster in us-west-2"
            in text), text


def _byo_vpc(endpoints: tuple[str, ...], ids: dict):
    def setup(mocks) -> None:
        ec2 = mocks.client("ec2")
        vpc = ec2.create_vpc(CidrBlock="10.81.0.0/16")["Vpc"]["VpcId"]
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.81.0.0/20", AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
        rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
        ec2.associate_route_table(RouteTableId=rt, SubnetId=subnet)
        for service in endpoints:
            kind = "Gateway" if service == "s3" else "Interface"
            ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=f"com.amazonaws.us-west-2.{service}", VpcEndpointType=kind,
                                    **({"RouteTableIds": [rt]} if kind == "Gateway" else {"SubnetIds": [subnet]}))
        ids.update(vpcId=vpc, privateSubnetIds=[subnet])
    return setup


ALL = ("ec2", "ec2messages", "elasticloadbalancing", "s3", "ssm", "ssmmessages")


def test_a_brought_vpc_without_the_endpoints_is_refused_naming_each():
    import pulumi

    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks

    ids: dict = {}
    mocks = MotoMocks("us-west-2", setup=_byo_vpc(("ec2", "s3"), ids), objects={"corp-rke2-artifacts": _artifacts("amd64")})
    mocks.start()
    try:
        cfg = _config()
        cfg["rke-aws:network"] = json.dumps(ids)
        with pytest.raises(pulumi.RunError) as info:
            harness.run_program(cfg, stack=STACK, mocks=mocks)
    finally:
        mocks.stop()
    text = str(info.value)
    for service in ("elasticloadbalancing", "ssm", "ssmmessages", "ec2messages"):
        assert f"looking up the interface endpoint com.amazonaws.us-west-2.{service} of '{ids['vpcId']}'" in text, text
        assert f"--service-name com.amazonaws.us-west-2.{service} --vpc-endpoint-type Interface --private-dns-enabled" in text
    assert "com.amazonaws.us-west-2.ec2 of" not in text and "com.amazonaws.us-west-2.s3 of" not in text


def test_a_brought_vpc_with_every_endpoint_plans_without_nat_or_public_subnets():
    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks

    ids: dict = {}
    mocks = MotoMocks("us-west-2", setup=_byo_vpc(ALL, ids), objects={"corp-rke2-artifacts": _artifacts("amd64")})
    mocks.start()
    try:
        cfg = _config()
        cfg["rke-aws:network"] = json.dumps(ids)
        run = harness.run_program(cfg, stack=STACK, mocks=mocks)
    finally:
        mocks.stop()
    assert not run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")  # the VPC is the user's: checked, not changed
    assert len(instances(run)) == 5
