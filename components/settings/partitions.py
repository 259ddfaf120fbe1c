"""AWS partitions: the one place that turns a region into ARNs, service hosts and image owners.

Sources: the AWS SDKs' partitions.json (aws, aws-us-gov, aws-cn: DNS suffix, regions), domain.md
section 6, and Canonical's "Find Ubuntu images on AWS" (ownership verification) for the owner
account that publishes Ubuntu in each partition. Service principals are not DNS names: EC2's is
`ec2.amazonaws.com` in every partition, China included (aws/aws-cdk packages/aws-cdk-lib/
region-info/lib/default.ts: `universal` is the default, only codedeploy, logs and elasticmapreduce
differ in China; terraform-provider-aws names/names.go ServicePrincipalNameForPartition, used by
internal/service/meta/service_principal_data_source.go, the same list). API endpoints do carry
the partition's suffix (`ssm.cn-north-1.amazonaws.com.cn`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Partition:
    name: str  # the ARN partition: arn:<name>:...
    dns_suffix: str  # service endpoints: <service>.<region>.<dns_suffix>
    ec2_principal: str  # EC2's service principal in role trust policies (the same in every partition)
    ubuntu_owner: str  # Canonical's publisher account in this partition

    def arn(self, service: str, region: str, account: str, resource: str) -> str:
        return f"arn:{self.name}:{service}:{region}:{account}:{resource}"

    def endpoint(self, service: str, region: str) -> str:
        return f"{service}.{region}.{self.dns_suffix}"


COMMERCIAL = Partition("aws", "amazonaws.com", "ec2.amazonaws.com", "099720109477")
GOVCLOUD = Partition("aws-us-gov", "amazonaws.com", "ec2.amazonaws.com", "513442679011")
CHINA = Partition("aws-cn", "amazonaws.com.cn", "ec2.amazonaws.com", "837727238323")


# The regions of each partition this program builds in, as the pinned AWS provider knows them (pulumi-aws's
# `Region` enum, generated from terraform-provider-aws's list, which the provider checks a region against
# unless skip_region_validation is set; tests/unit/settings/test_regions.py holds the two equal). A region
# outside these fails at the provider anyway: refused first, with the nearest name.
REGIONS: dict[str, tuple[str, ...]] = {
    "aws": (
        "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1",
        "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
        "ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1",
        "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1",
        "me-south-1", "mx-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",
    ),
    "aws-us-gov": ("us-gov-east-1", "us-gov-west-1"),
    "aws-cn": ("cn-north-1", "cn-northwest-1"),
}
EXAMPLE_REGION = {"aws": "us-west-2", "aws-us-gov": "us-gov-west-1", "aws-cn": "cn-north-1"}
# Regions the provider knows in partitions this program has no ARNs, hosts or image owners for (the isolated
# partitions, the European Sovereign Cloud): left as today (shaped like a region: not judged here).
OTHER_PARTITION_REGIONS = ("eusc-de-east-1", "us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "us-isob-west-1",
                           "eu-isoe-west-1", "us-isof-east-1", "us-isof-south-1")


def known_regions(near: str | None = None) -> list[str]:
    """Every region of REGIONS; those of `near`'s partition first (a suggestion stays in the partition)."""
    first = REGIONS[of_region(near).name] if near is not None else ()
    return [*first, *(r for regions in REGIONS.values() for r in regions if r not in first)]


def of_region(region: str) -> Partition:
    if region.startswith("us-gov-"):
        return GOVCLOUD
    if region.startswith("cn-"):
        return CHINA
    return COMMERCIAL
