"""Names, tags and paths the program derives or passes on are ones AWS, the provider and k3s accept
(issue 21 items 2 and 3). Each rule is checked against a statement of it that does not come from the
program: the provider's validators (terraform-provider-aws, read and restated here), AWS's own API
models in botocore (tag patterns, partitions), S3's naming rules as the User Guide lists them, Go's
path.Clean (posixpath.normpath) for k3s's path.Join.
"""

# split: this module mixes levels (issue 33 §7.2); the test that runs the program -> tests/program.

from __future__ import annotations

import ipaddress
import posixpath
import re

import botocore.loaders
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rke_aws.aws import backups
from rke_aws.aws.endpoint import short_name
from rke_aws.settings import fields
from rke_aws.settings.patterns import cidr_regex, whole
from rke_aws.settings.rules import tags as tags_rules
from tests.support.properties import examples

PROPERTY = settings(derandomize=True, database=None, max_examples=examples(300), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
cluster_ids = st.from_regex(fields.CLUSTER_ID_PATTERN)
LOADER = botocore.loaders.Loader()


def _fullmatch(pattern: str, value: str) -> bool:
    return re.compile(pattern).fullmatch(value) is not None


# --- S3: the created bucket, and etcdBackup.bucket -----------------------------------------------------------

def s3_refuses(name: str) -> list[str]:
    """S3 User Guide, "General purpose bucket naming rules" (2026), restated rule by rule."""
    out = []
    if not 3 <= len(name) <= 63:
        out.append("length 3-63")
    if not re.fullmatch(r"[a-z0-9.-]*", name):
        out.append("lowercase letters, numbers, dots, hyphens")
    if not (name[:1].isascii() and name[:1].isalnum() and name[-1:].isascii() and name[-1:].isalnum()):
        out.append("begin and end with a letter or number")
    if ".." in name:
        out.append("no two adjacent periods")
    if re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){3}", name):
        out.append("not formatted as an IP address")
    for prefix in ("xn--", "sthree-", "amzn-s3-demo-"):
        if name.startswith(prefix):
            out.append(f"prefix {prefix}")
    for suffix in ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"):
        if name.endswith(suffix):
            out.append(f"suffix {suffix}")
    return out


@PROPERTY
@given(cluster_ids, st.from_regex(r"[0-9]{12}", fullmatch=True), st.sampled_from(["us-east-1", "cn-north-1", "us-gov-west-1"]))
def test_created_bucket_names_are_names_s3_accepts(cluster_id, account, region):
    name = backups.bucket_name(cluster_id, account, region)
    assert not s3_refuses(name), (name, s3_refuses(name))
    assert _fullmatch(fields.BUCKET_PATTERN, name)


@pytest.mark.parametrize("cluster_id", ["xn--prod", "sthree-prod", "amzn-s3-demo-prod", "xn", "sthree"])
def test_reserved_prefixes_change_the_bucket_name_and_nothing_else_does(cluster_id):
    name = backups.bucket_name(cluster_id, "123456789012", "us-east-1")
    assert not s3_refuses(name)
    old = f"{cluster_id[:40].rstrip('-')}-etcd-" + name.rsplit("-", 1)[1]  # the formula before the rule
    assert name == (f"etcd-{old}" if s3_refuses(old) else old)


@PROPERTY
@given(st.one_of(st.from_regex(r"[a-z0-9.-]{1,66}", fullmatch=True), st.text(max_size=70),
                 st.sampled_from(["xn--a", "sthree-a", "sthree-configurator", "amzn-s3-demo-a", "a-s3alias", "a--ol-s3",
                                  "a.mrap", "a--x-s3", "a--table-s3", "1.2.3.4", "999.1.1.1", "1.2.3.4.5", "a.b", "a-.b",
                                  "a.-b", "a..b", "ab", "a" * 63, "a" * 64, "-ab", "ab-", ".ab", "ab.", "AB", "a_b"])))
