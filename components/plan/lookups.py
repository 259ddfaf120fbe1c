"""What the plan reads from the account (invokes: zones, subnets, route tables, network interfaces, buckets,
instance types, images, ...), and failures said in the user's words: which AWS call, what IAM action it
needs, what the answer was, offline (the emulated account) or real.

`PulumiLookups` is the product's implementation (the aws provider's invokes, through the cluster's
provider when one is given); tests pass their own (tests/support/fakes.py). Every method raises
`LookupFailed` for a failed call; `looked_up`/`collect` turn that into a Diagnostic naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..diagnostics import ConfigError, Diagnostic, suggest

# ---- the AWS calls behind each invoke ----------------------------------------------------------------


@dataclass(frozen=True)
class AwsCall:
    """The API operation a provider data source makes, and the IAM actions it needs (the data source's
    read function in terraform-provider-aws internal/service/<service>/<name>_data_source.go)."""
    operation: str
    actions: tuple[str, ...]


FAILURES: dict[str, AwsCall] = {
    "aws:index/getAvailabilityZones:getAvailabilityZones": AwsCall("DescribeAvailabilityZones",
                                                                   ("ec2:DescribeAvailabilityZones",)),
    "aws:ec2/getSubnet:getSubnet": AwsCall("DescribeSubnets", ("ec2:DescribeSubnets",)),
    # vpc_data_source.go: DescribeVpcs, then DescribeVpcAttribute for the DNS flags.
    "aws:ec2/getVpc:getVpc": AwsCall("DescribeVpcs", ("ec2:DescribeVpcs", "ec2:DescribeVpcAttribute")),
    "aws:ec2/getRouteTable:getRouteTable": AwsCall("DescribeRouteTables", ("ec2:DescribeRouteTables",)),
    "aws:ec2/getNetworkInterfaces:getNetworkInterfaces": AwsCall("DescribeNetworkInterfaces",
                                                                 ("ec2:DescribeNetworkInterfaces",)),
    "aws:ec2/getInstances:getInstances": AwsCall("DescribeInstances", ("ec2:DescribeInstances",)),
    # STS GetCallerIdentity needs no permission (AWS STS API Reference, GetCallerIdentity): a failure there
    # is the credentials themselves.
    "aws:index/getCallerIdentity:getCallerIdentity": AwsCall("GetCallerIdentity", ()),
    # bucket_data_source.go findBucket: HeadBucket, which S3 authorises as s3:ListBucket.
    "aws:s3/getBucket:getBucket": AwsCall("HeadBucket", ("s3:ListBucket",)),
    "aws:s3/getBuckets:getBuckets": AwsCall("ListBuckets", ("s3:ListAllMyBuckets",)),
    # objects_data_source.go: ListObjectsV2, authorised as s3:ListBucket.
    "aws:s3/getObjects:getObjects": AwsCall("ListObjectsV2", ("s3:ListBucket",)),
    "aws:ec2/getVpcEndpoint:getVpcEndpoint": AwsCall("DescribeVpcEndpoints", ("ec2:DescribeVpcEndpoints",)),
    "aws:ec2/getKeyPair:getKeyPair": AwsCall("DescribeKeyPairs", ("ec2:DescribeKeyPairs",)),
    "aws:ec2/getInstanceType:getInstanceType": AwsCall("DescribeInstanceTypes", ("ec2:DescribeInstanceTypes",)),
    "aws:ec2/getInstanceTypes:getInstanceTypes": AwsCall("DescribeInstanceTypes", ("ec2:DescribeInstanceTypes",)),
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": AwsCall(
        "DescribeInstanceTypeOfferings", ("ec2:DescribeInstanceTypeOfferings",)),
    "aws:ec2/getAmi:getAmi": AwsCall("DescribeImages", ("ec2:DescribeImages",)),
    "aws:ec2/getSecurityGroups:getSecurityGroups": AwsCall("DescribeSecurityGroups", ("ec2:DescribeSecurityGroups",)),
    "aws:vpc/getSecurityGroupRules:getSecurityGroupRules": AwsCall("DescribeSecurityGroupRules",
                                                                   ("ec2:DescribeSecurityGroupRules",)),
    "aws:vpc/getSecurityGroupRule:getSecurityGroupRule": AwsCall("DescribeSecurityGroupRules",
                                                                 ("ec2:DescribeSecurityGroupRules",)),
    # A SecureString is decrypted with its KMS key (Systems Manager User Guide, "Restricting access to
    # Parameter Store parameters using IAM policies").
    "aws:ssm/getParameter:getParameter": AwsCall("GetParameter", ("ssm:GetParameter", "kms:Decrypt")),
}

# How the provider's error says what happened (AWS error codes, and the SDK's own words for credentials).
_DENIED = re.compile(r"UnauthorizedOperation|AccessDenied|not authorized|Forbidden|StatusCode: 403", re.I)
_CREDENTIALS = re.compile(r"no valid credential|NoCredentialProviders|failed to refresh cached credentials|"
                          r"ExpiredToken|InvalidClientTokenId|SignatureDoesNotMatch|security token included in the "
                          r"request is (invalid|expired)|get credentials", re.I)
_REGION = re.compile(r"invalid region|InvalidRegion|region .* is not (enabled|valid)|OptInRequired|"
                     r"could not resolve endpoint|no such host", re.I)
_API_ERROR = re.compile(r"api error ([A-Za-z0-9.]+): (.*)$")
_PREFIX = re.compile(r"^(?:invoke of [\w:/]+ failed: )+")
_TOKEN = re.compile(r"\baws:[a-z0-9]+/[A-Za-z0-9]+:[A-Za-z0-9]+: ?")


class LookupFailed(Exception):
    """An invoke failed: `token` the data source, `error` the provider's text."""

    def __init__(self, token: str, error: str):
        self.token = token
        self.text = " ".join(error.split())
        self.error = self.text.replace(" ()", "")  # an invoke failure names no property
        super().__init__(self.error)

    @property
    def call(self) -> AwsCall:
        return FAILURES.get(self.token, AwsCall(self.token.rsplit(":", 1)[-1], ()))

    @property
    def detail(self) -> str:
        """The answer without the SDK's wrapping: `Code: message` where AWS gave one."""
        text = _PREFIX.sub("", self.error)
        m = _API_ERROR.search(text)
        if m:
            return f"{m.group(1)}: {m.group(2)}"
        return _TOKEN.sub("", text).strip()

    @property
    def kind(self) -> str:
        """not-found (or any other answer), access-denied, credentials, region."""
        for kind, pattern in (("credentials", _CREDENTIALS), ("access-denied", _DENIED), ("region", _REGION)):
            if pattern.search(self.error):
                return kind
        return "not-found"


