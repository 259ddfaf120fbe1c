"""The emulated account's handlers call moto's backends directly (offline/engine/emulated/backends.py); what
they create must be what AWS's API then answers. Every AWS resource a stack registers is read back here through
boto3 (the path the doctor and real tools use) and compared with what the program was given."""

from __future__ import annotations

import json

import pytest

from rke_aws_offline.engine import emulated_account

STACK = "rke2-split"  # a test fixture (tests/stacks): VPC, NAT, NLB, S3 backups, KMS, Route 53, IAM user


@pytest.fixture(scope="module")
def built():
    run, mocks = emulated_account.build_stack(STACK)
    try:
        yield run, mocks
    finally:
        mocks.stop()


def by_type(run, typ):
    return [r for r in run.resources if r.type == typ]


def test_network_reads_back_as_registered(built):
    run, mocks = built
    ec2 = mocks.client("ec2")
    (vpc,) = by_type(run, "aws:ec2/vpc:Vpc")
    (desc,) = ec2.describe_vpcs(VpcIds=[vpc.id])["Vpcs"]
    assert desc["CidrBlock"] == vpc.inputs["cidrBlock"]
    subnets = by_type(run, "aws:ec2/subnet:Subnet")
    described = {s["SubnetId"]: s for s in ec2.describe_subnets(SubnetIds=[s.id for s in subnets])["Subnets"]}
    for s in subnets:
        got = described[s.id]
        assert (got["VpcId"], got["CidrBlock"], got["AvailabilityZone"]) == (vpc.id, s.inputs["cidrBlock"],
                                                                             s.inputs["availabilityZone"]), s.name
    tables = by_type(run, "aws:ec2/routeTable:RouteTable")
    assert {t["RouteTableId"] for t in ec2.describe_route_tables(RouteTableIds=[t.id for t in tables])["RouteTables"]} \
        == {t.id for t in tables}
    groups = by_type(run, "aws:ec2/securityGroup:SecurityGroup")
    found = ec2.describe_security_groups(GroupIds=[g.id for g in groups])["SecurityGroups"]
    assert {g["GroupId"]: g["VpcId"] for g in found} == {g.id: vpc.id for g in groups}
    rules = by_type(run, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") + \
        by_type(run, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")
    listed = ec2.describe_security_group_rules(SecurityGroupRuleIds=[r.id for r in rules])["SecurityGroupRules"]
    assert {r["SecurityGroupRuleId"] for r in listed} == {r.id for r in rules}
    (nat,) = by_type(run, "aws:ec2/natGateway:NatGateway")
    assert ec2.describe_nat_gateways(NatGatewayIds=[nat.id])["NatGateways"][0]["SubnetId"] == nat.inputs["subnetId"]


def test_instances_read_back_with_their_address_subnet_profile_and_groups(built):
    run, mocks = built
    ec2 = mocks.client("ec2")
    instances = by_type(run, "aws:ec2/instance:Instance")
    reservations = ec2.describe_instances(InstanceIds=[i.id for i in instances])["Reservations"]
    described = {i["InstanceId"]: i for r in reservations for i in r["Instances"]}
    profiles = {p.id: p for p in by_type(run, "aws:iam/instanceProfile:InstanceProfile")}
    for i in instances:
        got = described[i.id]
        assert got["InstanceType"] == i.inputs["instanceType"] and got["SubnetId"] == i.inputs["subnetId"], i.name
        if i.inputs.get("privateIp"):
            assert got["PrivateIpAddress"] == i.inputs["privateIp"], i.name
        assert sorted(g["GroupId"] for g in got["SecurityGroups"]) == sorted(i.inputs["vpcSecurityGroupIds"]), i.name
        assert got["IamInstanceProfile"]["Arn"].endswith("/" + i.inputs["iamInstanceProfile"]), i.name
        assert i.inputs["iamInstanceProfile"] in profiles or i.inputs["iamInstanceProfile"] in \
            {p.inputs.get("name") for p in profiles.values()}, i.name


