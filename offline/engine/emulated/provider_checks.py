"""What the providers (not AWS's APIs) answer or refuse, and the facts the emulated account publishes.

Each written from its owner's source or documentation, never from the program: the AWS provider's region check
and its user-data limits (terraform-provider-aws), the shape of a route in the getRouteTable answer (the SDK wants
every field), a Rancher cluster's registration token (Rancher's import URL), the accounts Canonical publishes
Ubuntu from, and the images the account publishes under Canonical's naming.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib

ACCOUNT_ID = "123456789012"  # moto's default account

# The account Canonical publishes Ubuntu from in each partition (Canonical's "Find Ubuntu images on AWS",
# ownership verification), written out here, not taken from the program: a program that asks another owner
# finds no image, as in the partition itself.
CANONICAL_OWNERS = {"aws": "099720109477", "aws-us-gov": "513442679011", "aws-cn": "837727238323"}
# The Canonical images the account publishes (moto's built-in AMIs have no Ubuntu 24.04), named as Canonical
# names them (ubuntu/images/hvm-ssd-gp3/ubuntu-<series>-<version>-<deb arch>-server-<serial>; "Find Ubuntu images
# on AWS"), one serial each; EC2 calls the architectures x86_64 and arm64. tests/emulated/test_images.py holds the
# program's image filters to these names.
UBUNTU_SERIAL = "20250101"
UBUNTU_CREATED = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)
UBUNTU_IMAGES = {  # EC2 architecture -> image name
    "x86_64": f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-{UBUNTU_SERIAL}",
    "arm64": f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-{UBUNTU_SERIAL}",
}
ROOT_DEVICE = "/dev/sda1"  # Ubuntu images' root device

# The other vendors' images (issue 35), one per vendor, partition and architecture where the vendor publishes
# one, under the vendor's own publisher account and naming, written out from the vendors' and their users'
# sources (not from the program; tests/emulated/test_images.py holds the program's filters to them). Where a
# vendor publishes nothing (Rocky, SUSE outside the commercial partition), the account has no image: a look-up
# there finds none, as in the partition itself.
# - RHEL: Red Hat's account 309956199498 (kubernetes/kops upup/pkg/fi/cloudup/awsup/aws_cloud.go
#   WellKnownAccountRedhat), GovCloud 219670896067 (Red Hat KB 15356), China 841258680906 (aws/eks-hybrid
#   test/e2e/os/rhel.go); names like RHEL-9.5.0_HVM-20241211-x86_64-0-Hourly2-GP3 (rancher/terraform-aws-server
#   modules/image/types.tf).
# - Rocky: 792107900819 (kops WellKnownAccountRockyLinux); Rocky-9-EC2-Base-9.<minor>-<date>.<n>.<x86_64|aarch64>
#   (kops docs/operations/images.md).
# - SUSE: 013907871322 (rancher/terraform-aws-server types.tf); suse-sles-15-sp7-v<date>-hvm-ssd-<arch> (SUSE's SSM
#   parameter /aws/service/suse/sles/15-sp7/<arch>/latest resolves to these, aws/eks-hybrid test/e2e/os/sles.go),
#   suse-sle-micro-6-1-byos-v<date>-hvm-ssd-<arch> (types.tf sle-micro-61).
# - Amazon Linux 2023: 137112412989 (kops WellKnownAccountAmazonLinux2023), GovCloud 045324592363 and China
#   141808717104 (awslabs/amazon-eks-ami Makefile); al2023-ami-2023.<ver>-kernel-6.1-<arch> (aws-parallelcluster).
_RHEL = {"x86_64": "RHEL-9.6.0_HVM-20250910-x86_64-0-Hourly2-GP3", "arm64": "RHEL-9.6.0_HVM-20250910-arm64-0-Hourly2-GP3"}
_AL2023 = {"x86_64": "al2023-ami-2023.8.20250818.0-kernel-6.1-x86_64",
           "arm64": "al2023-ami-2023.8.20250818.0-kernel-6.1-arm64"}
VENDOR_IMAGES: dict[str, dict[str, tuple[str, dict[str, str]]]] = {  # partition -> vendor -> (owner, arch -> name)
    "aws": {
        "redhat": ("309956199498", _RHEL),
        "rocky": ("792107900819", {"x86_64": "Rocky-9-EC2-Base-9.6-20250531.0.x86_64",
                                   "arm64": "Rocky-9-EC2-Base-9.6-20250531.0.aarch64"}),
        "suse-sles": ("013907871322", {"x86_64": "suse-sles-15-sp7-v20250701-hvm-ssd-x86_64",
                                       "arm64": "suse-sles-15-sp7-v20250701-hvm-ssd-arm64"}),
        "suse-sle-micro": ("013907871322", {"x86_64": "suse-sle-micro-6-1-byos-v20250210-hvm-ssd-x86_64",
                                            "arm64": "suse-sle-micro-6-1-byos-v20250210-hvm-ssd-arm64"}),
        "amazon": ("137112412989", _AL2023),
    },
    "aws-us-gov": {"redhat": ("219670896067", _RHEL), "amazon": ("045324592363", _AL2023)},
    "aws-cn": {"redhat": ("841258680906", _RHEL), "amazon": ("141808717104", _AL2023)},
}


def vendor_image_id(region: str, vendor: str, architecture: str) -> str:
    """The ID the account gives a vendor's image of `architecture` in `region` (stable per region)."""
    return "ami-" + hex_of(f"{vendor}:{region}:{architecture}", 17)