def test_bucket_pattern_is_s3s_rules(name):
    """etcdBackup.bucket: refused exactly when S3 refuses the name (plus labels that start or end
    with a hyphen, which virtual-hosted-style DNS names cannot have)."""
    dns_label_rule = ".-" in name or "-." in name
    assert _fullmatch(fields.BUCKET_PATTERN, name) == (not s3_refuses(name) and not dns_label_rule)


# --- security groups: pulumi-aws names them "<resource name>-<suffix>"; AWS refuses "sg-..." --------------------

@PROPERTY
@given(cluster_ids)
def test_security_group_names_never_start_with_sg(cluster_id):
    """terraform-provider-aws internal/service/ec2/vpc_security_group.go: name and name_prefix
    `StringDoesNotMatch(^sg-)`. The program's groups are auto-named from "<clusterId>-nodes" and
    "<clusterId>-endpoint"."""
    for resource in (f"{cluster_id}-nodes", f"{cluster_id}-endpoint"):
        assert not resource.startswith("sg-")


def test_a_cluster_id_starting_with_sg_is_refused():
    assert not _fullmatch(fields.CLUSTER_ID_PATTERN, "sg-prod")
    assert _fullmatch(fields.CLUSTER_ID_PATTERN, "sgprod") and _fullmatch(fields.CLUSTER_ID_PATTERN, "s")


# --- ELBv2: load balancer and target group names ---------------------------------------------------------

def elbv2_refuses(name: str, load_balancer: bool) -> list[str]:
    """terraform-provider-aws internal/service/elbv2/validate.go, validName (load balancers) and
    validTargetGroupName: at most 32 of [0-9A-Za-z-], no hyphen first or last; a load balancer's not
    "internal-" first."""
    out = []
    if len(name) > 32:
        out.append("longer than 32")
    if not re.fullmatch(r"[0-9A-Za-z-]+", name):
        out.append("alphanumerics and hyphens")
    if name.startswith("-") or name.endswith("-"):
        out.append("hyphen at an end")
    if load_balancer and name.startswith("internal-"):
        out.append("begins with internal-")
    return out


@PROPERTY
@given(st.one_of(cluster_ids, st.from_regex(r"internal[a-z0-9-]{0,30}", fullmatch=True)), st.sampled_from(["api", "9345", "6443"]))
def test_load_balancer_and_target_group_names_are_names_elbv2_accepts(cluster_id, suffix):
    assert not elbv2_refuses(short_name(cluster_id, suffix, load_balancer=True), load_balancer=True)
    assert not elbv2_refuses(short_name(cluster_id, suffix), load_balancer=False)


@PROPERTY
@given(cluster_ids)
def test_only_names_elbv2_refuses_change(cluster_id):
    """A renamed load balancer or target group is replaced: names AWS accepted stay as they were."""
    import hashlib

    digest = hashlib.sha256(cluster_id.encode()).hexdigest()[:6]
    for suffix in ("api", "6443"):
        before = f"{cluster_id[:32 - len(suffix) - 8].rstrip('-')}-{digest}-{suffix}"  # the formula before the rule
        assert short_name(cluster_id, suffix) == before
        if not elbv2_refuses(before, load_balancer=True):
            assert short_name(cluster_id, suffix, load_balancer=True) == before


def test_internal_cluster_ids():
    assert short_name("internal", "api", load_balancer=True).startswith("lb-internal-")
    assert short_name("internal-prod", "api", load_balancer=True).startswith("lb-internal-prod-")
    assert short_name("internalprod", "api", load_balancer=True).startswith("internalprod-")  # not "internal-"


# --- tags: what IAM and SSM accept (their API models in botocore) -----------------------------------------------

def _botocore_pattern(service: str, shape: str) -> tuple[str, int, int]:
    model = LOADER.load_service_model(service, "service-2")["shapes"][shape]
    return model["pattern"], model.get("min", 0), model["max"]


def _ascii_unicode_class(pattern: str) -> str:
    """An AWS model pattern's Unicode classes as they match ASCII text: \\p{L} letters, \\p{Z} the
    space, \\p{N} digits (Python's re has no \\p{...})."""
    return pattern.replace(r"\p{L}", "A-Za-z").replace(r"\p{Z}", " ").replace(r"\p{N}", "0-9")