def test_iam_reads_back_as_registered(built):
    run, mocks = built
    iam = mocks.client("iam")
    for role in by_type(run, "aws:iam/role:Role"):
        got = iam.get_role(RoleName=role.id)["Role"]
        assert got["AssumeRolePolicyDocument"] == json.loads(role.inputs["assumeRolePolicy"]), role.name
    for policy in by_type(run, "aws:iam/rolePolicy:RolePolicy"):
        role, name = policy.inputs["role"], policy.inputs.get("name")
        if name:
            doc = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
            assert doc == json.loads(policy.inputs["policy"]), policy.name
    for profile in by_type(run, "aws:iam/instanceProfile:InstanceProfile"):
        got = iam.get_instance_profile(InstanceProfileName=profile.id)["InstanceProfile"]
        assert [r["RoleName"] for r in got["Roles"]] == [profile.inputs["role"]], profile.name
    (user,) = by_type(run, "aws:iam/user:User")
    (key,) = by_type(run, "aws:iam/accessKey:AccessKey")
    keys = iam.list_access_keys(UserName=user.id)["AccessKeyMetadata"]
    assert [k["AccessKeyId"] for k in keys] == [key.id]


def test_ssm_s3_kms_route53_and_the_load_balancer_read_back(built):
    run, mocks = built
    ssm = mocks.client("ssm")
    for p in by_type(run, "aws:ssm/parameter:Parameter"):
        got = ssm.get_parameter(Name=p.id, WithDecryption=True)["Parameter"]
        assert got["Type"] == p.inputs.get("type", "String"), p.name
    s3 = mocks.client("s3")
    (bucket,) = by_type(run, "aws:s3/bucket:Bucket")
    s3.head_bucket(Bucket=bucket.id)
    assert s3.get_bucket_versioning(Bucket=bucket.id)["Status"] == "Enabled"
    assert s3.get_public_access_block(Bucket=bucket.id)["PublicAccessBlockConfiguration"]["BlockPublicAcls"]
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket.id)["Rules"]
    assert s3.get_bucket_encryption(Bucket=bucket.id)["ServerSideEncryptionConfiguration"]["Rules"]
    assert json.loads(s3.get_bucket_policy(Bucket=bucket.id)["Policy"])["Statement"]
    (key,) = by_type(run, "aws:kms/key:Key")
    assert mocks.client("kms").describe_key(KeyId=key.id)["KeyMetadata"]["KeyId"] == key.id
    (alias,) = by_type(run, "aws:kms/alias:Alias")
    aliases = {a["AliasName"]: a.get("TargetKeyId") for a in mocks.client("kms").list_aliases()["Aliases"]}
    assert aliases[alias.inputs["name"]] == key.id
    r53 = mocks.client("route53")
    (zone,) = by_type(run, "aws:route53/zone:Zone")
    assert r53.get_hosted_zone(Id=zone.id)["HostedZone"]["Name"].rstrip(".") == zone.inputs["name"].rstrip(".")
    (record,) = by_type(run, "aws:route53/record:Record")
    sets = r53.list_resource_record_sets(HostedZoneId=zone.id)["ResourceRecordSets"]
    assert any(s["Name"].rstrip(".") == record.inputs["name"].rstrip(".") and s["Type"] == record.inputs["type"]
               for s in sets)
    elb = mocks.client("elbv2")
    (lb,) = by_type(run, "aws:lb/loadBalancer:LoadBalancer")
    assert elb.describe_load_balancers(LoadBalancerArns=[lb.id])["LoadBalancers"][0]["Scheme"] == "internal"
    groups = by_type(run, "aws:lb/targetGroup:TargetGroup")
    attached = {g.id: {t["Target"]["Id"] for t in elb.describe_target_health(TargetGroupArn=g.id)["TargetHealthDescriptions"]}
                for g in groups}
    for a in by_type(run, "aws:lb/targetGroupAttachment:TargetGroupAttachment"):
        assert a.inputs["targetId"] in attached[a.inputs["targetGroupArn"]], a.name
    listeners = elb.describe_listeners(LoadBalancerArn=lb.id)["Listeners"]
    assert {str(li["Port"]) for li in listeners} == {str(int(li.inputs["port"])) for li in by_type(run, "aws:lb/listener:Listener")}
