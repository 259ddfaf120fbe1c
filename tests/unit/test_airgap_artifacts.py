"""What an air-gapped cluster reads from its artifacts bucket and the check that names what is missing
(components/node/airgap_artifacts.py), against RKE2's asset names and install.sh's needs; and the boot
script's S3 signer against botocore's (the AWS SDK for Python), the real signer S3 agrees with."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from rke_aws.node import airgap_artifacts as art
from rke_aws.node import scripts

RELEASE = "v1.35.7+rke2r1"


def test_release_files_are_rke2_s_asset_names():
    """rancher/rke2 scripts/package-*, scripts/checksum: rke2.linux-<arch>.tar.gz, sha256sum-<arch>.txt,
    rke2-images.linux-<arch>.tar.zst; install.sh maps x86_64 -> amd64, aarch64 -> arm64."""
    assert art.release_files("x86_64") == ("sha256sum-amd64.txt", "rke2.linux-amd64.tar.gz", "rke2-images.linux-amd64.tar.zst")
    assert art.release_files("arm64") == ("sha256sum-arm64.txt", "rke2.linux-arm64.tar.gz", "rke2-images.linux-arm64.tar.zst")


@pytest.mark.parametrize("prefix, expected", [("rke2", "rke2/v1.35.7+rke2r1/"), ("/rke2/", "rke2/v1.35.7+rke2r1/"),
                                              ("", "v1.35.7+rke2r1/")])
def test_release_prefix(prefix, expected):
    assert art.release_prefix(prefix, RELEASE) == expected


def full_listing(prefix="rke2", archs=("amd64",)):
    keys = [f"{prefix}/{RELEASE}/install.sh"]
    for a in archs:
        keys += [f"{prefix}/{RELEASE}/sha256sum-{a}.txt", f"{prefix}/{RELEASE}/rke2.linux-{a}.tar.gz",
                 f"{prefix}/{RELEASE}/rke2-images.linux-{a}.tar.zst", f"{prefix}/{RELEASE}/rke2-images.linux-{a}.txt"]
    return keys


def test_nothing_missing():
    needed = art.needed_artifacts("rke2", RELEASE, ["x86_64"], ["ubuntu-24.04"])
    assert art.missing_artifacts(full_listing(), "b", needed) == []


def test_missing_names_exactly_what_is_missing():
    needed = art.needed_artifacts("rke2", RELEASE, ["x86_64", "arm64"], ["ubuntu-24.04"])
    listing = [k for k in full_listing() if not k.endswith("tar.zst")]
    assert art.missing_artifacts(listing, "corp", needed) == [
        f"s3://corp/rke2/{RELEASE}/sha256sum-arm64.txt: RKE2 {RELEASE} release asset sha256sum-arm64.txt",
        f"s3://corp/rke2/{RELEASE}/rke2.linux-arm64.tar.gz: RKE2 {RELEASE} release asset rke2.linux-arm64.tar.gz",
        f"s3://corp/rke2/{RELEASE}/rke2-images.linux-arm64.tar.zst: RKE2 {RELEASE} release asset rke2-images.linux-arm64.tar.zst",
        f"s3://corp/rke2/{RELEASE}/rke2-images.linux-amd64.tar.zst: RKE2 {RELEASE} release asset rke2-images.linux-amd64.tar.zst",
    ]


def test_a_gz_image_archive_or_another_release_does_not_count():
    needed = art.needed_artifacts("rke2", RELEASE, ["x86_64"])
    listing = [k.replace(".tar.zst", ".tar.gz") for k in full_listing()]
    assert len(art.missing_artifacts(listing, "b", needed)) == 1
    other = [k.replace(RELEASE, "v1.35.6+rke2r1") for k in full_listing()]
    assert len(art.missing_artifacts(other, "b", needed)) == 4


def test_selinux_rpms_per_os():
    """rke2-selinux-<v>-<r>.<dist>.noarch.rpm (rke2-selinux specs); container-selinux where the OS's repositories are
    out of reach; Rancher's key for zypper."""
    needed = art.needed_artifacts("rke2", RELEASE, ["x86_64"], ["rhel-9", "al2023", "sle-micro-6"])
    listing = full_listing() + ["rke2/rpms/el9/rke2-selinux-0.23-1.el9.noarch.rpm"]
    missing = art.missing_artifacts(listing, "b", needed)
    assert missing == [
        "s3://b/rke2/rpms/el8/rke2-selinux-*.el8.noarch.rpm: rke2-selinux for Amazon Linux 2023 (rancher/rke2-selinux release asset, .el8)",
        "s3://b/rke2/rpms/el9/container-selinux-*.rpm: container-selinux for Red Hat Enterprise Linux 9 (rke2-selinux requires it; the OS's repositories are out of reach)",
        "s3://b/rke2/rpms/slemicro/rke2-selinux-*.slemicro.noarch.rpm: rke2-selinux for SUSE Linux Micro 6.1 (rancher/rke2-selinux release asset, .slemicro)",
        "s3://b/rke2/rpms/slemicro/*.key: Rancher's rpm signing key (https://rpm.rancher.io/public.key), for zypper",
    ]
    # an el9 build does not serve AL2023 (install.sh maps it to centos/8)
    assert not art.Needed("x", under="rke2/rpms/el8/", pattern="rke2-selinux-*.el8.noarch.rpm").found(
        {"rke2/rpms/el8/rke2-selinux-0.23-1.el9.noarch.rpm"})


