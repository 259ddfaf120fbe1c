"""Every resource type the offline machinery knows, declared once.

Per type: what makes its provider replace it (`replace`: the inputs terraform-provider-aws marks
ForceNew / RequiresReplace as bridged by pulumi-aws 7, pulumi-kubernetes' and terraform-provider-random's
own, and the rules that depend on old and new values, each with the upstream file it was read from;
offline/report/diff.py judges changes with them), the emulated account's handler (`emulate`: a MotoMocks method;
offline/engine/emulated/resources.py) and a typical create latency for the bench's `pulumi up` estimate
(`create_seconds`; bench/latencies.py). A type missing here is refused by the emulated account (it never fakes
what is not known) and judged "unknown: may replace" by the diff.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ---- what the providers decide ----------------------------------------------------------------------
#
# The inputs whose change makes the provider replace the resource, the rules that depend on old and new
# values (CustomizeDiff / ModifyPlan), and the upstream file each comes from. Every other changed input
# is updated in place.

TF_AWS = "hashicorp/terraform-provider-aws internal/service/"
K8S = "pulumi/pulumi-kubernetes provider/pkg/provider/"


@dataclass(frozen=True)
class Verdict:
    """What the provider does about some changed inputs of one resource."""
    action: str  # "replace" | "update" | "unknown"
    keys: tuple[str, ...]
    why: str = ""


# A conditional rule: (old inputs, new inputs, changed keys, keys whose new value is unknown) ->
# verdicts for the keys it decides (listed in `decides`).
Condition = Callable[[dict, dict, set, set], list]


@dataclass(frozen=True)
class TypeRules:
    source: str  # the upstream file(s) the rules were read from
    replace_on: frozenset = frozenset()  # a change of any of these replaces
    nested: tuple = ()  # (input, sub-keys): a change of input.sub-key replaces, of other sub-keys updates
    conditions: tuple = ()  # (keys it decides, Condition)
    stops: frozenset = frozenset()  # inputs whose in-place update stops the resource (EC2 instances)


def _rules(source: str, *replace_on: str, nested=(), conditions=(), stops=()) -> TypeRules:
    return TypeRules(source, frozenset(replace_on), tuple(nested), tuple(conditions), frozenset(stops))


def instance_architectures(instance_type: Any) -> frozenset | None:
    """The CPU architectures an EC2 instance type supports, from AWS's own DescribeInstanceTypes data
    as moto bundles it (moto/ec2/resources/instance_types.json.gz; independent of this program), or
    None when the type is not in it (a type newer than that data, or a value not known offline)."""
    if not isinstance(instance_type, str):
        return None
    table = _instance_type_table()
    info = table.get(instance_type) if table else None
    archs = ((info or {}).get("ProcessorInfo") or {}).get("SupportedArchitectures")
    return frozenset(archs) if archs else None


_INSTANCE_TYPES: dict | None = None


def _instance_type_table() -> dict:
    global _INSTANCE_TYPES
    if _INSTANCE_TYPES is None:
        try:
            import gzip
            from importlib.util import find_spec
            from pathlib import Path

            # moto's data file, found without importing moto (its import costs ~1 s; the report reads a table).
            spec = find_spec("moto")
            root = Path(next(iter(spec.submodule_search_locations or ()))) if spec else None
            data = (root / "ec2" / "resources" / "instance_types.json.gz").read_bytes() if root else b""
            _INSTANCE_TYPES = json.loads(gzip.decompress(data))
        except Exception:  # noqa: BLE001 - without the table every type change is "unknown"
            _INSTANCE_TYPES = {}
    return _INSTANCE_TYPES


def _instance_type(old: dict, new: dict, changed: set, unknown: set) -> list:
    """ec2_instance.go CustomizeDiff ForceNewIf(instance_type): replaced when the old and the new
    type share no CPU architecture (findInstanceTypeByName, hasCommonElement); else EC2 stops the
    instance, changes its type and starts it."""
    if "instanceType" in unknown:
        return [Verdict("unknown", ("instanceType",), "instance type not known offline: may replace")]
    a, b = instance_architectures(old.get("instanceType")), instance_architectures(new.get("instanceType"))
    if a is None or b is None:
        which = old.get("instanceType") if a is None else new.get("instanceType")
        return [Verdict("unknown", ("instanceType",), f"architectures of {which} unknown offline: may replace")]
    if not a & b:
        return [Verdict("replace", ("instanceType",),
                        f"{old.get('instanceType')} ({'/'.join(sorted(a))}) -> {new.get('instanceType')} "
                        f"({'/'.join(sorted(b))}) share no CPU architecture")]
    return [Verdict("update", ("instanceType",), "stop, change type, start")]


def _user_data(old: dict, new: dict, changed: set, unknown: set) -> list:
    """ec2_instance.go CustomizeDiff ForceNewIf(user_data / user_data_base64): replaced only with
    user_data_replace_on_change; otherwise updated by stopping and starting the instance."""
    keys = tuple(sorted((changed | unknown) & {"userData", "userDataBase64"}))
    if new.get("userDataReplaceOnChange"):
        return [Verdict("replace", keys, "userDataReplaceOnChange")]
    return [Verdict("update", keys, "stop, new user data, start")]


def _nlb(old: dict, new: dict, changed: set, unknown: set) -> list:
    """elbv2/load_balancer.go customizeDiffLoadBalancerNLB (network load balancers that exist):
    `subnets` changes in place only when their number grows, otherwise replace; security groups
    going from none to some or from some to none replace. Values not known at plan time are left to
    the apply (IsWhollyKnown), so they cannot be judged offline."""
    if (new.get("loadBalancerType") or "application") != "network":
        return [Verdict("update", (k,)) for k in sorted((changed | unknown) & {"subnets", "securityGroups"})]
    out = []
    if "subnets" in unknown:
        out.append(Verdict("unknown", ("subnets",), "subnet IDs known only at apply, which the provider cannot "
                                                    "judge; a network load balancer cannot lose a subnet in place"))
    elif "subnets" in changed:
        grows = len(set(new.get("subnets") or ())) > len(set(old.get("subnets") or ()))
        out.append(Verdict("update", ("subnets",), "subnets added") if grows else
                   Verdict("replace", ("subnets",), "a network load balancer's subnets cannot be removed or swapped"))
    if "securityGroups" in unknown:
        out.append(Verdict("unknown", ("securityGroups",), "security groups not known offline: may replace"))
    elif "securityGroups" in changed:
        before, after = bool(old.get("securityGroups")), bool(new.get("securityGroups"))
        out.append(Verdict("replace", ("securityGroups",), "security groups from none to some or back")
                   if before != after else Verdict("update", ("securityGroups",)))
    return out


def _ssm_tier(old: dict, new: dict, changed: set, unknown: set) -> list:
    """ssm/parameter.go CustomizeDiff ForceNewIfChange(tier): SSM refuses to downgrade an Advanced
    parameter to Standard, so the provider replaces it; a set tier changed to Intelligent-Tiering is
    suppressed (the tier's DiffSuppressFunc)."""
    if old.get("tier") == "Advanced" and new.get("tier") == "Standard":
        return [Verdict("replace", ("tier",), "Advanced -> Standard")]
    if old.get("tier") and new.get("tier") == "Intelligent-Tiering":
        return []  # the schema's DiffSuppressFunc: SSM picks the tier, no change
    return [Verdict("update", ("tier",))]


RULE_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")


def _rule_source(inputs: dict) -> str | None:
    return next((k for k in RULE_SOURCES if inputs.get(k) not in (None, "")), None)


def _sg_rule_source(old: dict, new: dict, changed: set, unknown: set) -> list:
    """ec2/vpc_security_group_ingress_rule.go securityGroupRuleResource.ModifyPlan: "When you modify
    a rule, you cannot change the rule's source type" -> RequiresReplace on the old and new source."""
    keys = tuple(sorted((changed | unknown) & set(RULE_SOURCES)))
    a, b = _rule_source(old), _rule_source(new)
    if a != b:
        return [Verdict("replace", keys, f"source {a} -> {b}")]
    return [Verdict("update", keys)]


def _active_cluster(kubeconfig: Any, context: Any = None, cluster: Any = None) -> dict | None:
    """The active cluster of a kubeconfig as pulumi-kubernetes util.go getActiveClusterFromConfig
    finds it (current-context, or the provider's context/cluster overrides), or None."""
    import yaml

    try:
        doc = yaml.safe_load(kubeconfig) if isinstance(kubeconfig, str) else None
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict) or not doc.get("clusters"):
        return None
    named = lambda items, key: {i.get("name"): i.get(key) for i in items or [] if isinstance(i, dict)}  # noqa: E731
    ctx = named(doc.get("contexts"), "context").get(context or doc.get("current-context"))
    name = cluster or (ctx or {}).get("cluster")
    found = named(doc.get("clusters"), "cluster").get(name)
    return found if isinstance(found, dict) else None