TAG_MODELS = {
    "iam": (("iam", "tagKeyType"), ("iam", "tagValueType")),
    "ssm": (("ssm", "TagKey"), ("ssm", "TagValue")),
}


def aws_refuses_tag(kind: str, text: str) -> list[str]:
    out = []
    for service, (key_shape, value_shape) in TAG_MODELS.items():
        pattern, lo, hi = _botocore_pattern(*(key_shape if kind == "key" else value_shape))
        body = _ascii_unicode_class(pattern).strip("^$")
        if not (lo <= len(text) <= hi and text.isascii() and re.fullmatch(body, text)):
            out.append(service)
    return out


tag_texts = st.one_of(st.text(alphabet=st.characters(max_codepoint=0x7f), max_size=140),
                      st.from_regex(r"[A-Za-z0-9 _.:/=+@-]{0,130}", fullmatch=True),
                      st.text(alphabet="aé\u00a0\u200b\u0663 \t\n:/", max_size=8))


@PROPERTY
@given(tag_texts)
def test_tag_keys_the_program_accepts_iam_and_ssm_accept(key):
    reserved = key.strip(" ").lower().startswith(fields.RESERVED_TAG_PREFIXES) or \
        key.strip(" ").lower() in {k.lower() for k in fields.RESERVED_TAG_KEYS}
    accepted = tags_rules.tag_key_problem(key) is None
    if accepted:
        assert not aws_refuses_tag("key", key), key
    elif not aws_refuses_tag("key", key) and key.isascii():
        # Refused although IAM and SSM take it: only the program's own reasons (reserved keys, a space at an end).
        assert reserved or key != key.strip(" "), key


@PROPERTY
@given(tag_texts)
def test_tag_values_the_program_accepts_iam_and_ssm_accept(value):
    accepted = tags_rules.tag_value_problem(value) is None
    assert accepted == (not aws_refuses_tag("value", value) and value.isascii()), value


@pytest.mark.parametrize("key", ["KubernetesCluster", "kubernetes.io/cluster/other", "KUBERNETES.IO/CLUSTER/x"])
def test_user_tags_cannot_carry_a_second_cluster_tag(key):
    """kubernetes/cloud-provider-aws pkg/providers/v1/tags.go: an instance with two cluster tags
    (kubernetes.io/cluster/<id> or the legacy KubernetesCluster) stops the CCM ("ClusterID tags did
    not match"); every user tag lands on every instance."""
    assert tags_rules.tag_key_problem(key) == tags_rules.RESERVED_TAG


# --- the snapshot folder: k3s joins it with path.Join (Go's path.Clean) --------------------------------------------

@PROPERTY
@given(st.one_of(st.from_regex(r"[A-Za-z0-9./_-]{1,24}", fullmatch=True), st.text(max_size=12)))
def test_accepted_folders_survive_path_clean_unchanged(folder):
    """The node role's grant names `<bucket>/<folder>/*`; k3s writes to path.Join(folder, name), which
    cleans the path: a folder Go's path.Clean changes would put every snapshot outside the grant."""
    if _fullmatch(fields.FOLDER_PATTERN, folder):
        assert posixpath.normpath(folder) == folder and not folder.startswith("/")
        assert all(seg not in ("", ".", "..") for seg in folder.split("/"))


# --- KMS key ARNs: the partition botocore assigns to the ARN's region ---------------------------------------------

@PROPERTY
@given(st.sampled_from(["aws", "aws-cn", "aws-us-gov"]),
       st.sampled_from(["us-east-1", "eu-west-1", "cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1",
                        "ap-southeast-2"]))
def test_kms_key_arns_name_their_regions_partition(partition, region):
    partitions = LOADER.load_data("endpoints")["partitions"]
    (owner,) = [p["partition"] for p in partitions if re.match(p["regionRegex"], region)]
    arn = f"arn:{partition}:kms:{region}:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert _fullmatch(fields.KMS_KEY_ARN_PATTERN, arn) == (partition == owner)


