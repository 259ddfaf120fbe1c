"""Hostile and malformed stack files (issue 22): every one is refused before any resource exists,
with one message per problem naming the key and what is allowed; none reaches a resource input,
user data, a policy or a flag.

Each class of the issue is a table. A row plants its values in the valid rke2-dev configuration and
lists the problems expected, as (key, fragment): a problem line `rke-aws:<key>: ...` containing the
fragment. Every problem reported must be expected (nothing else is refused), and the same row run
through the whole program (harness.run_program) ends in one RunError listing them, with nothing
registered. Plan-time rows (look-ups) run through the program only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pulumi
import pytest

from components.settings import config
from components.settings import model as config_model
from components.settings.config import ConfigError
from offline import harness
from offline.fake_aws import AwsLikeMocks
from tests.conftest import parse_config as parse
from tests.conftest import set_key
from tests.test_config import both, extra_pool, net, pool, put

Mutation = Callable[[dict], None]
Expected = tuple[str, str]  # (key path after "rke-aws:", or a full "aws:..." key; fragment of the message)


def row(id: str, mutation: Mutation, *expected: Expected, marks=()):
    return pytest.param(mutation, expected, id=id, marks=marks)


def assert_problems(problems: list[str], expected: tuple[Expected, ...]) -> None:
    """Each expected (key, fragment) matches a problem of that key, and every problem is expected."""
    def key_of(line: str) -> str:
        return line[len("rke-aws:"):] if line.startswith("rke-aws:") else line

    unmatched = list(problems)
    for key, fragment in expected:
        hits = [p for p in unmatched if key_of(p).startswith(f"{key}: ") and fragment in p]
        assert hits, f"no problem for {key} containing {fragment!r}; got {problems}"
        unmatched.remove(hits[0])
    assert not unmatched, f"unexpected problems: {unmatched}"


def refused(cfg: dict, expected: tuple[Expected, ...], stack: str = "test") -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(cfg, stack)
    assert_problems(info.value.problems, expected)
    return info.value.problems


def run_refused(cfg: dict, expected: tuple[Expected, ...], mocks: AwsLikeMocks | None = None,
                secret_keys: list[str] | None = None, stack: str = "test") -> str:
    """The whole program: one RunError listing exactly the expected problems, nothing registered."""
    mocks = mocks or AwsLikeMocks(cfg.get("aws:region") or "us-east-1")
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(cfg, stack=stack, mocks=mocks, secret_keys=secret_keys)
    message = str(info.value)
    assert message.startswith("invalid stack configuration"), message
    lines = [line[4:] for line in message.splitlines()[1:]]
    assert_problems(lines, expected)
    assert mocks.resources == [], f"registered before failing: {[t for t, _, _ in mocks.resources]}"
    return message


def access(**fields) -> Mutation:
    return put("access", fields)


def ccm(**fields) -> Mutation:
    return put("ccm", {"install": "manifest", **fields})


def backup(**fields) -> Mutation:
    return put("etcdBackup", fields)


def tags(**pairs) -> Mutation:
    return put("tags", pairs)


def tag(key: str, value: str = "x") -> Mutation:
    return put("tags", {key: value})


KEY_ID = "1234abcd-12ab-34cd-56ef-1234567890ab"
ARN = f"arn:aws:kms:us-east-1:123456789012:key/{KEY_ID}"
DIGEST = "sha256:" + "0123456789abcdef" * 4
CCM_REPO = "registry.k8s.io/provider-aws/cloud-controller-manager"
ZWSP, NBSP, ARABIC_3 = "\u200b", "\u00a0", "\u0663"

# --- CIDRs in forms AWS refuses or that collide with the cluster's own networks ----------------------

CIDRS = [
    row("vpc-netmask-form", net(vpcCidr="10.60.0.0/255.255.0.0"),
        ("network.vpcCidr", "'10.60.0.0/255.255.0.0' is not in canonical form; write 10.60.0.0/16")),
    row("vpc-hostmask-form", net(vpcCidr="10.60.0.0/0.0.255.255"),
        ("network.vpcCidr", "is not in canonical form; write 10.60.0.0/16")),
    row("vpc-bare-address", net(vpcCidr="10.60.0.0"),
        ("network.vpcCidr", "'10.60.0.0' is not in canonical form; write 10.60.0.0/32")),
    row("vpc-zero-padded-prefix", net(vpcCidr="10.60.0.0/016"),
        ("network.vpcCidr", "'10.60.0.0/016' is not in canonical form; write 10.60.0.0/16")),
    row("vpc-zero-padded-octet", net(vpcCidr="010.60.0.0/16"),
        ("network.vpcCidr", "is not an IPv4 CIDR")),
    row("vpc-arabic-digits", net(vpcCidr="\u0661\u0660.60.0.0/16"),
        ("network.vpcCidr", '"\\u0661\\u0660.60.0.0/16" is not an IPv4 CIDR')),
    row("vpc-trailing-newline", net(vpcCidr="10.60.0.0/16\n"),
        ("network.vpcCidr", '"10.60.0.0/16\\n" is not an IPv4 CIDR')),
    row("vpc-inner-space", net(vpcCidr="10.60.0.0 /16"), ("network.vpcCidr", "is not an IPv4 CIDR")),
    row("vpc-is-the-pod-network", net(vpcCidr="10.42.0.0/16"),
        ("network.vpcCidr", "'10.42.0.0/16' overlaps 10.42.0.0/16, the cluster's pod network (RKE2 and RKE1 default): nodes "
                            "would send traffic for those addresses into the cluster; use a block outside 10.42.0.0/16 and "
                            "10.43.0.0/16")),
    row("vpc-is-the-service-network", net(vpcCidr="10.43.128.0/17"),
        ("network.vpcCidr", "overlaps 10.43.0.0/16, the cluster's service network")),
    row("vpc-inside-pod-network", net(vpcCidr="10.42.16.0/20"), ("network.vpcCidr", "the cluster's pod network")),
    row("subnet-netmask-form", net(vpcCidr="10.30.0.0/16", publicSubnetCidrs=["10.30.128.0/255.255.240.0", "10.30.144.0/20"],
                                   privateSubnetCidrs=["10.30.0.0/20", "10.30.16.0/20"]),
        ("network.publicSubnetCidrs[0]", "is not in canonical form; write 10.30.128.0/20")),
    row("subnet-in-pod-network", net(vpcCidr="10.42.0.0/16", publicSubnetCidrs=["10.42.128.0/20", "10.42.144.0/20"],
                                     privateSubnetCidrs=["10.42.0.0/20", "10.42.16.0/20"]),
        ("network.vpcCidr", "pod network"), ("network.publicSubnetCidrs[0]", "pod network"),
        ("network.publicSubnetCidrs[1]", "pod network"), ("network.privateSubnetCidrs[0]", "pod network"),
        ("network.privateSubnetCidrs[1]", "pod network")),
    row("admin-netmask-form", access(adminCidrs=["203.0.113.0/255.255.255.0"]),
        ("access.adminCidrs[0]", "'203.0.113.0/255.255.255.0' is not in canonical form; write 203.0.113.0/24")),
    row("admin-host-bits", access(adminCidrs=["203.0.113.7/24"]),
        ("access.adminCidrs[0]", "(host bits set); the network is 203.0.113.0/24")),
    row("admin-bad-then-world", access(adminCidrs=["203.0.113.0/33", "0.0.0.0/0"]),
        ("access.adminCidrs[0]", "is not an IPv4 CIDR"), ("access.adminCidrs[1]", "to the whole internet")),
    row("admin-duplicate-then-world", access(adminCidrs=["203.0.113.0/24", "203.0.113.0/24", "0.0.0.0/0"]),
        ("access.adminCidrs[1]", "is already listed as access.adminCidrs[0]"), ("access.adminCidrs[2]", "to the whole internet")),
]

# --- the internet in pieces, and the security group rule quota ---------------------------------------

WORLD = "that is the internet, not your networks"
CONSENT = "set access.allowWorldAdmin true if that is really meant"
PIECES = [
    row("two-halves", access(adminCidrs=["0.0.0.0/1", "128.0.0.0/1"]),
        ("access.adminCidrs[0]", WORLD), ("access.adminCidrs[1]", WORLD)),
    row("four-quarters", access(adminCidrs=["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"]),
        *[(f"access.adminCidrs[{i}]", WORLD) for i in range(4)]),
    row("sixteen-slash-4s", access(adminCidrs=[f"{16 * i}.0.0.0/4" for i in range(16)]),
        *[(f"access.adminCidrs[{i}]", WORLD) for i in range(14)]),  # 224/4 and 240/4 are not public
    # No piece is large alone: only their union is the internet.
    row("three-slash-9s-together", access(adminCidrs=["11.0.0.0/9", "11.128.0.0/9", "12.0.0.0/9"]),
        ("access.adminCidrs", f"together open SSH (22) and the Kubernetes API (6443) to 25,165,824 public addresses, "
                              f"more than a /8's worth of public addresses (16,777,216): {WORLD}; list your networks")),
    row("seventeen-slash-12s", access(adminCidrs=[f"{20 + i // 16}.{(i % 16) * 16}.0.0/12" for i in range(17)]),
        ("access.adminCidrs", "together open SSH (22) and the Kubernetes API (6443) to 17,825,792 public addresses")),
    row("one-slash-6", access(adminCidrs=["4.0.0.0/6"]),
        ("access.adminCidrs[0]", "'4.0.0.0/6' opens SSH (22) and the Kubernetes API (6443) to 67,108,864 public "
                                 "addresses, more than a /8's worth")),
    row("world-itself", access(adminCidrs=["0.0.0.0/0"]), ("access.adminCidrs[0]", "to the whole internet; " + "list your")),
    row("a-slash-8-and-more", access(adminCidrs=["11.0.0.0/8", "12.0.0.0/9"]),
        ("access.adminCidrs", "together open SSH (22) and the Kubernetes API (6443) to 25,165,824 public addresses")),
    row("quota-dns", access(adminCidrs=[f"203.0.{i}.0/24" for i in range(20)]),
        ("access.adminCidrs", "20 CIDRs need 41 inbound rules on the node security group (one for the nodes, two per "
                              "CIDR for ports 22 and 6443); AWS allows 60 per group by default and 20 stay free for the "
                              "rules the CCM adds for LoadBalancer Services: list at most 19")),
    row("quota-nlb-rke2", both(access(adminCidrs=[f"203.0.{i}.0/24" for i in range(19)]), put("controlPlane", {"endpoint": "nlb"})),
        ("access.adminCidrs", "19 CIDRs need 41 inbound rules on the node security group (one for the nodes, two per "
                              "CIDR for ports 22 and 6443, one per load balancer port); AWS allows 60 per group by "
                              "default and 20 stay free for the rules the CCM adds for LoadBalancer Services: list at "
                              "most 18 (merge neighbouring ranges into larger CIDRs)")),
    row("quota-nlb-rke1", both(access(adminCidrs=[f"203.0.{i}.0/24" for i in range(20)]), put("controlPlane", {"endpoint": "nlb"}),
                               put("distribution", "rke"), put("ccm", {})),
        ("access.adminCidrs", "20 CIDRs need 42 inbound rules on the node security group (one for the nodes, two per "
                              "CIDR for ports 22 and 6443, one per load balancer port); AWS allows 60 per group by "
                              "default and 20 stay free for the rules the CCM adds for LoadBalancer Services: list at "
                              "most 19")),
    row("too-many-for-the-schema-too", access(adminCidrs=[f"198.51.{i}.0/24" for i in range(61)]),
        ("access.adminCidrs", "list at most 19")),
]

# --- names passed unchecked ----------------------------------------------------------------------------

KEY_NAME = "an EC2 key pair name: 1-255 printable ASCII characters, no space at either end"
USER = "a Linux user name: 1-32 characters of a-z, 0-9, _ and -, starting with a letter or _"
NAMES = [
    row("key-name-256", access(sshKeyName="k" * 256), ("access.sshKeyName", "is longer than 255 characters")),
    row("key-name-newline", access(sshKeyName="dev\n"), ("access.sshKeyName", f'"dev\\n" is not valid; expected {KEY_NAME}')),
    row("key-name-non-ascii", access(sshKeyName="clé"), ("access.sshKeyName", '"cl\\u00e9" is not valid')),
    row("key-name-leading-space", access(sshKeyName=" dev"), ("access.sshKeyName", "' dev' is not valid")),
    row("key-name-zero-width", access(sshKeyName=f"dev{ZWSP}"), ("access.sshKeyName", "\\u200b")),
    row("key-name-empty", access(sshKeyName=""), ("access.sshKeyName", "is empty")),
    row("user-leading-dash", access(sshUser="-rf"), ("access.sshUser", f"'-rf' is not valid; expected {USER}")),
    row("user-space", access(sshUser="ubuntu admin"), ("access.sshUser", "is not valid")),
    row("user-newline", access(sshUser="ubuntu\n"), ("access.sshUser", '"ubuntu\\n" is not valid')),
    row("user-command", access(sshUser="$(reboot)"), ("access.sshUser", "is not valid")),
    row("user-uppercase", access(sshUser="Ubuntu"), ("access.sshUser", "is not valid")),
    row("user-too-long", access(sshUser="u" * 33), ("access.sshUser", "is longer than")),
    row("key-path-control", access(sshKeyPath="~/.ssh/id\nrm -rf /"), ("access.sshKeyPath", "is not valid")),
    row("cluster-id-sg", put("clusterId", "sg-prod"),
        ("clusterId", "\"sg-prod\" (starts with 'sg-', which AWS refuses as the start of a security group name) is "
                      "not a cluster ID")),
]

# --- S3 names and the snapshot folder (S3 User Guide, "General purpose bucket naming rules") -------------

BUCKET = "expected an S3 bucket name"
BUCKETS = [
    row("bucket-" + reason, backup(bucket=name), ("etcdBackup.bucket", fragment))
    for reason, name, fragment in [
        ("xn-prefix", "xn--snapshots", "starts with 'xn--', a prefix S3 reserves"),
        ("sthree-prefix", "sthree-snapshots", "starts with 'sthree-', a prefix S3 reserves"),
        ("sthree-configurator", "sthree-configurator-x", "a prefix S3 reserves"),
        ("demo-prefix", "amzn-s3-demo-bucket", "starts with 'amzn-s3-demo-'"),
        ("s3alias-suffix", "snapshots-s3alias", "ends with '-s3alias', a suffix S3 reserves"),
        ("ol-s3-suffix", "snapshots--ol-s3", "ends with '--ol-s3'"),
        ("x-s3-suffix", "snapshots--usw2-az1--x-s3", "ends with '--x-s3'"),
        ("table-s3-suffix", "snapshots--table-s3", "ends with '--table-s3'"),
        ("mrap-suffix", "snapshots.mrap", "ends with '.mrap'"),
        ("ip-address", "192.168.5.4", "is formatted as an IP address"),
        ("double-dot", "snap..shots", "contains '..'"),
        ("dot-dash", "snap.-shots", "contains '.-'"),
        ("dash-dot", "snap-.shots", "contains '-.'"),
        ("too-short", "ab", "has 2 characters (3 to 63)"),
        ("too-long", "b" * 64, "has 64 characters (3 to 63)"),
        ("uppercase", "Snapshots", "has characters other than lowercase"),
        ("underscore", "snap_shots", "has characters other than lowercase"),
        ("leading-dash", "-snapshots", "does not start and end with a letter or digit"),
        ("trailing-dot", "snapshots.", "does not start and end with a letter or digit"),
        ("trailing-newline", "snapshots\n", "has characters other than lowercase"),
        ("unicode-digit", f"snapshots{ARABIC_3}", "has characters other than lowercase"),
    ]
] + [
    row("folder-" + reason, backup(folder=folder), ("etcdBackup.folder", fragment))
    for reason, folder, fragment in [
        ("dot-segment", "prod/./etcd", "has a '.' or '..' segment"),
        ("dotdot-segment", "prod/../etcd", "has a '.' or '..' segment"),
        ("dotdot-last", "prod/..", "has a '.' or '..' segment"),
        ("dot-last", "prod/.", "has a '.' or '..' segment"),
        ("double-slash", "prod//etcd", "has an empty segment"),
        ("leading-dot", "./prod", "has a '.' or '..' segment"),
        ("space", "prod etcd", "is not valid"),
    ]
]

# --- Unicode where AWS, a shell, a flag or a URL want ASCII ----------------------------------------------

FLAG = "is not a flag; write each flag as one --name=value entry (ASCII, no spaces or invisible characters"
UNICODE = [
    row("chart-version-arabic", ccm(chartVersion="\u0660.\u0660.\u0661\u0661"),
        ("ccm.chartVersion", '"\\u0660.\\u0660.\\u0661\\u0661" is not valid; expected a chart version')),
    row("chart-version-leading-zero", ccm(chartVersion="0.0.011"), ("ccm.chartVersion", "is not valid")),
    row("image-tag-accent", ccm(image=f"{CCM_REPO}:v1.33.4-\u00e9"), ("ccm.image", "is not valid; expected an image reference")),
    row("image-tag-arabic", ccm(image=f"{CCM_REPO}:v1.33.{ARABIC_3}"), ("ccm.image", "is not valid")),
    row("extra-arg-zero-width", ccm(extraArgs=[f"--v=4{ZWSP}"]), ("ccm.extraArgs[0]", f'"--v=4\\u200b" {FLAG}')),
    row("extra-arg-zero-width-name", ccm(extraArgs=[f"--v{ZWSP}=4"]), ("ccm.extraArgs[0]", FLAG)),
    row("extra-arg-space-in-value", ccm(extraArgs=["--cluster-name=my cluster"]), ("ccm.extraArgs[0]", FLAG)),
    row("extra-arg-nbsp", ccm(extraArgs=[f"--v={NBSP}4"]), ("ccm.extraArgs[0]", FLAG)),
    row("extra-arg-tab", ccm(extraArgs=["--v=4\t--x"]), ("ccm.extraArgs[0]", FLAG)),
    row("extra-arg-newline", ccm(extraArgs=["--v=4\n"]), ("ccm.extraArgs[0]", FLAG)),
    row("extra-arg-unicode-dash", ccm(extraArgs=["\u2014v=4"]), ("ccm.extraArgs[0]", FLAG)),
    row("instance-type-arabic", pool(1, instanceType=f"m{ARABIC_3}i.large"), ("nodePools[1].instanceType", "is not valid")),
    row("zone-arabic", net(availabilityZones=[f"us-east-{ARABIC_3}a", "us-east-1b"]),
        ("network.availabilityZones", "is not an availability zone name")),
    row("pool-count-arabic", pool(1, count=ARABIC_3), ("nodePools[1].count", "is not a whole number")),
    row("pool-count-padded", pool(1, count=" 3 "), ("nodePools[1].count", "is not a whole number")),
    row("region-arabic", put("aws:region", f"us-east-{ARABIC_3}"), ("aws:region", "is not an AWS region")),
]

# --- CCM settings ---------------------------------------------------------------------------------------

CCM = [
    row("image-latest", ccm(image=f"{CCM_REPO}:latest"),
        ("ccm.image", "is pinned to 'latest', which moves (a CCM must not become newer than the cluster)")),
    row("image-untagged", ccm(image=CCM_REPO), ("ccm.image", "is not valid")),
    row("image-bad-digest", ccm(image=f"{CCM_REPO}@sha256:abc"), ("ccm.image", "is not valid")),
    row("program-flag", ccm(extraArgs=["--use-service-account-credentials=false"]), ("ccm.extraArgs[0]", "is set by this program")),
]

# --- KMS key ARNs ------------------------------------------------------------------------------------------

KMS = "expected a KMS key ARN (not an alias) in its region's partition"
KMS_ROWS = [
    row("kms-china-partition-for-us-region", backup(kmsKeyArn=f"arn:aws-cn:kms:us-east-1:123456789012:key/{KEY_ID}"),
        ("etcdBackup.kmsKeyArn", f"names partition aws-cn, but us-east-1 is in aws; {KMS}")),
    row("kms-commercial-partition-for-gov-region", backup(kmsKeyArn=f"arn:aws:kms:us-gov-west-1:123456789012:key/{KEY_ID}"),
        ("etcdBackup.kmsKeyArn", "names partition aws, but us-gov-west-1 is in aws-us-gov")),
    row("kms-arabic-account", backup(kmsKeyArn=f"arn:aws:kms:us-east-1:12345678901{ARABIC_3}:key/{KEY_ID}"),
        ("etcdBackup.kmsKeyArn", KMS)),
    row("kms-uppercase-key-id", backup(kmsKeyArn=ARN.upper().replace("ARN:AWS:KMS:US-EAST-1", "arn:aws:kms:us-east-1")),
        ("etcdBackup.kmsKeyArn", KMS)),
    row("kms-other-partition-and-region", backup(kmsKeyArn=f"arn:aws-cn:kms:cn-north-1:123456789012:key/{KEY_ID}"),
        ("etcdBackup.kmsKeyArn", "is a key in cn-north-1 (partition aws-cn, not aws), but the cluster")),
    row("kms-trailing-newline", backup(kmsKeyArn=ARN + "\n"), ("etcdBackup.kmsKeyArn", KMS)),
]

# --- blank reasons -------------------------------------------------------------------------------------------

REASONS = [
    row("reason-" + name, pool(1, imdsHopLimit=2, imdsHopLimitReason=reason), ("nodePools[1].imdsHopLimitReason", fragment))
    for name, reason, fragment in [
        ("spaces", "   ", "is blank; state why pods on the pool's nodes need the node role's credentials"),
        ("empty", "", "is blank"),
        ("tab", "\t", "becomes an instance tag value and has characters AWS does not take"),
        ("zero-width", ZWSP, "becomes an instance tag value"),
        ("nbsp", NBSP * 3, "becomes an instance tag value"),
        ("newline", "legacy\nSDK", "becomes an instance tag value"),
        ("too-long", "r" * 257, "is 257 characters long"),
    ]
]

# --- tags IAM, EC2, SSM, KMS, S3 or the CCM refuse -------------------------------------------------------------

RESERVED = "is reserved (Name, kubernetes.io/cluster/*"
TAG_ROWS = [
    row("tag-value-tab", tag("team", "a\tb"), ("tags.team", "value \"a\\tb\" has characters AWS does not take")),
    row("tag-value-newline", tag("team", "a\nb"), ("tags.team", "has characters AWS does not take")),
    row("tag-value-zero-width", tag("team", f"a{ZWSP}"), ("tags.team", "has characters")),
    row("tag-value-accent", tag("team", "\u00e9quipe"), ("tags.team", "has characters")),
    row("tag-key-lowercase-name", tag("name"), ("tags.name", RESERVED)),
    row("tag-key-uppercase-name", tag("NAME"), ("tags.NAME", RESERVED)),
    row("tag-key-aws-after-spaces", tag("  aws:owner"), ("tags.  aws:owner", RESERVED)),
    row("tag-key-aws-uppercase", tag("AWS:owner"), ("tags.AWS:owner", RESERVED)),
    row("tag-key-kubernetes-cluster", tag("KubernetesCluster", "prod"), ("tags.KubernetesCluster", RESERVED)),
    row("tag-key-kubernetes-cluster-lower", tag("kubernetescluster", "prod"), ("tags.kubernetescluster", RESERVED)),
    row("tag-key-other-cluster", tag("kubernetes.io/cluster/other", "shared"), ("tags.kubernetes.io/cluster/other", RESERVED)),
    row("tag-key-cluster-mixed-case", tag("Kubernetes.io/Cluster/x", "owned"), ("tags.Kubernetes.io/Cluster/x", RESERVED)),
    row("tag-key-ours-uppercase", tag("RKE-AWS/pool", "x"), ("tags.RKE-AWS/pool", RESERVED)),
    row("tag-key-trailing-space", tag("team "), ("tags.team ", "'team ' starts or ends with a space; remove it (AWS would "
                                                               "keep a key that differs from what you see)")),
    row("tag-key-tab", tag("te\tam"), ('tags["te\\tam"]', '"te\\tam" has characters AWS does not take in tag keys')),
    row("tag-key-only-tab", tag("\t"), ('tags["\\t"]', '"\\t" has characters AWS does not take in tag keys')),
    row("tag-key-tab-then-aws", tag("\taws:x"), ('tags["\\taws:x"]', "has characters AWS does not take in tag keys")),
    row("tag-key-x-space", tag("X "), ("tags.X ", "'X ' starts or ends with a space")),
    row("tag-key-x-aws-space", tag("Xaws:x "), ("tags.Xaws:x ", "'Xaws:x ' starts or ends with a space")),
    row("tag-key-128-with-space", tag("k" * 127 + " "), ("tags." + "k" * 127 + " ", "starts or ends with a space")),
    row("tag-value-256-with-tab", tag("team", "v" * 255 + "\t"), ("tags.team", "has characters AWS does not take")),
    row("tag-key-too-long", tag("k" * 129), ("tags." + "k" * 129, "is 129 characters long")),
    row("tag-keys-differ-by-case", tags(Team="a", team="b"),
        ("tags.team", "'team' and 'Team' differ only in letter case, which IAM counts as the same key")),
]

# --- configuration keys in a namespace nothing reads -------------------------------------------------------

NAMESPACES = [
    row("underscore-namespace", lambda cfg: cfg.__setitem__("rke_aws:protectServers", "true"),
        ("rke_aws:protectServers", "unknown namespace 'rke_aws', which nothing reads; did you mean rke-aws:protectServers?")),
    row("numbered-namespace", lambda cfg: cfg.__setitem__("rke-aws2:tags", '{"team":"a"}'),
        ("rke-aws2:tags", "did you mean rke-aws:tags?")),
    row("uppercase-namespace", lambda cfg: cfg.__setitem__("RKE-AWS:hardening", "cis"),
        ("RKE-AWS:hardening", "did you mean rke-aws:hardening?")),
    row("random-namespace", lambda cfg: cfg.__setitem__("random:length", "32"),
        ("random:length", "unknown namespace 'random', which nothing reads; this project's keys are rke-aws:<key> (its "
                          "name in Pulumi.yaml), and the providers and engine read aws:, kubernetes:, pulumi:")),
    row("aws-namespace-typo", lambda cfg: cfg.__setitem__("aws2:region", "us-east-1"), ("aws2:region", "did you mean aws:region?")),
    row("aws-profile-typo", lambda cfg: cfg.__setitem__("awz:profile", "dev"), ("awz:profile", "did you mean aws:profile?")),
    row("namespace-typo-with-newline", lambda cfg: cfg.__setitem__("rke_aws:tags\n", "{}"),
        ('"rke_aws:tags\\n"', "unknown namespace")),
    row("rke-aws-key-with-zero-width", lambda cfg: cfg.__setitem__(f"rke-aws:tags{ZWSP}", "{}"),
        ('"tags\\u200b"', "unknown key; did you mean tags?")),
    row("rke-aws-key-typo", lambda cfg: cfg.__setitem__("rke-aws:protectServer", "true"),
        ("protectServer", "unknown key; did you mean protectServers?")),
    row("rke-aws-nested-typo", net(vpcCIDR="10.0.0.0/16"), ("network.vpcCIDR", "did you mean vpcCidr?")),
    row("two-colons", lambda cfg: cfg.__setitem__("rke-aws:tags:team", "a"), ("tags:team", "not a configuration key")),
]

# --- null, empty and too-deep values ------------------------------------------------------------------------

NULLS = [
    row("null-cluster-id", put("clusterId", "null"), ("clusterId", "is null")),
    row("null-network", put("network", "null"), ("network", "is null")),
    row("null-nested", lambda cfg: set_key(cfg, "network", {"vpcCidr": None, "availabilityZones": 2}),
        ("network.vpcCidr", "is null")),
    row("null-pool-field", lambda cfg: set_key(cfg, "nodePools", [
        {"name": "server", "roles": ["controlplane", "etcd"], "count": 1, "ami": None},
        {"name": "agents", "roles": ["worker"], "count": 2}]), ("nodePools[0].ami", "is null")),
    row("null-pool-name", lambda cfg: set_key(cfg, "nodePools", [
        {"name": None, "roles": ["controlplane", "etcd"], "count": 1}, {"name": "agents", "roles": ["worker"], "count": 2}]),
        ("nodePools[0].name", "is null")),
    row("empty-network", put("network", ""), ("network", "is empty (what the Pulumi CLI passes for `key: ~`")),
    row("empty-distribution", put("distribution", ""), ("distribution", "is empty")),
    row("deep-network", lambda cfg: cfg.__setitem__("rke-aws:network", "[" * 3000 + "]" * 3000),
        ("network", "nests deeper than the program reads")),
    row("deep-pool", lambda cfg: cfg.__setitem__("rke-aws:nodePools", json.dumps([{"name": "a", "roles": [[[[[["x"]]]]]], "count": 1}])),
        ("nodePools[0].roles", "is not a role")),
]

# --- a secret used as plain text ----------------------------------------------------------------------------

SECRET = "is encrypted (a `secure:` value, set with --secret), but the program uses it as plain text"
SECRETS = [
    row("secret-tags", lambda cfg: set_key(cfg, "tags", harness.secret('{"team":"platform"}')), ("tags", SECRET)),
    row("secret-cluster-id", lambda cfg: set_key(cfg, "clusterId", harness.secret("prod")), ("clusterId", SECRET)),
    row("secret-network", lambda cfg: set_key(cfg, "network", harness.secret('{"vpcCidr":"10.30.0.0/16"}')), ("network", SECRET)),
    row("secret-distribution", lambda cfg: set_key(cfg, "distribution", harness.secret("rke2")), ("distribution", SECRET)),
    row("plain-kubeconfig", put("kubeconfig", "apiVersion: v1\nkind: Config\n"), ("kubeconfig", "is stored as plain text")),
]

PROGRAM_ROWS = CIDRS + PIECES + NAMES + BUCKETS + UNICODE + CCM + KMS_ROWS + REASONS + TAG_ROWS + NAMESPACES + NULLS + SECRETS


@pytest.mark.parametrize("mutate, expected", PROGRAM_ROWS)
def test_hostile_value_is_refused_naming_the_key(base_config, mutate, expected):
    mutate(base_config)
    refused(base_config, expected)


@pytest.mark.parametrize("mutate, expected", PROGRAM_ROWS)
def test_hostile_value_registers_nothing(base_config, mutate, expected):
    mutate(base_config)
    run_refused(base_config, expected)


def test_sg_cluster_id_from_the_stack_name(base_config):
    base_config.pop("rke-aws:clusterId", None)
    refused(base_config, (("clusterId", '"sg-1" is not a cluster ID (defaulted from the stack name; set clusterId); '
                                        "use 1-43 chars of a-z, 0-9 and -, starting with a letter, not sg-"),), stack="sg-1")


def test_every_class_has_several_cases():
    for table in (CIDRS, PIECES, NAMES, BUCKETS, UNICODE, CCM, KMS_ROWS, REASONS, TAG_ROWS, NAMESPACES, NULLS, SECRETS):
        assert len(table) >= 4
    ids = [p.id for p in PROGRAM_ROWS]
    assert len(ids) == len(set(ids))


def test_secret_text_never_reaches_a_message(base_config):
    set_key(base_config, "tags", harness.secret('{"team": "s3cr3t-marker\\t"}'))
    set_key(base_config, "network", harness.secret('{"vpcCidr": "s3cr3t-marker/99"}'))
    with pytest.raises(ConfigError) as info:
        parse(base_config)
    assert "s3cr3t-marker" not in str(info.value)


# --- what stays allowed (the rules above must not refuse these) ---------------------------------------------

ALLOWED = [
    pytest.param(access(adminCidrs=["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"]), id="private-space"),
    pytest.param(access(adminCidrs=["11.0.0.0/9", "11.128.0.0/9"]), id="exactly-a-slash-8"),
    pytest.param(access(adminCidrs=[f"203.0.{i}.0/24" for i in range(19)]), id="nineteen-cidrs"),
    pytest.param(access(adminCidrs=["0.0.0.0/1", "128.0.0.0/1"], allowWorldAdmin=True), id="world-with-consent"),
    pytest.param(access(sshKeyName="k" * 255, sshUser="_svc-rke", sshKeyPath="~/.ssh/id ed25519 (work)"), id="names"),
    pytest.param(access(sshKeyName="dev key: 2026/01 #1"), id="key-name-printable"),
    pytest.param(ccm(image=f"{CCM_REPO}:v1.33.4@{DIGEST}"), id="tag-and-digest"),
    pytest.param(ccm(image=f"{CCM_REPO}@{DIGEST}"), id="digest-only"),
    pytest.param(ccm(image=f"{CCM_REPO}:latest@{DIGEST}"), id="latest-pinned-by-digest"),
    pytest.param(ccm(image="registry.example.com:5000/ccm/aws:v1.33.4-eks.1"), id="private-registry-port"),
    pytest.param(ccm(extraArgs=["--v=4", "--cluster-name=prod", "--concurrent-service-syncs=5", "--allow-untagged-cloud"]),
                 id="flags"),
    pytest.param(backup(bucket="snap.shots-2026", folder="prod/etcd.v1/..x/a..b"), id="bucket-and-folder"),
    pytest.param(backup(kmsKeyArn="arn:aws:kms:us-east-1:123456789012:key/mrk-" + "0123456789abcdef" * 2), id="mrk-key"),
    pytest.param(tags(**{"team": "platform", "cost-center": "a.b/c:d=e+f@g", "empty": "", "Owner Name": "x y"}), id="tags"),
    pytest.param(tags(**{"Named": "x", "names": "y", "aws-account": "z", "kubernetes.io/name": "n"}), id="near-reserved-tags"),
    pytest.param(pool(1, imdsHopLimit=2, imdsHopLimitReason="  legacy SDK  "), id="reason-with-spaces"),
    pytest.param(put("clusterId", "sgx-prod"), id="cluster-id-sgx"),
    pytest.param(net(vpcCidr="10.44.0.0/16"), id="vpc-next-to-pod-network"),
    pytest.param(net(vpcCidr="10.41.0.0/16"), id="vpc-below-pod-network"),
    pytest.param(net(vpcCidr="10.30.0.0/24", publicSubnetCidrs=["10.30.0.128/28", "10.30.0.144/28"],
                     privateSubnetCidrs=["10.30.0.0/26", "10.30.0.64/26"]), id="smallest-vpc-and-subnets"),
    pytest.param(access(adminCidrs=["11.0.0.0/8"]), id="one-public-slash-8"),
    pytest.param(both(access(adminCidrs=[f"203.0.{i}.0/24" for i in range(19)]), put("controlPlane", {"endpoint": "nlb"}),
                      put("distribution", "rke"), put("ccm", {})), id="forty-rules-nlb-rke1"),
    pytest.param(tags(**{f"t{i}": "v" for i in range(44)}), id="forty-four-tags"),
    pytest.param(lambda cfg: cfg.update({"aws:profile": "dev", "pulumi:tags": '{"a":"b"}', "aws:skipMetadataApiCheck": "false"}),
                 id="other-namespaces"),
]


@pytest.mark.parametrize("mutate", ALLOWED)
def test_legitimate_values_stay_allowed(base_config, mutate):
    mutate(base_config)
    parse(base_config)


def test_world_with_consent_is_warned(base_config):
    access(adminCidrs=["0.0.0.0/1", "128.0.0.0/1"], allowWorldAdmin=True)(base_config)
    warnings = parse(base_config).warnings
    assert sum(w.endswith(" (access.allowWorldAdmin is true)") for w in warnings) == 2, warnings
    access(adminCidrs=["11.0.0.0/9", "11.128.0.0/9", "12.0.0.0/9"], allowWorldAdmin=True)(base_config)
    (warning,) = [w for w in parse(base_config).warnings if "allowWorldAdmin" in w]
    assert warning.startswith("rke-aws:access.adminCidrs: together open SSH (22) and the Kubernetes API (6443) to "
                              "25,165,824 public addresses") and warning.endswith("(access.allowWorldAdmin is true)")


def test_accepted_values_reach_the_configuration_unchanged(base_config):
    access(adminCidrs=["203.0.113.0/24"], sshKeyName="dev key", sshUser="_svc", sshKeyPath="~/k.pem", ssm=False,
           allowWorldAdmin=True)(base_config)
    tags(team="platform", Owner="a b")(base_config)
    cfg = parse(base_config)
    assert cfg.access == config.AccessConfig(admin_cidrs=("203.0.113.0/24",), ssh_key_name="dev key", ssh_user="_svc",
                                             ssh_key_path="~/k.pem", ssm=False, allow_world_admin=True)
    assert dict(cfg.tags) == {"team": "platform", "Owner": "a b"}


def test_kubernetes_namespace_is_warned_as_unused(base_config):
    base_config["kubernetes:context"] = "prod"
    (warning,) = [w for w in parse(base_config).warnings if w.startswith("kubernetes:context")]
    assert "ignores kubernetes:* settings" in warning


def test_image_with_a_moving_tag_is_warned(base_config):
    ccm(image=f"{CCM_REPO}:stable")(base_config)
    assert any("ccm.image" in w and "pin the digest" in w for w in parse(base_config).warnings)
    ccm(image=f"{CCM_REPO}:v1.33.4")(base_config)
    assert not any("ccm.image" in w for w in parse(base_config).warnings)


# --- the rule quota the program counts is the one it registers -------------------------------------------

@pytest.mark.parametrize("endpoint", ["dns", "nlb"])
@pytest.mark.parametrize("distribution", ["rke", "rke2"])
def test_inbound_rule_count_is_what_the_program_registers(base_config, endpoint, distribution):
    cidrs = [f"203.0.{i}.0/24" for i in range(3)]
    access(adminCidrs=cidrs)(base_config)
    put("controlPlane", {"endpoint": endpoint})(base_config)
    if distribution == "rke":
        set_key(base_config, "distribution", "rke")
        set_key(base_config, "ccm", {})
    run = harness.run_program(base_config, stack="quota")
    groups = {r.id: r for r in run.of_type("aws:ec2/securityGroup:SecurityGroup")}
    (node_group,) = [g for g in groups.values() if any(k.startswith("kubernetes.io/cluster/") for k in g.inputs["tags"])]
    inbound = [r for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
               if r.inputs["securityGroupId"] == node_group.id]
    assert len(inbound) == config.node_group_inbound_rules(len(cidrs), endpoint, distribution)
    for gid, group in groups.items():  # no group of this program holds more than the node group
        count = len([r for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
                     if r.inputs["securityGroupId"] == gid])
        assert count <= len(inbound), group.urn


def test_quota_constants_leave_the_documented_headroom():
    assert config_model.MAX_ADMIN_CIDRS == 19
    for endpoint in ("dns", "nlb"):
        rules = config.node_group_inbound_rules(config_model.MAX_ADMIN_CIDRS, endpoint, "rke")
        assert rules + config_model.CCM_RULE_HEADROOM <= config_model.SG_INBOUND_RULE_QUOTA


def test_public_address_count_is_exact():
    import ipaddress

    count = config.public_addresses
    net4 = ipaddress.IPv4Network
    assert count([net4("0.0.0.0/0")]) == 2**32 - sum(n.num_addresses for n in ipaddress.collapse_addresses(config.NOT_PUBLIC))
    assert count([net4("10.0.0.0/8"), net4("192.168.0.0/16")]) == 0
    assert count([net4("10.1.0.0/16"), net4("8.0.0.0/7")]) == 2**25  # a private piece smaller than its block
    assert count([net4("11.0.0.0/8"), net4("11.0.0.0/9")]) == 2**24  # overlaps once
    assert count([net4("203.0.113.0/24")]) == 0  # TEST-NET-3
    assert count([net4("8.0.0.0/7")]) == 2**25


# --- plan time: key pairs, instance types, images, the CCM manifest, bring-your-own subnets -----------------

def _plan_refused(base_config, expected, **mock_kwargs) -> str:
    mocks = AwsLikeMocks(base_config["aws:region"], **mock_kwargs)
    return run_refused(base_config, expected, mocks=mocks)


PLAN_ROWS = [
    row("missing-key-pair", access(sshKeyName="nobody-has-it"),
        ("access.sshKeyName", "looking up the key pair 'nobody-has-it' in us-east-1 failed (invoke of aws:ec2/getKeyPair:getKeyPair "
                              "failed: InvalidKeyPair.NotFound")),
    row("unknown-instance-type", pool(1, instanceType="m9z.large"),
        ("nodePools[1].instanceType", "looking up instance type 'm9z.large' in us-east-1 failed (invoke of "
                                      "aws:ec2/getInstanceType:getInstanceType failed: InvalidInstanceType")),
    # A pool's own image must suit its type (the default image follows the type's architecture: test_graviton).
    row("arm-type-with-x86-image", pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"),
        ("nodePools[1].instanceType", "'m7g.large' runs arm64, but the pool's image ami-0ccccccccccccccc1 "
                                      "is x86_64; use an instance type for x86_64, or set "
                                      "nodePools[1].ami to an image for arm64")),
    row("arm-server-and-agents-with-x86-images", both(pool(0, instanceType="c7g.medium", ami="ami-0ccccccccccccccc1"),
                                                      pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1")),
        ("nodePools[0].instanceType", "runs arm64"), ("nodePools[1].instanceType", "runs arm64")),
    row("missing-image", pool(1, ami="ami-0123456789abcdef0"),
        ("nodePools[1].ami", "looking up image 'ami-0123456789abcdef0' in us-east-1 failed")),
    row("ccm-manifest-too-large", ccm(extraArgs=[f"--flag-{i:03d}={'x' * 120}" for i in range(70)]),
        ("ccm.extraArgs", "the CCM manifest (ccm.install manifest) is")),
]

PLAN_MOCKS = {
    "missing-key-pair": {"key_pairs": ["dev"]},
    "missing-image": {"images": {}},
}


@pytest.mark.parametrize("mutate, expected", PLAN_ROWS)
def test_plan_time_look_ups_refuse_before_anything(base_config, mutate, expected, request):
    mutate(base_config)
    _plan_refused(base_config, expected, **PLAN_MOCKS.get(request.node.callspec.id, {}))


def test_type_not_offered_in_a_zone_of_the_pool(base_config):
    # The one server is in us-east-1a; the two agents in us-east-1a and us-east-1b.
    _plan_refused(base_config, (("nodePools[1].instanceType", "'m6i.large' is not offered in us-east-1b, where the pool's "
                                                              "new nodes go"),),
                  unoffered=[("m6i.large", "us-east-1b")])


def test_type_offered_elsewhere_only_is_fine_when_no_node_goes_there(base_config):
    net(availabilityZones=["us-east-1a", "us-east-1c"])(base_config)
    harness.run_program(base_config, mocks=AwsLikeMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))


def test_paravirtual_image_on_an_hvm_only_type(base_config):
    pool(1, ami="ami-0aaaaaaaaaaaaaaa1")(base_config)
    _plan_refused(base_config, (("nodePools[1].instanceType", "'m6i.large' supports hvm virtualization, but the pool's "
                                                              "image ami-0aaaaaaaaaaaaaaa1 is paravirtual"),),
                  images={"ami-0aaaaaaaaaaaaaaa1": {"architecture": "x86_64", "virtualizationType": "paravirtual"}})


def test_arm_image_on_arm_type_plans(base_config):
    pool(1, instanceType="m7g.large", ami="ami-0bbbbbbbbbbbbbbb1")(base_config)
    run = harness.run_program(base_config, mocks=AwsLikeMocks(
        "us-east-1", images={"ami-0bbbbbbbbbbbbbbb1": {"architecture": "arm64", "virtualizationType": "hvm"}}))
    assert {r.inputs["instanceType"] for r in run.of_type("aws:ec2/instance:Instance")} == {"m6i.large", "m7g.large"}


def test_small_rke2_server_is_warned_not_refused(base_config):
    pool(0, instanceType="t3.small")(base_config)
    run = harness.run_program(base_config)
    warnings = [m for level, m in run.logs if level == "warning"]
    assert any(m.startswith("rke-aws:nodePools[0].instanceType: 't3.small' has 2 vCPU and 2 GiB; RKE2 servers need at "
                            "least 2 vCPU and 4 GiB") for m in warnings), warnings
    pool(0, instanceType="t3.medium")(base_config)
    run = harness.run_program(base_config)
    assert not any("RKE2 servers need" in m for _, m in run.logs)


def test_look_ups_are_per_type_not_per_node(base_config):
    pool(1, count=300)(base_config)
    net(availabilityZones=3)(base_config)
    run = harness.run_program(base_config)
    tokens = [lk.token.rsplit(":", 1)[-1] for lk in run.lookups]
    assert tokens.count("getInstanceType") == 1 and tokens.count("getInstanceTypeOfferings") == 1, tokens
    assert tokens.count("getAmi") == 1, tokens


def test_key_pair_is_looked_up_once(base_config):
    access(sshKeyName="dev")(base_config)
    run = harness.run_program(base_config, mocks=AwsLikeMocks("us-east-1", key_pairs=["dev"]))
    assert [lk.args.get("keyName") for lk in run.lookups if lk.token.endswith("getKeyPair")] == ["dev"]


def test_bring_your_own_subnet_in_the_pod_network(base_config):
    from tests.test_config import PRIVATE_IDS, PUBLIC_IDS, VPC_ID, _byo_config, _existing_subnets

    subnets = _existing_subnets()
    subnets[PRIVATE_IDS[1]]["cidr"] = "10.42.16.0/20"
    mocks = AwsLikeMocks("us-east-1", existing_subnets=subnets)
    run_refused(_byo_config(base_config), (("network.privateSubnetIds[1]", "the subnet's 10.42.16.0/20 overlaps "
                                                                           "10.42.0.0/16, the cluster's pod or service network"),),
                mocks=mocks)
    assert VPC_ID and PUBLIC_IDS


def test_manifest_size_limit_counts_what_main_renders(base_config):
    """The check renders the same manifest __main__ stores: the parameter registered is at most the limit."""
    from components.plan import spec as plan

    ccm(extraArgs=[f"--flag-{i:03d}={'x' * 120}" for i in range(40)])(base_config)
    run = harness.run_program(base_config)
    (param,) = [r for r in run.of_type("aws:ssm/parameter:Parameter") if r.inputs["name"].endswith("/ccm.yaml")]
    size = len(param.inputs["insecureValue"].encode())
    assert 4096 < size <= plan.ADVANCED_TIER_MAX and param.inputs["tier"] == "Advanced"


# --- names the program derives: never one AWS refuses ------------------------------------------------------

def test_internal_cluster_gets_a_load_balancer_name_elbv2_accepts(base_config):
    put("clusterId", "internal-prod")(base_config)
    put("controlPlane", {"endpoint": "nlb"})(base_config)
    run = harness.run_program(base_config, stack="internal-prod")
    (lb,) = run.of_type("aws:lb/loadBalancer:LoadBalancer")
    assert not lb.inputs["name"].startswith("internal-") and len(lb.inputs["name"]) <= 32
    for tg in run.of_type("aws:lb/targetGroup:TargetGroup"):  # allowed to start so: unchanged
        assert tg.inputs["name"].startswith("internal-prod-")


# --- the policy pack judges the union too ------------------------------------------------------------------

def _admin_rule_records(stack: str, cidrs: list[str]):
    """The stack's records with the node group's first admin rule repeated once per CIDR."""
    from policies import rules
    from tests.test_policies import node_group, records

    recs = records(stack)
    group = node_group(recs)
    template = next(r for r in recs if r.type == rules.SG_INGRESS_RULE and r.props.get("cidrIpv4")
                    and r.props.get("securityGroupId") == group.props["id"])
    for i, cidr in enumerate(cidrs):
        rec = copy.deepcopy(template)
        rec.urn, rec.name = f"{template.urn}-planted-{i}", f"{template.name}-planted-{i}"
        rec.props["cidrIpv4"] = cidr
        recs.append(rec)
    return recs, group


@pytest.mark.parametrize("cidrs", [["11.0.0.0/9", "11.128.0.0/9", "12.0.0.0/9"],
                                   [f"{20 + i // 16}.{(i % 16) * 16}.0.0/12" for i in range(17)]],
                         ids=["three-slash-9s", "seventeen-slash-12s"])
def test_policy_pack_catches_the_internet_in_pieces(cidrs):
    """No piece reaches the per-rule threshold (sg-no-public-admin-ports passes each); together they do.
    Pieces that are each larger (0.0.0.0/1 + 128.0.0.0/1) are caught one by one, below."""
    from policies import rules
    from tests.test_policies import POLICY, run_stack_policy

    recs, group = _admin_rule_records("rke-prod", cidrs)
    found = run_stack_policy(POLICY["sg-no-public-admin-union"], recs)
    assert found and all(urn == group.urn for _, urn in found), found
    assert rules.WORLD_IPV4_ADDRESSES == config_model.WORLD_ADMIN_PUBLIC_ADDRESSES


@pytest.mark.parametrize("cidrs, policy_config", [
    (["11.0.0.0/9", "11.128.0.0/9"], None),  # exactly a /8: not more
    (["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"], None),  # not public
    (["0.0.0.0/1", "128.0.0.0/1"], {"adminCidrs": ["0.0.0.0/1", "128.0.0.0/1"]}),  # allowed by the policy's config
], ids=["a-slash-8", "private", "allowed"])
def test_policy_pack_union_allows(cidrs, policy_config):
    from tests.test_policies import POLICY, run_stack_policy

    recs, _ = _admin_rule_records("rke-prod", cidrs)
    assert run_stack_policy(POLICY["sg-no-public-admin-union"], recs, policy_config) == []


@pytest.mark.parametrize("cidr, caught", [("0.0.0.0/1", True), ("128.0.0.0/1", True), ("4.0.0.0/6", True), ("11.0.0.0/8", False),
                                          ("10.0.0.0/8", False), ("2000::/2", True), ("2001:db8::/32", False)])
def test_policy_pack_one_cidr_larger_than_a_slash_8_is_the_internet(cidr, caught):
    from policies import rules
    from tests.test_policies import POLICY, _world_rule, run_resource_policy

    reg, props = _world_rule("rke2-dev", ipProtocol="tcp", fromPort=22.0, toPort=22.0,
                             **({"cidrIpv4": None, "cidrIpv6": cidr} if ":" in cidr else {"cidrIpv4": cidr}))
    found = run_resource_policy(POLICY["sg-no-public-admin-ports"], reg.type, reg.urn, props)
    assert bool(found) == caught, found
    assert rules._world(cidr) == caught


# --- the look-ups in detail: what they ask, day 2, several pools, exact messages ------------------------------

def _lookups(run, token: str) -> list:
    return [lk for lk in run.lookups if lk.token.endswith(token)]


def test_image_look_ups_ask_what_ec2_needs(base_config):
    """The default image: Canonical's account of the partition, the name of Ubuntu 24.04 amd64, available,
    newest. An explicit image: by id, deprecated ones included (DescribeImages leaves them out unless
    asked, although EC2 still launches them)."""
    from components.settings import versions

    pool(1, ami="ami-0ccccccccccccccc1")(base_config)
    run = harness.run_program(base_config)
    default, explicit = _lookups(run, "getAmi")
    assert default.args == {"mostRecent": True, "owners": ["099720109477"], "filters": [
        {"name": "name", "values": [versions.UBUNTU_AMI_NAME]}, {"name": "state", "values": ["available"]}]}
    assert explicit.args == {"filters": [{"name": "image-id", "values": ["ami-0ccccccccccccccc1"]}], "includeDeprecated": True}


def test_offerings_look_up_asks_for_the_types_in_the_new_nodes_zones(base_config):
    pool(0, instanceType="m6i.xlarge")(base_config)
    run = harness.run_program(base_config)
    (offerings,) = _lookups(run, "getInstanceTypeOfferings")
    assert offerings.args == {"locationType": "availability-zone", "filters": [
        {"name": "instance-type", "values": ["m6i.large", "m6i.xlarge"]},
        {"name": "location", "values": ["us-east-1a", "us-east-1b"]}]}


def test_running_nodes_are_not_judged_by_todays_offerings(base_config):
    """Day 2: a node that runs is not refused because its type is no longer offered in its zone;
    only new nodes are, and with no new node there is no offerings look-up at all."""
    first = harness.run_program(base_config, stack="day2")
    later = harness.run_program(base_config, stack="day2", previous_outputs=first.outputs,
                                mocks=AwsLikeMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))
    assert later.resources and not _lookups(later, "getInstanceTypeOfferings")
    pool(1, count=3)(base_config)  # one more agent, in us-east-1a
    grown = harness.run_program(base_config, stack="day2", previous_outputs=first.outputs,
                                mocks=AwsLikeMocks("us-east-1", unoffered=[("m6i.large", "us-east-1b")]))
    (offerings,) = _lookups(grown, "getInstanceTypeOfferings")
    assert offerings.args["filters"][1] == {"name": "location", "values": ["us-east-1a"]}


def _day2(base_config, **mock_kwargs):
    """The stack as deployed (everything exists), then the same stack judged against an account
    where something it was deployed with has gone since."""
    first = harness.run_program(base_config, stack="day2")
    return first, lambda cfg: harness.run_program(cfg, stack="day2", previous_outputs=first.outputs,
                                                  mocks=AwsLikeMocks("us-east-1", **mock_kwargs))


def test_a_key_pair_deleted_since_warns_until_a_node_is_launched(base_config):
    """Review finding 4: only RunInstances reads the key pair (keyName is ForceNew on aws_instance,
    terraform-provider-aws internal/service/ec2/ec2_instance.go), so a key deleted after the nodes
    booted must not refuse a tag or version update; renaming the key would replace every node."""
    access(sshKeyName="dev")(base_config)
    first, later = _day2(base_config, key_pairs=[])
    run = later(base_config)
    assert run.resources and any(
        m.startswith("rke-aws:access.sshKeyName: looking up the key pair 'dev' in us-east-1 failed")
        and m.endswith("no instance is launched by this update, so it goes ahead, but the next new or replaced node "
                       "would be refused") for m in _warnings(run)), _warnings(run)
    pool(1, count=3)(base_config)  # one more agent: RunInstances with the missing key
    message = run_refused_day2(base_config, first, key_pairs=[])
    assert "rke-aws:access.sshKeyName: looking up the key pair 'dev'" in message


def test_a_deregistered_image_warns_until_its_pool_launches_a_node(base_config):
    pool(1, ami="ami-0aaaaaaaaaaaaaaa9")(base_config)
    first, later = _day2(base_config, images={})
    run = later(base_config)
    assert run.resources and any(m.startswith("rke-aws:nodePools[1].ami: looking up image 'ami-0aaaaaaaaaaaaaaa9'")
                                 and "launches none of the pool's" in m for m in _warnings(run)), _warnings(run)
    servers = copy.deepcopy(base_config)
    pool(0, count=3)(servers)  # more servers; the agents' pool launches nothing: still a warning
    assert later(servers).resources
    pool(1, count=3)(base_config)
    message = run_refused_day2(base_config, first, images={})
    assert "rke-aws:nodePools[1].ami: looking up image 'ami-0aaaaaaaaaaaaaaa9'" in message


def test_an_image_for_another_architecture_is_refused_only_where_a_node_launches(base_config):
    """A pool's `ami` changed to an arm64 image: running nodes ignore it (nodes.IGNORED_ON_UPDATE), so
    only its next node would be refused by EC2."""
    first, later = _day2(base_config, images={"ami-0bbbbbbbbbbbbbbb9": {"architecture": "arm64",
                                                                        "virtualizationType": "hvm"}})
    pool(1, ami="ami-0bbbbbbbbbbbbbbb9")(base_config)
    run = later(base_config)
    assert any(m.startswith("rke-aws:nodePools[1].instanceType: 'm6i.large' runs x86_64") for m in _warnings(run))
    pool(1, count=3)(base_config)
    assert "rke-aws:nodePools[1].instanceType: 'm6i.large' runs x86_64" in run_refused_day2(
        base_config, first, images={"ami-0bbbbbbbbbbbbbbb9": {"architecture": "arm64", "virtualizationType": "hvm"}})


def test_an_agent_type_changed_in_place_must_be_offered_in_its_zone(base_config):
    """An agent's instanceType changes by stop / modify / start of the running instance (no
    ForceNew within one architecture, ec2_instance.go CustomizeDiff), which EC2 refuses in a zone
    that does not offer the type: judged although no node is new."""
    first, _ = _day2(base_config)
    pool(1, instanceType="m6i.xlarge")(base_config)
    message = run_refused_day2(base_config, first, unoffered=[("m6i.xlarge", "us-east-1b")])
    assert "rke-aws:nodePools[1].instanceType: 'm6i.xlarge' is not offered in us-east-1b" in message


def test_an_agent_type_for_another_architecture_waits_for_rotation(base_config):
    """Running agents keep their type (nodes.IGNORED_ON_UPDATE), so an arm64 type no longer replaces them
    all at once with the image they booted (ec2_instance.go CustomizeDiff ForceNewIf instance_type): the
    update goes ahead, and rotation launches each with the pool's type and its arm64 default image. A
    pinned amd64 image would be refused: rotation launches these nodes (machine_problems judges the pool)."""
    first, later = _day2(base_config)
    pool(1, instanceType="m7g.large")(base_config)
    run = later(base_config)
    assert not [r for r in run.of_type("aws:ec2/instance:Instance") if r.inputs["instanceType"] == "m7g.large"
                and "instanceType" not in r.ignore_changes]
    pool(1, ami="ami-0aaaaaaaaaaaaaaa1")(base_config)
    assert "rke-aws:nodePools[1].instanceType: 'm7g.large' runs arm64" in run_refused_day2(
        base_config, first, images={"ami-0aaaaaaaaaaaaaaa1": {"architecture": "x86_64", "virtualizationType": "hvm"}})


def run_refused_day2(cfg, first, **mock_kwargs) -> str:
    mocks = AwsLikeMocks("us-east-1", **mock_kwargs)
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(cfg, stack="day2", mocks=mocks, previous_outputs=first.outputs)
    assert mocks.resources == [], "registered before refusing"
    return str(info.value)


def test_every_pool_is_judged_after_a_failed_look_up(base_config):
    both(pool(0, instanceType="m9z.large"), pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"))(base_config)
    _plan_refused(base_config, (("nodePools[0].instanceType", "InvalidInstanceType"),
                                ("nodePools[1].instanceType", "runs arm64")))
    both(pool(0, instanceType="m6i.large", ami="ami-0ddddddddddddddd1"),
         pool(1, instanceType="m7g.large", ami="ami-0ccccccccccccccc1"))(base_config)
    _plan_refused(base_config, (("nodePools[0].ami", "looking up image 'ami-0ddddddddddddddd1' in us-east-1 failed (invoke of "
                                                     "aws:ec2/getAmi:getAmi failed: Your query returned no results (image "
                                                     "ami-0ddddddddddddddd1). Please change your search criteria and try "
                                                     "again.); use an image that exists in us-east-1 and this account may "
                                                     "launch"),
                                ("nodePools[1].instanceType", "runs arm64")),
                  images={"ami-0ccccccccccccccc1": {"architecture": "x86_64"}})


def test_failed_offerings_look_up_is_a_config_error(base_config, monkeypatch):
    pool(0, instanceType="m6i.xlarge")(base_config)
    mocks = AwsLikeMocks("us-east-1")
    real = mocks._call

    def failing(args):
        if args.token.endswith("getInstanceTypeOfferings"):
            raise ValueError("UnauthorizedOperation: not allowed to ec2:DescribeInstanceTypeOfferings")
        return real(args)

    monkeypatch.setattr(mocks, "_call", failing)
    run_refused(base_config, (("nodePools[].instanceType",
                               "looking up where m6i.large, m6i.xlarge are offered in us-east-1 failed (invoke of "
                               "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings failed: UnauthorizedOperation: "
                               "not allowed to ec2:DescribeInstanceTypeOfferings); check your AWS credentials "
                               "(ec2:DescribeInstanceTypeOfferings)"),), mocks=mocks)


def test_look_up_messages_name_the_fix(base_config):
    access(sshKeyName="nobody")(base_config)
    pool(1, instanceType="m9z.large")(base_config)
    message = _plan_refused(base_config, (("access.sshKeyName", "InvalidKeyPair.NotFound"),
                                          ("nodePools[1].instanceType", "InvalidInstanceType")), key_pairs=[])
    assert message.endswith(
        "  - rke-aws:access.sshKeyName: looking up the key pair 'nobody' in us-east-1 failed (invoke of "
        "aws:ec2/getKeyPair:getKeyPair failed: InvalidKeyPair.NotFound: The key pair 'nobody' does not exist); create "
        "or import it in us-east-1 (aws ec2 import-key-pair --key-name ...), or fix the name\n"
        "  - rke-aws:nodePools[1].instanceType: looking up instance type 'm9z.large' in us-east-1 failed (invoke of "
        "aws:ec2/getInstanceType:getInstanceType failed: InvalidInstanceType: The following supplied instance types do "
        "not exist: [m9z.large]); use an instance type EC2 offers in us-east-1 (aws ec2 describe-instance-types)")


def test_machine_messages_in_full(base_config):
    pool(1, ami="ami-0eeeeeeeeeeeeeee1", instanceType="m1.small")(base_config)
    message = _plan_refused(base_config, (("nodePools[1].instanceType", "runs i386 or x86_64"),),
                            images={"ami-0eeeeeeeeeeeeeee1": {"architecture": "arm64", "virtualizationType": "hvm"}})
    assert ("rke-aws:nodePools[1].instanceType: 'm1.small' runs i386 or x86_64, but the pool's image ami-0eeeeeeeeeeeeeee1 "
            "is arm64; use an instance type for arm64, or set nodePools[1].ami to an image for i386 or x86_64") in message
    pool(1, ami="ami-0eeeeeeeeeeeeeee2", instanceType="m6i.large")(base_config)
    message = _plan_refused(base_config, (("nodePools[1].instanceType", "virtualization"),),
                            images={"ami-0eeeeeeeeeeeeeee2": {"architecture": "x86_64", "virtualizationType": "paravirtual"}})
    assert ("rke-aws:nodePools[1].instanceType: 'm6i.large' supports hvm virtualization, but the pool's image "
            "ami-0eeeeeeeeeeeeeee2 is paravirtual; use another type or image") in message
    pool(1, ami=None, instanceType="m6i.large")(base_config)
    message = _plan_refused(base_config, (("nodePools[0].instanceType", "not offered"),
                                          ("nodePools[1].instanceType", "not offered")),
                            unoffered=[("m6i.large", "us-east-1a"), ("m6i.large", "us-east-1b")])
    assert ("rke-aws:nodePools[1].instanceType: 'm6i.large' is not offered in us-east-1a, us-east-1b, where the pool's "
            "new nodes go; use a type offered there, or other zones (aws ec2 describe-instance-type-offerings "
            "--location-type availability-zone --filters Name=instance-type,Values=m6i.large)") in message


def _warnings(run) -> list[str]:
    return [m for level, m in run.logs if level == "warning"]


def test_rke2_server_size_warnings_follow_rke2s_requirements(base_config, monkeypatch):
    from components.plan import spec

    pool(0, instanceType="c7g.medium", ami="ami-0fffffffffffffff1")(base_config)
    images = {"ami-0fffffffffffffff1": {"architecture": "arm64", "virtualizationType": "hvm"}}
    run = harness.run_program(base_config, mocks=AwsLikeMocks("us-east-1", images=images))
    assert ("rke-aws:nodePools[0].instanceType: 'c7g.medium' has 1 vCPU and 2 GiB; RKE2 servers need at least 2 vCPU "
            "and 4 GiB (docs.rke2.io install/requirements): etcd and the API server may not keep up") in _warnings(run)
    # RKE2's VM sizing guide: 2 vCPU / 4 GiB servers carry up to 225 agents (the boundary, on the pure rule).
    key = "rke-aws:nodePools[0].instanceType"
    warn = spec.rke2_server_size_warning
    assert warn(key, "t3.medium", 2, 4096, 225) is None
    assert warn(key, "t3.medium", 2, 4096, 226) == (
        "rke-aws:nodePools[0].instanceType: 226 agents; RKE2's sizing guide gives servers of 't3.medium' (2 vCPU, "
        "4 GiB) up to 225 (docs.rke2.io install/requirements, VM sizing guide): use larger servers")
    assert "up to 225" in warn(key, "r6i.large", 2, 16384, 226)  # 2 vCPU and 16 GiB: both must reach a row
    assert warn(key, "m6i.2xlarge", 8, 32768, 5000) is None  # the guide's last row has no limit here
    # The program counts every agent of every pool against the servers' type as EC2 describes it: the same
    # rule with a guide whose first row ends at 3 agents, on a program small enough to run.
    monkeypatch.setattr(spec, "RKE2_SIZING_GUIDE", ((2, 4096, 3),) + spec.RKE2_SIZING_GUIDE[1:])
    both(pool(0, instanceType="t3.medium", ami=None), pool(1, count=2))(base_config)
    assert not [w for w in _warnings(harness.run_program(base_config)) if "sizing guide" in w]
    extra_pool(count=2)(base_config)
    assert ("rke-aws:nodePools[0].instanceType: 4 agents; RKE2's sizing guide gives servers of 't3.medium' (2 vCPU, "
            "4 GiB) up to 3" in " ".join(_warnings(harness.run_program(base_config))))


def test_rke1_servers_get_no_rke2_size_warning(base_config):
    both(put("distribution", "rke"), put("ccm", {}), pool(0, instanceType="t3.small"))(base_config)
    assert not [w for w in _warnings(harness.run_program(base_config)) if "RKE2 servers" in w]


def test_manifest_size_limit_is_exactly_the_parameters_size(base_config, monkeypatch):
    """Refused exactly when the parameter __main__ would store is larger than the limit: the check
    renders the same manifest, byte for byte."""
    from components.plan import spec as plan

    ccm(extraArgs=[f"--flag-{i:03d}={'x' * 60}" for i in range(10)])(base_config)
    run = harness.run_program(base_config)
    (param,) = [r for r in run.of_type("aws:ssm/parameter:Parameter") if r.inputs["name"].endswith("/ccm.yaml")]
    size = len(param.inputs["insecureValue"].encode())
    monkeypatch.setattr(plan, "ADVANCED_TIER_MAX", size)
    harness.run_program(base_config)
    monkeypatch.setattr(plan, "ADVANCED_TIER_MAX", size - 1)
    message = run_refused(base_config, (("ccm.extraArgs", "the CCM manifest (ccm.install manifest) is"),))
    extra = sum(len(a) + 8 for a in json.loads(base_config["rke-aws:ccm"])["extraArgs"])
    assert (f"the CCM manifest (ccm.install manifest) is {size:,} bytes, of which about {extra:,} are ccm.extraArgs and "
            f"{len(run.outputs['ccmImage'])} ccm.image; an SSM "
            f"parameter holds at most {size - 1:,} bytes (Advanced tier): use fewer or shorter extraArgs, or ccm.install "
            "helm") in message


def test_bring_your_own_overlap_message_in_full(base_config):
    from tests.test_config import PRIVATE_IDS, _byo_config, _existing_subnets

    subnets = _existing_subnets()
    subnets[PRIVATE_IDS[0]]["cidr"] = "10.43.0.0/20"
    message = run_refused(_byo_config(base_config), (("network.privateSubnetIds[0]", "overlaps"),),
                          mocks=AwsLikeMocks("us-east-1", existing_subnets=subnets))
    assert ("rke-aws:network.privateSubnetIds[0]: the subnet's 10.43.0.0/20 overlaps 10.43.0.0/16, the cluster's pod or "
            "service network (RKE2 and RKE1 default): its nodes would send traffic for those addresses into the cluster; "
            "use subnets outside 10.42.0.0/16 and 10.43.0.0/16") in message


def test_four_vcpu_servers_carry_450_agents():
    from components.plan import spec

    key = "rke-aws:nodePools[0].instanceType"
    assert spec.rke2_server_size_warning(key, "m6i.xlarge", 4, 16384, 450) is None
    assert "451 agents; RKE2's sizing guide gives servers of 'm6i.xlarge' (4 vCPU, 16 GiB) up to 450" in \
        spec.rke2_server_size_warning(key, "m6i.xlarge", 4, 16384, 451)


def test_default_image_only_for_pools_without_their_own(base_config, monkeypatch):
    both(pool(0, ami="ami-0aaaaaaaaaaaaaab1"), pool(1, ami="ami-0aaaaaaaaaaaaaab2"))(base_config)
    run = harness.run_program(base_config)
    assert [lk.args["filters"][0]["name"] for lk in _lookups(run, "getAmi")] == ["image-id", "image-id"]
    pool(1, ami=None)(base_config)
    mocks = AwsLikeMocks("us-east-1")
    real = mocks._call

    def no_ubuntu(args):
        if args.token.endswith("getAmi") and not any(f["name"] == "image-id" for f in args.args.get("filters") or []):
            raise ValueError("Your query returned no results.")
        return real(args)

    monkeypatch.setattr(mocks, "_call", no_ubuntu)
    message = run_refused(base_config, (("nodePools[].ami", "looking up the default image"),), mocks=mocks)
    assert "set `ami` on nodePools[1] to an image that exists in us-east-1" in message
