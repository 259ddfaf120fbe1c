"""The feature combination matrix (issue 32, "Also": every pair of features planned and judged).

Data, not code paths:
- FEATURES: each feature is a function that adds its keys to a small base configuration, with the
  check of what the feature itself must show in any plan that has it;
- RULES: one verdict per unordered pair of features, each with its source: the pair works (with the
  checks of what each needs from the other), is refused before any resource exists naming a key, or
  is two values of one key (alternatives). A pair that depends on a fix made elsewhere (issue 32
  items 1-10) is written as the fixed behaviour and marked `pending=N`: its cell is an
  xfail(strict=True) until the fix lands. A pair the matrix found broken outside those items is
  written the same way and marked `finding=...`;
- TRIPLES: the few interactions that take three features.

Planning stays within the suite's time budget: pairs that work are not planned one by one but inside
a few combined configurations (`combined_configs`), chosen greedily so that every working pair meets
in at least one of them; each combined configuration is planned once per test session (shared by the
xdist workers through a file lock). Refused pairs are planned alone (they stop before any resource).
Every configuration is planned in the emulated account (offline/engine/emulated_account.py); those that hold a
pair whose look-ups matter (`Works(account=True)`: a partition's images, a brought VPC's subnets) through
emulated_account.build, with the brought VPC built by `_byo_account_setup`; the rest with the brought subnets
given as the account's `existing_subnets`.

`python -m tests.support.combinations --write` rewrites the table of docs/reference/combinations.md from here
(tests/program/test_combinations.py fails when it differs).
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from tests.support.once import once_per_run

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "reference" / "combinations.md"  # the page holding the table
STACK = "matrix"
PROXY_URL = "http://proxy.matrix.example:3128"
PROXY_ENTRY = ".corp.example"
RANCHER_URL = "https://rancher.matrix.example"
TOKEN = "token-matrx:0123456789abcdef0123456789abcdef"
KUBECONFIG = "apiVersion: v1\nkind: Config\n"
GRAVITON_TYPE = "m7g.large"
# The Rancher namespaces a restricted cluster must exempt, as Rancher's docs list them ("PSA
# restricted exemptions", ranchermanager.docs.rancher.com/reference-guides/rancher-security/
# psa-restricted-exemptions, v2.7 to v2.14): the agent's, Fleet's and the impersonation one.
RANCHER_PSA_NAMESPACES = ("cattle-system", "cattle-fleet-system", "cattle-impersonation-system")
IMDS = "169.254.169.254"

# The configuration every combination starts from: one zone, one server and one agent, nothing optional
# on, the CCM as a Helm release through a kubeconfig (so what goes into the cluster is planned too).
BASE: dict[str, Any] = {
    "region": "us-west-2",
    "distribution": "rke2",
    "clusterId": STACK,
    "network": {"vpcCidr": "10.70.0.0/16", "availabilityZones": 1, "natGateways": "single"},
    "nodePools": [{"name": "server", "roles": ["controlplane", "etcd"], "count": 1},
                  {"name": "agents", "roles": ["worker"], "count": 1}],
    "ccm": {"install": "helm"},
    "controlPlane": {"endpoint": "dns"},
    "etcdBackup": {"enabled": False},
    "addons": {"ebsCsi": False},
    "kubeconfig": KUBECONFIG,
}
SECRET_KEYS = ("kubeconfig", "rancher", "registry")  # set with --secret (the program refuses them in plain text)
BYO_VPC_CIDR = "10.80.0.0/16"


# ---- reading a plan --------------------------------------------------------------------------------

class View:
    """What a check reads from one planned configuration."""

    def __init__(self, run: harness.ProgramRun, features: frozenset[str], spec: dict[str, Any], emulated: bool):
        self.run, self.features, self.spec, self.emulated = run, features, spec, emulated
        self._files: dict[str, dict[str, str]] = {}  # instance URN -> its user data's files (decoded once)

    def has(self, *names: str) -> bool:
        return all(n in self.features for n in names)

    @property
    def rke2(self) -> bool:
        return self.run.outputs["distribution"] == "rke2"

    @functools.cached_property
    def instances(self) -> list[harness.Registration]:
        return self.run.of_type("aws:ec2/instance:Instance")

    @functools.cached_property
    def _nodes(self) -> dict[str, dict]:
        return {n["privateIp"]: n for n in self.run.outputs["nodes"]}

    def node(self, inst: harness.Registration) -> dict:
        return self._nodes[inst.inputs["privateIp"]]

    def roles(self, inst: harness.Registration) -> set[str]:
        return set(self.node(inst)["roles"])

    def is_server(self, inst: harness.Registration) -> bool:
        return bool(self.roles(inst) & {"controlplane", "etcd"})

    def files(self, inst: harness.Registration) -> dict[str, str]:
        from tests.support.userdata import cloud_config

        if inst.urn not in self._files:
            self._files[inst.urn] = {f["path"]: f["content"] for f in cloud_config(inst).get("write_files") or []}
        return self._files[inst.urn]

    def rke2_config(self, inst: harness.Registration) -> dict:
        return self._rke2_configs[inst.urn]

    @functools.cached_property
    def _rke2_configs(self) -> dict[str, dict]:
        from rke_aws.node import rke2_config as rc

        return {i.urn: yaml.safe_load(self.files(i)[rc.RKE2_CONFIG_PATH]) for i in self.instances}

    @functools.cached_property
    def arn_partitions(self) -> set[str]:
        """The partitions of every ARN the plan's inputs and outputs hold."""
        from tests.support.partitions import ARN

        return set(ARN.findall(json.dumps([r.inputs for r in self.run.resources] + [self.run.outputs], default=str)))

    def boot_script(self, inst: harness.Registration) -> str:
        from rke_aws.node import scripts

        return self.files(inst)[scripts.BOOTSTRAP_PATH]

    def env(self, inst: harness.Registration) -> dict[str, str]:
        """The proxy environment the node's Kubernetes runtime starts with: RKE2's unit environment file,
        or Docker's drop-in (RKE1); {} without one."""
        from rke_aws.node import cloud_init

        files = self.files(inst)
        for path in ("/etc/default/rke2-server", "/etc/default/rke2-agent"):
            if path in files:
                return dict(line.split("=", 1) for line in files[path].splitlines() if line)
        drop_in = files.get(cloud_init.DOCKER_PROXY_DROP_IN)
        if drop_in:
            return dict(m.split("=", 1) for m in re.findall(r'Environment="([^"]*)"', drop_in))
        return {}

    def no_proxy(self) -> list[str]:
        return self.run.outputs["proxy"]["NO_PROXY"].split(",")

    @functools.cached_property
    def manifests(self) -> dict[str, str]:
        """Manifest mode: file name -> content of what the servers mirror into RKE2's manifests directory."""
        out = {}
        for p in self.run.of_type("aws:ssm/parameter:Parameter"):
            if "/manifests/" in p.inputs["name"]:
                out[p.inputs["name"].rsplit("/", 1)[1]] = p.inputs.get("insecureValue") or p.inputs.get("value")
        return out

    def charts(self) -> dict[str, tuple[str, dict]]:
        """Chart name -> (the namespace it installs into, its values): Helm releases, or HelmCharts (manifest mode)."""
        out: dict[str, tuple[str, dict]] = {}
        for rel in self.run.of_type("kubernetes:helm.sh/v3:Release"):
            # An OCI chart is named by its whole reference (oci://host/path/<name>): keyed by <name>.
            out[rel.inputs["chart"].rsplit("/", 1)[-1]] = (rel.inputs["namespace"], rel.inputs.get("values") or {})
        for text in self.manifests.values():
            for doc in yaml.safe_load_all(text or ""):
                if isinstance(doc, dict) and doc.get("kind") == "HelmChart":
                    out[doc["spec"]["chart"].rsplit("/", 1)[-1]] = (doc["spec"]["targetNamespace"],
                                                                    yaml.safe_load(doc["spec"]["valuesContent"]))
        return out

    def helm_chart_namespaces(self) -> set[str]:
        """Namespaces RKE2's helm-controller runs its install jobs in (a HelmChart's own namespace)."""
        out = set()
        for text in self.manifests.values():
            for doc in yaml.safe_load_all(text or ""):
                if isinstance(doc, dict) and doc.get("kind") == "HelmChart":
                    out.add(doc["metadata"]["namespace"])
        return out

    def plan_names(self) -> list[str]:
        """The RKE2 upgrade Plans this program writes (helm: resources; manifest: upgrade-plans.yaml)."""
        names = [p.inputs["metadata"]["name"] for p in self.run.of_type("kubernetes:upgrade.cattle.io/v1:Plan")]
        text = self.manifests.get("upgrade-plans.yaml")
        if text:
            names += [d["metadata"]["name"] for d in yaml.safe_load_all(text) if d]
        return names

    @functools.cached_property
    def psa_exempt(self) -> set[str]:
        from rke_aws.node import rke2_config as rc

        found: set[str] = set()
        for inst in self.instances:
            text = self.files(inst).get(rc.PSA_CONFIG_PATH)
            if text:
                plugin = yaml.safe_load(text)["plugins"][0]
                found |= set(plugin["configuration"]["exemptions"]["namespaces"])
        return found

    def rancher_cluster(self) -> harness.Registration:
        (cluster,) = self.run.of_type("rancher2:index/cluster:Cluster")
        return cluster

    def role_policies(self, kind: str) -> dict[str, str]:
        cid = self.run.outputs["clusterId"]
        return {r.name[len(f"{cid}-{kind}-"):]: r.inputs["policy"] for r in self.run.of_type("aws:iam/rolePolicy:RolePolicy")
                if r.name.startswith(f"{cid}-{kind}-")}

    def cluster_yml(self) -> dict:
        return yaml.safe_load(self.run.outputs["rkeClusterYml"])

    def ccm_values(self) -> dict:
        return self.run.outputs["ccmValues"]

    def ebs_values(self) -> dict:
        from rke_aws.settings import versions

        return self.charts()[versions.EBS_CSI_CHART_NAME][1]

    def pools(self) -> list[dict]:
        return self.spec["nodePools"]

    def pool_instances(self, pred: Callable[[dict], bool]) -> list[harness.Registration]:
        names = {p["name"] for p in self.pools() if pred(p)}
        return [i for i in self.instances if self.node(i)["pool"] in names]

    def lookups(self, token: str) -> list[harness.Lookup]:
        return [lk for lk in self.run.lookups if lk.token == token]

    def warnings(self) -> list[str]:
        return [m for lvl, m in self.run.logs if lvl == "warning"]


Check = Callable[[View], None]


# ---- the table of features ---------------------------------------------------------------------

@dataclass(frozen=True)
class Feature:
    name: str
    title: str  # the README's name for it
    apply: Callable[[dict[str, Any]], None]  # adds the feature's keys to a configuration
    source: str
    check: Check | None = None  # what any plan that has the feature must show
    pending: int | None = None  # a feature issue 32 item N adds: its cells are xfail until it lands


