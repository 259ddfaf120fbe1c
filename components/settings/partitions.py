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


def of_region(region: str) -> Partition:
    if region.startswith("us-gov-"):
        return GOVCLOUD
    if region.startswith("cn-"):
        return CHINA
    return COMMERCIAL
