"""Workload identity (IRSA, issue 36) as this update plans it: the checks on `identity.*` values that need the
pure cores (the issuer URL, a role's service account and policy), and what the assembly builds: the issuer (this
stack's S3 bucket per partition, or the user's own URL), the OIDC provider's ARN, whether the servers sign with
the cluster's key or only trust it yet (identity_apiserver.transition: a running cluster trusts first, then signs
in the next update), the roles for service accounts and the EBS CSI controller's move off its access key. Pure."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, Statement
from ..settings.resolve import ClusterConfig as StackConfig
from ..settings.rules.identity import S3_ISSUER_REFUSED_PARTITIONS
from ..state.model import ClusterState
from . import identity_ebs_csi, identity_issuer, identity_roles
from .day2.confirmations import Observed
from .identity_issuer import STS_AUDIENCE, provider_arn, s3_issuer_url
from .names import RESERVED_BUCKET_PREFIXES

assert set(identity_issuer.S3_ISSUER_REFUSED) == set(S3_ISSUER_REFUSED_PARTITIONS)  # one list, two layers


def _error(key: str, message: str, code: str, value: object = None) -> Diagnostic:
    return Diagnostic(key, message, code, Severity.ERROR, value)


def config_problems(cfg: StackConfig) -> list[Diagnostic]:
    """What the identity keys' values break (every problem at once, before any resource)."""
    identity = cfg.identity
    if identity.service_accounts != "irsa":
        return []
    found: list[Diagnostic] = []
    if identity.issuer_url is not None:
        for problem in identity_issuer.issuer_url_problems(identity.issuer_url):
            found.append(_error("identity.issuerUrl", f"'{identity.issuer_url}' {problem}", "identity.issuer-url",
                                identity.issuer_url))
    for i, role in enumerate(identity.roles):
        key = f"identity.roles[{i}]"
        if role.service_account is not None:
            _, problems = identity_roles.parse_service_account(role.service_account)
            for problem in problems:
                found.append(_error(f"{key}.serviceAccount", f"'{role.service_account}': {problem}",
                                    "identity.service-account", role.service_account))
        if role.policy is not None:
            for problem in identity_roles.policy_problems(role.policy, role.allow_all_actions):
                found.append(_error(f"{key}.policy", problem, "identity.policy"))
    return found


def issuer_bucket_name(cluster_id: str, account_id: str, region: str) -> str:
    """The issuer's bucket: globally unique, known at preview, no dots (its virtual-hosted HTTPS name must
    match S3's `*.s3.<region>` certificate: identity_issuer.s3_issuer_url)."""
    digest = hashlib.sha256(f"{account_id}:{region}:{cluster_id}:oidc".encode()).hexdigest()[:8]
    name = f"{cluster_id[:40].rstrip('-')}-oidc-{digest}"
    return f"oidc-{name}" if name.startswith(RESERVED_BUCKET_PREFIXES) else name


def role_name(cluster_id: str, region: str, what: str) -> str:
    """An add-on's IRSA role: named (its ARN is known at preview, for the chart's values and the servers'
    manifests), unique per region (IAM names are account-wide); at most 64 characters."""
    digest = hashlib.sha256(f"{region}:{cluster_id}:{what}".encode()).hexdigest()[:6]
    return f"{cluster_id[:43]}-{what[:13]}-{digest}"


def role_arn(partition: str, account_id: str, name: str) -> str:
    return f"arn:{partition}:iam::{account_id}:role/{name}"


EBS_CSI_ROLE = "ebs-csi"
LBC_ROLE = "lb-controller"


def key_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/identity/signing-key"


def trusted_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/identity/trusted-keys"


@dataclass(frozen=True)
class RolePlan:
    service_account: str  # <namespace>/<name>
    namespace: str
    name: str
    policy_arns: tuple[str, ...]
    policy: str | None

    @property
    def resource_name(self) -> str:
        return f"{self.namespace}-{self.name}"