def explain(failure: LookupFailed, offline: bool, fix: str) -> tuple[str, str]:
    """(what happened, what to do) in the user's words; offline never blames credentials (there are none)."""
    call = failure.call
    where = "the emulated account" if offline else "AWS"
    happened = f"{call.operation} in {where} answered {failure.detail}"
    kind = failure.kind
    if kind == "access-denied" and not offline:
        needs = " and ".join(call.actions) or "no permission"
        return happened, f"these credentials may not call {call.operation}: allow {needs} in their IAM policy"
    if kind == "credentials" and not offline:
        return (f"{call.operation} found no usable AWS credentials ({failure.detail})",
                "give the program credentials (AWS_PROFILE, `aws sso login` or `aws configure`) and run again")
    if kind == "region":
        return happened, "check aws:region (a region of this account's partition, like us-west-2)"
    return happened, fix


T = TypeVar("T")


def looked_up(key: str, what: str, fix: str, call: Callable[[], T], offline: bool = False) -> T:
    """Run one look-up; a failure is a refusal (ConfigError) naming the key, the call and the fix."""
    try:
        return call()
    except LookupFailed as failure:
        happened, todo = explain(failure, offline, fix)
        raise ConfigError([Diagnostic(key, f"{what} failed ({happened}); {todo}", "lookup.failed",
                                      value=failure.detail)]) from None


def collect(problems: list[Diagnostic], key: str, what: str, fix: str, call: Callable[[], T],
            offline: bool = False) -> T | None:
    """A look-up whose failure is one more problem (all of them are reported together), not the end."""
    try:
        return looked_up(key, what, fix, call, offline)
    except ConfigError as err:
        problems.extend(err.diagnostics)
        return None


# ---- the provider's invokes ---------------------------------------------------------------------------

