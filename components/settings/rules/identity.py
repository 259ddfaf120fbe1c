"""identity: workload identity (IRSA) keys that need each other: the issuer's keys only with irsa on, the Load
Balancer Controller only with the issuer, the S3-hosted issuer not where S3 cannot serve it anonymously (China).
RKE1 takes irsa on a new cluster only: that check reads the last outputs (plan/identity.py rke1_running_problems).
The checks that read a value's form against the issuer's and IAM's rules (the issuer URL, a service account's
names, a role's policy) are the planner's (plan/identity.py): they use the pure cores of plan/, which this layer
does not import. Both run before any resource exists."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from ..partitions import of_region
from .base import Context, Keys, error, given, warning

# Partitions where the S3-hosted issuer cannot work (the evidence: plan/identity_issuer.py S3_ISSUER_REFUSED,
# which this mirrors by name; tests/unit/test_identity_rules.py holds the two equal).
S3_ISSUER_REFUSED_PARTITIONS = frozenset({"aws-cn"})


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    identity = keys.valid.identity
    irsa = identity.service_accounts == "irsa"
    found: list[Diagnostic] = []
    if not irsa:
        for key in sorted(given(identity) - {"serviceAccounts", "keyGeneration"}):
            found.append(error(f"identity.{key}", "is set, but identity.serviceAccounts is 'none'; set "
                                                  "identity.serviceAccounts irsa, or remove it", "identity.without-irsa"))
    if keys.valid.addons.load_balancer_controller and not irsa:
        found.append(error("addons.loadBalancerController", "true needs workload identity for the controller's role: "
                                                            "set identity.serviceAccounts irsa (or set it false)",
                           "identity.lbc-without-irsa", True))
    if irsa and identity.issuer_url is None and ctx.region is not None:
        partition = of_region(ctx.region).name
        if partition in S3_ISSUER_REFUSED_PARTITIONS:
            found.append(error("identity.issuerUrl", f"missing: in {ctx.region} ({partition}) the issuer cannot be an "
                                                     "S3 bucket: S3 in the China regions refuses anonymous reads without an "
                                                     "ICP recordal, and STS reads the issuer's documents anonymously; "
                                                     "publish them yourself on an ICP-recorded https host and set "
                                                     "identity.issuerUrl to it", "identity.china-s3"))
    registry = keys.valid.registry
    mirrored = registry is not None and ("public.ecr.aws" in registry.mirrors or "*" in registry.mirrors)
    if irsa and identity.issuer_url is not None and ctx.region is not None and not mirrored and \
            of_region(ctx.region).name in S3_ISSUER_REFUSED_PARTITIONS:
        # plan/identity_webhook.py: the images are on public.ecr.aws, which EKS does not use in China.
        found.append(warning("identity.serviceAccounts", f"in {ctx.region} the pod identity webhook's (and the Load "
                                                         "Balancer Controller's) image comes from public.ecr.aws, which "
                                                         "EKS does not use in the China regions; check the nodes can pull "
                                                         "it, or mirror it: registry.mirrors public.ecr.aws (not verified from here)",
                             "identity.china-images", "irsa"))
    seen: dict[str, int] = {}
    for i, role in enumerate(identity.roles):
        key = f"identity.roles[{i}]"
        if role.service_account is None:
            found.append(error(f"{key}.serviceAccount", "missing; set <namespace>/<name> of the service account",
                               "config.missing"))
        elif role.service_account in seen:
            found.append(error(f"{key}.serviceAccount", f"'{role.service_account}' has a role already "
                                                        f"(identity.roles[{seen[role.service_account]}]); a service "
                                                        "account names one role: merge the two", "identity.role-twice",
                               role.service_account))
        else:
            seen[role.service_account] = i
        if not role.policy_arns and role.policy is None:
            found.append(error(key, "grants nothing; give policyArns, a policy, or both", "identity.role-empty"))
    return found
