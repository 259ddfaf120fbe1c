"""The stack keys as one typed model: each section a frozen pydantic model whose fields are snake_case and
whose aliases are the stack keys (`vpc_cidr` <- `vpcCidr`), with types, defaults and why, allowed values,
ranges, patterns and descriptions in one place (the vocabulary: settings/fields.py).

The model checks what one key can check alone (its type, range, allowed values, pattern, unknown keys);
the rules that span keys are settings/rules/ (Diagnostics, every problem at once), and what depends on the
running cluster is settings/resolve.py. `ClusterKeys` is the top level of a stack file; settings/args.py
adds the ways in (`RkeClusterArgs`). From this model come the JSON Schema editors use for stack files
(schema/stack-config.schema.json), the configuration reference and the keys Pulumi.yaml declares
(offline/schema.py writes them; tests fail when one drifts).

A section built in Python (`NodePool(name=..., roles=[...], count=3)`) is checked as the stack file is:
a bad value raises ConfigError in the program's words (`_Section._program_words`), every field at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SecretStr,
    Strict,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import WithJsonSchema

from ..diagnostics import ConfigError
from . import versions
from .fields import (
    ADMIN_CIDR_PATTERN,
    AMI_PATTERN,
    AZ_PATTERN,
    BUCKET_PATTERN,
    CHART_VERSION_PATTERN,
    CLUSTER_ID_PATTERN,
    CLUSTER_ID_RULE,
    CONFIRM_CODES_PATTERN,
    DEFAULT_AZ_COUNT,
    DEFAULT_BACKUP_EXPIRE_DAYS,
    DEFAULT_BACKUP_INTERVAL_HOURS,
    DEFAULT_BACKUP_RETENTION,
    DEFAULT_CCM_CHART_VERSION,
    DEFAULT_CCM_INSTALL,
    DEFAULT_ENDPOINT,
    DEFAULT_IMDS_HOP_LIMIT,
    DEFAULT_INGRESS_CONTROLLER,
    DEFAULT_INSTANCE_TYPE,
    DEFAULT_MARKET,
    DEFAULT_MAX_UNAVAILABLE_AGENTS,
    DEFAULT_NAT,
    DEFAULT_OS,
    DEFAULT_RANCHER_UPGRADES,
    DEFAULT_ROOT_VOLUME_GB,
    DEFAULT_SSH_USER,
    DEFAULT_SSM,
    DEFAULT_SUBNET_TIER,
    DEFAULT_VPC_CIDR,
    FLAG_ITEM_PATTERN,
    FOLDER_PATTERN,
    HOURS,
    IMAGE_PATTERN,
    INSTANCE_TYPE_PATTERN,
    KMS_KEY_ARN_PATTERN,
    MAX_ADMIN_CIDRS,
    MAX_AZ_COUNT,
    MAX_CLUSTER_ID,
    MAX_NO_PROXY_CHARS,
    MAX_NO_PROXY_ITEMS,
    MAX_POOL_BLOCKS,
    MAX_ROOT_GB,
    MAX_USER_TAGS,
    MIN_ROOT_GB,
    NO_PROXY_ITEM_PATTERN,
    POD_CIDR,
    POOL_NAME_PATTERN,
    PROXY_URL_PATTERN,
    RANCHER_CLUSTER_NAME_PATTERN,
    RANCHER_URL_PATTERN,
    RANCHER_URL_WHAT,
    REASON_PATTERN,
    RKE2_VERSION_BODY,
    RKE_VERSION_BODY,
    SERVICE_CIDR,
    SSH_KEY_NAME_PATTERN,
    SSH_KEY_PATH_PATTERN,
    SSH_USER_PATTERN,
    SUBNET_CIDR_PATTERN,
    SUBNET_ID_PATTERN,
    TAG_KEY_PATTERN,
    TAG_VALUE_PATTERN,
    VPC_CIDR_PATTERN,
    VPC_ID_PATTERN,
    WORLD_ADMIN_DESCRIPTION,
    Bool,
    Hours,
    Msg,
    NonEmpty,
    OrUnset,
    OsName,
    SchemaPattern,
    Whole,
    bucket_why,
    cluster_id_why,
    folder_why,
    image_why,
    kms_why,
    no_proxy_why,
    proxy_credentials,
    proxy_url_why,
    rancher_cluster_name_why,
    rancher_url_hidden,
    rancher_url_why,
)
from .messages import from_pydantic, nested, pydantic_errors, stack_keys
from .patterns import int_set_regex, whole

ROLES: tuple[str, ...] = ("controlplane", "etcd", "worker")
Role = Literal["controlplane", "etcd", "worker"]

class _Section(BaseModel):
    """Every key is optional: a field's default (often None, "not set") is not validated, a value given must
    have the field's type. Whether a key is required is a rule's (settings/rules/; its message names what to
    set). Fields are snake_case, the stack keys their aliases; Python callers may use either. Patterns run on
    Python's re, which the JSON Schema validators use too (the default Rust engine has no look-ahead;
    components/settings/patterns.py)."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True,
                              extra="forbid", frozen=True, regex_engine="python-re")

    @model_validator(mode="before")
    @classmethod
    def _none_is_unset(cls, data: Any) -> Any:
        """A program's `ip_block=None` means what leaving it out means (a stack file's `key: ~` is refused
        before validation: settings/stackconfig.py)."""
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data

    @model_validator(mode="wrap")
    @classmethod
    def _program_words(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if nested():
            return handler(data)
        with pydantic_errors():
            try:
                return handler(data)
            except ValidationError as exc:
                raise ConfigError(from_pydantic(cls, exc, data), prefix=f"{cls.__name__}: ") from None


class Network(_Section):
    """network: a VPC this program creates (CIDR keys), or yours (ID keys)."""

    # None only in a resolved bring-your-own network (settings/resolve.py): the VPC is yours.
    vpc_cidr: OrUnset[Annotated[str, SchemaPattern(VPC_CIDR_PATTERN), Msg(what="an IPv4 CIDR like 10.0.0.0/16", reason="room for the 16 subnet slots the layout carves", type_name="CIDR")]] = Field(
        DEFAULT_VPC_CIDR, description=f"VPC CIDR: RFC 1918, /16 to /24, canonical, not overlapping RKE's pod and service networks ({POD_CIDR}, {SERVICE_CIDR}).")
    availability_zones: OrUnset[Annotated[Any, WithJsonSchema({"anyOf": [
        {"type": "integer", "minimum": 1, "maximum": MAX_AZ_COUNT},
        {"type": "string", "pattern": whole(int_set_regex(range(1, MAX_AZ_COUNT + 1)))},
        {"type": "array", "items": {"type": "string", "pattern": AZ_PATTERN}, "minItems": 1, "maxItems": MAX_AZ_COUNT,
         "uniqueItems": True}]}),
        Msg(default=f"`{DEFAULT_AZ_COUNT}` (bring-your-own: the subnets' zones)", type_name="int or list",
            reason="three zones survive the loss of one with etcd quorum intact")]] = Field(
        None, description=f"Number of zones (1-{MAX_AZ_COUNT}, looked up) or explicit zone names.")
    nat_gateways: Annotated[Literal["none", "single", "perAz"], Msg(kind="a NAT layout", allowed="none, single, perAz", reason="the cheapest layout that still gives private nodes a way out")] = Field(
        DEFAULT_NAT, description="NAT layout for private subnets (none only with public pools).")
    public_subnet_cidrs: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                 WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One public subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    private_subnet_cidrs: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                  WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One private subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    vpc_id: OrUnset[Annotated[str, NonEmpty(VPC_ID_PATTERN), Msg(what="a VPC ID like vpc-0123456789abcdef0", type_name="VPC ID")]] = Field(
        None, description="Bring-your-own VPC (with publicSubnetIds and privateSubnetIds; excludes the CIDR keys and natGateways).")
    public_subnet_ids: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)], ...], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                               WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own public subnets, one per zone, in zone order.")
    private_subnet_ids: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)], ...], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                                WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own private subnets, one per zone, in zone order.")

    @property
    def bring_your_own(self) -> bool:
        return self.vpc_id is not None