def test_preinstalled_needs_nothing_but_upgrades_need_the_suc_manifests():
    assert art.needed_artifacts("rke2", RELEASE, ["x86_64"], ["rhel-9"], preinstalled=True) == []
    needed = art.needed_artifacts("rke2", RELEASE, ["x86_64"], preinstalled=True, upgrades=True)
    assert [n.key for n in needed] == list(art.suc_keys("rke2"))


def test_what_nodes_fetch_is_what_the_check_requires():
    """The boot script's files (scripts.node_steps) and the plan-time check agree."""
    steps = scripts.node_steps("ubuntu-24.04", region="us-east-1", dns_suffix="amazonaws.com", arch="arm64",
                               release=RELEASE, airgap=scripts.Airgap("b", "rke2"))
    fetched = {steps.settings["RELEASE_PREFIX"] + f for f in steps.settings["ARTIFACT_FILES"].split()}
    required = {n.key for n in art.needed_artifacts("rke2", RELEASE, ["arm64"])}
    assert fetched == required


def test_bucket_in_another_region_or_partition():
    assert art.bucket_problems("us-east-1", "us-east-1") == []
    assert "its own region only" in art.bucket_problems("us-west-2", "us-east-1")[0]
    assert "partition aws" in art.bucket_problems(None, "us-gov-west-1", "aws", "aws-us-gov")[0]


def test_node_policy_reads_only_under_the_prefix():
    doc = art.artifacts_policy_document("aws-us-gov", "corp", "/rke2/")
    read, listing = doc["Statement"]
    assert read["Action"] == ["s3:GetObject"] and read["Resource"] == "arn:aws-us-gov:s3:::corp/rke2/*"
    assert listing["Resource"] == "arn:aws-us-gov:s3:::corp"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["rke2/*"]}}


def test_readme_commands_verify_checksums_before_uploading():
    text = art.readme_commands(RELEASE, ["x86_64"], "corp", "rke2")
    lines = text.splitlines()
    check = next(i for i, line in enumerate(lines) if "sha256sum -c" in line)
    assert check < next(i for i, line in enumerate(lines) if line.startswith("aws s3 cp"))
    assert "releases/download/v1.35.7%2Brke2r1/rke2.linux-amd64.tar.gz" in text


# ---- the boot script's SigV4 signer, against botocore's ---------------------------------------------------

S3_SH = Path(scripts.__file__).parent / "scripts" / "s3.sh"


def sign(host: str, key: str, query: dict | None = None) -> tuple[str, str, str]:
    body = scripts.fragment("s3")
    script = (f"REGION='us-gov-west-1'\nS3_HOST='s3.us-gov-west-1.amazonaws.com'\nAK=AKIAEXAMPLE\nSK='wJalr/XUtn+FEMI'\n"
              f"ST='IQoJb3JpZ2luX2VjE==/+'\n{body}\ns3_sign \"$1\" \"$2\" \"$3\"\n")
    out = subprocess.run(["sh", "-c", script, "sh", host, key, json.dumps(query) if query else ""],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return out[0], out[1], out[2]


@pytest.mark.parametrize("key, query", [
    (f"rke2/{RELEASE}/rke2.linux-amd64.tar.gz", None),
    ("rke2/rpms/el9/a b+c=d~e.rpm", None),
    ("", {"list-type": "2", "prefix": "rke2/rpms/el9/"}),
    ("", {"list-type": "2", "prefix": "rke2/", "continuation-token": "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="}),
])
def test_s3_signature_is_the_sdk_s(key, query):
    host = "corp-artifacts.s3.us-gov-west-1.amazonaws.com"
    stamp, target, authorization = sign(host, key, query)
    request = AWSRequest(method="GET", url=f"https://{host}{target}", headers={
        "x-amz-date": stamp, "x-amz-security-token": "IQoJb3JpZ2luX2VjE==/+", "x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    request.context["timestamp"] = stamp
    signer = S3SigV4Auth(Credentials("AKIAEXAMPLE", "wJalr/XUtn+FEMI", "IQoJb3JpZ2luX2VjE==/+"), "s3", "us-gov-west-1")
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    assert authorization == (f"AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/{stamp[:8]}/us-gov-west-1/s3/aws4_request, "
                             f"SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature={expected}")
    # '+' in the release travels encoded (%2B), as the SDKs send it: S3 has read a literal '+' in a path as a space
    assert "+" not in target.split("?")[0]