# --- the pod and service networks --------------------------------------------------------------------------------

def test_cluster_networks_are_rke2_and_rke1_defaults():
    """RKE2: docs.rke2.io reference/server_config, cluster-cidr "10.42.0.0/16" and service-cidr
    "10.43.0.0/16"; RKE1: rancher/rke cluster/defaults.go DefaultClusterCIDR / DefaultServiceClusterIPRange.
    Neither distribution is configured otherwise by this program (no cluster-cidr in its configs)."""
    assert fields.CLUSTER_NETWORKS == ("10.42.0.0/16", "10.43.0.0/16")
    from pathlib import Path

    source = "\n".join(p.read_text() for p in Path(fields.__file__).parent.glob("*.py"))
    for option in ("cluster-cidr", "service-cidr", "cluster_cidr", "service_cluster_ip_range"):
        assert f'"{option}"' not in source, f"{option} is configured somewhere: CLUSTER_NETWORKS must follow it"


@PROPERTY
@given(st.integers(0, 2**32 - 1), st.integers(16, 24))
def test_vpc_cidr_pattern_is_canonical_rfc1918_clear_of_the_cluster(address, prefix):
    net = ipaddress.IPv4Network((address >> (32 - prefix) << (32 - prefix), prefix))
    want = (any(net.subnet_of(ipaddress.IPv4Network(r)) for r in fields.RFC1918_CIDRS)
            and not any(net.overlaps(ipaddress.IPv4Network(c)) for c in fields.CLUSTER_NETWORKS))
    assert _fullmatch(fields.VPC_CIDR_PATTERN, str(net)) == want
    assert not _fullmatch(fields.VPC_CIDR_PATTERN, f"{net.network_address}/{net.netmask}")


# Addresses octet by octet: Hypothesis draws each from 0..255, so parents land apart as often as together.
_addresses = st.tuples(*[st.integers(0, 255)] * 4).map(lambda o: o[0] << 24 | o[1] << 16 | o[2] << 8 | o[3])


def _networks(min_prefix: int, max_prefix: int):
    return st.builds(lambda address, prefix: ipaddress.IPv4Network((address >> (32 - prefix) << (32 - prefix), prefix)),
                     _addresses, st.integers(min_prefix, max_prefix))


@settings(derandomize=True, database=None, max_examples=examples(100), deadline=None)
@given(st.lists(_networks(4, 28), min_size=1, max_size=3), st.lists(_networks(6, 30), max_size=3),
       st.integers(0, 32), st.integers(0, 32), st.data())
def test_cidr_regex_is_its_definition(parents, excluded, lo, hi, data):
    """patterns.cidr_regex against the definition, by ipaddress: canonical CIDRs of a prefix in lo..hi inside a
    parent (parents may overlap) and overlapping no excluded network. The candidates are drawn from both ends of
    each parent and excluded network, and at random."""
    lo, hi = min(lo, hi), max(lo, hi)
    pattern = whole(cidr_regex([str(p) for p in parents], lo, hi, [str(e) for e in excluded]))
    near = []
    for n in parents + excluded:
        offset = data.draw(st.integers(0, n.num_addresses - 1))
        near += [int(n.network_address) + offset, int(n.broadcast_address) - offset]
    for address in near + [data.draw(_addresses)]:
        prefix = data.draw(st.integers(max(lo - 1, 0), min(hi + 1, 32)))
        net = ipaddress.IPv4Network((address >> (32 - prefix) << (32 - prefix), prefix))
        want = (lo <= prefix <= hi and any(net.subnet_of(p) for p in parents)
                and not any(net.overlaps(e) for e in excluded))
        assert _fullmatch(pattern, str(net)) == want, (str(net), parents, excluded, lo, hi)
        host_form = f"{ipaddress.IPv4Address(address)}/{prefix}"  # host bits set, unless it is the network's
        assert host_form == str(net) or not _fullmatch(pattern, host_form), host_form