class Access(_Section):
    """access: how people reach the nodes."""

    admin_cidrs: Annotated[tuple[Annotated[str, SchemaPattern(ADMIN_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs like 203.0.113.0/24", type_name="list of CIDRs"),
                          WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": ADMIN_CIDR_PATTERN},
                                          "uniqueItems": True, "maxItems": MAX_ADMIN_CIDRS})] = Field(
        (), description=f"Sources allowed to reach SSH (22) and the API (6443); canonical, unique, at most {MAX_ADMIN_CIDRS} "
                        f"(security group rule quota); together no more than {WORLD_ADMIN_DESCRIPTION} without allowWorldAdmin.")
    ssh_key_name: OrUnset[Annotated[str, NonEmpty(SSH_KEY_NAME_PATTERN, max_length=255), Msg(what="an EC2 key pair name: 1-255 printable ASCII characters, no space at either end")]] = Field(
        None, description="EC2 key pair for the nodes, looked up at plan time (changing it replaces every node: refused by the quorum guard).")
    ssh_user: Annotated[str, NonEmpty(SSH_USER_PATTERN, max_length=32), Msg(what="a Linux user name: 1-32 characters of a-z, 0-9, _ and -, starting with a letter or _", reason="Canonical's Ubuntu images log in as ubuntu")] = Field(
        DEFAULT_SSH_USER, description="Login user written into cluster.yml and the RKE1 boot script.")
    ssh_key_path: OrUnset[Annotated[str, NonEmpty(SSH_KEY_PATH_PATTERN), Msg(what="a path to the private key for rke up, without control characters")]] = Field(
        None, description="Private key path written into cluster.yml (ssh_key_path).")
    ssm: Annotated[Bool, Msg(reason="nodes reachable through Session Manager need no SSH port open")] = Field(
        DEFAULT_SSM, description="Session Manager on the nodes (an inline policy with the agent's actions only).")
    allow_world_admin: Annotated[Bool, Msg()] = Field(
        False, description="Allow adminCidrs that open the admin ports to the internet (0.0.0.0/0, or pieces of it; warned).")


class NodePool(_Section):
    """nodePools[i]: a group of identical nodes."""

    name: OrUnset[Annotated[str, NonEmpty(POOL_NAME_PATTERN), Msg(what="1-31 chars of a-z, 0-9 and -, starting with a letter", missing="missing; every pool needs a name")]] = Field(
        None, description="Pool name (a-z0-9-, unique).")
    roles: OrUnset[Annotated[Annotated[tuple[Role, ...], Field(min_length=1)], Msg(
        kind="a role", item="{repr} is not a role; {hint}use controlplane, etcd or worker",
        type="{json} is not a non-empty list; use a list of controlplane, etcd or worker",
        missing="missing; list the pool's roles from controlplane, etcd and worker", type_name="list")]] = Field(
        None, description="Subset of controlplane, etcd, worker. RKE2: a pool with controlplane or etcd runs "
        "servers; one with only one of them runs split roles (etcd-only or control-plane-only servers; needs "
        "controlPlane.endpoint nlb).")
    count: OrUnset[Annotated[int, Whole(0, 500), Msg(missing="missing; give the number of nodes (0 to 500)")]] = Field(
        None, description="Number of nodes, 0-500.")
    instance_type: Annotated[str, NonEmpty(INSTANCE_TYPE_PATTERN), Msg(what="an EC2 instance type like m6i.large", reason="a general-purpose size that runs a control plane or a small worker")] = Field(
        DEFAULT_INSTANCE_TYPE, description="EC2 instance type, looked up at plan time (offered in the pool's zones, the image's architecture).")
    subnet: Annotated[Literal["private", "public"], Msg(kind="a subnet tier", reason="nodes stay off the internet unless asked")] = Field(
        DEFAULT_SUBNET_TIER, description="Subnet tier; public nodes get a public IP.")
    root_volume_gb: Annotated[int, Whole(MIN_ROOT_GB, MAX_ROOT_GB), Msg(reason="images, etcd data and container layers fit for typical nodes")] = Field(
        DEFAULT_ROOT_VOLUME_GB, description=f"Encrypted gp3 root volume size ({MIN_ROOT_GB}-{MAX_ROOT_GB}).")
    ami: OrUnset[Annotated[str, NonEmpty(AMI_PATTERN), Msg(what="an AMI ID like ami-0123456789abcdef0", default="latest Ubuntu 24.04 LTS for the instance type's architecture, amd64 or arm64 (Canonical, per partition)", type_name="AMI ID")]] = Field(
        None, description="Node image, looked up at plan time (its architecture and virtualization must suit instanceType).")
    ip_block: OrUnset[Annotated[int, Whole(0, MAX_POOL_BLOCKS - 1), Msg(default="lowest free block")]] = Field(
        None, description=f"Address block 0-{MAX_POOL_BLOCKS - 1} (see \"Node names and addresses\").")
    imds_hop_limit: Annotated[int, Whole(1, 2), Msg(reason="keeps the node role's credentials away from pods on the pod network")] = Field(
        DEFAULT_IMDS_HOP_LIMIT, description="IMDS hop limit; 2 lets every pod take the node role's credentials.")
    imds_hop_limit_reason: OrUnset[Annotated[str, SchemaPattern(REASON_PATTERN), Msg(what="why pods need the node role")]] = Field(
        None, description="Required with imdsHopLimit 2; becomes an instance tag.")
    market: Annotated[Literal["on-demand", "spot"], Msg(kind="a market", reason="capacity AWS never takes back")] = Field(
        DEFAULT_MARKET, description="spot: persistent spot requests that stop on interruption and keep the node's "
                                    "address and name (worker-only pools, RKE1 ones in private subnets; fixed for running nodes).")
    os: Annotated[OsName, Msg(kind="an operating system", reason="what every pool ran before `os` existed")] = Field(
        DEFAULT_OS, description="The nodes' OS: the vendor's latest image per partition and architecture (or `ami`), "
                                "its login user and boot steps (docs/features/airgap-os-fips.md, 'Operating systems, SELinux and FIPS'); a "
                                "running pool's nodes go stale and `rke-aws rotate` replaces them.")

    @property
    def is_spot(self) -> bool:
        return self.market == "spot"

    @property
    def is_controlplane(self) -> bool:
        return "controlplane" in (self.roles or ())

    @property
    def is_etcd(self) -> bool:
        return "etcd" in (self.roles or ())

    @property
    def is_worker(self) -> bool:
        return "worker" in (self.roles or ())

    @property
    def is_server(self) -> bool:
        """RKE2: pools with controlplane/etcd run `rke2-server`; worker-only pools run `rke2-agent`."""
        return self.is_controlplane or self.is_etcd


class Ccm(_Section):
    """ccm: the aws-cloud-controller-manager."""

    chart_version: Annotated[str, NonEmpty(CHART_VERSION_PATTERN), Msg(what="a chart version like 0.0.11", reason="the version this program's Helm values are written against")] = Field(
        DEFAULT_CCM_CHART_VERSION, description="aws-cloud-controller-manager chart version.")
    leader_migration: Annotated[Bool, Msg()] = Field(
        False, description="In-tree to out-of-tree migration phase (Kubernetes 1.26 and older only).")
    extra_args: Annotated[tuple[Annotated[str, SchemaPattern(FLAG_ITEM_PATTERN)], ...], Msg(what="flags like --v=4", type_name="list")] = Field(
        (), description="Extra CCM flags, one --name=value each (ASCII, no spaces; not the flags this program sets).")
    # Unset: settings/resolve.py decides (ccm_install: what runs, else DEFAULT_CCM_INSTALL per distribution).
    install: OrUnset[Annotated[Literal["helm", "manifest"], Msg(
        kind="an install mode", default=f"new RKE2 stacks: `{DEFAULT_CCM_INSTALL['rke2']}`; RKE1: "
                                        f"`{DEFAULT_CCM_INSTALL['rke']}`; running stacks: what they run",
        reason="one `pulumi up` converges and needs no way into the cluster")]] = Field(
        None,
        description="manifest: RKE2 manifests mirrored from SSM instead of a Release.")
    image: OrUnset[Annotated[str, NonEmpty(IMAGE_PATTERN), Msg(
        what="an image reference pinned by a tag other than latest and/or an @sha256: digest, like "
             "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4",
        default="by minor", type_name="image ref", why=image_why)]] = Field(
        None, description="CCM image repository:tag (or @sha256:digest) instead of versions.CCM_IMAGE_TAGS; not latest.")

    def image_for(self, kubernetes_minor: int) -> str:
        """The CCM image: ccm.image, or the release versions.CCM_IMAGE_TAGS names for the cluster's minor."""
        return self.image or f"{versions.CCM_IMAGE_REPOSITORY}:{versions.CCM_IMAGE_TAGS[kubernetes_minor]}"


class ControlPlane(_Section):
    """controlPlane: how nodes and clients reach the servers."""

    endpoint: Annotated[Literal["dns", "nlb"], Msg(kind="an endpoint kind", reason="a Route 53 name over the servers costs no load balancer")] = Field(
        DEFAULT_ENDPOINT, description="The control-plane endpoint: Route 53 name over the servers, or an internal NLB.")


class EtcdBackup(_Section):
    """etcdBackup: etcd snapshots to S3."""

    enabled: Annotated[Bool, Msg(reason="snapshots are the way back after losing the control plane")] = Field(
        True, description="etcd snapshots to S3.")
    bucket: OrUnset[Annotated[str, NonEmpty(BUCKET_PATTERN), Msg(what="an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens, "
                                                    "by S3's general purpose bucket naming rules)",
                                               default="created per cluster", type_name="bucket name", why=bucket_why)]] = Field(
        None, description="An existing bucket to write to instead (then no bucket is created).")
    folder: OrUnset[Annotated[str, NonEmpty(FOLDER_PATTERN, max_length=200), Msg(what="a key prefix like prod/etcd (no leading, trailing or double /, no . or .. segment)",
                                                               default="`clusterId`", type_name="key prefix", why=folder_why)]] = Field(
        None, description="Folder in the bucket; the node role may touch nothing outside it.")
    interval_hours: Annotated[Hours, Msg(kind="an interval that divides a day", allowed=", ".join(map(str, HOURS[:-1])) + f" or {HOURS[-1]}",
                                        type_name="int", reason="RKE2's own 12 h reaches back too little")] = Field(
        DEFAULT_BACKUP_INTERVAL_HOURS, description="Hours between snapshots (RKE2 cron 0 */N * * *, RKE1 interval_hours).")
    retention: Annotated[int, Whole(1, 1000), Msg(reason="a week at the default interval; RKE2's own default keeps 5")] = Field(
        DEFAULT_BACKUP_RETENTION, description="Snapshots kept.")
    expire_days: Annotated[int, Whole(1, 3650), Msg(reason="old snapshots hold old Secrets")] = Field(
        DEFAULT_BACKUP_EXPIRE_DAYS, description="Days the created bucket keeps old versions (pruned or replaced snapshots); current ones are pruned by count (not with bucket).")
    kms_key_arn: OrUnset[Annotated[str, NonEmpty(KMS_KEY_ARN_PATTERN), Msg(
        what="a KMS key ARN (not an alias) in its region's partition, like "
             "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        default="SSE-S3", type_name="KMS key ARN", why=kms_why)]] = Field(
        None, description="SSE-KMS with this key (a key of the cluster's region).")


class Addons(_Section):
    """addons: what else is installed into the cluster."""

    ebs_csi: OrUnset[Annotated[Bool, Msg(default="on for a new stack; then as last deployed")]] = Field(
        None, description="aws-ebs-csi-driver with a default gp3 StorageClass; its controller uses an IAM user of its own.")
    load_balancer_controller: Annotated[Bool, Msg(reason="the CCM serves LoadBalancer Services; the controller is opt-in")] = Field(
        False, description="The AWS Load Balancer Controller (chart and IRSA role; needs identity.serviceAccounts irsa); a "
                           "Service opts in with spec.loadBalancerClass service.k8s.aws/nlb, the CCM keeps the others.")


class Ingress(_Section):
    """ingress: the ingress controller the cluster's servers deploy."""

    controller: OrUnset[Annotated[Literal["traefik", "ingress-nginx", "none"], Msg(
        kind="an ingress controller", allowed="traefik, ingress-nginx or none",
        default=f"new RKE2 stacks: {DEFAULT_INGRESS_CONTROLLER} (ingress-nginx on releases without it); running "
                "stacks: what they run; RKE1: RKE's nginx")]] = Field(
        None, description="RKE2's ingress-controller (traefik, ingress-nginx, none; ingress-nginx alone ends with "
                          "v1.37); RKE1's ingress.provider (ingress-nginx or none). A running cluster changes it by "
                          "hand (docs/features/ingress.md).")


class Rotation(_Section):
    """rotation: how `rke-aws rotate <stack>` replaces stale nodes (docs/operations/rotate.md)."""

    max_unavailable_agents: Annotated[int, Whole(1, 100), Msg(reason="one drained node at a time keeps the most capacity")] = Field(
        DEFAULT_MAX_UNAVAILABLE_AGENTS, description="Agents drained and replaced together; servers always go one at a time.")


class Proxy(_Section):
    """proxy: the HTTP(S) proxy nodes, RKE2 or Docker, the CCM and the EBS CSI controller go out through."""

    http_proxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpsProxy", type_name="URL", why=proxy_url_why, hide=proxy_credentials)]] = Field(
        None, description="HTTP_PROXY for plain-http requests (apt mirrors); defaults to httpsProxy.")
    https_proxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpProxy", type_name="URL", why=proxy_url_why, hide=proxy_credentials)]] = Field(
        None, description="HTTPS_PROXY for https requests (SSM, AWS APIs, RKE2 and image downloads); defaults to httpProxy.")
    no_proxy: Annotated[tuple[Annotated[str, NonEmpty(NO_PROXY_ITEM_PATTERN, max_length=254)], ...], Msg(
        what="NO_PROXY entries: host names, .domain suffixes, IPv4 addresses or canonical CIDRs", type_name="list",
        default="`[]`", why=no_proxy_why),
        WithJsonSchema({"type": "array", "items": {"type": "string", "maxLength": 254, "pattern": NO_PROXY_ITEM_PATTERN},
                        "uniqueItems": True, "maxItems": MAX_NO_PROXY_ITEMS})] = Field(
        (), description=f"What else bypasses the proxy (VPC endpoints' names, internal registries); at most "
                        f"{MAX_NO_PROXY_ITEMS}, {MAX_NO_PROXY_CHARS} characters together. The VPC, pod and service "
                        "networks, .svc, .cluster.local, .internal, IMDS, localhost and the endpoint are always added.")


class Rancher(_Section):
    """rancher: register the cluster in Rancher as an imported cluster (the rancher2 provider)."""

    url: OrUnset[Annotated[str, NonEmpty(RANCHER_URL_PATTERN, max_length=2048), Msg(
        what=RANCHER_URL_WHAT,
        missing="missing; set Rancher's https address", type_name="URL", why=rancher_url_why, hide=rancher_url_hidden)]] = Field(
        None, description="Rancher's address (https; a certificate every client trusts: a public CA).")
    token: OrUnset[Annotated[SecretStr, Strict(), Msg(type="is not text; the token is a string like token-xxxxx:yyyy, set "
                                                        "with `pulumi config set --secret --path rancher.token <token>`",
                                                   missing="missing; set it with `pulumi config set --secret --path rancher.token <token>`",
                                                   type_name="encrypted string", default="required")]] = Field(
        None, description="Rancher API token (token-xxxxx:yyyy) of a user who may create clusters; a `secure:` value only.")
    cluster_name: OrUnset[Annotated[str, NonEmpty(RANCHER_CLUSTER_NAME_PATTERN), Msg(
        what="a lowercase DNS label: 1-63 chars of a-z, 0-9 and -, starting and ending with a letter or digit, not local",
        default="`clusterId`", type_name="string", why=rancher_cluster_name_why)]] = Field(
        None, description="The cluster's name in Rancher (renamed in place).")
    upgrades: Annotated[Literal["rke-aws", "rancher"], Msg(kind="an upgrade owner", allowed="rke-aws or rancher",
                                                           reason="kubernetesVersion stays the one place a version is set")] = Field(
        DEFAULT_RANCHER_UPGRADES, description="Who upgrades RKE2: rke-aws (its own Plans; Rancher's version management off, Rancher >= 2.11) or rancher (Rancher's own SUC and Plans; this program writes none).")

    @property
    def rancher_upgrades(self) -> bool:
        return self.upgrades == "rancher"


# A managed policy's ARN: AWS's own (account `aws`) or an account's (IAM ARN format, IAM user guide "IAM identifiers").
POLICY_ARN_PATTERN = whole(r"arn:aws(?:-cn|-us-gov)?:iam::(?:aws|[0-9]{12}):policy/[\w+=,.@/-]{1,512}")


class IdentityRole(_Section):
    """identity.roles[]: an IAM role that exactly one Kubernetes service account assumes (IRSA)."""

    service_account: OrUnset[Annotated[str, Strict(), Msg(
        what="<namespace>/<name> of a Kubernetes service account", missing="missing; set <namespace>/<name>",
        type_name="string")]] = Field(
        None, description="The service account (<namespace>/<name>, names as Kubernetes takes them; no wildcard) whose "
                          "tokens may assume the role (trust policy StringEquals on sub and aud).")
    policy_arns: Annotated[tuple[Annotated[str, NonEmpty(POLICY_ARN_PATTERN)], ...], Msg(
        what="managed policy ARNs like arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess", type_name="list of ARNs",
        default="`[]`")] = Field((), description="Managed policies attached to the role.")
    policy: OrUnset[Annotated[str, NonEmpty(max_length=10240), Msg(
        what="an IAM policy document as JSON text", type_name="JSON text")]] = Field(
        None, description="An inline policy (JSON); a statement allowing every action on every resource needs allowAllActions.")
    allow_all_actions: Annotated[Bool, Msg(reason="a role with every action on every resource is refused unless asked for")] = Field(
        False, description="Accept a policy statement that allows every action on every resource.")


class Identity(_Section):
    """identity: workload identity (IRSA): a service-account issuer AWS trusts, the pod identity webhook, roles."""

    service_accounts: Annotated[Literal["none", "irsa"], Msg(kind="a workload identity mode", allowed="none or irsa",
                                                             reason="the issuer publishes documents and adds an OIDC provider; opt-in")] = Field(
        "none", description="irsa: the cluster signs service-account tokens with a key of its own, publishes its issuer "
                            "(S3, or issuerUrl) and trusts it in IAM; pods whose service account names a role get it.")
    issuer_url: OrUnset[Annotated[str, Strict(), Msg(what="an https URL like https://oidc.example.com/cluster-1",
                                                     default="the S3 bucket the program creates (not in China)",
                                                     type_name="URL")]] = Field(
        None, description="Bring your own issuer: you publish the discovery document and JWKS (the stack's outputs "
                          "identityDiscovery / identityJwks) at this https URL; the program creates no bucket.")
    roles: Annotated[tuple[IdentityRole, ...], Msg(type="{json} is not a list of roles; each is {{serviceAccount, policyArns, policy}}",
                                                  default="`[]`")] = Field(
        (), description="IAM roles for service accounts (exported as identityRoleArns by <namespace>/<name>).")
    key_generation: Annotated[int, Whole(1, 1000), Msg(reason="the first signing key")] = Field(
        1, description="Raise by one to rotate the signing key: the new key is published and trusted first, signs once "
                       "every server has it, and the old one stays published until the next rotation drops it (docs/features/identity.md).")
class Registry(_Section):
    """registry: a private registry (mirror) every image this program deploys is pulled through (issue 35)."""

    mirrors: Annotated[dict[str, Annotated[str, Strict()]], Msg(
        item="{json} is not a mirror endpoint; give https://host[:port][/path]", type_name="map", default="`{}`"),
        WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})] = Field(
        default_factory=dict, description="Upstream registry host (docker.io, registry.k8s.io, public.ecr.aws, or \"*\") "
                                          "-> the mirror's endpoint (https://host[:port][/path]).")
    username: OrUnset[Annotated[str, NonEmpty(whole(r"[!-~]+"), max_length=255), Msg(what="a user name of printable ASCII without spaces")]] = Field(
        None, description="The mirror's user (with password; https mirrors only).")
    password: OrUnset[Annotated[SecretStr, Strict(), Msg(
        type="is not text; set it with `pulumi config set --secret --path registry.password <password>`",
        type_name="encrypted string", default="unset")]] = Field(
        None, description="The mirror's password: a `secure:` value only; nodes read it from an SSM SecureString, never from user data.")
    ca_bundle: OrUnset[Annotated[str, Strict(), Msg(what="a PEM bundle", type_name="PEM")]] = Field(
        None, description="PEM certificates the nodes trust for the mirror (a private CA).")
    system_default: OrUnset[Annotated[str, NonEmpty(whole(r"[!-.0-~]+"), max_length=255), Msg(what="host[:port] of a registry")]] = Field(
        None, description="RKE2's system-default-registry (host[:port]): RKE2's own images and bundled charts come from it.")
    charts: OrUnset[Annotated[str, NonEmpty(whole(r'(https|oci)://[!-"$-/0->@-~]+'), max_length=2048), Msg(
        what="a chart repository URL: https://host[/path] (a Helm repository) or oci://host[/path] (an OCI registry)",
        default="the charts' public repositories", type_name="URL")]] = Field(
        None, description="Where the CCM and EBS CSI charts come from instead of their public repositories (the same chart "
                          "names and versions); required with airgap. Read without credentials (caBundle is trusted).")


