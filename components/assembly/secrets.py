"""RKE2's join tokens, the init marker and the admin kubeconfig the first server publishes (SSM parameters),
and which node role may read or write which of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from ..aws.iam import ETCD_IAM_ROLE, ParameterAccess
from ..aws.identity import WorkloadIdentity
from ..aws.join_secrets import InitMarker, JoinTokenArgs, JoinTokens, PublishedKubeconfig
from ..cluster.manifests import ServerManifests
from ..plan.model import ClusterSpec
from ..plan.names import manifest_path, registry_password_parameter_name
from ..settings import tags


@dataclass(frozen=True)
class Secrets:
    join_token: JoinTokens
    marker: InitMarker
    published: PublishedKubeconfig | None
    # registry.password (issue 35): a SecureString every node reads at boot, never in user data
    registry_password: aws.ssm.Parameter | None = None
    registry_password_name: str | None = None

    @property
    def parameters(self) -> list[pulumi.Resource]:
        """Everything a node reads at boot, in the order it must exist."""
        return [self.join_token.parameters[0], *self.marker.parameters, *self.join_token.parameters[1:],
                *(self.published.parameters if self.published else []),
                *([self.registry_password] if self.registry_password is not None else [])]


def build(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions) -> Secrets | None:
    """RKE2 only (None for RKE1)."""
    cfg, cluster = spec.config, spec.plan
    if cfg.distribution != "rke2":
        return None
    args = JoinTokenArgs(
        cluster_id=cfg.cluster_id,
        agent_token=spec.agent_token,
        cluster_exists=spec.cluster_exists,
        publish_kubeconfig=spec.publish_kubeconfig,
        partition=cfg.partition.name,
        account_id=cluster.account_id,
        extra_tags=cfg.tags,
    )
    join_token = JoinTokens(name, args, child)
    marker = InitMarker(name, args, child)
    published = PublishedKubeconfig(name, args, child) if spec.publish_kubeconfig else None
    reg = cfg.registry
    if reg is None or reg.password is None or not reg.username:
        return Secrets(join_token, marker, published)
    parameter_name = registry_password_parameter_name(cfg.cluster_id)
    parameter = aws.ssm.Parameter(
        f"{name}-registry-password",
        name=parameter_name,
        type="SecureString",  # encrypted with the account's aws/ssm key, like the join tokens
        value=pulumi.Output.secret(reg.password.get_secret_value()),
        description=f"Private registry password of cluster {cfg.cluster_id} (rke-aws)",
        tags=tags.named(f"{name}-registry-password", cfg.tags),
        opts=child,
    )
    return Secrets(join_token, marker, published, parameter, parameter_name)


def parameter_access(spec: ClusterSpec, secrets: Secrets | None,
                     manifests: ServerManifests | None, identity: WorkloadIdentity | None = None) -> dict[str, ParameterAccess]:
    """Node role -> the parameters it reads and writes (RKE1: none but the issuer's). `identity`: the API servers
    (controlplane role) also read the issuer's signing key and trusted keys, and no other role does."""
    if secrets is None:
        # RKE1: no join tokens; with irsa the controlplane nodes' boot script reads the two key parameters.
        if identity is None:
            return {}
        return {"controlplane": ParameterAccess(read=[identity.key_parameter.arn, identity.trusted_parameter.arn])}
    cfg = spec.config
    join_token, marker, published = secrets.join_token, secrets.marker, secrets.published
    agent_arn = join_token.agent_parameter_arn
    # GetParametersByPath is authorised on the path's own ARN, built from a sibling parameter's. Kept
    # as long as the servers sync from it (a server booted in manifest mode syncs for good).
    path_arn = (marker.marker_arn.apply(
        lambda arn: arn.split(":parameter/")[0] + ":parameter" + manifest_path(cfg.cluster_id))
        if manifests else None)
    server_access = ParameterAccess(
        read=[join_token.parameter_arn, marker.marker_arn] + ([agent_arn] if agent_arn is not None else []),
        # The init marker and the admin kubeconfig (written, never read back).
        write=[marker.marker_arn] + ([published.parameter_arn] if published else []),
        read_path=[path_arn] if path_arn is not None else [],
        encrypt_keys=[published.key_arn] if published else [],
    )
    registry = [secrets.registry_password.arn] if secrets.registry_password is not None else []
    server_access = dataclasses.replace(server_access, read=[*server_access.read, *registry])
    controlplane_access = server_access
    if identity is not None:
        controlplane_access = ParameterAccess(
            read=[*server_access.read, identity.key_parameter.arn, identity.trusted_parameter.arn],
            write=server_access.write, read_path=server_access.read_path, encrypt_keys=server_access.encrypt_keys)
    return {
        # RKE2 etcd-only servers are servers too: the first may initialise, all sync the manifests.
        "controlplane": controlplane_access, ETCD_IAM_ROLE: server_access,
        # Agents: the agent token only (the server token where the cluster has just one).
        "worker": ParameterAccess(read=[agent_arn if agent_arn is not None else join_token.parameter_arn, *registry]),
    }