@dataclass(frozen=True)
class IdentityPlan:
    issuer_url: str
    bucket: str | None  # the issuer's bucket this stack creates (None: the user's own issuer)
    provider_arn: str
    signing: bool  # the servers sign with the cluster's key (False: they only trust it, this update)
    roles: tuple[RolePlan, ...]
    key_parameter: str
    trusted_parameter: str
    ebs_csi: identity_ebs_csi.Update | None  # the EBS CSI controller's credentials this update (None: no driver)
    load_balancer_controller: bool
    ebs_csi_role: str = ""  # the EBS CSI controller's role name (when ebs_csi.result.role)
    ebs_csi_role_arn: str = ""
    lbc_role: str = ""  # the AWS Load Balancer Controller's role name (with load_balancer_controller)
    lbc_role_arn: str = ""
    trusted: tuple[int, ...] = (1,)  # key generations the servers trust and the JWKS publishes (one or two)
    signer: int | None = 1  # the generation that signs (None: the servers only trust ours yet)
    audience: str = STS_AUDIENCE

    def ebs_release(self) -> tuple[bool, bool] | None:
        """(annotated, key_env) of the EBS CSI release this update (None: no driver)."""
        if self.ebs_csi is None:
            return None
        steps = [s for s in self.ebs_csi.steps if s.kind == "release"]
        if steps:
            return steps[-1].annotated, steps[-1].key_env
        return self.ebs_csi.result.annotated, self.ebs_csi.result.key_env


def servers_running(previous: ClusterState | None) -> bool:
    return bool(previous is not None and any({"controlplane", "etcd"} & set(n.roles) for n in previous.nodes))


def ebs_credentials_before(previous: ClusterState | None) -> identity_ebs_csi.EbsCredentials | None:
    """How the EBS CSI controller reached AWS after the last update (None: no driver then)."""
    if previous is None or not previous.ebs_csi:
        return None
    recorded = previous.identity_ebs_csi
    if recorded is None:
        return identity_ebs_csi.ON_KEY  # every release before this one used the access key
    return identity_ebs_csi.EbsCredentials(**recorded)


def key_step(trusted: tuple[int, ...], signer: int | None, target: int, running: bool) -> tuple[tuple[int, ...], int | None]:
    """The key generations the servers trust and the one that signs after this update, on the way to signing with
    generation `target` (identity.keyGeneration). The same order as identity_apiserver.transition, by generation
    (the keys' PEMs are generated, unknown before the first update): trust a new key everywhere before any server
    signs with it, keep the previous one trusted while tokens it signed may live, and make room for the next key by
    dropping the one that no longer signs. One step per update: running servers take it when they are replaced
    (their user data names the step, so `rke-aws rotate` sees them stale)."""
    if not running:
        return (target,), target
    if not trusted:
        return (target,), None  # the issuer turned on: trusted first, RKE2's key still signs
    if target not in trusted:
        if len(trusted) > 1:
            keep = signer if signer is not None else trusted[-1]
            return (keep,), signer  # the previous key goes: its tokens expired while the next update waited
        return (*trusted, target), signer  # the new key published and trusted; the current one still signs
    if signer != target:
        return trusted, target  # every server has it now: it signs, the previous one stays trusted
    return trusted, signer  # steady (the previous key stays published until the next rotation makes room)


def servers_behind(previous: ClusterState | None) -> list[str]:
    """API servers that do not run what the last update configured (their boot digest differs from its `wanted`):
    they still run an earlier identity step, so the next step must wait until they are replaced (rke-aws rotate).
    Nodes of outputs that recorded no digest (releases before rotation) are taken as current."""
    if previous is None:
        return []
    return [n.name for n in previous.nodes if "controlplane" in n.roles and n.wanted is not None
            and n.boot_digest is not None and n.wanted.boot_digest is not None
            and n.boot_digest != n.wanted.boot_digest]


def published_statement(url: str, previous: ClusterState | None) -> Statement:
    """What the user vouches for before the servers sign under their own issuer (identity.issuerUrl): STS reads
    the documents there (identity_issuer.published_problems lists what it checks), and only the user publishes
    them. Names the key IDs of the JWKS the last update exported, so a code confirms exactly those keys."""
    kids: list[str] = []
    if previous is not None and previous.identity_jwks:
        try:
            kids = sorted(k["kid"] for k in json.loads(previous.identity_jwks).get("keys", []))
        except (ValueError, TypeError, KeyError):
            kids = []
    return Statement("issuer", f"{url}/{identity_issuer.DISCOVERY_PATH} names issuer {url} and its jwks_uri serves the "
                               f"keys of this stack's output identityJwks ({', '.join(kids) or 'none yet'})")