def _invoke(token: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except LookupFailed:
        raise
    except Exception as err:  # noqa: BLE001 - every invoke failure is reported in the user's words
        raise LookupFailed(token, str(err)) from None


class PulumiLookups:
    """The look-ups, as the aws provider's invokes (through `provider` when given: a cluster in another
    region or account than the program's default provider)."""

    def __init__(self, provider: Any = None):
        self.provider = provider

    def _call(self, token: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
        if self.provider is not None:
            import pulumi

            kwargs["opts"] = pulumi.InvokeOptions(provider=self.provider)
        return _invoke(token, fn, **kwargs)

    @staticmethod
    def _aws() -> Any:
        import pulumi_aws

        return pulumi_aws

    def zones(self, regular_only: bool) -> list[str]:
        # Local and wavelength zones need opt-in; only regular zones host a cluster's subnets by default.
        filters: list[Any] = [{"name": "opt-in-status", "values": ["opt-in-not-required"]}] if regular_only else []
        aws = self._aws()
        return list(self._call("aws:index/getAvailabilityZones:getAvailabilityZones", aws.get_availability_zones,
                               state="available", filters=filters).names)

    def subnet(self, subnet_id: str) -> Any:
        return self._call("aws:ec2/getSubnet:getSubnet", self._aws().ec2.get_subnet, id=subnet_id)

    def vpc(self, vpc_id: str) -> Any:
        return self._call("aws:ec2/getVpc:getVpc", self._aws().ec2.get_vpc, id=vpc_id)

    def subnet_route_table(self, subnet_id: str) -> Any:
        return self._call("aws:ec2/getRouteTable:getRouteTable", self._aws().ec2.get_route_table,
                          subnet_id=subnet_id)

    def main_route_table(self, vpc_id: str) -> Any:
        return self._call("aws:ec2/getRouteTable:getRouteTable", self._aws().ec2.get_route_table, vpc_id=vpc_id,
                          filters=[{"name": "association.main", "values": ["true"]}])

    def network_interfaces(self, subnet_id: str, addresses: Sequence[str]) -> Any:
        return self._call("aws:ec2/getNetworkInterfaces:getNetworkInterfaces",
                          self._aws().ec2.get_network_interfaces,
                          filters=[{"name": "subnet-id", "values": [subnet_id]},
                                   {"name": "addresses.private-ip-address", "values": list(addresses)}])

    def instances(self, filters: list[Any], states: Sequence[str]) -> Any:
        return self._call("aws:ec2/getInstances:getInstances", self._aws().ec2.get_instances, filters=filters,
                          instance_state_names=list(states))

    def account(self) -> str:
        return str(self._call("aws:index/getCallerIdentity:getCallerIdentity",
                              self._aws().get_caller_identity).account_id)

    def bucket(self, bucket: str) -> Any:
        return self._call("aws:s3/getBucket:getBucket", self._aws().s3.get_bucket, bucket=bucket)

    def bucket_names(self, prefix: str) -> list[str]:
        found = self._call("aws:s3/getBuckets:getBuckets", self._aws().s3.get_buckets, prefix=prefix)
        return [b.name for b in found.buckets or ()]

    def objects(self, bucket: str, prefix: str) -> list[str]:
        """The keys under `prefix` (ListObjectsV2; an air-gapped cluster's artifacts: a few dozen at most)."""
        found = self._call("aws:s3/getObjects:getObjects", self._aws().s3.get_objects, bucket=bucket, prefix=prefix,
                           max_keys=1000)
        return list(found.keys or ())

    def vpc_endpoint(self, vpc_id: str, service_name: str) -> Any:
        """The VPC's available endpoint of `service_name` (fails when there is none)."""
        return self._call("aws:ec2/getVpcEndpoint:getVpcEndpoint", self._aws().ec2.get_vpc_endpoint, vpc_id=vpc_id,
                          service_name=service_name, state="available")

    def key_pair(self, name: str) -> Any:
        return self._call("aws:ec2/getKeyPair:getKeyPair", self._aws().ec2.get_key_pair, key_name=name)

    def instance_type(self, instance_type: str) -> Any:
        return self._call("aws:ec2/getInstanceType:getInstanceType", self._aws().ec2.get_instance_type,
                          instance_type=instance_type)

    def instance_types(self, pattern: str) -> list[str]:
        """The instance types whose names match `pattern` (DescribeInstanceTypes' wildcard filter)."""
        found = self._call("aws:ec2/getInstanceTypes:getInstanceTypes", self._aws().ec2.get_instance_types,
                           filters=[{"name": "instance-type", "values": [pattern]}])
        return list(found.instance_types or ())

    def offerings(self, instance_types: Sequence[str], zones: Sequence[str]) -> set[tuple[str, str]]:
        found = self._call("aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
                           self._aws().ec2.get_instance_type_offerings, location_type="availability-zone",
                           filters=[{"name": "instance-type", "values": list(instance_types)},
                                    {"name": "location", "values": list(zones)}])
        return set(zip(found.instance_types, found.locations, strict=False))

    def image(self, image_id: str) -> Any:
        return self._call("aws:ec2/getAmi:getAmi", self._aws().ec2.get_ami,
                          filters=[{"name": "image-id", "values": [image_id]}], include_deprecated=True)

    def latest_image(self, owner: str | Sequence[str], name: str) -> Any:
        """The newest available image named like `name` published by `owner` (one account, or several)."""
        owners = [owner] if isinstance(owner, str) else list(owner)
        return self._call("aws:ec2/getAmi:getAmi", self._aws().ec2.get_ami, most_recent=True, owners=owners,
                          filters=[{"name": "name", "values": [name]}, {"name": "state", "values": ["available"]}])

    def security_groups(self, vpc_id: str, name: str) -> list[str]:
        found = self._call("aws:ec2/getSecurityGroups:getSecurityGroups", self._aws().ec2.get_security_groups,
                           filters=[{"name": "vpc-id", "values": [vpc_id]}, {"name": "tag:Name", "values": [name]}])
        return list(found.ids)

    def security_group_rule_ids(self, group_id: str) -> list[str]:
        found = self._call("aws:vpc/getSecurityGroupRules:getSecurityGroupRules",
                           self._aws().vpc.get_security_group_rules,
                           filters=[{"name": "group-id", "values": [group_id]}])
        return list(found.ids)

    def security_group_rule(self, rule_id: str) -> Any:
        return self._call("aws:vpc/getSecurityGroupRule:getSecurityGroupRule", self._aws().vpc.get_security_group_rule,
                          security_group_rule_id=rule_id)

    def parameter(self, name: str) -> str:
        """A parameter's value, decrypted."""
        return str(self._call("aws:ssm/getParameter:getParameter", self._aws().ssm.get_parameter, name=name,
                              with_decryption=True).value)


# ---- suggestions -------------------------------------------------------------------------------------

def instance_type_suggestion(instance_type: str, types_like: Callable[[str], list[str]]) -> str | None:
    """The instance type `instance_type` is most likely a typo of, from the account's own list of its
    family's types (`m6i.xlarg` -> m6i.xlarge), or of every type when the family itself is misspelt."""
    family = instance_type.split(".")[0]
    for pattern in (f"{family}.*", "*"):
        try:
            names = types_like(pattern)
        except LookupFailed:
            return None
        found = suggest(instance_type, [n for n in names if n != instance_type])
        if found:
            return found
    return None


# ---- a published admin kubeconfig --------------------------------------------------------------------

# What an admin kubeconfig from RKE2 holds (k3s writeKubeConfig: one cluster, one client
# certificate). Anything else in a published copy was put there by someone else: `exec` and
# `auth-provider` run commands on the machine that uses it, file paths read its files.
KUBECONFIG_CLUSTER_KEYS = frozenset({"server", "certificate-authority-data"})
KUBECONFIG_USER_KEYS = frozenset({"client-certificate-data", "client-key-data"})


def published_kubeconfig_problem(text: str, api_url: str) -> str | None:
    """Why a published kubeconfig must not be used, or None: it must be exactly what RKE2 writes,
    pointed at this cluster's endpoint. Every server may overwrite the parameter (the first one
    publishes it), so its content is checked before anything runs with it."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return "it is not YAML"
    if not isinstance(doc, dict) or doc.get("kind") != "Config":
        return "it is not a kubeconfig"
    clusters = [c.get("cluster") or {} for c in doc.get("clusters") or [] if isinstance(c, dict)]
    users = [u.get("user") or {} for u in doc.get("users") or [] if isinstance(u, dict)]
    if len(clusters) != 1 or len(users) != 1:
        return f"it names {len(clusters)} clusters and {len(users)} users, RKE2 writes one of each"
    extra = sorted(set(clusters[0]) - KUBECONFIG_CLUSTER_KEYS) + sorted(set(users[0]) - KUBECONFIG_USER_KEYS)
    if extra:
        return f"it carries {', '.join(extra)}, which RKE2 never writes (exec and auth-provider run commands)"
    if clusters[0].get("server") != api_url:
        return f"its server is {clusters[0].get('server')!r}, not this cluster's {api_url}"
    return None
