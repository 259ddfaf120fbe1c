"""The hostile-input table: values a stack file may hold that the program must refuse (or accept), each with
the problem it reports."""

from __future__ import annotations

import json
from collections.abc import Callable

import pulumi
import pytest

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import both, net, pool, put, set_key

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


def run_refused(cfg: dict, expected: tuple[Expected, ...], mocks: MotoMocks | None = None,
                secret_keys: list[str] | None = None, stack: str = "test") -> str:
    """The whole program: one RunError listing exactly the expected problems, nothing registered."""
    mocks = mocks or MotoMocks(cfg.get("aws:region") or "us-east-1")
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


WORLD = "that is the internet, not your networks"


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
    row("instance-type-arabic", pool(1, instanceType=f"m{ARABIC_3}i.large"), ("nodePools[agents].instanceType", "is not valid")),
    row("zone-arabic", net(availabilityZones=[f"us-east-{ARABIC_3}a", "us-east-1b"]),
        ("network.availabilityZones", "is not an availability zone name")),
    row("pool-count-arabic", pool(1, count=ARABIC_3), ("nodePools[agents].count", "is not a whole number")),
    row("pool-count-padded", pool(1, count=" 3 "), ("nodePools[agents].count", "is not a whole number")),
    row("region-arabic", put("aws:region", f"us-east-{ARABIC_3}"), ("aws:region", "is not an AWS region")),
]


CCM = [
    row("image-latest", ccm(image=f"{CCM_REPO}:latest"),
        ("ccm.image", "is pinned to 'latest', which moves (a CCM must not become newer than the cluster)")),
    row("image-untagged", ccm(image=CCM_REPO), ("ccm.image", "is not valid")),
    row("image-bad-digest", ccm(image=f"{CCM_REPO}@sha256:abc"), ("ccm.image", "is not valid")),
    row("program-flag", ccm(extraArgs=["--use-service-account-credentials=false"]), ("ccm.extraArgs[0]", "is set by this program")),
]


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


REASONS = [
    row("reason-" + name, pool(1, imdsHopLimit=2, imdsHopLimitReason=reason), ("nodePools[agents].imdsHopLimitReason", fragment))
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


# A near miss of the project's namespace (edit distance 2 of `rke-aws`) is warned about, not refused: other
# namespaces belong to other programs (a consumer's own keys), so nothing else is judged (design 33/34 §1.4).
# (key, suggestion in the warning)
NAMESPACE_TYPOS = [
    pytest.param("rke_aws:protectServers", "true", "did you mean rke-aws:protectServers?", id="underscore-namespace"),
    pytest.param("rke-aws2:tags", '{"team":"a"}', "did you mean rke-aws:tags?", id="numbered-namespace"),
    pytest.param("RKE-AWS:hardening", "cis", "did you mean rke-aws:hardening?", id="uppercase-namespace"),
]
# Other programs' namespaces: read by nothing here, refused by nothing.
OTHER_NAMESPACES = ["random:length", "aws2:region", "awz:profile", "myapp:replicas"]

NAMESPACES = [
    row("rke-aws-key-with-zero-width", lambda cfg: cfg.__setitem__(f"rke-aws:tags{ZWSP}", "{}"),
        ('"tags\\u200b"', "unknown key; did you mean tags?")),
    row("rke-aws-key-typo", lambda cfg: cfg.__setitem__("rke-aws:protectServer", "true"),
        ("protectServer", "unknown key; did you mean protectServers?")),
    row("rke-aws-nested-typo", net(vpcCIDR="10.0.0.0/16"), ("network.vpcCIDR", "did you mean vpcCidr?")),
    row("two-colons", lambda cfg: cfg.__setitem__("rke-aws:tags:team", "a"), ("tags:team", "not a configuration key")),
]


NULLS = [
    row("null-cluster-id", put("clusterId", "null"), ("clusterId", "is null")),
    row("null-network", put("network", "null"), ("network", "is null")),
    row("null-nested", lambda cfg: set_key(cfg, "network", {"vpcCidr": None, "availabilityZones": 2}),
        ("network.vpcCidr", "is null")),
    row("null-pool-field", lambda cfg: set_key(cfg, "nodePools", [
        {"name": "server", "roles": ["controlplane", "etcd"], "count": 1, "ami": None},
        {"name": "agents", "roles": ["worker"], "count": 2}]), ("nodePools[server].ami", "is null")),
    row("null-pool-name", lambda cfg: set_key(cfg, "nodePools", [
        {"name": None, "roles": ["controlplane", "etcd"], "count": 1}, {"name": "agents", "roles": ["worker"], "count": 2}]),
        ("nodePools[0].name", "is null")),
    row("empty-network", put("network", ""), ("network", "is empty (what the Pulumi CLI passes for `key: ~`")),
    row("empty-distribution", put("distribution", ""), ("distribution", "is empty")),
    row("deep-network", lambda cfg: cfg.__setitem__("rke-aws:network", "[" * 3000 + "]" * 3000),
        ("network", "nests deeper than the program reads")),
    row("deep-pool", lambda cfg: cfg.__setitem__("rke-aws:nodePools", json.dumps([{"name": "a", "roles": [[[[[["x"]]]]]], "count": 1}])),
        ("nodePools[a].roles", "is not a role")),
]


SECRET = "is encrypted (a `secure:` value, set with --secret), but the program uses it as plain text"


SECRETS = [
    row("secret-tags", lambda cfg: set_key(cfg, "tags", stackfile.secret('{"team":"platform"}')), ("tags", SECRET)),
    row("secret-cluster-id", lambda cfg: set_key(cfg, "clusterId", stackfile.secret("prod")), ("clusterId", SECRET)),
    row("secret-network", lambda cfg: set_key(cfg, "network", stackfile.secret('{"vpcCidr":"10.30.0.0/16"}')), ("network", SECRET)),
    row("secret-distribution", lambda cfg: set_key(cfg, "distribution", stackfile.secret("rke2")), ("distribution", SECRET)),
    row("plain-kubeconfig", put("kubeconfig", "apiVersion: v1\nkind: Config\n"), ("kubeconfig", "is stored as plain text")),
]


PROGRAM_ROWS = CIDRS + PIECES + NAMES + BUCKETS + UNICODE + CCM + KMS_ROWS + REASONS + TAG_ROWS + NAMESPACES + NULLS + SECRETS


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
