"""Typical AWS create latencies per resource type, for the `pulumi up` estimate.

Seconds from the provider's Create call until Pulumi records the resource as created, i.e.
including the waiters the Terraform-bridged provider runs (pulumi-aws wraps terraform-provider-aws).
Mid-range values; each line says where the number comes from. Component resources cost 0.
"""

from __future__ import annotations

# type -> (seconds, source / justification)
CREATE_SECONDS: dict[str, tuple[float, str]] = {
    "aws:ec2/vpc:Vpc": (5, "CreateVpc is synchronous (~1-2 s); the provider then waits for `available` and sets DNS support/hostnames (ModifyVpcAttribute)"),
    "aws:ec2/internetGateway:InternetGateway": (4, "CreateInternetGateway + AttachInternetGateway, provider waits for `attached`: a few seconds"),
    "aws:ec2/subnet:Subnet": (3, "CreateSubnet + wait for `available` + ModifySubnetAttribute: 2-5 s"),
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": (1, "single synchronous CreateSubnetCidrReservation call"),
    "aws:ec2/routeTable:RouteTable": (2, "CreateRouteTable + wait until readable: 1-3 s"),
    "aws:ec2/route:Route": (2, "CreateRoute + provider waits for the route to show `active`: 1-3 s"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": (2, "AssociateRouteTable + wait for `associated`: 1-3 s"),
    "aws:ec2/eip:Eip": (2, "AllocateAddress is synchronous; provider reads it back: 1-2 s"),
    "aws:ec2/natGateway:NatGateway": (105, "NAT gateway goes pending -> available in ~1-2 min (provider waits for `available`, 10 min timeout); 90-120 s typical"),
    "aws:ec2/securityGroup:SecurityGroup": (3, "CreateSecurityGroup + revoke the default egress rule + tags: 2-4 s"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (1, "single AuthorizeSecurityGroupIngress call"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": (1, "single AuthorizeSecurityGroupEgress call"),
    "aws:ec2/instance:Instance": (45, "RunInstances, provider waits for state `running` (not status checks): 30-60 s typical"),
    "aws:iam/role:Role": (2, "CreateRole is synchronous; the provider retries reads for IAM eventual consistency: 1-3 s"),
    "aws:iam/rolePolicy:RolePolicy": (1, "single PutRolePolicy call"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": (1, "single AttachRolePolicy call"),
    "aws:iam/policy:Policy": (2, "CreatePolicy + read-back: 1-3 s"),
    "aws:iam/instanceProfile:InstanceProfile": (10, "CreateInstanceProfile + AddRoleToInstanceProfile, then ~10 s until EC2 accepts the new profile (IAM propagation; the provider waits/retries)"),
    "aws:ssm/parameter:Parameter": (1, "single PutParameter call"),
    "aws:route53/zone:Zone": (45, "CreateHostedZone (private, with the VPC association); the provider waits for the change to be INSYNC: 30-60 s"),
    "aws:route53/record:Record": (40, "ChangeResourceRecordSets, provider waits for INSYNC: 30-60 s"),
    "aws:lb/loadBalancer:LoadBalancer": (180, "NLB provisioning -> active: 2-4 min (provider waits for `active`)"),
    "aws:lb/targetGroup:TargetGroup": (2, "CreateTargetGroup is synchronous"),
    "aws:lb/targetGroupAttachment:TargetGroupAttachment": (2, "RegisterTargets is synchronous"),
    "aws:lb/listener:Listener": (2, "CreateListener is synchronous"),
    "kubernetes:yaml/v2:ConfigFile": (0, "a component: its children (the system-upgrade-controller objects) cost their own time"),
    "kubernetes:upgrade.cattle.io/v1:Plan": (1, "one server-side apply of a custom resource"),
    "aws:ec2/tag:Tag": (1, "single CreateTags call (bring-your-own network only)"),
    "random:index/randomPassword:RandomPassword": (0.1, "computed locally by the random provider, no API call"),
    "pulumi:providers:kubernetes": (1, "provider configuration only (parses kubeconfig, discovers the API server): ~1 s"),
    "pulumi:providers:aws": (1, "provider configuration (credentials, region): ~1 s"),
    "kubernetes:helm.sh/v3:Release": (45, "chart pull + install, Pulumi waits for the release's resources (DaemonSet/Deployment) to be ready: 30-60 s"),
}
# Unlisted custom types: a single API call plus a read-back.
DEFAULT_SECONDS = 3.0


def create_seconds(typ: str, custom: bool = True) -> float:
    if not custom:
        return 0.0
    return CREATE_SECONDS.get(typ, (DEFAULT_SECONDS, ""))[0]