def plan(cfg: StackConfig, previous: ClusterState | None, account_id: str, ebs_csi: bool,
         observed: Observed | None = None) -> tuple[IdentityPlan | None, list[Diagnostic]]:
    """The identity plan, and what refuses this update: servers about to sign under a bring-your-own issuer that
    is not known to publish the cluster's keys (the user confirms it: published_statement)."""
    observed = observed or Observed()
    identity = cfg.identity
    irsa = identity.service_accounts == "irsa"
    before = ebs_credentials_before(previous)
    if not irsa:
        return None, off_warnings(cfg, previous)
    partition = cfg.partition
    bucket = None
    if identity.issuer_url is not None:
        url = identity.issuer_url
    else:
        bucket = issuer_bucket_name(cfg.cluster_id, account_id, cfg.region)
        url = s3_issuer_url(bucket, cfg.region, partition.dns_suffix)
    # A running cluster's servers first trust our key under our issuer (RKE2's key still signs), and sign with
    # it from the next update on, once every server has it (identity_apiserver.transition).
    running = servers_running(previous)
    same_issuer = bool(previous and previous.identity_issuer_url == url)
    before_trusted = tuple(previous.identity_key_generations) if previous and same_issuer else ()
    before_signer = previous.identity_signing_generation if previous and same_issuer else None
    if previous and same_issuer and not before_trusted:
        # Outputs of this release's first shape (no generations recorded): generation 1, signing as recorded.
        before_trusted, before_signer = (1,), (1 if previous.identity_signing else None)
    byo = identity.issuer_url is not None
    # A bring-your-own issuer publishes the keys only once the user has them (the outputs of an update): even a
    # new cluster's servers start by trusting, and sign once the user confirms the documents are served.
    trusted, signer = key_step(before_trusted, before_signer, identity.key_generation, running or byo)
    problems: list[Diagnostic] = []
    if running and previous is not None and previous.identity_issuer_url and not same_issuer:
        # kube-apiserver accepts only the issuers it lists (kubernetes pkg/kubeapiserver/options/authentication.go)
        # and STS only its OIDC provider's: servers moved to another issuer would refuse every token of the old one
        # at once (identity_apiserver.transition refuses the same move).
        was = previous.identity_issuer_url
        hosted = s3_issuer_url(issuer_bucket_name(cfg.cluster_id, account_id, cfg.region), cfg.region,
                               partition.dns_suffix)
        keep = "remove identity.issuerUrl (the S3 issuer this stack hosts)" if was == hosted else \
            f"set identity.issuerUrl back to '{was}'"
        problems.append(_error(
            "identity.issuerUrl", f"{repr(url) if byo else 'unset'} would move the running cluster from its "
                                  f"issuer '{was}' to '{url}', and every service-account token the old one issued would "
                                  f"be refused at once; {keep} (a new issuer means a new cluster)",
            "identity.issuer-changed", identity.issuer_url or "unset"))
    behind = servers_behind(previous) if running and same_issuer else []
    if behind and (trusted, signer) != (before_trusted, before_signer):
        # Every server must run a step before the next one starts (identity_apiserver.transition): hold.
        trusted, signer = before_trusted, before_signer
        problems.append(Diagnostic(
            "identity", f"the next service-account key step waits: {', '.join(behind)} still run(s) an earlier one; "
                        "replace them (`rke-aws rotate <stack>`) and run `pulumi up` again", "identity.step-waits",
            Severity.WARNING))
    if byo and signer is not None and signer != before_signer:
        statement = published_statement(url, previous)
        if not observed.confirmed(statement):
            problems.append(Diagnostic(
                "identity.issuerUrl", f"'{url}': the servers would now sign with the cluster's key, but STS can verify "
                                      "its tokens only once this issuer serves the discovery document and JWKS of the "
                                      "outputs identityDiscovery and identityJwks; publish them there, then "
                                      + statement.how(),
                "identity.byo-unpublished", Severity.ERROR, url, confirm=statement))
    signing = signer is not None
    # The EBS CSI controller leaves its key once tokens of our issuer are what its pods get: servers that
    # started signing (a new cluster's start so; a running one's signed in the last update already).
    issuer_ready = not running or before_signer is not None
    roles = []
    for role in identity.roles:
        assert role.service_account is not None
        namespace, name = role.service_account.split("/")
        roles.append(RolePlan(role.service_account, namespace, name, tuple(role.policy_arns), role.policy))
    update = identity_ebs_csi.plan_update(before, irsa=True, issuer_ready=issuer_ready) if ebs_csi else None
    ebs_role = role_name(cfg.cluster_id, cfg.region, EBS_CSI_ROLE)
    lbc_role = role_name(cfg.cluster_id, cfg.region, LBC_ROLE)
    return IdentityPlan(url, bucket, provider_arn(partition.name, account_id, url), signing, tuple(roles),
                        key_parameter_name(cfg.cluster_id), trusted_parameter_name(cfg.cluster_id), update,
                        cfg.addons.load_balancer_controller,
                        ebs_role, role_arn(partition.name, account_id, ebs_role),
                        lbc_role, role_arn(partition.name, account_id, lbc_role),
                        trusted=trusted, signer=signer), problems