def vendor_images(partition: str) -> list[tuple[str, str, str, str]]:
    """(vendor, owner, architecture, name) of every vendor image published in `partition`."""
    return [(vendor, owner, arch, name) for vendor, (owner, names) in VENDOR_IMAGES.get(partition, {}).items()
            for arch, name in names.items()]


def hex_of(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def ubuntu_image_id(region: str, architecture: str) -> str:
    """The ID the account gives Canonical's image of `architecture` in `region` (stable per region)."""
    return "ami-" + hex_of(f"ubuntu:{region}" + ("" if architecture == "x86_64" else ":arm64"), 17)


def partition_of(region: str) -> str:
    """The partition a region belongs to (botocore's endpoints data: us-gov-* GovCloud, cn-* China)."""
    return "aws-us-gov" if region.startswith("us-gov-") else "aws-cn" if region.startswith("cn-") else "aws"


def dns_suffix(partition: str) -> str:
    return "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com"


def known_regions() -> frozenset[str]:
    """Every region of every partition botocore knows (its bundled endpoints data, as moto's region table
    lists them)."""
    from rke_aws_offline.engine.emulated import moto_import

    moto_import.load()
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

    return frozenset(r.name for r in RegionsAndZonesBackend.regions)


def region_refusal(region: str) -> str | None:
    """What the AWS provider answers every call with when configured for a region that does not exist (its
    region validation, before any API call), or None."""
    return None if region in known_regions() else f"configuring the AWS provider: invalid AWS Region: {region}"


ROUTE_KEYS = ("carrierGatewayId", "cidrBlock", "coreNetworkArn", "destinationPrefixListId", "egressOnlyGatewayId",
              "gatewayId", "instanceId", "ipv6CidrBlock", "localGatewayId", "natGatewayId", "networkInterfaceId",
              "odbNetworkArn", "transitGatewayId", "vpcEndpointId", "vpcPeeringConnectionId")


def route_result(**given: str) -> dict[str, str]:
    """One route of the getRouteTable answer (the SDK wants every field present)."""
    return {k: given.get(k, "") for k in ROUTE_KEYS}


# EC2 RunInstances: "User data is limited to 16 KB, in raw form, before it is base64-encoded".
EC2_USER_DATA_LIMIT = 16 * 1024


def user_data_refusal(name: str, inputs: dict) -> str | None:
    """What the provider or EC2 answers an instance's user data with, or None: both inputs at once
    (ConflictsWith), `userData` over 16,384 characters (the provider's StringLenBetween), base64 that is not
    base64, or a raw payload over EC2's limit (terraform-provider-aws internal/service/ec2/ec2_instance.go; EC2
    API reference, RunInstances)."""
    text, encoded = inputs.get("userData"), inputs.get("userDataBase64")
    if text and encoded:
        return f"instance {name}: \"user_data\": conflicts with user_data_base64"
    if isinstance(text, str) and len(text) > EC2_USER_DATA_LIMIT:
        return f"instance {name}: expected length of user_data to be in the range (0 - {EC2_USER_DATA_LIMIT})"
    raw = text.encode() if isinstance(text, str) else b""
    if isinstance(encoded, str):
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return f"instance {name}: user_data_base64: must be base64-encoded"
    if len(raw) > EC2_USER_DATA_LIMIT:
        return (f"InvalidParameterValue: instance {name}: User data is limited to {EC2_USER_DATA_LIMIT} bytes "
                f"({len(raw)} given)")
    return None


def rancher_cluster_answer(seed: str) -> tuple[str, dict]:
    """A rancher2 Cluster as the provider answers: ID c-<5 chars> and the registration token (Rancher's
    manifest address is <server>/v3/import/<token>_<cluster ID>.yaml; the server here is a placeholder)."""
    cid = "c-" + hex_of(seed, 5)
    token = hex_of(seed + "token", 54)
    url = f"https://rancher.offline.invalid/v3/import/{token}_{cid}.yaml"
    return cid, {"clusterRegistrationToken": {"clusterId": cid, "token": token, "manifestUrl": url,
                                              "command": f"kubectl apply -f {url}",
                                              "insecureCommand": f"curl --insecure -sfL {url} | kubectl apply -f -"},
                 "driver": "imported"}