def _set(spec: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = spec
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value


def _with(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda spec: _set(spec, path, copy.deepcopy(value))


def _split(spec: dict[str, Any]) -> None:
    pools = []
    for p in spec["nodePools"]:
        if set(p["roles"]) == {"controlplane", "etcd"}:
            pools += [{"name": "control-plane", "roles": ["controlplane"], "count": 1},
                      {"name": "etcd", "roles": ["etcd"], "count": 1}]
        else:
            pools.append(p)
    spec["nodePools"] = pools
    _set(spec, "controlPlane.endpoint", "nlb")  # split RKE2 server roles need the NLB (config.py)


def _spot(spec: dict[str, Any]) -> None:
    spec["nodePools"].append({"name": "spot", "roles": ["worker"], "count": 1, "market": "spot"})


def _graviton(spec: dict[str, Any]) -> None:
    for p in spec["nodePools"]:
        if p["roles"] == ["worker"]:
            p["instanceType"] = GRAVITON_TYPE


def _byo(spec: dict[str, Any]) -> None:
    # The IDs are the account's (planned(): the emulated account creates them, the mocks know fixed ones).
    spec["network"] = {"vpcId": "<byo>", "publicSubnetIds": ["<byo>"], "privateSubnetIds": ["<byo>"]}


def _rancher(upgrades: str) -> Callable[[dict[str, Any]], None]:
    return _with("rancher", {"url": RANCHER_URL, "token": TOKEN, "upgrades": upgrades})


def _servers_os(os_name: str) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        for p in spec["nodePools"]:
            if set(p["roles"]) & {"controlplane", "etcd"}:
                p["os"] = os_name
    return apply


def _workers_os(os_name: str) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        for p in spec["nodePools"]:
            if p["roles"] == ["worker"]:
                p["os"] = os_name
    return apply


MICRO_POOL = "micro"


def _micro_pool(spec: dict[str, Any]) -> None:
    spec["nodePools"].append({"name": MICRO_POOL, "roles": ["worker"], "count": 1, "os": "sle-micro-6"})


def _fips(spec: dict[str, Any]) -> None:
    spec["fips"] = True
    for p in spec["nodePools"]:  # FIPS needs an OS the boot switches to FIPS mode: RHEL 9 where none is chosen
        p.setdefault("os", "rhel-9")


# -- what each feature shows on its own --

def _os_own(os_name: str) -> Check:
    """The pools of `os_name` boot their vendor's image (looked up under the vendor's accounts) and the OS's
    preparation; RKE1 logs in as the OS's user."""
    def check(v: View) -> None:
        from rke_aws.settings.os_images import OS_IMAGES

        pools = v.pool_instances(lambda p: p.get("os") == os_name)
        assert pools, f"no {os_name} node planned"
        image = OS_IMAGES[os_name]
        vendor = {lk.result["id"] for lk in v.lookups("aws:ec2/getAmi:getAmi")
                  if list(lk.args.get("owners") or []) in [list(p.owners) for p in image.images.values() if p]}
        for inst in pools:
            assert inst.inputs["ami"] in vendor, f"{inst.urn}: not {image.title}'s image"
            if v.rke2:
                assert f"OS_NAME='{image.title}'" in v.boot_script(inst), inst.urn
            else:
                users = {n["hostname_override"]: n["user"] for n in v.cluster_yml()["nodes"]}
                assert users[v.node(inst)["name"]] == image.login_user, inst.urn
    return check


def _micro_own(v: View) -> None:
    _os_own("sle-micro-6")(v)
    for inst in v.pool_instances(lambda p: p["name"] == MICRO_POOL):
        # a tarball install on an SELinux OS (rke2-docs security/selinux.md), packages in a snapshot and a reboot
        assert v.rke2_config(inst).get("selinux") is True, inst.urn
        assert "PKG='transactional-update'" in v.boot_script(inst) and "MAY_REBOOT='yes'" in v.boot_script(inst)


def _fips_own(v: View) -> None:
    for inst in v.instances:
        script = v.boot_script(inst)
        assert "FIPS='switch'" in script or "FIPS='check'" in script, f"{inst.urn}: FIPS mode not switched or checked"
    assert any("fips" in w and "cloud controller" in w for w in v.warnings()), v.warnings()


def _rke2_own(v: View) -> None:
    assert v.rke2, "distribution is not rke2"
    for inst in v.instances:
        assert v.rke2_config(inst)["node-name"] == v.node(inst)["name"], inst.urn


def _rke1_own(v: View) -> None:
    assert not v.rke2 and "rkeClusterYml" in v.run.outputs, "no cluster.yml for rke up"
    assert {n["hostname_override"] for n in v.cluster_yml()["nodes"]} == {n["name"] for n in v.run.outputs["nodes"]}


def _image_owners(v: View, partition: str) -> list[list[str]]:
    """The publisher accounts the plan may ask for images in `partition`: Canonical's for Ubuntu pools, and each
    other pool OS's vendor's (issue 35; components/settings/os_images.py, sourced there)."""
    from rke_aws.settings.os_images import OS_IMAGES

    owners = [[{"aws": "099720109477", "aws-us-gov": "513442679011", "aws-cn": "837727238323"}[partition]]]
    for pool in v.pools():
        published = OS_IMAGES[pool.get("os", "ubuntu-24.04")].images.get(partition)
        if published is not None:
            owners.append(list(published.owners))
    return owners


def _is_arm64(lk: harness.Lookup) -> bool:
    # Canonical names arm64 images -arm64-; Red Hat, SUSE and Amazon -arm64; Rocky .aarch64
    return any("arm64" in val or "aarch64" in val for f in lk.args.get("filters") or [] for val in f["values"])


def _partition_own(partition: str, region: str) -> Check:
    suffix = "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com"

    def check(v: View) -> None:
        assert v.run.outputs["region"] == region
        wrong = sorted(v.arn_partitions - {partition})
        assert not wrong, f"ARNs of partition(s) {wrong} in a {partition} plan"
        amis = v.lookups("aws:ec2/getAmi:getAmi")
        allowed = _image_owners(v, partition)
        assert amis and all(lk.args.get("owners") in allowed for lk in amis), [lk.args.get("owners") for lk in amis]
        if v.rke2:
            for inst in v.instances:
                assert f"SSM_HOST='ssm.{region}.{suffix}'" in v.boot_script(inst), inst.urn
    return check


def _cis_own(v: View) -> None:
    from rke_aws.node import rke2_config as rc

    for inst in v.instances:
        doc = v.rke2_config(inst)
        assert doc.get("profile", "").startswith("cis"), f"{inst.urn}: no CIS profile"
        if "controlplane" in v.roles(inst):
            assert doc["pod-security-admission-config-file"] == rc.PSA_CONFIG_PATH, inst.urn
    assert v.psa_exempt, "no Pod Security admission configuration written"
    if not v.has("rancher-rke-aws") and not v.has("rancher-rancher"):
        # Rancher's namespaces are exempt only when the cluster is registered (issue 32 item 1: "and only then").
        assert not {n for n in v.psa_exempt if n.startswith("cattle-")}, sorted(v.psa_exempt)


def _proxy_own(v: View) -> None:
    from rke_aws.settings import fields

    entries = v.no_proxy()
    for must in ("localhost", "127.0.0.1", IMDS, fields.POD_CIDR, fields.SERVICE_CIDR, ".svc", ".cluster.local",
                 PROXY_ENTRY):
        assert must in entries, f"NO_PROXY lacks {must}: {entries}"
    for inst in v.instances:
        env = v.env(inst)
        assert env.get("HTTPS_PROXY") == PROXY_URL and env.get("NO_PROXY") == ",".join(entries), f"{inst.urn}: {env}"


def _rancher_own(upgrades: str) -> Check:
    def check(v: View) -> None:
        cluster = v.rancher_cluster()
        want = "true" if upgrades == "rancher" else "false"
        assert cluster.inputs["annotations"]["rancher.io/imported-cluster-version-management"] == want, cluster.inputs
        assert v.run.outputs["rancherCluster"]["upgrades"] == upgrades
    return check


def _split_own(v: View) -> None:
    kinds = {tuple(n["roles"]) for n in v.run.outputs["nodes"]}
    assert ("etcd",) in kinds and ("controlplane",) in kinds, kinds
    if v.rke2:
        for inst in v.instances:
            doc, roles = v.rke2_config(inst), v.roles(inst)
            if roles == {"etcd"}:
                assert doc.get("disable-apiserver") is True and doc.get("disable-scheduler") is True, inst.urn
            elif roles == {"controlplane"}:
                assert doc.get("disable-etcd") is True, inst.urn
    else:
        assert {tuple(n["role"]) for n in v.cluster_yml()["nodes"]} >= {("etcd",), ("controlplane",)}


def _spot_own(v: View) -> None:
    spot = v.pool_instances(lambda p: p.get("market") == "spot")
    assert spot, "no spot node planned"
    for inst in v.instances:
        opts = inst.inputs.get("instanceMarketOptions")
        if inst in spot:
            assert opts["marketType"] == "spot" and opts["spotOptions"]["spotInstanceType"] == "persistent", opts
            assert opts["spotOptions"]["instanceInterruptionBehavior"] == "stop", opts
        else:
            assert not opts, f"{inst.urn}: on-demand pool with spot options"


def _graviton_own(v: View) -> None:
    arm = v.pool_instances(lambda p: p.get("instanceType") == GRAVITON_TYPE)
    assert arm, "no Graviton node planned"
    asked = [lk for lk in v.lookups("aws:ec2/getAmi:getAmi") if _is_arm64(lk)]
    assert asked, "no arm64 image looked up"
    images = {lk.result["id"] for lk in asked}
    for inst in arm:
        assert inst.inputs["ami"] in images, f"{inst.urn}: not an arm64 image"
        assert inst.inputs["instanceType"] == GRAVITON_TYPE


def _helm_own(v: View) -> None:
    from rke_aws.settings import versions

    assert v.charts()[versions.CCM_CHART_NAME][0] == "kube-system"
    assert v.run.of_type("kubernetes:helm.sh/v3:Release"), "no Helm release"
    assert "ccm.yaml" not in v.manifests


def _manifest_own(v: View) -> None:
    (doc,) = yaml.safe_load_all(v.manifests["ccm.yaml"])
    assert doc["kind"] == "HelmChart" and doc["spec"]["bootstrap"] is True, doc
    assert not v.run.of_type("kubernetes:helm.sh/v3:Release"), "a Helm release in manifest mode"


def _snapshots_own(v: View) -> None:
    region = v.run.outputs["region"]
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    bucket = v.run.outputs["etcdSnapshotLocation"].split("/")[2]
    if v.rke2:
        for inst in v.instances:
            doc = v.rke2_config(inst)
            if "etcd" in v.roles(inst):
                assert doc["etcd-s3"] is True and doc["etcd-s3-bucket"] == bucket, inst.urn
                assert doc["etcd-s3-endpoint"] == f"s3.{region}.{suffix}", doc["etcd-s3-endpoint"]
            else:
                assert "etcd-s3" not in doc, f"{inst.urn}: takes snapshots without etcd"
    else:
        s3 = v.cluster_yml()["services"]["etcd"]["backup_config"]["s3backupconfig"]
        assert s3["bucket_name"] == bucket and s3["endpoint"] == f"s3.{region}.{suffix}", s3


def _ebs_own(v: View) -> None:
    from rke_aws.settings import versions

    namespace, values = v.charts()[versions.EBS_CSI_CHART_NAME]
    if v.has("identity"):  # the controller on its IRSA role, no key (the ebs-csi + identity rule's check)
        assert namespace == "kube-system"
        return
    assert namespace == "kube-system" and values["awsAccessSecret"]["name"] == "aws-ebs-csi-driver-credentials"
    if v.has("manifest"):
        assert "ebs-csi-credentials.yaml" in v.manifests
    else:
        assert v.run.of_type("kubernetes:core/v1:Secret"), "no credentials Secret"


def _nlb_own(v: View) -> None:
    (lb,) = v.run.of_type("aws:lb/loadBalancer:LoadBalancer")
    assert lb.inputs["loadBalancerType"] == "network" and lb.inputs["internal"] is True, lb.inputs
    ports = sorted(int(li.inputs["port"]) for li in v.run.of_type("aws:lb/listener:Listener"))
    assert ports == ([6443, 9345] if v.rke2 else [6443]), ports


def _dns_own(v: View) -> None:
    assert not v.run.of_type("aws:lb/loadBalancer:LoadBalancer"), "a load balancer with the dns endpoint"
    (record,) = v.run.of_type("aws:route53/record:Record")
    servers = sorted(n["privateIp"] for n in v.run.outputs["nodes"] if "controlplane" in n["roles"])
    assert sorted(record.inputs["records"]) == servers, record.inputs


def _byo_own(v: View) -> None:
    assert not v.run.of_type("aws:ec2/vpc:Vpc") and not v.run.of_type("aws:ec2/subnet:Subnet"), "created a network"
    net = v.spec["network"]
    tagged = {r.inputs["resourceId"] for r in v.run.of_type("aws:ec2/tag:Tag")}
    assert {net["vpcId"], *net["publicSubnetIds"], *net["privateSubnetIds"]} <= tagged, tagged
    assert v.run.outputs["vpcId"] == net["vpcId"]


def _ingress_own(v: View) -> None:
    for inst in v.instances:
        if v.is_server(inst):
            assert v.rke2_config(inst).get("ingress-controller") == "traefik", inst.urn


IDENTITY_SOURCE = ("IAM user guide, OIDC federation (provider, sts.amazonaws.com audience, StringEquals on sub/aud); "
                   "kubernetes pkg/kubeapiserver/options/authentication.go (--service-account-issuer); k3s pkg/util/"
                   "args.go (key-=value puts a value first); plan/identity_*.py")


def _identity_own(v: View) -> None:
    from rke_aws.plan import identity_issuer, identity_webhook

    (provider,) = v.run.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert list(provider.inputs["clientIdLists"]) == [identity_issuer.STS_AUDIENCE], provider.inputs
    assert not provider.inputs.get("thumbprintLists"), "IAM verifies S3's certificate itself"
    assert not v.run.of_type("aws:iam/accessKey:AccessKey"), "an access key beside workload identity"
    url = provider.inputs["url"]
    if v.rke2:
        api = [i for i in v.instances if v.rke2_config(i).get("kube-apiserver-arg")]
        assert api and all(f"service-account-issuer-={url}" in v.rke2_config(i)["kube-apiserver-arg"] for i in api)
    else:
        _identity_rke1(v, url)
        api = [i for i in v.instances if "IDENTITY_KEY_REQUEST=" in v.boot_script(i)]
    assert api and all("controlplane" in v.roles(i) for i in api), "issuer keys on a node without kube-apiserver"
    assert identity_webhook.CHART.name in v.charts(), "no pod identity webhook"


def _identity_rke1(v: View, url: str) -> None:
    """RKE1 (rancher/rke cluster/plan.go BuildKubeAPIProcess): the issuer's flags in cluster.yml's kube-api, our
    issuer first (extra_args) and RKE's after it (extra_args_array), the key directory bound in; every
    controlplane node's first boot fetches the key files (`rke up` writes none), only the controlplane role may."""
    from rke_aws.plan import identity_apiserver as api

    kube_api = v.cluster_yml()["services"]["kube-api"]
    assert kube_api["extra_args"]["service-account-issuer"] == url, kube_api
    assert kube_api["extra_args_array"]["service-account-issuer"] == [api.RKE1_DEFAULT_ISSUER], kube_api
    assert f"{api.RKE1_KEY_DIR}:{api.RKE1_KEY_DIR}:ro" in kube_api["extra_binds"], kube_api
    for inst in v.instances:
        fetches = f"IDENTITY_DIR='{api.RKE1_KEY_DIR}'" in v.boot_script(inst)
        assert fetches == ("controlplane" in v.roles(inst)), inst.urn
    for kind in ("worker", "etcd"):
        assert not any("identity/signing-key" in str(d) for d in v.role_policies(kind).values()), kind


def _identity_partition(partition: str, region: str) -> Check:
    def check(v: View) -> None:
        (provider,) = v.run.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
        assert provider.inputs["url"].endswith(f".s3.{region}.amazonaws.com"), provider.inputs["url"]
        assert provider.state["arn"].startswith(f"arn:{partition}:iam::"), provider.state["arn"]
        policy = next(r for r in v.run.of_type("aws:s3/bucketPolicy:BucketPolicy") if "-oidc-" in r.name)
        assert f"arn:{partition}:s3:::" in policy.inputs["policy"]
    return check


def _identity_ebs(v: View) -> None:
    from rke_aws.plan.identity_roles import ROLE_ARN_ANNOTATION

    values = v.ebs_values()
    assert values.get("awsAccessSecret", "absent") in (None, "absent"), values.get("awsAccessSecret")
    assert ROLE_ARN_ANNOTATION in values["controller"]["serviceAccount"]["annotations"]
    assert not v.run.of_type("aws:iam/user:User")


def _identity_split(v: View) -> None:
    for inst in v.instances:
        has = (bool(v.rke2_config(inst).get("kube-apiserver-arg")) if v.rke2
               else "IDENTITY_KEY_REQUEST=" in v.boot_script(inst))
        assert has == ("controlplane" in v.roles(inst)), inst.urn  # etcd-only servers run no kube-apiserver
    key = [r for r in v.run.of_type("aws:ssm/parameter:Parameter") if r.name.endswith("-sa-signing-key")]
    assert key and not any("identity/signing-key" in d for d in v.role_policies("etcd").values())


def _identity_cis(v: View) -> None:
    from rke_aws.plan import identity_webhook

    assert identity_webhook.NAMESPACE in v.psa_exempt  # the webhook (and its hostPath-free pods) in kube-system
# ---- air-gap with a private registry (issue 35) ----
AIRGAP_BUCKET = "matrix-rke2-artifacts"
AIRGAP_MIRROR = "https://registry.matrix.example"
AIRGAP_CHARTS = "oci://registry.matrix.example/charts"


def _airgap(spec: dict[str, Any]) -> None:
    _set(spec, "network.natGateways", "none")  # settings/rules/registry.py: no way out
    spec["registry"] = {"mirrors": {r: f"{AIRGAP_MIRROR}/{r}" for r in ("docker.io", "registry.k8s.io", "public.ecr.aws")},
                        "charts": AIRGAP_CHARTS}
    spec["airgap"] = {"artifactsBucket": AIRGAP_BUCKET}


def airgap_objects(version: str) -> dict[str, list[str]]:
    """The matrix's artifacts bucket as the README's commands fill it: RKE2's release assets for both
    architectures (rancher/rke2 release assets: rke2.linux-<arch>.tar.gz, rke2-images.linux-<arch>.tar.zst,
    sha256sum-<arch>.txt), install.sh and system-upgrade-controller's manifests. Written out here, not taken
    from the program."""
    from rke_aws.settings import versions

    keys = [f"{version}/install.sh", f"system-upgrade-controller/{versions.SUC_VERSION}/crd.yaml",
            f"system-upgrade-controller/{versions.SUC_VERSION}/system-upgrade-controller.yaml"]
    for arch in ("amd64", "arm64"):
        keys += [f"{version}/sha256sum-{arch}.txt", f"{version}/rke2.linux-{arch}.tar.gz",
                 f"{version}/rke2-images.linux-{arch}.tar.zst"]
    # The SELinux OSes' policy rpms (rancher/rke2-selinux release assets rke2-selinux-<v>.<el8|el9|slemicro>
    # .noarch.rpm; container-selinux from the OS's repositories for EL9; Rancher's rpm key for zypper).
    keys += ["rpms/el9/rke2-selinux-0.20-1.el9.noarch.rpm", "rpms/el9/container-selinux-2.229.0-1.el9.noarch.rpm",
             "rpms/el8/rke2-selinux-0.20-1.el8.noarch.rpm", "rpms/slemicro/rke2-selinux-0.20-1.slemicro.noarch.rpm",
             "rpms/slemicro/public.key"]
    return {AIRGAP_BUCKET: keys}


def _airgap_own(v: View) -> None:
    """No internet gateway or NAT; every node installs RKE2 from the bucket for its own architecture and reads
    registries.yaml (rke2-docs install/airgap.md, install/private_registry.md)."""
    types = {r.type for r in v.run.resources}
    assert not types & {"aws:ec2/internetGateway:InternetGateway", "aws:ec2/natGateway:NatGateway"}, types
    assert v.run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint"), "no VPC endpoints"
    for inst in v.instances:
        script = v.boot_script(inst)
        assert "INSTALL_SCRIPT_URL='file:///var/lib/rke-aws/artifacts/install.sh'" in script, inst.urn
        assert any(p.startswith("/etc/rancher/rke2/registries.yaml") for p in v.files(inst)), inst.urn


def _endpoint_names(partition_prefix: str, region: str) -> Check:
    def check(v: View) -> None:
        names = {r.inputs["serviceName"]: r.inputs["vpcEndpointType"] for r in v.run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
        assert f"{partition_prefix}.{region}.ec2" in names and names[f"com.amazonaws.{region}.s3"] == "Gateway", names
    return check


def _airgap_arm64(v: View) -> None:
    for inst in v.pool_instances(lambda p: p.get("instanceType") == GRAVITON_TYPE):
        assert "ARCH='arm64'" in v.boot_script(inst) and "rke2.linux-arm64.tar.gz" in v.boot_script(inst), inst.urn


def _airgap_s3_gateway(v: View) -> None:
    (s3,) = [r for r in v.run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if r.inputs["serviceName"].endswith(".s3")]
    assert s3.inputs["vpcEndpointType"] == "Gateway" and s3.inputs["routeTableIds"], s3.inputs


def _airgap_charts_helm(v: View) -> None:
    for r in v.run.of_type("kubernetes:helm.sh/v3:Release"):
        assert r.inputs["chart"].startswith(AIRGAP_CHARTS + "/"), r.inputs["chart"]


def _airgap_charts_manifest(v: View) -> None:
    charts = [t for t in v.manifests.values() if "kind: HelmChart" in t]
    assert charts and all(f"chart: {AIRGAP_CHARTS}/" in t for t in charts), charts
    urls = [t for n, t in v.manifests.items() if n.endswith(".url") and "system-upgrade-controller" in n]
    assert urls and all(u.startswith(f"s3://{AIRGAP_BUCKET}/") for u in urls), urls


def _airgap_agent_image(v: View) -> None:
    """Rancher's agent (docker.io/rancher/rancher-agent) is pulled through the docker.io mirror."""
    for inst in v.instances:
        text = next(t for p, t in v.files(inst).items() if p.startswith("/etc/rancher/rke2/registries.yaml"))
        assert "docker.io" in yaml.safe_load(text)["mirrors"], text


REGISTRY_PASSWORD = "matrix-registry-password"


def _registry(spec: dict[str, Any]) -> None:
    spec["registry"] = {"mirrors": {"docker.io": f"{AIRGAP_MIRROR}/hub", "registry.k8s.io": f"{AIRGAP_MIRROR}/k8s",
                                    "public.ecr.aws": f"{AIRGAP_MIRROR}/ecr"},
                        "username": "puller", "password": REGISTRY_PASSWORD}


def _registry_own(v: View) -> None:
    """RKE2: registries.yaml as a template completed from the SecureString at boot (rke2-docs
    install/private_registry.md); RKE1: cluster.yml private_registries (rancher/rke types/rke_types.go). The
    password never in user data."""
    for inst in v.instances:
        assert REGISTRY_PASSWORD not in "".join(v.files(inst).values()), f"{inst.urn}: the password in user data"
        if v.rke2:
            assert "/etc/rancher/rke2/registries.yaml.template" in v.files(inst), inst.urn
            assert "registry-password" in v.boot_script(inst), inst.urn
    if not v.rke2:
        entries = v.cluster_yml()["private_registries"]
        assert entries[0]["url"] == "registry.matrix.example/hub" and entries[0]["is_default"] is True, entries
        from rke_aws.settings import versions

        if versions.EBS_CSI_CHART_NAME in v.charts():
            # Docker has no per-registry mirrors: the EBS CSI chart's images (public.ecr.aws, the chart's
            # values.yaml image.repository and sidecars.<name>.image.repository) must name the mirror.
            values = v.ebs_values()
            repos = [values["image"]["repository"], *(c["image"]["repository"] for c in values["sidecars"].values())]
            assert repos and all(r.startswith("registry.matrix.example/ecr/") for r in repos), repos


FEATURES: tuple[Feature, ...] = (
    Feature("rke2", "RKE2", _with("distribution", "rke2"),
            "domain.md §3 (RKE2: config.yaml, servers and agents)", _rke2_own),
    Feature("rke1", "RKE1", _with("distribution", "rke"),
            "domain.md §3 (RKE1: cluster.yml for rke up); §6 (end of life)", _rke1_own),
    Feature("aws", "aws (us-west-2)", _with("region", "us-west-2"),
            "domain.md §6 Partitions", _partition_own("aws", "us-west-2")),
    Feature("aws-us-gov", "aws-us-gov", _with("region", "us-gov-west-1"),
            "domain.md §6 Partitions (GovCloud)", _partition_own("aws-us-gov", "us-gov-west-1")),
    Feature("aws-cn", "aws-cn", _with("region", "cn-north-1"),
            "domain.md §6 Partitions (China: amazonaws.com.cn endpoints)", _partition_own("aws-cn", "cn-north-1")),
    Feature("cis", "CIS", _with("hardening", "cis"),
            "rancher/rke2 pkg/rke2/psa.go (restricted PSA with exemptions); rke2-docs security/hardening_guide", _cis_own),
    Feature("proxy", "proxy", _with("proxy", {"httpsProxy": PROXY_URL, "noProxy": [PROXY_ENTRY]}),
            "rke2-docs advanced.md \"Configuring an HTTP proxy\"; docs.docker.com/engine/daemon/proxy", _proxy_own),
    Feature("rancher-rke-aws", "Rancher (upgrades: rke-aws)", _rancher("rke-aws"),
            "terraform-provider-rancher2 rancher2_cluster (imported); rancher/rancher importedclusterversionmanagement",
            _rancher_own("rke-aws")),
    Feature("rancher-rancher", "Rancher (upgrades: rancher)", _rancher("rancher"),
            "rancher/rancher pkg/controllers/management/k3sbasedupgrade", _rancher_own("rancher")),
    Feature("split", "split roles", _split,
            "rke2-docs install/server_roles.md (etcd-only, control-plane-only servers)", _split_own),
    Feature("spot", "spot", _spot,
            "EC2 User Guide, Spot Instance requests (persistent, stop on interruption)", _spot_own),
    Feature("graviton", "Graviton", _graviton,
            "EC2 instance types (m7g: arm64); Canonical's arm64 Ubuntu images", _graviton_own),
    Feature("helm", "CCM helm", _with("ccm.install", "helm"),
            "pulumi-kubernetes helm.sh/v3 Release (domain.md §4)", _helm_own),
    Feature("manifest", "CCM manifest", _with("ccm.install", "manifest"),
            "domain.md §3 (RKE2 manifests directory, HelmChart bootstrap)", _manifest_own),
    Feature("snapshots", "etcd snapshots", _with("etcdBackup", {"enabled": True}),
            "k3s pkg/etcd/s3/s3.go; rancher/rke services/etcd.go backup_config", _snapshots_own),
    Feature("ebs-csi", "EBS CSI", _with("addons.ebsCsi", True),
            "kubernetes-sigs/aws-ebs-csi-driver chart values.yaml", _ebs_own),
    Feature("nlb", "NLB endpoint", _with("controlPlane.endpoint", "nlb"),
            "domain.md §6 RKE2 HA (a layer-4 load balancer)", _nlb_own),
    Feature("dns", "DNS endpoint", _with("controlPlane.endpoint", "dns"),
            "domain.md §6 RKE2 HA (round-robin DNS)", _dns_own),
    Feature("byo-vpc", "own VPC", _byo,
            "domain.md §1 (owned vs shared tags)", _byo_own),
    Feature("ingress", "ingress", _with("ingress.controller", "traefik"),
            "rancher/rke2 PR #11156; rke2-docs ingress migration guide (issue 32 item 10)", _ingress_own),
    # issue 35: the `os` axis (servers on RHEL 9, workers on AL2023, a SLE Micro pool) and fips
    Feature("rhel-9", "RHEL 9 servers", _servers_os("rhel-9"),
            "components/settings/os_images.py RHEL9 (Red Hat's owners per partition; rke2-docs security/selinux.md)",
            _os_own("rhel-9")),
    Feature("al2023", "AL2023 workers", _workers_os("al2023"),
            "components/settings/os_images.py AL2023 (Amazon's owners per partition: kops, amazon-eks-ami)",
            _os_own("al2023")),
    Feature("sle-micro", "SLE Micro pool", _micro_pool,
            "components/settings/os_images.py SLE_MICRO6 (SUSE BYOS images, commercial only; rke2-docs "
            "install/methods.md transactional-update)", _micro_own),
    Feature("fips", "FIPS", _fips,
            "rke2-docs security/fips_support.md (RKE2's BoringCrypto build); Red Hat \"Security hardening\" (RHEL 9 "
            "fips-mode-setup)", _fips_own),
    Feature("identity", "workload identity", _with("identity", {"serviceAccounts": "irsa"}), IDENTITY_SOURCE,
            _identity_own),
    Feature("registry", "private registry", _registry,
            "rke2-docs install/private_registry.md; rancher/rke types/rke_types.go PrivateRegistry", _registry_own),
    Feature("airgap", "air-gap + registry", _airgap,
            "rke2-docs install/airgap.md, install/private_registry.md (issue 35)", _airgap_own),
)
FEATURE = {f.name: f for f in FEATURES}
PARTITIONS = ("aws", "aws-us-gov", "aws-cn")


# ---- verdicts -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Works:
    """Both are planned together; `checks`: what each needs from the other (none: independent)."""
    why: str
    source: str
    checks: tuple[Check, ...] = ()
    account: bool = False  # the look-ups matter: planned in the emulated account
    pending: int | None = None  # issue 32 item N makes it true
    finding: str | None = None  # broken on today's code outside issue 32 items 1-10 (xfail until fixed)
    requires: tuple[str, ...] = ()  # judged in a configuration that also has these (the checks are theirs)


@dataclass(frozen=True)
class Refused:
    """Refused before any resource exists, naming `rke-aws:<key>` (`*`: any index)."""
    key: str
    why: str
    source: str
    pending: int | None = None
    or_safe: Check | None = None  # or accepted and made safe, as this check proves


@dataclass(frozen=True)
class Alternatives:
    """Two values of one key: the pair cannot be written."""
    key: str
    source: str = "one key, one value"
    why: str = ""
    pending: int | None = None
    finding: str | None = None


Verdict = Works | Refused | Alternatives
RULES: dict[frozenset[str], Verdict] = {}


def rule(a: str, b: str, verdict: Verdict) -> None:
    pair = frozenset((a, b))
    assert len(pair) == 2 and pair not in RULES, f"rule for {a} + {b} given twice"
    RULES[pair] = verdict


def independent(a: str, others: Iterable[str], why: str, source: str) -> None:
    for b in others:
        rule(a, b, Works(why, source))


# -- checks of what pairs need from each other --

def _agent_env_vars(v: View) -> None:
    env = {e["name"]: e["value"] for e in v.rancher_cluster().inputs.get("agentEnvVars") or []}
    want = v.run.outputs["proxy"]
    assert {k: env.get(k) for k in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")} == want, env


def _rancher_psa(v: View) -> None:
    missing = [n for n in RANCHER_PSA_NAMESPACES if n not in v.psa_exempt]
    assert not missing, f"Rancher's namespaces not exempt from restricted Pod Security: {missing}"


def _helm_namespaces_exempt(v: View) -> None:
    from rke_aws.plan import cluster_documents

    used = {ns for ns, _ in v.charts().values()} | v.helm_chart_namespaces()
    if v.plan_names():
        used.add(cluster_documents.NAMESPACE)
    assert used <= v.psa_exempt, f"installed into namespaces not exempt: {sorted(used - v.psa_exempt)}"


def _ebs_namespace_exempt(v: View) -> None:
    from rke_aws.settings import versions

    assert v.charts()[versions.EBS_CSI_CHART_NAME][0] in v.psa_exempt


def _cis_split(v: View) -> None:
    for inst in v.instances:
        if v.roles(inst) == {"etcd"}:
            # The CIS profile makes RKE2 refuse to start a server without the etcd user (rke2-docs hardening guide).
            assert "CIS='yes'" in v.boot_script(inst) and "KIND='server'" in v.boot_script(inst), inst.urn


def _no_proxy_has_endpoint(v: View) -> None:
    assert v.run.outputs["controlPlaneEndpoint"] in v.no_proxy(), v.no_proxy()


def _proxy_in_ccm(v: View) -> None:
    env = {e["name"]: e["value"] for e in v.ccm_values().get("env") or []}
    assert env.get("HTTPS_PROXY") == PROXY_URL and IMDS in env.get("NO_PROXY", "").split(","), env


def _proxy_in_helm_controller(v: View) -> None:
    from rke_aws.node import cloud_init

    for inst in v.instances:
        if v.is_server(inst):
            # RKE2's embedded helm-controller copies its own HTTP(S)_PROXY/NO_PROXY into the install jobs.
            assert v.env(inst).get("HTTPS_PROXY") == PROXY_URL, inst.urn
            sync = v.files(inst)[cloud_init.SYNC_PATH]
            assert f"export https_proxy='{PROXY_URL}'" in sync, f"{inst.urn}: the manifest sync downloads without the proxy"


def _proxy_and_snapshots(v: View) -> None:
    if not v.rke2:
        return
    for inst in v.instances:
        if "etcd" in v.roles(inst):
            assert "etcd-s3-proxy" not in v.rke2_config(inst), "etcd-s3-proxy overrides the environment"
            assert IMDS in v.env(inst)["NO_PROXY"].split(","), f"{inst.urn}: IAM credentials via the proxy"


def _proxy_in_ebs(v: View) -> None:
    proxy = v.ebs_values().get("proxy") or {}
    assert proxy.get("http_proxy") == PROXY_URL and IMDS in proxy.get("no_proxy", "").split(","), proxy


def _byo_cidr_in_no_proxy(v: View) -> None:
    (vpc,) = [lk for lk in v.lookups("aws:ec2/getVpc:getVpc") if lk.args.get("id") == v.spec["network"]["vpcId"]][:1]
    assert vpc.result["cidrBlock"] in v.no_proxy(), (vpc.result["cidrBlock"], v.no_proxy())


def _registration_via_kubeconfig(v: View) -> None:
    url = v.rancher_cluster().state["clusterRegistrationToken"]["manifestUrl"]
    files = [c.inputs["file"] for c in v.run.of_type("kubernetes:yaml/v2:ConfigFile")]
    assert url in files, f"the registration manifest is not applied: {files}"


def _registration_via_manifests(v: View) -> None:
    from rke_aws.plan import rancher

    url = v.rancher_cluster().state["clusterRegistrationToken"]["manifestUrl"]
    assert v.manifests.get(f"{rancher.REGISTRATION_MANIFEST}.url") == url
    (param,) = [p for p in v.run.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith(".url")
                and rancher.REGISTRATION_MANIFEST in p.inputs["name"]]
    assert param.inputs["type"] == "SecureString", "the address carries the registration token"


def _no_program_upgrades(v: View) -> None:
    assert not v.plan_names(), v.plan_names()
    assert "system-upgrade-controller.url" not in v.manifests


def _program_etcd_plan(v: View) -> None:
    assert "rke2-etcd" in v.plan_names(), v.plan_names()


def _rancher_worker_concurrency_one(v: View) -> None:
    strategy = ((v.rancher_cluster().inputs.get("rke2Config") or {}).get("upgradeStrategy") or {})
    assert strategy.get("workerConcurrency") == 1, strategy


def _rke1_ccm_tolerates_controlplane(v: View) -> None:
    values = v.ccm_values()
    assert _selector(values) == {"node-role.kubernetes.io/controlplane": "true"}, values["nodeSelector"]
    assert any(t.get("key") == "node-role.kubernetes.io/controlplane" and t.get("effect") == "NoSchedule"
               for t in values["tolerations"]), values["tolerations"]


def _rke1_ebs_controller(v: View) -> None:
    controller = v.ebs_values()["controller"]
    assert _selector(controller) == {"node-role.kubernetes.io/controlplane": "true"}, controller["nodeSelector"]
    assert any(t.get("key") == "node-role.kubernetes.io/controlplane" for t in controller["tolerations"])


def _rke1_docker_proxy(v: View) -> None:
    from rke_aws.node import cloud_init

    for inst in v.instances:
        files = v.files(inst)
        assert cloud_init.DOCKER_PROXY_DROP_IN in files, f"{inst.urn}: Docker pulls without the proxy"
        assert not any(p.startswith("/etc/default/rke2-") for p in files), inst.urn


def _rke1_snapshots_role(v: View) -> None:
    s3 = v.cluster_yml()["services"]["etcd"]["backup_config"]["s3backupconfig"]
    assert "access_key" not in s3 and "secret_key" not in s3, "keys in cluster.yml"
    profiles = {r.state["name"]: r.name for r in v.run.of_type("aws:iam/instanceProfile:InstanceProfile")}
    cid = v.run.outputs["clusterId"]
    for inst in v.instances:
        if "etcd" in v.roles(inst):
            kind = profiles[inst.inputs["iamInstanceProfile"]][len(cid) + 1:]
            assert "etcd-snapshots" in v.role_policies(kind), f"{inst.urn}: its role ({kind}) cannot write snapshots"


def _ebs_secret_first(v: View) -> None:
    if v.has("identity"):  # no key, no Secret: the controller's role (ebs-csi + identity)
        _identity_ebs(v)
        return
    (secret,) = [r for r in v.run.of_type("kubernetes:core/v1:Secret") if r.name.endswith("-ebs-csi-credentials")]
    assert secret.inputs["metadata"]["namespace"] == "kube-system"
    (release,) = [r for r in v.run.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"].rsplit("/", 1)[-1] == "aws-ebs-csi-driver"]
    assert secret.urn in release.dependencies, "the driver may start before its credentials exist"


def _ebs_secret_manifest(v: View) -> None:
    if v.has("identity"):
        _identity_ebs(v)
        return
    (param,) = [p for p in v.run.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("/ebs-csi-credentials.yaml")]
    assert param.inputs["type"] == "SecureString", "the access key in a plain parameter"
    assert yaml.safe_load(v.manifests["ebs-csi-credentials.yaml"])["metadata"]["namespace"] == "kube-system"


def _rke1_no_upgrade_controller(v: View) -> None:
    assert not v.plan_names() and "system-upgrade-controller" not in v.run.outputs.get("installedInCluster", [])


def _rke1_sans(v: View) -> None:
    assert v.run.outputs["controlPlaneEndpoint"] in v.cluster_yml()["authentication"]["sans"]


def _rke1_spot_private(v: View) -> None:
    spot = {v.node(i)["name"] for i in v.pool_instances(lambda p: p.get("market") == "spot")}
    for n in v.cluster_yml()["nodes"]:
        if n["hostname_override"] in spot:
            assert n["address"] == n["internal_address"], n  # a private address survives stop and start


def _snapshot_grants(v: View) -> None:
    policies = {kind: v.role_policies(kind) for kind in ("controlplane", "worker", "etcd")}
    assert "etcd-snapshots" in policies["etcd"], "etcd-only servers cannot write their snapshots"
    assert "etcd-snapshots" not in policies["worker"], "every agent could read the snapshots"
    if v.rke2:
        assert "etcd-snapshots" not in policies["controlplane"], "control-plane-only servers take no snapshots"


def _spot_only_agents(v: View) -> None:
    for inst in v.pool_instances(lambda p: p.get("market") == "spot"):
        assert v.roles(inst) == {"worker"}, inst.urn
        if v.rke2:
            assert "KIND='agent'" in v.boot_script(inst), inst.urn
    # And a spot server pool is refused (config.py): AWS takes spot capacity back at two minutes' notice.
    from rke_aws.settings.messages import pool_labels
    from tests.support.configs import config_problems

    spec = copy.deepcopy(v.spec)
    etcd = next(i for i, p in enumerate(spec["nodePools"]) if "etcd" in p["roles"])
    spec["nodePools"][etcd]["market"] = "spot"
    problems = config_problems(flat(spec), STACK)
    key = f"nodePools[{pool_labels(spec['nodePools'])[etcd]}].market"  # pools by name (settings/messages.py)
    assert any(p.startswith(f"rke-aws:{key}:") for p in problems), problems


def _spot_not_targets(v: View) -> None:
    spot = {v.node(i)["privateIp"] for i in v.pool_instances(lambda p: p.get("market") == "spot")}
    targets = {a.inputs["targetId"] for a in v.run.of_type("aws:lb/targetGroupAttachment:TargetGroupAttachment")}
    assert targets and not spot & targets, spot & targets


def _selector(values: dict) -> dict:
    return {k: val for k, val in values["nodeSelector"].items() if val is not None}  # None: a chart default removed


def _split_placement(v: View) -> None:
    key = "node-role.kubernetes.io/control-plane" if v.rke2 else "node-role.kubernetes.io/controlplane"
    assert _selector(v.ccm_values()) == {key: "true"}, v.ccm_values()["nodeSelector"]
    # RKE2 labels control-plane only where the apiserver runs (k3s pkg/server/server.go), so etcd-only
    # servers never take the CCM.


def _split_manifest_sync(v: View) -> None:
    from rke_aws.node import cloud_init

    cp = [i for i in v.instances if v.roles(i) == {"controlplane"}]
    assert cp and all(cloud_init.SYNC_PATH in v.files(i) for i in cp), "control-plane servers do not mirror manifests"
    assert "rke2-etcd" in v.plan_names() or v.has("rancher-rancher")


def _split_ebs(v: View) -> None:
    key = "node-role.kubernetes.io/control-plane" if v.rke2 else "node-role.kubernetes.io/controlplane"
    assert _selector(v.ebs_values()["controller"]) == {key: "true"}, v.ebs_values()["controller"]


def _split_targets(v: View) -> None:
    groups = {tg.state["arn"]: int(tg.inputs["port"]) for tg in v.run.of_type("aws:lb/targetGroup:TargetGroup")}
    targets: dict[int, set[str]] = {}
    for a in v.run.of_type("aws:lb/targetGroupAttachment:TargetGroupAttachment"):
        targets.setdefault(groups[a.inputs["targetGroupArn"]], set()).add(a.inputs["targetId"])
    ips = {kind: {n["privateIp"] for n in v.run.outputs["nodes"] if n["roles"] == [kind]} for kind in ("controlplane", "etcd")}
    assert targets[6443] == ips["controlplane"], "the API must go only to nodes that run it"
    if v.rke2:
        assert targets[9345] == ips["etcd"], targets


def _ebs_multi_arch(v: View) -> None:
    node = v.ebs_values().get("node") or {}
    selector = node.get("nodeSelector") or {}
    assert selector.get("kubernetes.io/arch") in (None, "arm64"), selector
    assert node.get("tolerateAllTaints") is True  # the node plugin goes to every node, Graviton ones too


def _offered_in_byo_zone(v: View) -> None:
    zones = {lk.result["availabilityZone"] for lk in v.lookups("aws:ec2/getSubnet:getSubnet")}
    asked = [lk for lk in v.lookups("aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings")
             if any(GRAVITON_TYPE in f["values"] for f in lk.args.get("filters") or [])]
    assert asked and all(z in asked[0].result["locations"] for z in zones), (zones, [a.result for a in asked])


def _partition(v: View) -> str:
    region = v.run.outputs["region"]
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def _resources(policy: str) -> list[tuple[str, str]]:
    """(Sid, resource) of every statement of a policy document."""
    out = []
    for s in json.loads(policy)["Statement"]:
        res = s["Resource"]
        out += [(s.get("Sid", ""), r) for r in ([res] if isinstance(res, str) else res)]
    return out


def _manifest_path_grant(v: View) -> None:
    grants = [r for p in v.role_policies("controlplane").values() for _, r in _resources(p)
              if r.endswith(f"parameter/rke-aws/{STACK}/manifests")]
    assert grants and all(r.startswith(f"arn:{_partition(v)}:ssm:") for r in grants), grants


def _bucket_arns(v: View) -> None:
    arns = [r for kind in ("controlplane", "worker", "etcd") for n, p in v.role_policies(kind).items()
            if n == "etcd-snapshots" for _, r in _resources(p)]
    assert arns and all(a.startswith(f"arn:{_partition(v)}:s3:::") for a in arns), arns


def _ebs_policy_partition(v: View) -> None:
    region, want = v.run.outputs["region"], _partition(v)
    (policy,) = v.run.of_type("aws:iam/policy:Policy")
    arns = re.findall(r"arn:([a-z-]+):", policy.inputs["policy"])
    assert arns and set(arns) == {want}, set(arns)
    assert v.ebs_values()["controller"]["region"] == region


def _nlb_in_byo_subnets(v: View) -> None:
    (lb,) = v.run.of_type("aws:lb/loadBalancer:LoadBalancer")
    assert sorted(lb.inputs["subnets"]) == sorted(v.spec["network"]["privateSubnetIds"]), lb.inputs["subnets"]


def _zone_in_byo_vpc(v: View) -> None:
    (zone,) = v.run.of_type("aws:route53/zone:Zone")
    assert [x["vpcId"] for x in zone.inputs["vpcs"]] == [v.spec["network"]["vpcId"]], zone.inputs["vpcs"]


def _byo_in_partition(v: View) -> None:
    region = v.run.outputs["region"]
    found = v.lookups("aws:ec2/getSubnet:getSubnet")
    assert found and all(lk.result["availabilityZone"].startswith(region) for lk in found)
    for tag in v.run.of_type("aws:ec2/tag:Tag"):
        if tag.inputs["key"].startswith("kubernetes.io/cluster/"):
            assert tag.inputs["value"] == "shared", tag.inputs


def _arm64_image_of_partition(v: View) -> None:
    region = v.run.outputs["region"]
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    allowed = _image_owners(v, partition)
    arm = [lk for lk in v.lookups("aws:ec2/getAmi:getAmi") if _is_arm64(lk)]
    assert arm and all(lk.args["owners"] in allowed and lk.result.get("ownerId") in lk.args["owners"] for lk in arm), arm


def _rancher_arm64_warned(v: View) -> None:
    assert any("arm64" in w and "rancher" in w.lower() for w in v.warnings()), v.warnings()


def _cis_ingress(v: View) -> None:
    assert "kube-system" in v.psa_exempt  # RKE2's packaged Traefik installs into kube-system


# -- the pairs --

ALL = tuple(f.name for f in FEATURES)
INDEPENDENT = "no key, resource or node setting of one touches the other"

# RKE2 is the base distribution: every feature is judged on it by its own checks.
for _f in ("aws", "aws-us-gov", "aws-cn", "cis", "proxy", "rancher-rke-aws", "rancher-rancher", "split", "spot",
           "graviton", "helm", "manifest", "snapshots", "ebs-csi", "nlb", "dns", "byo-vpc"):
    rule("rke2", _f, Works("on RKE2 (the base distribution)", FEATURE[_f].source))
rule("rke2", "ingress", Works("ingress-controller in the servers' config.yaml", FEATURE["ingress"].source))
rule("rke2", "rke1", Alternatives("distribution"))

# RKE1
rule("rke1", "cis", Refused("hardening", "RKE2's CIS profile; RKE1 is hardened by hand in cluster.yml",
                            "rke2-docs security/hardening_guide (profile: cis is an RKE2 option); config.py"))
rule("rke1", "manifest", Refused("ccm.install", "manifest mode needs RKE2's manifests directory",
                                 "domain.md §3 (files in /var/lib/rancher/rke2/server/manifests are applied at start)"))
rule("rke1", "rancher-rancher", Refused(
    "rancher.upgrades", "Rancher manages the version of imported RKE2 and K3s clusters only",
    "rancher/rancher pkg/controllers/management/k3sbasedupgrade (RKE2/K3s only); Rancher docs, Registering "
    "Existing Clusters: version management for imported RKE2/K3s"))
rule("rke1", "graviton", Refused(
    "nodePools[agents].instanceType", "Rancher calls RKE1 on arm64 experimental, not for production",
    "Rancher manager docs, \"Running on ARM64 Mixed Architecture (Experimental)\"; rancher/rke cluster/plan.go "
    "(ETCD_UNSUPPORTED_ARCH for aarch64)"))
rule("rke1", "rancher-rke-aws", Works(
    "registered through the kubeconfig; no upgrade controller (rke up upgrades RKE1)",
    "terraform-provider-rancher2 rancher2_cluster (imported, any distribution); rancher/rke (no SUC)",
    (_registration_via_kubeconfig, _rke1_no_upgrade_controller)))
rule("rke1", "proxy", Works("Docker's unit takes the proxy (drop-in); no RKE2 environment file",
                            "docs.docker.com/engine/daemon/proxy (systemd drop-in)", (_rke1_docker_proxy,)))
rule("rke1", "split", Works(
    "etcd-only and controlplane-only nodes in cluster.yml; the CCM selects and tolerates RKE1's controlplane taint",
    "domain.md §3 (RKE1 labels and taints: controlplane NoSchedule, etcd NoExecute)", (_rke1_ccm_tolerates_controlplane,)))
rule("rke1", "spot", Works("spot workers join rke up by their private address, which survives stop and start",
                           "EC2 User Guide, \"Stop and start\" (the private IPv4 address stays); issue 32 item 6 "
                           "covers public spot workers", (_rke1_spot_private,)))
rule("rke1", "helm", Works("the CCM release selects RKE1's controlplane label",
                           "domain.md §4 (RKE1 nodes never carry control-plane=\"\")", (_rke1_ccm_tolerates_controlplane,)))
rule("rke1", "snapshots", Works("cluster.yml's backup_config writes to the bucket with the etcd nodes' role",
                                "rancher/rke services/etcd.go (s3backupconfig without keys: instance role)",
                                (_rke1_snapshots_role,)))
rule("rke1", "ebs-csi", Works("the driver's controller selects and tolerates RKE1's control plane",
                              "domain.md §3 (RKE1 labels, taints)", (_rke1_ebs_controller,)))
rule("rke1", "nlb", Works("the NLB serves 6443 only (no supervisor port); the API certificate names the endpoint",
                          "rancher/rke authentication.sans; domain.md §3", (_rke1_sans,)))
rule("rke1", "dns", Works("the API certificate names the endpoint", "rancher/rke authentication.sans", (_rke1_sans,)))
independent("rke1", ("byo-vpc", "aws", "aws-us-gov", "aws-cn"), INDEPENDENT, "domain.md §1, §6")
rule("rke1", "ingress", Refused("ingress.controller", "traefik is not an RKE1 ingress provider (RKE deploys ingress-nginx or none)",
                                "rancher/rke cluster/addons.go deployIngress (cluster.yml ingress.provider nginx or none)"))

# Partitions
rule("aws", "aws-us-gov", Alternatives("aws:region"))
rule("aws", "aws-cn", Alternatives("aws:region"))
rule("aws-us-gov", "aws-cn", Alternatives("aws:region"))
for _p in PARTITIONS:
    independent(_p, ("cis", "proxy", "rancher-rke-aws", "rancher-rancher", "split", "spot", "helm", "nlb", "dns"),
                INDEPENDENT + " (ARNs, endpoints and images follow the region)", "domain.md §6 Partitions")
    rule(_p, "graviton", Works("the arm64 image is looked up under Canonical's account of the partition",
                               "Canonical, \"Find Ubuntu images on AWS\" (owner per partition)",
                               (_arm64_image_of_partition,), account=_p != "aws"))
    rule(_p, "manifest", Works("the servers' grant on the manifests path is an ARN of the partition",
                               "AWS IAM, ARNs carry the partition (domain.md §6); ssm:GetParametersByPath on the path ARN",
                               (_manifest_path_grant,)))
    rule(_p, "snapshots", Works("etcd-s3-endpoint is the partition's S3 host; the bucket grant is an ARN of the partition",
                                "k3s pkg/etcd/s3/s3.go (endpoint default s3.amazonaws.com); domain.md §6",
                                (_bucket_arns,)))
    rule(_p, "ebs-csi", Works("the driver's IAM policy names ARNs of the partition and the controller its region",
                              "kubernetes-sigs/aws-ebs-csi-driver docs/example-iam-policy.json; domain.md §6",
                              (_ebs_policy_partition,)))
    rule(_p, "byo-vpc", Works("the subnets are looked up in the partition's region and tagged shared",
                              "domain.md §1 (shared), §6", (_byo_in_partition,), account=_p != "aws"))
    rule(_p, "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# CIS
independent("cis", ("proxy", "spot", "graviton", "snapshots", "nlb", "dns", "byo-vpc"), INDEPENDENT,
            "rke2-docs security/hardening_guide (profile, sysctls, PSA: per node, whatever else is set)")
for _r in ("rancher-rke-aws", "rancher-rancher"):
    rule("cis", _r, Works("Rancher's namespaces are exempt from restricted Pod Security",
                          "Rancher docs \"PSA restricted exemptions\"; rancher/rancher#47255, #39148, #42039; "
                          "rancher/fleet#2887", (_rancher_psa,)))
rule("cis", "split", Works("every server gets the profile and the etcd user; the PSA file where the apiserver runs",
                           "rke2-docs security/hardening_guide (etcd user); install/server_roles.md", (_cis_split,)))
rule("cis", "helm", Works("every namespace the program installs into is exempt (kube-system, system-upgrade)",
                          "rancher/rke2 pkg/rke2/psa.go; system-upgrade-controller manifest (privileged upgrade jobs)",
                          (_helm_namespaces_exempt,)))
rule("cis", "manifest", Works("helm-controller's install jobs (hostNetwork when bootstrap) run in exempt namespaces",
                              "k3s-io/helm-controller pkg/controllers/chart/chart.go (job in the chart's namespace, "
                              "HostNetwork for bootstrap)", (_helm_namespaces_exempt,)))
rule("cis", "ebs-csi", Works("the driver runs in kube-system, which RKE2's restricted configuration exempts",
                             "rancher/rke2 pkg/rke2/psa.go (kube-system exempt); aws-ebs-csi-driver node plugin is "
                             "privileged", (_ebs_namespace_exempt,)))
rule("cis", "ingress", Works("the ingress controller's namespace is exempt", "rancher/rke2 pkg/rke2/psa.go",
                             (_cis_ingress,)))

# proxy
independent("proxy", ("spot", "graviton"), INDEPENDENT + " (every node gets the proxy environment)",
            "rke2-docs advanced.md \"Configuring an HTTP proxy\"")
for _r in ("rancher-rke-aws", "rancher-rancher"):
    rule("proxy", _r, Works("the Rancher agent gets HTTP(S)_PROXY/NO_PROXY (agent_env_vars)",
                            "terraform-provider-rancher2 rancher2_cluster agent_env_vars; Rancher docs \"Using Fleet "
                            "behind a proxy\"", (_agent_env_vars,)))
rule("proxy", "split", Works("NO_PROXY names the endpoint; etcd-only servers get the environment too",
                             "Go net/http ProxyFromEnvironment (NO_PROXY matches the host name)", (_no_proxy_has_endpoint,)))
rule("proxy", "helm", Works("the CCM pods get the proxy with IMDS bypassed", "aws-sdk-go-v2 aws/transport/http/client.go "
                            "(ProxyFromEnvironment); CCM chart values env", (_proxy_in_ccm,)))
rule("proxy", "manifest", Works("helm-controller passes the servers' proxy to its jobs; the sync downloads through it",
                                "k3s-io/helm-controller pkg/controllers/chart/chart.go setProxyEnv",
                                (_proxy_in_helm_controller, _proxy_in_ccm)))
rule("proxy", "snapshots", Works("the S3 client uses the proxy from the environment and IMDS credentials bypass it",
                                 "k3s pkg/etcd/s3/s3.go (default transport unless etcd-s3-proxy; credentials.NewIAM)",
                                 (_proxy_and_snapshots,), requires=("rke2",)))
rule("proxy", "ebs-csi", Works("the driver gets the https proxy and NO_PROXY with IMDS",
                               "aws-ebs-csi-driver chart _helpers.tpl aws-ebs-csi-driver.http-proxy", (_proxy_in_ebs,)))
rule("proxy", "nlb", Works("NO_PROXY names the endpoint", "Go net/http ProxyFromEnvironment; curl --noproxy",
                           (_no_proxy_has_endpoint,)))
rule("proxy", "dns", Works("NO_PROXY names the endpoint", "Go net/http ProxyFromEnvironment; curl --noproxy",
                           (_no_proxy_has_endpoint,)))
rule("proxy", "byo-vpc", Works("NO_PROXY holds the brought VPC's CIDR blocks, as looked up",
                               "EC2 DescribeVpcs (CidrBlockAssociationSet)", (_byo_cidr_in_no_proxy,)))
rule("proxy", "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# Rancher
rule("rancher-rke-aws", "rancher-rancher", Alternatives("rancher.upgrades"))
for _r in ("rancher-rke-aws", "rancher-rancher"):
    independent(_r, ("spot", "snapshots", "ebs-csi", "nlb", "dns", "byo-vpc"),
                INDEPENDENT + " (Rancher's agent dials out to Rancher)",
                "Rancher docs, Registering Existing Clusters (the agent connects to Rancher)")
    rule(_r, "graviton", Works(
        "Rancher calls imported clusters with arm64 nodes experimental: the plan says so",
        "Rancher manager docs, \"Running on ARM64 Mixed Architecture (Experimental)\" (importing clusters that "
        "contain ARM64 nodes; not for production)", (_rancher_arm64_warned,)))
    rule(_r, "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))
rule("rancher-rke-aws", "split", Works("this program's Plans upgrade etcd-only servers with their own Plan",
                                       "k3s pkg/server/server.go (etcd-only servers lack the control-plane label); "
                                       "system-upgrade-controller Plan nodeSelector", (_program_etcd_plan,),
                                       requires=("rke2",)))
rule("rancher-rancher", "split", Refused(
    "rancher.upgrades", "Rancher's worker Plan would take etcd-only servers at the worker concurrency",
    "rancher/rancher pkg/controllers/management/k3sbasedupgrade (worker Plan: nodes without the control-plane label)",
    or_safe=_rancher_worker_concurrency_one))
rule("rancher-rke-aws", "helm", Works("the registration manifest is applied through the kubeconfig",
                                      "terraform-provider-rancher2 cluster_registration_token.manifest_url",
                                      (_registration_via_kubeconfig,)))
rule("rancher-rancher", "helm", Works("the registration manifest through the kubeconfig; only the Plan CRD of the program's",
                                      "rancher/rancher importedclusterversionmanagement (Rancher's SUC and Plans)",
                                      (_registration_via_kubeconfig, _no_program_upgrades)))
rule("rancher-rke-aws", "manifest", Works("the registration manifest is delivered to the servers (SecureString)",
                                          "terraform-provider-rancher2 manifest_url; domain.md §3 manifests directory",
                                          (_registration_via_manifests,)))
rule("rancher-rancher", "manifest", Works("the registration manifest delivered; only the Plan CRD of the upgrade files",
                                          "rancher/rancher importedclusterversionmanagement",
                                          (_registration_via_manifests, _no_program_upgrades)))

# split roles
independent("split", ("graviton", "byo-vpc"), INDEPENDENT, "rke2-docs install/server_roles.md")
rule("split", "spot", Works("spot only for agents: the etcd-only and control-plane-only pools stay on-demand",
                            "EC2 User Guide (spot capacity taken back at two minutes' notice); etcd quorum",
                            (_spot_only_agents,)))
rule("split", "helm", Works("the CCM lands only where the control plane runs", "k3s pkg/server/server.go (control-plane "
                            "label only with the apiserver); domain.md §4", (_split_placement,)))
rule("split", "manifest", Works("control-plane servers mirror the manifests (helm-controller's bootstrap jobs run there)",
                                "k3s-io/helm-controller chart.go (bootstrap: nodeSelector control-plane=true)",
                                (_split_manifest_sync, _split_placement)))
rule("split", "snapshots", Works("etcd-only servers take the snapshots with their own role; nobody else may read them",
                                 "rke2-docs install/server_roles.md; k3s pkg/etcd (snapshots on etcd members)",
                                 (_snapshot_grants,), requires=("rke2",)))
rule("split", "ebs-csi", Works("the driver's controller lands where the control plane runs",
                               "k3s pkg/server/server.go (labels)", (_split_ebs,)))
rule("split", "nlb", Works("the API target group holds control-plane servers; joins go to etcd servers' supervisors",
                           "rke2-docs install/server_roles.md", (_split_targets,)))
rule("split", "dns", Refused("controlPlane.endpoint", "RKE2: one name cannot send 6443 and 9345 to different servers",
                             "rke2-docs install/server_roles.md; config.py"))
rule("split", "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# spot
independent("spot", ("graviton", "helm", "manifest", "snapshots", "ebs-csi", "dns", "byo-vpc"),
            INDEPENDENT + " (spot pools are worker-only)", "EC2 User Guide, Spot Instance requests")
rule("spot", "nlb", Works("spot workers are never endpoint targets", "EC2 User Guide (interruptions); domain.md §6 "
                          "RKE2 HA", (_spot_not_targets,)))
rule("spot", "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# Graviton
independent("graviton", ("helm", "manifest", "snapshots", "nlb", "dns"), INDEPENDENT,
            "registry.k8s.io provider-aws/cloud-controller-manager (multi-arch); EC2 instance types")
rule("graviton", "ebs-csi", Works("the node plugin runs on arm64 nodes: not pinned to amd64, multi-arch images",
                                  "kubernetes-sigs/aws-ebs-csi-driver (images for linux/amd64 and linux/arm64)",
                                  (_ebs_multi_arch,)))
rule("graviton", "byo-vpc", Works("the Graviton type is looked up as offered in the brought subnets' zones",
                                  "EC2 DescribeInstanceTypeOfferings", (_offered_in_byo_zone,), account=True))
rule("graviton", "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# CCM install modes
rule("helm", "manifest", Alternatives("ccm.install"))
independent("helm", ("snapshots", "nlb", "dns", "byo-vpc"), INDEPENDENT, "domain.md §4")
rule("helm", "ebs-csi", Works("a Helm release after its credentials Secret", "aws-ebs-csi-driver chart awsAccessSecret "
                             "(the controller reads the Secret when it starts)", (_ebs_secret_first,)))
independent("manifest", ("snapshots", "nlb", "dns", "byo-vpc"), INDEPENDENT, "domain.md §3")
rule("manifest", "ebs-csi", Works("a HelmChart with its credentials as a SecureString manifest",
                                  "aws-ebs-csi-driver chart awsAccessSecret; domain.md §3", (_ebs_secret_manifest,)))
for _m in ("helm", "manifest"):
    rule(_m, "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# snapshots, EBS CSI, endpoints, own VPC
independent("snapshots", ("ebs-csi", "nlb", "dns", "byo-vpc"), INDEPENDENT, "k3s pkg/etcd/s3")
independent("ebs-csi", ("nlb", "dns", "byo-vpc"), INDEPENDENT, "aws-ebs-csi-driver")
rule("nlb", "dns", Alternatives("controlPlane.endpoint"))
rule("nlb", "byo-vpc", Works("the NLB sits in the brought private subnets", "AWS ELB CreateLoadBalancer (Subnets)",
                             (_nlb_in_byo_subnets,), account=True))
rule("dns", "byo-vpc", Works("the private zone is associated with the brought VPC",
                             "Route 53 private hosted zones (VPC association)", (_zone_in_byo_vpc,)))
for _x in ("snapshots", "ebs-csi", "nlb", "dns", "byo-vpc"):
    rule(_x, "ingress", Works(INDEPENDENT, FEATURE["ingress"].source))

# air-gap with a private registry (issue 35)
AIRGAP_SRC = "rke2-docs install/airgap.md; settings/rules/registry.py"
rule("airgap", "rke2", Works("on RKE2 (the base distribution)", AIRGAP_SRC))
rule("airgap", "rke1", Refused("airgap", "RKE1 nodes install Docker online and rke up runs from outside",
                               "rancher/rke (no offline install path here); settings/rules/registry.py"))
rule("airgap", "proxy", Refused("proxy", "a proxy is a way out of the VPC, which an air-gapped cluster has none of",
                                "rke2-docs install/airgap.md (no internet); settings/rules/registry.py (refused, not defined)"))
rule("airgap", "byo-vpc", Refused("network.publicSubnetIds", "an air-gapped cluster uses no public subnet",
                                  "settings/rules/registry.py; a brought air-gapped VPC gives privateSubnetIds only "
                                  "(tests/program/test_airgap.py)"))
rule("airgap", "aws", Works("endpoints com.amazonaws.<region>.*", "terraform-provider-aws vpc_endpoint docs",
                            (_endpoint_names("com.amazonaws", "us-west-2"),), account=True))
rule("airgap", "aws-us-gov", Works("endpoints com.amazonaws.us-gov-west-1.*", "AWS GovCloud VPC endpoints",
                                   (_endpoint_names("com.amazonaws", "us-gov-west-1"),), account=True))
rule("airgap", "aws-cn", Works("China's interface endpoints for ec2 take cn.com.amazonaws; the S3 gateway keeps com.amazonaws",
                               "aws/aws-cdk aws-ec2/lib/vpc-endpoint.ts (VPC_ENDPOINT_SERVICE_EXCEPTIONS)",
                               (_endpoint_names("cn.com.amazonaws", "cn-north-1"),), account=True))
rule("airgap", "graviton", Works("arm64 nodes install the arm64 assets (install.sh: aarch64 -> arm64)",
                                 "rancher/rke2 install.sh setup_arch", (_airgap_arm64,), account=True))
rule("airgap", "snapshots", Works("snapshots reach S3 through the gateway endpoint on the private route tables",
                                  "Amazon VPC, Gateway endpoints for Amazon S3", (_airgap_s3_gateway,), account=True))
rule("airgap", "helm", Works("the charts come from registry.charts", "pulumi-kubernetes helm.sh/v3 Release (chart: oci://)",
                             (_airgap_charts_helm,), account=True))
rule("airgap", "manifest", Works("HelmCharts name registry.charts; SUC's manifests come from the bucket",
                                 "k3s-io/helm-controller types.go (chart: oci://, repoCA)", (_airgap_charts_manifest,),
                                 account=True))
for _r in ("rancher-rke-aws", "rancher-rancher"):
    rule("airgap", _r, Works("the agent image docker.io/rancher/rancher-agent comes through the docker.io mirror",
                             "rke2-docs install/private_registry.md (mirrors; images keep their names)",
                             (_airgap_agent_image,), account=True))
for _x in ("cis", "split", "spot", "ebs-csi", "nlb", "dns", "ingress"):
    rule("airgap", _x, Works(INDEPENDENT + " (images through the mirrors, AWS APIs through the endpoints)", AIRGAP_SRC,
                             account=True))

# a private registry, online (issue 35)
REGISTRY_SRC = "rke2-docs install/private_registry.md (mirrors per registry; images keep their names)"
rule("registry", "airgap", Alternatives("registry", why="air-gap brings its own registry section"))
rule("registry", "rke1", Works("cluster.yml private_registries; the CCM image named through the mirror",
                               "rancher/rke types/rke_types.go, cluster/defaults.go (is_default prefixes system images)"))
for _x in ("rke2", "aws", "aws-us-gov", "aws-cn", "cis", "proxy", "rancher-rke-aws", "rancher-rancher", "split", "spot",
           "graviton", "helm", "manifest", "snapshots", "ebs-csi", "nlb", "dns", "byo-vpc", "ingress"):
    rule("registry", _x, Works(INDEPENDENT + " (every node reads the mirrors; the password from SSM)", REGISTRY_SRC))


def _airgap_sts(v: View) -> None:
    """IRSA pods exchange their token at STS's regional endpoint (the webhook's stsRegionalEndpoint): in an
    air-gapped VPC that is an interface endpoint (AWS PrivateLink docs, "AWS services that integrate": sts)."""
    names = {r.inputs["serviceName"] for r in v.run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert any(n.endswith(".sts") for n in names), names


# issues 35 and 36 together: the registry, the air-gap, the OSes, FIPS and workload identity
for _x in ("rhel-9", "al2023", "sle-micro", "fips", "identity"):
    rule("registry", _x, Works(INDEPENDENT + " (registries.yaml is the same on every OS; the password from SSM)",
                               REGISTRY_SRC))
rule("airgap", "rhel-9", Works("rke2-selinux and container-selinux come from the bucket (rpms/el9/)",
                               "rke2-docs install/airgap.md; rancher/rke2-selinux release assets"))
rule("airgap", "al2023", Works("rke2-selinux (el8 build) comes from the bucket (rpms/el8/)",
                               "rke2-docs install/airgap.md; rancher/rke2-selinux release assets"))
rule("airgap", "sle-micro", Works("rke2-selinux and Rancher's key come from the bucket (rpms/slemicro/), installed "
                                  "in a transactional-update snapshot", "rke2-docs install/methods.md; rancher/rke2-selinux"))
rule("airgap", "fips", Works("fips-mode-setup is local to the node; RKE2's build is the one in the bucket",
                             "rke2-docs security/fips_support.md; Red Hat \"Security hardening\" (RHEL 9)"))
def _airgap_identity_chart(v: View) -> None:
    """The pod identity webhook's chart comes from registry.charts, as the CCM's does: in manifest mode RKE2's
    helm-controller fetches it inside the cluster (k3s-io/helm-controller: repo, or an oci:// chart)."""
    from rke_aws_offline.engine import harness

    refs = [r.inputs["chart"] for r in v.run.of_type("kubernetes:helm.sh/v3:Release")
            if "pod-identity-webhook" in r.inputs["chart"]]
    for name, text in v.manifests.items():
        if name.startswith("pod-identity-webhook") and not name.endswith("-tls.yaml"):
            for doc in yaml.safe_load_all(harness.unwrap_secrets(text) or ""):
                if isinstance(doc, dict) and doc.get("kind") == "HelmChart":
                    refs.append(doc["spec"]["chart"])
    assert refs and all(r.startswith(AIRGAP_CHARTS + "/") for r in refs), refs


rule("airgap", "identity", Works("the pods' token exchange goes to the VPC's sts interface endpoint; the webhook's "
                                 "chart and image come through registry.charts and the mirror",
                                 "components/aws/vpc_endpoints.py SERVICE_ENDPOINTS sts; " + IDENTITY_SOURCE,
                                 (_airgap_sts, _airgap_identity_chart)))


# Operating systems and FIPS (issue 35). Each OS pool's image, boot steps and login user are judged by its own
# check (_os_own); the facts per OS and partition are components/settings/os_images.py's, each sourced there.
OS_FEATURES = ("rhel-9", "al2023", "sle-micro", "fips")
_OS_SOURCE = "components/settings/os_images.py (vendors' owners per partition; RKE2's OS notes)"
_PLAIN = ("cis", "proxy", "rancher-rke-aws", "rancher-rancher", "split", "spot", "helm", "manifest", "snapshots",
          "ebs-csi", "nlb", "dns", "byo-vpc", "ingress")
for _o in OS_FEATURES:
    rule("rke2", _o, Works("on RKE2 (the base distribution)", FEATURE[_o].source))
    independent(_o, _PLAIN, INDEPENDENT + " (the OS steps run before RKE2 on each node of the pool)", _OS_SOURCE)


def _rke1_rhel_step(v: View) -> None:
    """RKE1's RHEL nodes get their OS step before Docker CE: the SSM agent the image lacks, firewalld and
    nm-cloud-setup off (rke1-docs docs/os/os.md; components/node/scripts.py rke1_node_steps)."""
    for inst in v.pool_instances(lambda p: p.get("os") == "rhel-9"):
        script = v.boot_script(inst)
        assert "OS_NAME='Red Hat Enterprise Linux 9'" in script and "amazon-ssm-agent.rpm'" in script, inst.urn
        assert "FIREWALLD='yes'" in script and "NM_CLOUD_SETUP='yes'" in script, inst.urn
        assert "DOCKER_INSTALL_URL='https://releases.rancher.com/install-docker/" in script, inst.urn


rule("rhel-9", "rke1", Works("RKE1 on RHEL 9 (Docker CE from install-docker, the OS step first); cluster.yml logs "
                             "in as ec2-user",
                             "rancher/rancher#48550 (RKE1 on RHEL/Rocky 9.5 validated); rke1-docs docs/os/os.md; "
                             "rancher/install-docker dist/27.5.1.sh (rhel|rocky branch)", (_rke1_rhel_step,)))
rule("al2023", "rke1", Refused("nodePools[agents].os", "RKE1 on Amazon Linux is not validated",
                               "rancher/rancher#31645 (open)"))
rule("sle-micro", "rke1", Refused(f"nodePools[{MICRO_POOL}].os", "SLE Micro ships no Docker for RKE1",
                                  "research sheet §6 (no RKE1 source for SLE Micro)"))
rule("fips", "rke1", Refused("fips", "RKE1 has no FIPS build", "rke2-docs security/fips_support.md (RKE2's build)"))
for _p in PARTITIONS:
    for _o in ("rhel-9", "al2023", "fips"):  # Red Hat and Amazon publish in every partition
        rule(_p, _o, Works("the image is looked up under the vendor's account of the partition", _OS_SOURCE,
                           account=_p != "aws"))
rule("aws", "sle-micro", Works("SUSE's BYOS image in the commercial partition", _OS_SOURCE))
for _p in ("aws-us-gov", "aws-cn"):
    rule(_p, "sle-micro", Refused(f"nodePools[{MICRO_POOL}].os", "SUSE publishes no SLE Micro image there",
                                  "research sheet §5 (no SUSE GovCloud or China publisher found)"))
rule("graviton", "rhel-9", Works(INDEPENDENT + " (RHEL on the x86 servers, Graviton workers)", _OS_SOURCE))
rule("graviton", "al2023", Works("the arm64 AL2023 image under Amazon's account", _OS_SOURCE))
rule("graviton", "sle-micro", Works(INDEPENDENT + " (the SLE Micro pool keeps its x86 type)", _OS_SOURCE))
rule("graviton", "fips", Refused("nodePools[agents].os", "RKE2's FIPS claim covers linux/amd64 only",
                                 "rke2-docs security/about_hardened_images.md"))
rule("rhel-9", "al2023", Works("RHEL servers and AL2023 workers in one cluster", _OS_SOURCE))
rule("rhel-9", "sle-micro", Works("RHEL servers and a SLE Micro pool in one cluster", _OS_SOURCE))
rule("al2023", "sle-micro", Works("AL2023 workers and a SLE Micro pool in one cluster", _OS_SOURCE))
rule("rhel-9", "fips", Works("RHEL switches to FIPS mode at first boot", "Red Hat \"Security hardening\" (RHEL 9)"))
rule("al2023", "fips", Works("AL2023 switches to FIPS mode at first boot", "AWS \"Enable FIPS Mode on AL2023\""))
rule("sle-micro", "fips", Refused(f"nodePools[{MICRO_POOL}].os", "SLE Micro is not switched to FIPS mode here",
                                  "SUSE crypto-policies-FIPS.patch (fips-mode-setup refuses on read-only systems)"))
# workload identity (issue 36)
rule("rke2", "identity", Works("the API servers sign with the cluster's key under its S3 issuer", IDENTITY_SOURCE))
rule("rke1", "identity", Works("a new RKE1 cluster: the issuer's flags in cluster.yml's kube-api, the key files from "
                               "SSM at the controlplane nodes' first boot (a running one is refused: `rke up` writes no "
                               "host files)", "rancher/rke cluster/plan.go BuildKubeAPIProcess (extra_args, "
                               "extra_args_array, extra_binds); " + IDENTITY_SOURCE))
rule("aws", "identity", Works("the issuer on S3 in the region, the provider an ARN of aws", IDENTITY_SOURCE,
                              (_identity_partition("aws", "us-west-2"),)))
rule("aws-us-gov", "identity", Works("the issuer on GovCloud's S3, the provider an ARN of aws-us-gov",
                                     "openshift/rosa PR #2889 (S3 OIDC configs in GovCloud); " + IDENTITY_SOURCE,
                                     (_identity_partition("aws-us-gov", "us-gov-west-1"),)))
rule("aws-cn", "identity", Refused("identity.issuerUrl", "S3 in China refuses anonymous reads without an ICP recordal",
                                   "hashicorp/terraform-provider-aws#15420; plan/identity_issuer.py S3_ISSUER_REFUSED"))
rule("cis", "identity", Works("the webhook runs in kube-system, which the restricted profile exempts",
                              "rancher/rke2 pkg/rke2/psa.go", (_identity_cis,)))
rule("split", "identity", Works("issuer flags and key files only where kube-apiserver runs; etcd-only servers may not "
                                "read the key", "rke2-docs install/server_roles.md; " + IDENTITY_SOURCE, (_identity_split,)))
rule("ebs-csi", "identity", Works("the controller on its role: no IAM user, no access key, awsAccessSecret null",
                                  "aws-ebs-csi-driver chart templates/controller.yaml; plan/identity_ebs_csi.py",
                                  (_identity_ebs,)))
rule("helm", "identity", Works("the webhook a Helm release with its TLS Secret",
                               "jkroepke/helm-charts amazon-eks-pod-identity-webhook (pki.existingSecret)"))
rule("manifest", "identity", Works("the webhook a HelmChart its servers mirror (SecureString: its CA is generated)",
                                   "domain.md §3; jkroepke/helm-charts amazon-eks-pod-identity-webhook"))
independent("identity", ("proxy", "rancher-rke-aws", "rancher-rancher", "spot", "graviton", "snapshots", "nlb", "dns",
                         "byo-vpc", "ingress"), INDEPENDENT, IDENTITY_SOURCE)
# identity with the operating systems (issues 35 and 36 together): identity.sh runs on the API servers after the
# OS's own steps, whatever the OS; the key is RSA 2048, which FIPS 186-4 allows for signatures.
independent("identity", ("rhel-9", "al2023", "sle-micro"),
            INDEPENDENT + " (identity.sh runs on the API servers after the OS's steps)", IDENTITY_SOURCE + "; " + _OS_SOURCE)
rule("identity", "fips", Works("RSA 2048 signing keys are FIPS 186-4 key sizes; the webhook and controller images are not "
                               "FIPS builds (the fips warning: only RKE2's own components are validated)",
                               "NIST FIPS 186-4 §5.1 (RSA >= 2048); rke2-docs security/fips_support.md"))


# ---- triples: only where a known interaction takes three features ---------------------------------

@dataclass(frozen=True)
class Triple:
    features: tuple[str, str, str]
    why: str
    source: str
    check: Check
    finding: str | None = None  # broken on today's code outside issue 32 items 1-10 (xfail until fixed)


def _rke1_etcd_only_snapshot_warning(v: View) -> None:
    assert any("etcdBackup" in w and "worker/etcd role" in w for w in v.warnings()), v.warnings()


def _registration_through_proxy(v: View) -> None:
    from rke_aws.node import cloud_init

    rancher_host = RANCHER_URL.split("://")[1]
    assert not any(rancher_host.endswith(e.lstrip(".")) for e in v.no_proxy() if e.startswith(".") or e == rancher_host)
    for inst in v.instances:
        if v.is_server(inst):
            assert f"export https_proxy='{PROXY_URL}'" in v.files(inst)[cloud_init.SYNC_PATH], inst.urn


def _rke1_snapshots_through_proxy(v: View) -> None:
    # RKE's rolling snapshot container takes only services.etcd.extra_env (Docker's own proxy drop-in
    # covers image pulls, not containers' environments).
    env = dict(e.split("=", 1) for e in v.cluster_yml()["services"]["etcd"].get("extra_env") or [])
    assert env.get("HTTPS_PROXY") == PROXY_URL and IMDS in env.get("NO_PROXY", "").split(","), env


TRIPLES: tuple[Triple, ...] = (
    Triple(("rke1", "split", "snapshots"),
           "RKE1 etcd-only nodes use the worker/etcd role, so the snapshot grant reaches every worker: the plan warns",
           "config.py (RKE1 etcd nodes take the snapshots); rancher/rke services/etcd.go", _rke1_etcd_only_snapshot_warning),
    Triple(("rke1", "proxy", "snapshots"),
           "RKE1's snapshot container uploads to S3 through the proxy (services.etcd.extra_env)",
           "rancher/rke services/etcd.go RunEtcdSnapshotSave (Env: services.etcd.extra_env only); "
           "docs.docker.com/engine/daemon/proxy (the daemon's proxy is for pulls, not containers)",
           _rke1_snapshots_through_proxy),
    Triple(("proxy", "rancher-rke-aws", "manifest"),
           "the servers download the registration manifest from Rancher through the proxy",
           "components/node/scripts/sync.sh (curl reads https_proxy); terraform-provider-rancher2 manifest_url",
           _registration_through_proxy),
)


# ---- building and planning configurations -----------------------------------------------------------

def order(features: Iterable[str]) -> tuple[str, ...]:
    """Features in table order (the order their functions apply in)."""
    chosen = set(features)
    return tuple(f.name for f in FEATURES if f.name in chosen)


def build_spec(features: Iterable[str]) -> dict[str, Any]:
    spec = copy.deepcopy(BASE)
    for name in order(features):
        FEATURE[name].apply(spec)
    return spec


def flat(spec: dict[str, Any]) -> dict[str, str]:
    """The flat map the Pulumi CLI hands the program; `kubeconfig` and `rancher` as `--secret` values."""
    out: dict[str, str] = {"aws:region": spec["region"]}
    for key, value in spec.items():
        if key == "region":
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        out[f"rke-aws:{key}"] = stackfile.secret(text) if key in SECRET_KEYS else text
    return out


def written_keys(name: str) -> dict[str, Any]:
    """Leaf key paths a feature writes into the base, with their values."""
    before, after = BASE, build_spec([name])

    def leaves(d: Any, prefix: str = "") -> dict[str, Any]:
        if isinstance(d, dict):
            return {k: v for key, val in d.items() for k, v in leaves(val, f"{prefix}{key}.").items()}
        return {prefix[:-1]: d}

    old, new = leaves(before), leaves(after)
    return {k: v for k, v in new.items() if old.get(k, object()) != v}


def _byo_mocks_subnets(region: str) -> tuple[dict[str, Any], dict[str, dict]]:
    vpc, pub, priv = "vpc-0b0b0b0b0b0b0b0b0", "subnet-0b0b0b0b0b0b0b0b1", "subnet-0b0b0b0b0b0b0b0b2"
    zone = f"{region}a"
    existing = {pub: {"cidr": "10.80.128.0/20", "az": zone, "vpc": vpc, "public": True},
                priv: {"cidr": "10.80.0.0/20", "az": zone, "vpc": vpc}}
    return {"vpcId": vpc, "publicSubnetIds": [pub], "privateSubnetIds": [priv]}, existing


def _byo_account_setup(region: str, ids: dict[str, Any]) -> Callable[[Any], None]:
    """The brought VPC in the emulated account: one zone, a public subnet (internet gateway) and a
    private one (NAT gateway), DNS hostnames on, as the program requires of it."""
    def setup(session) -> None:
        ec2 = session.client("ec2")
        zone = f"{region}a"
        vpc = ec2.create_vpc(CidrBlock=BYO_VPC_CIDR)["Vpc"]["VpcId"]
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
        pub = ec2.create_subnet(VpcId=vpc, CidrBlock="10.80.128.0/20", AvailabilityZone=zone)["Subnet"]["SubnetId"]
        priv = ec2.create_subnet(VpcId=vpc, CidrBlock="10.80.0.0/20", AvailabilityZone=zone)["Subnet"]["SubnetId"]
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
        ids.update(vpcId=vpc, publicSubnetIds=[pub], privateSubnetIds=[priv])
    return setup


@dataclass
class Outcome:
    features: tuple[str, ...]
    emulated: bool
    spec: dict[str, Any]
    run: harness.ProgramRun | None = None
    refusal: str | None = None  # the program's refusal (a RunError's message)
    error: str | None = None  # anything else that stopped the plan (a mock's or the account's refusal)
    registered: int = 0  # resources registered before a refusal
    seconds: float = 0.0
    _view: View | None = field(default=None, repr=False)

    def view(self) -> View:
        """One View per outcome: what its checks decode is decoded once for all its cells."""
        assert self.run is not None, self.refusal or self.error
        if self._view is None:
            self._view = View(self.run, frozenset(self.features), self.spec, self.emulated)
        return self._view

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_view": None}


def _objects(spec: dict[str, Any]) -> dict[str, list[str]]:
    from rke_aws.settings import versions

    return airgap_objects(spec.get("kubernetesVersion") or versions.RKE2_VERSION) if "airgap" in spec else {}


def plan(features: Iterable[str], emulated: bool = False) -> Outcome:
    """The program's first run of the configuration with `features` (no cache: see `planned`)."""
    import pulumi

    names = order(features)
    spec = build_spec(names)
    region = spec["region"]
    byo = "byo-vpc" in names
    started = time.perf_counter()
    out = Outcome(names, emulated, spec)
    try:
        if emulated:
            from rke_aws_offline.engine import emulated_account

            ids: dict[str, Any] = {}
            mocks = emulated_account.MotoMocks(region, setup=_byo_account_setup(region, ids) if byo else None,
                                               objects=_objects(spec))
            mocks.start()
            if byo:
                spec["network"] = dict(ids)
            try:
                out.run, mocks = emulated_account.build(flat(spec), STACK, mocks=mocks)
                mocks.stop()
            except pulumi.RunError as err:
                out.refusal, out.registered = str(err), len(mocks.resources) if hasattr(mocks, "resources") else 0
        else:
            from rke_aws_offline.engine.emulated_account import MotoMocks

            existing = None
            if byo:
                spec["network"], existing = _byo_mocks_subnets(region)
            account = MotoMocks(region, existing_subnets=existing, objects=_objects(spec))
            try:
                out.run = harness.run_program(flat(spec), stack=STACK, mocks=account)
            except pulumi.RunError as err:
                out.refusal, out.registered = str(err), len(account.resources)
    except Exception as err:  # noqa: BLE001 - reported by the cell that needs the plan
        harness.drain_leftover_tasks()
        out.error = f"{type(err).__name__}: {err}"
    out.seconds = time.perf_counter() - started
    if out.run is not None:
        out.run.mocks = None  # not needed by the checks; and the emulated account's cannot be pickled
    return out


_PLANNED: dict[tuple[tuple[str, ...], bool], Outcome] = {}


def planned(features: Iterable[str], emulated: bool = False, shared: Path | None = None) -> Outcome:
    """`plan`, once per test session; `shared`: a directory every xdist worker of the run sees (the
    first worker to need a configuration plans it under a lock, the others read its result)."""
    key = (order(features), emulated)
    if key in _PLANNED:
        return _PLANNED[key]
    if shared is None:
        _PLANNED[key] = plan(*key)
        return _PLANNED[key]
    name = "matrix-" + ("emulated-" if emulated else "") + "+".join(key[0] or ("base",))
    _PLANNED[key] = once_per_run(shared, name, lambda: plan(*key))
    return _PLANNED[key]


# ---- which pairs meet in which configuration -----------------------------------------------------

def pairs_of(features: Iterable[str]) -> set[frozenset[str]]:
    return {frozenset(p) for p in itertools.combinations(sorted(features), 2)}


def combinable(verdict: Verdict | None) -> bool:
    """A pair that works today and after its fix can share a configuration with others."""
    return isinstance(verdict, Works)


def pending_feature(names: Iterable[str]) -> int | None:
    return next((FEATURE[n].pending for n in names if FEATURE[n].pending), None)


@dataclass(frozen=True)
class Combined:
    features: tuple[str, ...]
    emulated: bool


# Seed orders tried by combined_configs (a fixed list: the same configurations every run).
COVER_TRIES = 40


def item(pair: frozenset[str]) -> frozenset[str]:
    """What must meet in one configuration for a pair to be judged: the pair, and what its rule requires."""
    verdict = RULES[pair]
    return pair | frozenset(getattr(verdict, "requires", ()))


def _cover(seeds: list[frozenset[str]], names: list[str], works: set[frozenset[str]],
           account: set[frozenset[str]]) -> list[Combined]:
    uncovered = set(seeds)
    rank = {f: k for k, f in enumerate(names)}
    # Per feature: those it works with, and those it makes an item whose look-ups matter with (a pair alone).
    works_with = {f: {g for g in names if frozenset((f, g)) in works} for f in names}
    account_with = {f: {g for g in names if frozenset((f, g)) in account} for f in names}

    out: list[Combined] = []
    for seed in seeds:
        if seed not in uncovered:
            continue
        emulated = seed in account
        chosen = set(seed)
        while True:
            # A feature f outside `chosen` completes an uncovered item exactly when it is all the item lacks: its
            # gain is the number of such items (one pass over them, not one per candidate: collecting the
            # combination tests paid ~3 s for the latter in every process).
            gain: dict[str, int] = {}
            completes_account: set[str] = set()
            for i in uncovered:
                rest = i - chosen
                if len(rest) == 1:
                    (f,) = rest
                    gain[f] = gain.get(f, 0) + 1
                    if i in account:
                        completes_account.add(f)
            candidates = [f for f in names if f not in chosen and chosen <= works_with[f]]
            if emulated:
                # The emulated account is slow: only what completes another uncovered item whose look-ups matter.
                candidates = [f for f in candidates if f in completes_account]
            else:
                # Under the mocks: nothing whose look-ups matter with what is already in.
                candidates = [f for f in candidates if not chosen & account_with[f]]
            if not candidates:
                break
            chosen.add(max(candidates, key=lambda f: (gain.get(f, 0), -rank[f])))
        out.append(Combined(order(chosen), emulated))
        uncovered -= {i for i in uncovered if i <= chosen}
    return out


@functools.cache
def combined_configs() -> tuple[Combined, ...]:
    """Configurations in which every working pair meets (with what its rule requires) at least once.
    Greedy: from a seed, a configuration grows by every feature that works with all already in it
    (preferring those that complete most uncovered pairs); pairs whose look-ups matter go first, into
    as few and as small emulated-account configurations as possible. Several fixed seed orders are
    tried; the fewest configurations win."""
    import random

    names = [f.name for f in FEATURES if not f.pending]
    works = {p for p in pairs_of(names) if combinable(RULES.get(p))}
    items = {item(p) for p in works}
    account = {item(p) for p in works if RULES[p].account}
    base = sorted(items, key=lambda i: (len(i), [ALL.index(n) for n in sorted(i, key=ALL.index)]))
    best: list[Combined] | None = None

    def score(found: list[Combined]) -> tuple[int, int, int]:
        return sum(c.emulated for c in found), len(found), sum(len(c.features) for c in found)

    for attempt in range(COVER_TRIES):
        seeds = list(base)
        if attempt:
            random.Random(attempt).shuffle(seeds)
        seeds.sort(key=lambda i: i not in account)  # stable: the emulated ones first
        found = _cover(seeds, names, works, account)
        if best is None or score(found) < score(best):
            best = found
    assert best is not None
    return tuple(best)


def config_for(pair: frozenset[str]) -> Combined:
    """Where a pair is planned: the first combined configuration holding it (working pairs), or the pair alone."""
    if combinable(RULES[pair]) and not pending_feature(pair):
        return next(c for c in combined_configs() if item(pair) <= set(c.features))
    return Combined(order(pair), bool(getattr(RULES[pair], "account", False)))


# ---- judging one cell ---------------------------------------------------------------------------------

def refusal_keys(text: str) -> list[str]:
    return re.findall(r"rke-aws:([A-Za-z0-9_.\[\]*-]+):", text)


def key_matches(expected: str, found: Iterable[str]) -> bool:
    pattern = re.compile(re.escape(expected).replace(r"\*", r"[0-9]+") + r"$")
    return any(pattern.match(k) for k in found)


def _run_check(check: Check, v: View, what: str) -> None:
    try:
        check(v)
    except AssertionError as err:
        raise AssertionError(f"{what} ({check.__name__}): {err}") from None


def judge_works(outcome: Outcome, names: Iterable[str], checks: Iterable[Check]) -> None:
    assert outcome.error is None, f"the plan failed: {outcome.error}"
    assert outcome.refusal is None, f"refused, but the table says it works:\n{outcome.refusal}"
    v = outcome.view()
    for name in names:
        own = FEATURE[name].check
        if own is not None:
            _run_check(own, v, f"{name} on its own")
    for check in checks:
        _run_check(check, v, " + ".join(order(names)))


def judge_refused(outcome: Outcome, verdict: Refused) -> None:
    assert outcome.error is None, f"the plan failed: {outcome.error}"
    if outcome.refusal is None and verdict.or_safe is not None:
        _run_check(verdict.or_safe, outcome.view(), f"accepted, so made safe: rke-aws:{verdict.key}")
        return
    assert outcome.refusal is not None, f"accepted, but the table says it is refused naming rke-aws:{verdict.key}"
    assert outcome.registered == 0, f"{outcome.registered} resources registered before the refusal"
    assert key_matches(verdict.key, refusal_keys(outcome.refusal)), \
        f"refused without naming rke-aws:{verdict.key}:\n{outcome.refusal}"
    assert "Traceback" not in outcome.refusal


def _value(spec: dict[str, Any], key: str) -> Any:
    node: Any = spec
    for part in ("region",) if key == "aws:region" else key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def judge_alternatives(a: str, b: str, verdict: Alternatives) -> None:
    """Each feature sets `key` (whichever comes last wins), to different values: they cannot both hold."""
    va, vb = _value(build_spec([a]), verdict.key), _value(build_spec([b]), verdict.key)
    assert va is not None and vb is not None and va != vb, f"{a} and {b}: {verdict.key} = {va!r}, {vb!r}"
    for first, second, want in ((a, b, vb), (b, a, va)):
        spec = copy.deepcopy(BASE)
        FEATURE[first].apply(spec)
        FEATURE[second].apply(spec)
        assert _value(spec, verdict.key) == want, f"{second} does not set {verdict.key} after {first}"


def xfail_reason(verdict: Verdict, names: Iterable[str]) -> str | None:
    item = getattr(verdict, "pending", None) or pending_feature(names)
    if item:
        return f"issue 32 item {item}, merged later"
    finding = getattr(verdict, "finding", None)
    if finding:
        return f"matrix finding (not in issue 32 items 1-10): {finding}"
    return None


# ---- the README table ---------------------------------------------------------------------------------

README_BEGIN = "<!-- feature-combinations:begin (generated: python -m tests.support.combinations --write) -->"
README_END = "<!-- feature-combinations:end -->"


def symbol(verdict: Verdict) -> str:
    if getattr(verdict, "pending", None):
        return f"{verdict.pending}"
    if getattr(verdict, "finding", None):
        return "!"
    if isinstance(verdict, Refused):
        return "✗"
    if isinstance(verdict, Alternatives):
        return "="
    return "✓" if verdict.checks else "·"


def readme_block() -> str:
    names = [f.name for f in FEATURES]
    short = {n: f"{i + 1}" for i, n in enumerate(names)}
    lines = [README_BEGIN, "",
             "| | " + " | ".join(short[n] for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for a in names:
        cells = ["" if a == b else symbol(RULES[frozenset((a, b))]) for b in names]
        lines.append(f"| {short[a]} {FEATURE[a].title}" + (f" (item {FEATURE[a].pending})" if FEATURE[a].pending else "")
                     + " | " + " | ".join(cells) + " |")
    lines += ["", "✓ works; the plan shows what each needs from the other. · works; independent. ✗ refused before any "
              "resource exists. = two values of one key. N: the fixed behaviour of issue 32 item N (an expected "
              "failure until it lands). ! broken today, outside issue 32's items (an expected failure until fixed).",
              ""]
    for pair, verdict in sorted(RULES.items(), key=lambda kv: sorted(ALL.index(n) for n in kv[0])):
        a, b = sorted(pair, key=ALL.index)
        if isinstance(verdict, Refused):
            lines.append(f"- {FEATURE[a].title} + {FEATURE[b].title}: refused naming `rke-aws:{verdict.key}` "
                         f"({verdict.why})" + (f", issue 32 item {verdict.pending}" if verdict.pending else ""))
        elif isinstance(verdict, Works) and (verdict.checks and (verdict.pending or verdict.finding)):
            lines.append(f"- {FEATURE[a].title} + {FEATURE[b].title}: {verdict.why}"
                         + (f" (issue 32 item {verdict.pending})" if verdict.pending else " (not yet)"))
    for t in TRIPLES:
        lines.append(f"- {' + '.join(FEATURE[n].title for n in t.features)}: {t.why}" + (" (not yet)" if t.finding else ""))
    lines += ["", README_END]
    return "\n".join(lines)


def readme_text(current: str) -> str:
    start, end = current.index(README_BEGIN), current.index(README_END) + len(README_END)
    return current[:start] + readme_block() + current[end:]


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        README.write_text(readme_text(README.read_text()))
        return 0
    print(readme_block())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