class Airgap(_Section):
    """airgap: RKE2 nodes that never reach the internet: RKE2 from your bucket (or preinstalled), images from `registry`."""

    artifacts_bucket: OrUnset[Annotated[str, NonEmpty(BUCKET_PATTERN), Msg(
        what="an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)", type_name="bucket name", why=bucket_why)]] = Field(
        None, description="Bucket (in the cluster's region) holding RKE2's release assets (docs/features/airgap-os-fips.md).")
    artifacts_prefix: OrUnset[Annotated[str, NonEmpty(FOLDER_PATTERN, max_length=200), Msg(
        what="a key prefix like rke2 (no leading, trailing or double /)", default="bucket root", type_name="key prefix", why=folder_why)]] = Field(
        None, description="Key prefix of the artifacts in the bucket (<prefix>/<release>/...).")
    preinstalled: Annotated[Bool, Msg(reason="installing from the bucket needs no image of your own")] = Field(
        False, description="The nodes' image already holds RKE2 of kubernetesVersion (no bucket needed).")

    @property
    def from_bucket(self) -> bool:
        return not self.preinstalled


class ClusterKeys(_Section):
    """The stack keys (Pulumi.yaml `name` is their namespace; `pulumi config set <key>`), snake_case here."""

    distribution: OrUnset[Annotated[Literal["rke", "rke2"], Msg(kind="a distribution", missing="missing; set rke or rke2", default="required", declare=True)]] = Field(
        None, description="Kubernetes distribution: rke (RKE1) or rke2; cannot change on a running stack.")
    cluster_id: OrUnset[Annotated[str, NonEmpty(CLUSTER_ID_PATTERN), Msg(
        pattern=f"{{json}} is not a cluster ID; {CLUSTER_ID_RULE}",
        default="stack name", declare=True, type_name="string", why=cluster_id_why)]] = Field(
        None, description=f"`<CLUSTERID>` of the `kubernetes.io/cluster/<CLUSTERID>` tag; 1-{MAX_CLUSTER_ID} chars of a-z0-9-, starting with a letter, not sg-.")
    network: Annotated[Network, Msg()] = Field(default_factory=Network, description=Network.__doc__)
    access: Annotated[Access, Msg()] = Field(default_factory=Access, description=Access.__doc__)
    node_pools: OrUnset[Annotated[tuple[NodePool, ...], Msg(
        type='{json} is not a non-empty list of pools; each pool is {{name, roles, count, ...}}',
        default="three servers (controlplane, etcd) named server and two workers named agents, of instanceType's default")]] = Field(
        None, description="The node pools; at least one pool with controlplane, one with etcd and one with worker.")
    kubernetes_version: OrUnset[Annotated[str, SchemaPattern(whole(f"{RKE_VERSION_BODY}|{RKE2_VERSION_BODY}")), Msg(
        default=f"new stacks: RKE `{versions.RKE_KUBERNETES_VERSION}`, RKE2 `{versions.RKE2_VERSION}`; running stacks: what they run",
        declare=True, type_name="string")]] = Field(
        None, description="RKE: v1.X.Y-rancherN-N; RKE2: v1.X.Y+rke2rN; a release components/settings/versions.py knows; one minor up "
                          "at a time; RKE2 etcd 3.5 -> 3.6 only from 3.5.26.")
    ccm: Annotated[Ccm, Msg()] = Field(default_factory=Ccm, description=Ccm.__doc__)
    control_plane: Annotated[ControlPlane, Msg()] = Field(default_factory=ControlPlane, description=ControlPlane.__doc__)
    etcd_backup: Annotated[EtcdBackup, Msg()] = Field(default_factory=EtcdBackup, description=EtcdBackup.__doc__)
    addons: Annotated[Addons, Msg()] = Field(default_factory=Addons, description=Addons.__doc__)
    proxy: OrUnset[Annotated[Proxy, Msg()]] = Field(None, description=Proxy.__doc__)
    # Never the value when it is not a map: it may hold the token.
    rancher: OrUnset[Annotated[Rancher, Msg(default="unset (not registered)", type=(
        "is not a map; expected {{url, token, clusterName, upgrades}} (set each with "
        "`pulumi config set [--secret] --path rancher.<key> <value>`)"))]] = Field(None, description=Rancher.__doc__)
    ingress: Annotated[Ingress, Msg()] = Field(default_factory=Ingress, description=Ingress.__doc__)
    rotation: Annotated[Rotation, Msg()] = Field(default_factory=Rotation, description=Rotation.__doc__)
    hardening: Annotated[Literal["none", "cis"], Msg(kind="a hardening profile", declare=True, reason="the CIS profile enforces Pod Security restricted, which many workloads fail")] = Field(
        "none", description="RKE2's CIS profile with its host preparation, audit policy and Pod Security restricted (RKE2 only).")
    kubeconfig: OrUnset[Annotated[SecretStr, Strict(), Msg(default="unset", declare=True, type_name="encrypted string")]] = Field(
        None, description="kubeconfig of the running cluster (pulumi config set --secret, or make kubeconfig for RKE1); RKE2 uses the one its first server published when unset.")
    tags: OrUnset[Annotated[dict[str, Annotated[str, Strict()]], Msg(
        item="{json} is not a string; tag values are strings", type_name="map", default="`{}`"),
        # settings/rules/tags.py checks keys and values with the same patterns, and says why with the count.
        WithJsonSchema({"type": "object", "maxProperties": MAX_USER_TAGS, "propertyNames": {"pattern": TAG_KEY_PATTERN},
                        "additionalProperties": {"type": "string", "pattern": TAG_VALUE_PATTERN}})]] = Field(
        None, description=f"Extra tags on every taggable resource (at most {MAX_USER_TAGS}; keys 1-128 and values 0-256 of "
                          "ASCII letters, digits, space and _ . : / = + - @; not Name, KubernetesCluster, aws:*, "
                          "kubernetes.io/cluster/*, kubernetes.io/role/*, rke-aws/* in any letter case).")
    allow_uninstall: Annotated[Bool, Msg(declare=True, reason="an update never uninstalls the CCM by accident")] = Field(
        False, description="Let one update leave out what the last one installed in the cluster (installedInCluster): "
                           "without a kubeconfig (the cluster is gone), or switching ccm.install to manifest after "
                           "`pulumi state delete` of the releases; Pulumi deletes what is still in the state.")
    protect_servers: Annotated[Bool, Msg(declare=True, reason="replacing servers deliberately stays one command")] = Field(
        False, description="Protect controlplane/etcd instances from deletion and replacement (pulumi protect).")

    # ---- day 2: what the user vouches for about the running cluster (issue 23; plan/history.py) ----
    confirm_cluster_state: OrUnset[Annotated[str, NonEmpty(CONFIRM_CODES_PATTERN), Msg(
        pattern="{json} is not a confirmation code; copy the code a refusal or warning printed (like version-0123456789)",
        default="unset", declare=True, type_name="string")]] = Field(
        None, description="Codes a refusal or warning printed (space-separated), each confirming one exact statement "
                          "about the running cluster when it cannot be read; a code confirms nothing once the state moves on.")
    fips: Annotated[Bool, Msg(declare=True, reason="FIPS mode needs an OS and images that support it")] = Field(
        False, description="RKE2 with its FIPS 140 build on OSes in FIPS mode (RHEL/Rocky 9 and AL2023 switched at first "
                           "boot, others from your FIPS `ami`); x86_64, Canal, RKE2 only ("
                           "docs/features/airgap-os-fips.md, 'Operating systems, SELinux and FIPS').")
    identity: Annotated[Identity, Msg()] = Field(default_factory=Identity, description=Identity.__doc__)
    registry: OrUnset[Annotated[Registry, Msg(default="unset (public registries)", type=(
        "is not a map; expected {{mirrors, username, password, caBundle, systemDefault}}"))]] = Field(None, description=Registry.__doc__)
    airgap: OrUnset[Annotated[Airgap, Msg(default="unset (nodes reach the internet)")]] = Field(None, description=Airgap.__doc__)


# The sections by stack key (a map of settings each), in the stack file's order.
SECTIONS: dict[str, type[_Section]] = {
    "network": Network, "access": Access, "ccm": Ccm, "controlPlane": ControlPlane,
    "etcdBackup": EtcdBackup, "addons": Addons, "proxy": Proxy, "rancher": Rancher, "ingress": Ingress,
    "rotation": Rotation,
    "identity": Identity,
    "registry": Registry,
    "airgap": Airgap,
}


TOP_LEVEL_KEYS = stack_keys(ClusterKeys)
POOL_KEYS = stack_keys(NodePool)