def _k8s_provider(old: dict, new: dict, changed: set, unknown: set) -> list:
    """provider.go DiffConfig: with clusterIdentifier set and unchanged nothing replaces; a changed
    clusterIdentifier replaces; otherwise a kubeconfig/context/cluster change replaces iff the active
    cluster changes (a kubeconfig not known at preview time always replaces)."""
    keys = tuple(sorted((changed | unknown) & {"kubeconfig", "context", "cluster", "clusterIdentifier"}))
    ident_old, ident_new = old.get("clusterIdentifier"), new.get("clusterIdentifier")
    if ident_old and ident_new and ident_old != ident_new:
        return [Verdict("replace", keys, "clusterIdentifier changed")]
    if ident_new and ident_old == ident_new:
        return [Verdict("update", keys, "clusterIdentifier unchanged")]
    if {"kubeconfig", "context", "cluster"} & unknown:
        return [Verdict("replace", keys, "kubeconfig not known at preview time")]
    if not {"kubeconfig", "context", "cluster"} & changed:
        return [Verdict("update", keys)]
    a = _active_cluster(old.get("kubeconfig"), old.get("context"), old.get("cluster"))
    b = _active_cluster(new.get("kubeconfig"), new.get("context"), new.get("cluster"))
    if a is None or b is None:
        return [Verdict("unknown", keys, "cannot tell offline whether the kubeconfig's cluster changed: may replace")]
    if a != b:
        return [Verdict("replace", keys, "the kubeconfig's active cluster changed")]
    return [Verdict("update", keys, "same cluster")]