def key_generation_problems(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """A key generation lower than the newest one the servers trust would bring back a retired key."""
    if cfg.identity.service_accounts != "irsa" or previous is None or not previous.identity_key_generations:
        return []
    newest = max(previous.identity_key_generations)
    if cfg.identity.key_generation < newest:
        return [_error("identity.keyGeneration", f"{cfg.identity.key_generation} is below {newest}, the newest key the "
                                                 f"servers trust; set {newest} (or {newest + 1} to rotate again)",
                       "identity.key-generation-down", cfg.identity.key_generation)]
    return []


def rke1_running_problems(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """RKE1 takes the issuer on a new cluster only. Its key files reach a controlplane host only at the node's
    first boot (node/scripts.py rke_boot_script): `rke up` writes no host files (rancher/rke cluster/plan.go binds
    what is there), and `rke-aws rotate` replaces RKE2 nodes only. So on a running RKE1 cluster turning irsa on,
    or raising identity.keyGeneration (a key the hosts' trusted-keys file lacks), is refused before any resource:
    the servers would be told to read files they do not have."""
    if (cfg.distribution != "rke" or cfg.identity.service_accounts != "irsa"
            or not servers_running(previous)):
        return []
    assert previous is not None
    why = ("a running RKE1 cluster's controlplane hosts get the issuer's key files only at their first boot: `rke up` "
           "writes no host files and `rke-aws rotate` replaces RKE2 nodes only")
    if previous.identity_issuer_url is None:
        return [_error("identity.serviceAccounts", f"'irsa' cannot be turned on here: {why}; build a new RKE1 cluster "
                                                   "with irsa set before its first `pulumi up` (or use rke2), or set "
                                                   "none", "identity.rke1-running", "irsa")]
    newest = max(previous.identity_key_generations or [1])
    if cfg.identity.key_generation > newest:
        return [_error("identity.keyGeneration", f"{cfg.identity.key_generation} would rotate the signing key, which "
                                                 f"this cluster cannot take: {why}; keep {newest}, or move the "
                                                 "workloads to a new cluster for a new key",
                       "identity.rke1-rotation", cfg.identity.key_generation)]
    return []


def off_warnings(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """irsa turned off on a running cluster. RKE2: the resources go now, the servers' flags when rotated. RKE1: the next `rke up` restarts kube-apiserver with RKE's issuer and
    key alone (cluster.yml no longer names ours), at once on every controlplane node, so tokens the cluster's key
    signed (pods' own tokens included) are refused until the kubelet replaces them; RKE2's servers keep theirs until
    they are rotated."""
    if previous is None or previous.identity_issuer_url is None or not servers_running(previous):
        return []
    if cfg.distribution == "rke2":
        return [Diagnostic("identity.serviceAccounts", "'none' on a running cluster: this update deletes the OIDC "
                                                       "provider, the issuer's documents and the service-account roles "
                                                       "(pods that assume them lose AWS access now), and the servers keep "
                                                       "the cluster's issuer until `rke-aws rotate` replaces them; a "
                                                       "replaced server accepts only RKE2's own tokens, so restart the "
                                                       "pods that talk to the API server after the rotation",
                           "identity.off", Severity.WARNING, "none")]
    if not previous.identity_signing and previous.identity_signing_generation is None:  # RKE's key signed all
        return []
    return [Diagnostic("identity.serviceAccounts", "'none' on a running RKE1 cluster: after the next `rke up` "
                                                   "kube-apiserver accepts only RKE's own tokens, so the tokens pods "
                                                   "hold from the cluster's issuer are refused until the kubelet "
                                                   "replaces them; restart the pods that talk to the API server "
                                                   "after `rke up`", "identity.rke1-off", Severity.WARNING, "none")]


def role_problems(namespace: str, service_account: str, policy: str | None, allow_all_actions: bool = False) -> list[str]:
    """What RkeCluster.service_account_role refuses: a service account Kubernetes could not have, a policy
    allowing every action on every resource."""
    _, problems = identity_roles.parse_service_account(f"{namespace}/{service_account}")
    if policy is not None:
        problems += identity_roles.policy_problems(policy, allow_all_actions)
    return problems
