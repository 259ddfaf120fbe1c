"""The section of workload identity: `identity` and its `roles` (settings/sections.py composes it into
ClusterKeys)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from .fields import Bool, Msg, NonEmpty, OrUnset, Whole
from .patterns import whole
from .section import Section

# A managed policy's ARN: AWS's own (account `aws`) or an account's (IAM ARN format, IAM user guide "IAM identifiers").
POLICY_ARN_PATTERN = whole(r"arn:aws(?:-cn|-us-gov)?:iam::(?:aws|[0-9]{12}):policy/[\w+=,.@/-]{1,512}")


class IdentityRole(Section):
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


class Identity(Section):
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