_IMMUTABLE_SECRET = ("stringData", "data", "type")


@dataclass(frozen=True)
class ResourceType:
    replace: TypeRules | None = None  # None: not registered as a custom resource by the program
    emulate: str | None = None  # MotoMocks: a method name
    create_seconds: tuple[float, str] | None = None  # bench: typical create latency and where it comes from


TYPES: dict[str, ResourceType] = {
    "aws:ec2/vpc:Vpc": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_.go", "cidrBlock", "instanceTenancy", "ipv4IpamPoolId",
                       "ipv4NetmaskLength"),
        emulate="_vpc",
        create_seconds=(5, "CreateVpc is synchronous (~1-2 s); the provider then waits for `available` and sets DNS support/hostnames (ModifyVpcAttribute)"),
    ),
    "aws:ec2/subnet:Subnet": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_subnet.go", "vpcId", "cidrBlock", "availabilityZone",
                       "availabilityZoneId", "outpostArn"),
        emulate="_subnet",
        create_seconds=(3, "CreateSubnet + wait for `available` + ModifySubnetAttribute: 2-5 s"),
    ),
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": ResourceType(
        replace=_rules(
            TF_AWS + "ec2/vpc_subnet_cidr_reservation.go (no update function)",
            "subnetId", "cidrBlock", "reservationType", "description"),
        emulate="_subnet_cidr_reservation",
        create_seconds=(1, "single synchronous CreateSubnetCidrReservation call"),
    ),
    "aws:ec2/internetGateway:InternetGateway": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_internet_gateway.go (vpc_id attaches in place)"),
        emulate="_internet_gateway",
        create_seconds=(4, "CreateInternetGateway + AttachInternetGateway, provider waits for `attached`: a few seconds"),
    ),
    "aws:ec2/routeTable:RouteTable": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_route_table.go", "vpcId"),
        emulate="_route_table",
        create_seconds=(2, "CreateRouteTable + wait until readable: 1-3 s"),
    ),
    "aws:ec2/route:Route": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_route.go (targets: ReplaceRoute)", "routeTableId",
                       "destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId"),
        emulate="_route",
        create_seconds=(2, "CreateRoute + provider waits for the route to show `active`: 1-3 s"),
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ResourceType(
        replace=_rules(
            TF_AWS + "ec2/vpc_route_table_association.go (route_table_id: ReplaceRouteTableAssociation)",
            "subnetId", "gatewayId"),
        emulate="_route_table_association",
        create_seconds=(2, "AssociateRouteTable + wait for `associated`: 1-3 s"),
    ),
    "aws:ec2/eip:Eip": ResourceType(
        replace=_rules(TF_AWS + "ec2/ec2_eip.go", "domain", "address", "customerOwnedIpv4Pool",
                       "networkBorderGroup", "publicIpv4Pool", "ipamPoolId"),
        emulate="_eip",
        create_seconds=(2, "AllocateAddress is synchronous; provider reads it back: 1-2 s"),
    ),
    "aws:ec2/natGateway:NatGateway": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_nat_gateway.go", "allocationId", "subnetId",
                       "connectivityType", "privateIp"),
        emulate="_nat_gateway",
        create_seconds=(105, "NAT gateway goes pending -> available in ~1-2 min (provider waits for `available`, 10 min timeout); 90-120 s typical"),
    ),
    "aws:ec2/vpcEndpoint:VpcEndpoint": ResourceType(
        # ForceNew: service_name, vpc_endpoint_type, vpc_id, service_region (and the resource/service-network
        # ARNs, dns_options' private DNS preference and domains); private_dns_enabled replaces only a
        # non-Interface endpoint (CustomizeDiff); subnets, groups, route tables, policy update in place.
        replace=_rules(TF_AWS + "ec2/vpc_endpoint.go (resourceVPCEndpoint schema, CustomizeDiff)", "serviceName",
                       "vpcEndpointType", "vpcId", "serviceRegion", "resourceConfigurationArn", "serviceNetworkArn",
                       nested=[("dnsOptions", frozenset({"privateDnsPreference", "privateDnsSpecifiedDomains"}))]),
        emulate="_vpc_endpoint",
        create_seconds=(90, "CreateVpcEndpoint + wait for `available` (10 min timeout): interface endpoints 1-2 min"),
    ),
    "aws:ec2/securityGroup:SecurityGroup": ResourceType(
        replace=_rules(TF_AWS + "ec2/vpc_security_group.go", "name", "namePrefix",
                       "description", "vpcId"),
        emulate="_security_group",
        create_seconds=(3, "CreateSecurityGroup + revoke the default egress rule + tags: 2-4 s"),
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ResourceType(
        replace=_rules(
            TF_AWS + "ec2/vpc_security_group_ingress_rule.go (securityGroupRuleResource, ModifyPlan)", "securityGroupId",
            conditions=[(RULE_SOURCES, _sg_rule_source)]),
        emulate="_ingress",
        create_seconds=(1, "single AuthorizeSecurityGroupIngress call"),
    ),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ResourceType(
        replace=_rules(
            TF_AWS + "ec2/vpc_security_group_egress_rule.go (securityGroupRuleResource, ModifyPlan)", "securityGroupId",
            conditions=[(RULE_SOURCES, _sg_rule_source)]),
        emulate="_egress",
        create_seconds=(1, "single AuthorizeSecurityGroupEgress call"),
    ),
    "aws:ec2/instance:Instance": ResourceType(
        replace=_rules(
            TF_AWS + "ec2/ec2_instance.go (resourceInstance schema and CustomizeDiff)",
            "ami", "associatePublicIpAddress", "availabilityZone", "cpuCoreCount", "cpuThreadsPerCore", "cpuOptions",
            "ebsBlockDevices", "ebsOptimized", "enclaveOptions", "ephemeralBlockDevices", "hibernation", "hostId",
            "instanceMarketOptions", "ipv6Addresses", "keyName", "launchTemplate", "placementGroup",
            "placementPartitionNumber", "privateDnsNameOptions", "privateIp", "securityGroups", "subnetId", "tenancy",
            nested=[("rootBlockDevice", frozenset({"encrypted", "kmsKeyId"}))],
            conditions=[(("instanceType",), _instance_type), (("userData", "userDataBase64"), _user_data)],
            stops=("instanceType", "userData", "userDataBase64")),
        emulate="_instance",
        create_seconds=(45, "RunInstances, provider waits for state `running` (not status checks): 30-60 s typical"),
    ),
    "aws:ec2/tag:Tag": ResourceType(
        replace=_rules(TF_AWS + "ec2/ec2_tag.go", "resourceId", "key"),
        emulate="_ec2_tag",
        create_seconds=(1, "single CreateTags call (bring-your-own network only)"),
    ),
    "aws:iam/role:Role": ResourceType(
        replace=_rules(TF_AWS + "iam/role.go", "name", "namePrefix", "path"),
        emulate="_role",
        create_seconds=(2, "CreateRole is synchronous; the provider retries reads for IAM eventual consistency: 1-3 s"),
    ),
    "aws:iam/rolePolicy:RolePolicy": ResourceType(
        replace=_rules(TF_AWS + "iam/role_policy.go", "role", "name", "namePrefix"),
        emulate="_role_policy",
        create_seconds=(1, "single PutRolePolicy call"),
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ResourceType(
        replace=_rules(TF_AWS + "iam/role_policy_attachment.go",
                       "role", "policyArn"),
        emulate="_role_policy_attachment",
        create_seconds=(1, "single AttachRolePolicy call"),
    ),
    "aws:iam/instanceProfile:InstanceProfile": ResourceType(
        replace=_rules(TF_AWS + "iam/instance_profile.go", "name", "namePrefix", "path"),
        emulate="_instance_profile",
        create_seconds=(10, "CreateInstanceProfile + AddRoleToInstanceProfile, then ~10 s until EC2 accepts the new profile (IAM propagation; the provider waits/retries)"),
    ),
    "aws:iam/user:User": ResourceType(
        replace=_rules(TF_AWS + "iam/user.go (name and path: UpdateUser)"),
        emulate="_user",
    ),
    "aws:iam/userPolicy:UserPolicy": ResourceType(
        replace=_rules(TF_AWS + "iam/user_policy.go", "user", "name", "namePrefix"),
        emulate="_user_policy",
    ),
    "aws:iam/policy:Policy": ResourceType(
        replace=_rules(TF_AWS + "iam/policy.go", "name", "namePrefix", "path", "description"),
        emulate="_iam_policy",
        create_seconds=(2, "CreatePolicy + read-back: 1-3 s"),
    ),
    "aws:iam/userPolicyAttachment:UserPolicyAttachment": ResourceType(
        replace=_rules(TF_AWS + "iam/user_policy_attachment.go",
                       "user", "policyArn"),
        emulate="_user_policy_attachment",
    ),
    "aws:iam/accessKey:AccessKey": ResourceType(
        replace=_rules(TF_AWS + "iam/access_key.go", "user", "pgpKey"),
        emulate="_access_key",
    ),
    "aws:ssm/parameter:Parameter": ResourceType(
        replace=_rules(TF_AWS + "ssm/parameter.go (CustomizeDiff ForceNewIfChange tier)", "name",
                       conditions=[(("tier",), _ssm_tier)]),
        emulate="_ssm_parameter",
        create_seconds=(1, "single PutParameter call"),
    ),
    "aws:route53/zone:Zone": ResourceType(
        replace=_rules(TF_AWS + "route53/zone.go", "name", "delegationSetId"),
        emulate="_zone",
        create_seconds=(45, "CreateHostedZone (private, with the VPC association); the provider waits for the change to be INSYNC: 30-60 s"),
    ),
    # type is updated (delete + create of the record set in one change batch), not replaced
    "aws:route53/record:Record": ResourceType(
        replace=_rules(TF_AWS + "route53/record.go (resourceRecordUpdate)", "zoneId", "name",
                       "setIdentifier"),
        emulate="_record",
        create_seconds=(40, "ChangeResourceRecordSets, provider waits for INSYNC: 30-60 s"),
    ),
    "aws:lb/loadBalancer:LoadBalancer": ResourceType(
        replace=_rules(
            TF_AWS + "elbv2/load_balancer.go (customizeDiffLoadBalancerNLB)",
            "name", "namePrefix", "internal", "loadBalancerType", "customerOwnedIpv4Pool",
            conditions=[(("subnets", "securityGroups"), _nlb)]),
        emulate="_load_balancer",
        create_seconds=(180, "NLB provisioning -> active: 2-4 min (provider waits for `active`)"),
    ),
    "aws:lb/targetGroup:TargetGroup": ResourceType(
        replace=_rules(TF_AWS + "elbv2/target_group.go", "name", "namePrefix", "port",
                       "protocol", "protocolVersion", "vpcId", "targetType", "ipAddressType"),
        emulate="_target_group",
        create_seconds=(2, "CreateTargetGroup is synchronous"),
    ),
    "aws:lb/targetGroupAttachment:TargetGroupAttachment": ResourceType(
        replace=_rules(
            TF_AWS + "elbv2/target_group_attachment.go (no update function)",
            "targetGroupArn", "targetId", "port", "availabilityZone"),
        emulate="_target_group_attachment",
        create_seconds=(2, "RegisterTargets is synchronous"),
    ),
    "aws:lb/listener:Listener": ResourceType(
        replace=_rules(TF_AWS + "elbv2/listener.go", "loadBalancerArn"),
        emulate="_listener",
        create_seconds=(2, "CreateListener is synchronous"),
    ),
    "aws:s3/bucket:Bucket": ResourceType(
        replace=_rules(TF_AWS + "s3/bucket.go", "bucket", "bucketPrefix", "objectLockEnabled"),
        emulate="_bucket",
    ),
    "aws:s3/bucketVersioning:BucketVersioning": ResourceType(
        replace=_rules(TF_AWS + "s3/bucket_versioning.go", "bucket",
                       "expectedBucketOwner"),
        emulate="_bucket_versioning",
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": ResourceType(
        replace=_rules(
            TF_AWS + "s3/bucket_server_side_encryption_configuration.go", "bucket", "expectedBucketOwner"),
        emulate="_bucket_encryption",
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ResourceType(
        replace=_rules(TF_AWS + "s3/bucket_public_access_block.go",
                       "bucket"),
        emulate="_bucket_public_access",
    ),
    "aws:s3/bucketPolicy:BucketPolicy": ResourceType(
        replace=_rules(TF_AWS + "s3/bucket_policy.go", "bucket"),
        emulate="_bucket_policy",
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ResourceType(
        replace=_rules(TF_AWS + "s3/bucket_ownership_controls.go", "bucket"),
        emulate="_bucket_ownership",
    ),
    "aws:s3/bucketObjectv2:BucketObjectv2": ResourceType(
        replace=_rules(TF_AWS + "s3/object.go (bucket, key ForceNew; content changes update in place)", "bucket", "key"),
        emulate="_bucket_object",
        create_seconds=(0.3, "one PutObject"),
    ),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ResourceType(
        replace=_rules(TF_AWS + "iam/openid_connect_provider.go (url ForceNew; client IDs and thumbprints updated in place)",
                       "url"),
        emulate="_oidc_provider",
        create_seconds=(1, "CreateOpenIDConnectProvider is synchronous"),
    ),
    "tls:index/privateKey:PrivateKey": ResourceType(
        replace=_rules("hashicorp/terraform-provider-tls internal/provider/resource_private_key.go (every argument "
                       "RequiresReplace)", "algorithm", "rsaBits", "ecdsaCurve"),
        emulate="_tls_private_key",
        create_seconds=(0.5, "generated locally by the tls provider, no API call"),
    ),
    "tls:index/selfSignedCert:SelfSignedCert": ResourceType(
        replace=_rules("hashicorp/terraform-provider-tls internal/provider/resource_self_signed_cert.go (every argument "
                       "RequiresReplace)", "privateKeyPem", "subject", "validityPeriodHours", "allowedUses",
                       "dnsNames", "ipAddresses", "uris", "isCaCertificate", "earlyRenewalHours", "setSubjectKeyId",
                       "setAuthorityKeyId", "maxPathLength"),
        emulate="_tls_self_signed_cert",
        create_seconds=(0.1, "signed locally by the tls provider"),
    ),
    "tls:index/certRequest:CertRequest": ResourceType(
        replace=_rules("hashicorp/terraform-provider-tls internal/provider/resource_cert_request.go (every argument "
                       "RequiresReplace)", "privateKeyPem", "subject", "dnsNames", "ipAddresses", "uris"),
        emulate="_tls_cert_request",
        create_seconds=(0.1, "made locally by the tls provider"),
    ),
    "tls:index/locallySignedCert:LocallySignedCert": ResourceType(
        replace=_rules("hashicorp/terraform-provider-tls internal/provider/resource_locally_signed_cert.go (every "
                       "argument RequiresReplace)", "certRequestPem", "caPrivateKeyPem", "caCertPem",
                       "validityPeriodHours", "allowedUses", "isCaCertificate", "earlyRenewalHours",
                       "setSubjectKeyId", "maxPathLength"),
        emulate="_tls_locally_signed_cert",
        create_seconds=(0.1, "signed locally by the tls provider"),
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ResourceType(
        replace=_rules(
            TF_AWS + "s3/bucket_lifecycle_configuration.go", "bucket", "expectedBucketOwner"),
        emulate="_bucket_lifecycle",
    ),
    "aws:kms/key:Key": ResourceType(
        replace=_rules(TF_AWS + "kms/key.go", "keyUsage", "customerMasterKeySpec", "multiRegion",
                       "customKeyStoreId", "xksKeyId"),
        emulate="_kms_key",
    ),
    "aws:kms/alias:Alias": ResourceType(
        replace=_rules(TF_AWS + "kms/alias.go", "name", "namePrefix"),
        emulate="_kms_alias",
    ),
    "random:index/randomPassword:RandomPassword": ResourceType(
        replace=_rules(
            "hashicorp/terraform-provider-random internal/provider/resource_password.go (every argument RequiresReplace)",
            "length", "special", "upper", "lower", "number", "numeric", "minNumeric", "minUpper", "minLower",
            "minSpecial", "overrideSpecial", "keepers"),
        emulate="_random_password",
        create_seconds=(0.1, "computed locally by the random provider, no API call"),
    ),
    # Secrets are immutable unless the provider sets enableSecretMutable (this program does not).
    "kubernetes:core/v1:Secret": ResourceType(
        replace=_rules(
            K8S + "diff.go forceNewProperties (.metadata.name, .metadata.namespace, .type, .stringData, .data)",
            *_IMMUTABLE_SECRET, nested=[("metadata", frozenset({"name", "namespace"}))]),
        emulate="_in_cluster",
    ),
    # Kinds without an entry in diff.go's forceNew table: only the identity replaces.
    "kubernetes:upgrade.cattle.io/v1:Plan": ResourceType(
        replace=_rules(
            K8S + "diff.go metadataForceNewProperties", nested=[("metadata", frozenset({"name", "namespace"}))]),
        emulate="_in_cluster",
        create_seconds=(1, "one server-side apply of a custom resource"),
    ),
    "kubernetes:helm.sh/v3:Release": ResourceType(
        replace=_rules(K8S + "helm_release.go Diff (forceNewFields .name, .namespace)",
                       "name", "namespace"),
        emulate="_helm_release",
        create_seconds=(45, "chart pull + install, Pulumi waits for the release's resources (DaemonSet/Deployment) to be ready: 30-60 s"),
    ),
    "pulumi:providers:kubernetes": ResourceType(
        replace=_rules(
            K8S + "provider.go DiffConfig", "renderYamlToDirectory",
            conditions=[(("kubeconfig", "context", "cluster", "clusterIdentifier"), _k8s_provider)]),
        emulate="_in_cluster",
        create_seconds=(1, "provider configuration only (parses kubeconfig, discovers the API server): ~1 s"),
    ),
    "kubernetes:yaml/v2:ConfigFile": ResourceType(
        create_seconds=(0, "a component: its children (the system-upgrade-controller objects) cost their own time"),
    ),
    # Bridged from terraform-provider-rancher2: only windows_prefered_cluster is ForceNew; name, description,
    # annotations and labels are sent by resourceRancher2ClusterUpdate (an update in place).
    "rancher2:index/cluster:Cluster": ResourceType(
        replace=_rules(
            "rancher/terraform-provider-rancher2 v13.1.4 rancher2/schema_cluster.go (ForceNew: windows_prefered_cluster; "
            "resource_rancher2_cluster.go resourceRancher2ClusterUpdate sends name, description, annotations, labels)",
            "windowsPreferedCluster"),
        emulate="_rancher_cluster",
        create_seconds=(5, "POST /v3/clusters, the provider waits for the cluster to reach `pending` and its registration token"),
    ),
    # A bridged provider's configuration changes in place unless its ProviderInfo marks a key
    # ForcesProviderReplace (pulumi/pulumi-terraform-bridge pkg/tfbridge/provider.go configDiffer.DiffConfig,
    # 59de6c66); pulumi/pulumi-rancher2 provider/resources.go marks none.
    "pulumi:providers:rancher2": ResourceType(
        replace=_rules("pulumi/pulumi-terraform-bridge pkg/tfbridge/provider.go (configDiffer.DiffConfig: replace only "
                       "on ForcesProviderReplace; pulumi/pulumi-rancher2 provider/resources.go sets none)"),
        emulate="_in_cluster",
        create_seconds=(1, "provider configuration; the first call checks Rancher's API answers"),
    ),
    "pulumi:providers:aws": ResourceType(
        create_seconds=(1, "provider configuration (credentials, region): ~1 s"),
    ),
}

# The views each tool reads.
RULES: dict[str, TypeRules] = {t: r.replace for t, r in TYPES.items() if r.replace is not None}
CREATE_SECONDS: dict[str, tuple[float, str]] = {t: r.create_seconds for t, r in TYPES.items()
                                                if r.create_seconds is not None}
