"""Workload identity (IRSA, issue 36): the service-account signing key, where the servers read it, the
issuer's two public documents, the IAM OIDC provider that trusts them, and roles for service accounts.

- The key pair is pulumi-tls' RSA 2048 key (identity_issuer.MIN_RSA_BITS; kops' default). Its private half goes
  to an SSM SecureString that only the servers' role may read (components/aws/iam.py grants exactly this
  parameter), fetched by the boot step identity.sh before rke2-server starts: never in user data, and the
  component exports only the public documents.
- The bucket (plan/identity.py names it) serves exactly the discovery document and the JWKS, anonymously, over
  HTTPS: ACLs disabled (BucketOwnerEnforced), a bucket policy on those two keys, Block Public Access allowing
  public policies but no ACLs (identity_issuer.PUBLIC_ACCESS_BLOCK says why). S3 refuses concurrent changes
  to one bucket's configuration, so each setting waits for the one before (as backups.py does).
- The OIDC provider has the audience sts.amazonaws.com and no thumbprints: IAM verifies an S3-hosted (or any
  publicly trusted) JWKS endpoint against its own root CAs (IAM API reference,
  UpdateOpenIDConnectProviderThumbprint), and terraform-provider-aws (internal/service/iam/
  openid_connect_provider.go, bridged by pulumi-aws 7: `thumbprint_lists` optional) lets IAM fetch one when
  none is given.
- Roles trust exactly one service account (identity_roles.trust_policy: StringEquals on sub and aud).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_tls as tls

from ..plan import identity_issuer, identity_roles
from ..plan.identity import IdentityPlan
from ..settings import tags

TYPE = "rke-aws:identity:WorkloadIdentity"


@dataclass(frozen=True)
class WorkloadIdentityArgs:
    cluster_id: str
    plan: IdentityPlan
    partition: str
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class WorkloadIdentity(pulumi.ComponentResource):
    """The issuer, its key and provider, and the configured roles (plan/identity.py decides)."""

    def __init__(self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(TYPE, name, None, opts)
        plan, cid = args.plan, args.cluster_id
        self._name, self._plan, self._cluster_id, self._tags = name, plan, cid, args.extra_tags
        child = pulumi.ResourceOptions(parent=self)
        # One key pair per generation the servers trust (identity.keyGeneration; plan/identity.py key_step): the
        # first keeps the name it always had, a rotation's next one is named by its generation.
        keys = {g: tls.PrivateKey(f"{name}-sa-signing-key" + (f"-{g}" if g > 1 else ""), algorithm="RSA",
                                  rsa_bits=identity_issuer.MIN_RSA_BITS, opts=child)
                for g in sorted(set(plan.trusted) | ({plan.signer} if plan.signer is not None else set()))}
        # While the servers only trust ours, the parameter holds the newest key (no server reads it yet).
        signing_key = keys[plan.signer if plan.signer is not None else plan.trusted[-1]]
        trusted_pems = pulumi.Output.all(*[keys[g].public_key_pem for g in plan.trusted])
        self.public_key_pem: pulumi.Output[str] = signing_key.public_key_pem
        self.key_parameter = aws.ssm.Parameter(
            f"{name}-sa-signing-key", name=plan.key_parameter, type="SecureString",
            value=pulumi.Output.secret(signing_key.private_key_pem),
            description="kube-apiserver's service-account signing key (servers only)",
            tags=tags.cluster_owned(cid, f"{name}-sa-signing-key", args.extra_tags), opts=child)
        self.trusted_parameter = aws.ssm.Parameter(
            f"{name}-sa-trusted-keys", name=plan.trusted_parameter, type="String",
            value=trusted_pems.apply(lambda pems: "".join(p if p.endswith("\n") else p + "\n" for p in pems)),
            description="the service-account public keys kube-apiserver accepts",
            tags=tags.cluster_owned(cid, f"{name}-sa-trusted-keys", args.extra_tags), opts=child)
        self.discovery = identity_issuer.document_text(identity_issuer.discovery_document(plan.issuer_url))
        self.jwks: pulumi.Output[str] = trusted_pems.apply(
            lambda pems: identity_issuer.document_text(identity_issuer.jwks(list(pems))))
        self.published: list[pulumi.Resource] = []
        if plan.bucket is not None:
            self.published = self._publish(name, plan.bucket, args.partition, child)
        self.provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc-provider", url=plan.issuer_url, client_id_lists=[plan.audience],
            tags=tags.cluster_owned(cid, f"{name}-oidc-provider", args.extra_tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.published))
        self.addon_grants: list[pulumi.Resource] = []  # what an add-on's release waits for
        self.role_arns: dict[str, pulumi.Output[str]] = {}
        for role in plan.roles:
            self.role_arns[role.service_account] = self.service_account_role(
                role.resource_name, role.namespace, role.name, role.policy_arns, role.policy).arn
        self.register_outputs({})

    def _publish(self, name: str, bucket_name: str, partition: str, child: pulumi.ResourceOptions) -> list[pulumi.Resource]:
        cid = self._cluster_id
        previous: list[pulumi.Resource] = []

        def then() -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, depends_on=list(previous))

        bname = f"{name}-oidc"
        bucket = aws.s3.Bucket(bname, bucket=bucket_name, force_destroy=True,
                               tags=tags.cluster_owned(cid, bname, self._tags), opts=child)
        previous.append(bucket)
        previous.append(aws.s3.BucketOwnershipControls(
            f"{bname}-ownership", bucket=bucket.id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership=identity_issuer.OBJECT_OWNERSHIP), opts=then()))
        previous.append(aws.s3.BucketPublicAccessBlock(
            f"{bname}-public-access", bucket=bucket.id, **identity_issuer.PUBLIC_ACCESS_BLOCK, opts=then()))
        previous.append(aws.s3.BucketPolicy(
            f"{bname}-public-documents", bucket=bucket.id,
            policy=json.dumps(identity_issuer.bucket_policy(bucket_name, partition), indent=2, sort_keys=True),
            opts=then()))
        discovery_key, jwks_key = identity_issuer.object_keys()
        objects: list[pulumi.Resource] = [
            aws.s3.BucketObjectv2(f"{bname}-{suffix}", bucket=bucket.id, key=key, content=content,
                                  content_type=identity_issuer.CONTENT_TYPE,
                                  cache_control=identity_issuer.CACHE_CONTROL,
                                  tags=tags.cluster_owned(cid, f"{bname}-{suffix}", self._tags), opts=then())
            for suffix, key, content in (("discovery", discovery_key, self.discovery), ("jwks", jwks_key, self.jwks))]
        return previous + objects

    def addon_role(self, name: str, role_name: str, namespace: str, service_account: str, policy: str) -> aws.iam.Role:
        """An add-on's role (the EBS CSI controller's, the Load Balancer Controller's): named, so its ARN is
        known at preview; its permissions a managed policy (inline role policies hold 10,240 characters, the
        Load Balancer Controller's upstream policy is close to that; a managed one holds 6,144 per version
        but counts without white space)."""
        plan = self._plan
        rname = f"{self._name}-{name}"
        role = aws.iam.Role(
            rname, name=role_name,
            assume_role_policy=self.provider.arn.apply(lambda arn: identity_roles.trust_policy_json(
                arn, plan.issuer_url, namespace, service_account, plan.audience)),
            description=f"IRSA: {namespace}/{service_account} of cluster {self._cluster_id}",
            tags=tags.cluster_owned(self._cluster_id, rname, self._tags), opts=pulumi.ResourceOptions(parent=self))
        managed = aws.iam.Policy(rname, path="/rke-aws/", description=f"{namespace}/{service_account} of cluster "
                                 f"{self._cluster_id}", policy=policy,
                                 tags=tags.cluster_owned(self._cluster_id, rname, self._tags),
                                 opts=pulumi.ResourceOptions(parent=self))
        self.addon_grants.append(aws.iam.RolePolicyAttachment(rname, role=role.name, policy_arn=managed.arn,
                                                              opts=pulumi.ResourceOptions(parent=self)))
        return role

    def service_account_role(self, name: str, namespace: str, service_account: str,
                             policy_arns: Sequence[str] = (), policy: str | None = None) -> aws.iam.Role:
        """An IAM role that exactly `<namespace>/<service_account>` may assume through this cluster's issuer
        (annotate the service account with `eks.amazonaws.com/role-arn: <arn>`)."""
        _, problems = identity_roles.parse_service_account(f"{namespace}/{service_account}")
        if problems:
            raise ValueError(f"{namespace}/{service_account}: " + "; ".join(problems))
        plan = self._plan
        rname = f"{self._name}-sa-{name}"
        role = aws.iam.Role(
            rname,
            assume_role_policy=self.provider.arn.apply(lambda arn: identity_roles.trust_policy_json(
                arn, plan.issuer_url, namespace, service_account, plan.audience)),
            description=f"IRSA: {namespace}/{service_account} of cluster {self._cluster_id}",
            tags=tags.cluster_owned(self._cluster_id, rname, self._tags),
            opts=pulumi.ResourceOptions(parent=self))
        for arn in policy_arns:
            aws.iam.RolePolicyAttachment(f"{rname}-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn,
                                         opts=pulumi.ResourceOptions(parent=self))
        if policy is not None:
            aws.iam.RolePolicy(f"{rname}-inline", role=role.id, policy=policy, opts=pulumi.ResourceOptions(parent=self))
        return role
