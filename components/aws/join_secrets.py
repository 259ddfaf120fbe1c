"""RKE2's join tokens and its init marker, in SSM Parameter Store; never in user data.

- the server token (`token`), read by servers only;
- the agent token (`agent-token`; RKE2 accepts it from agents, not from joining servers), read by
  agents, and by servers, which must all be configured with it;
- the init marker, `pending` until the first server has initialised the cluster and writes
  `initialized ...` (components/node/scripts/rke2.sh): from then on no server ever initialises a second cluster.

Nodes read them at boot with their instance role, which may read only the parameters of its own
kind (components/aws/iam.py), so user data stays free of secrets and readable in `pulumi preview`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from ..plan.names import (
    KUBECONFIG_PENDING,
    agent_token_parameter_name,
    kubeconfig_key_alias,
    kubeconfig_parameter_name,
    marker_parameter_name,
    token_parameter_name,
)
from ..settings import tags

TOKEN_LENGTH = 48  # RKE2 accepts any string; 48 alphanumerics is ~285 bits
MARKER_PENDING = "pending"
# Stacks deployed before the marker existed already run a cluster: its first server must join.
MARKER_EXISTING = "initialized before rke-aws kept an init marker"


def kubeconfig_key_policy(partition: str, account_id: str) -> str:
    """The account administers the key through IAM; nothing else. The controlplane role gets
    kms:Encrypt from its own IAM policy (components/aws/iam.py) and no role gets kms:Decrypt, so only
    principals whose IAM policies allow kms:Decrypt on this key (or on every key) can read the
    kubeconfig."""
    import json

    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Sid": "AccountAdministersThroughIam", "Effect": "Allow",
        "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"}, "Action": "kms:*", "Resource": "*"}]},
        indent=2, sort_keys=True)


@dataclass(frozen=True)
class JoinTokenArgs:
    cluster_id: str
    # False keeps one token for servers and agents: clusters created before agent tokens have
    # servers without `agent-token`, and a new server configured with one could not join them.
    agent_token: bool = True
    cluster_exists: bool = False
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    # Publish the admin kubeconfig (first server) to an SSM parameter under a key of its own.
    publish_kubeconfig: bool = False
    partition: str = "aws"
    account_id: str = ""


OLD_TYPE = "rke-aws:secrets:JoinToken"  # the one component that owned all of this before (aliases below)


def _moved_from_join_token(name: str) -> pulumi.Alias:
    """For a child that was JoinToken's: its old parent's URN (a root-stack child of that type and name);
    the engine builds the old URN from it (pulumi/pulumi step_generator.go collapseAliasToUrn)."""
    return pulumi.Alias(parent=f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{OLD_TYPE}::{name}")


class JoinTokens(pulumi.ComponentResource):
    """The server token and (clusters created with one) the agent token: random passwords in SecureString
    parameters. Was JoinToken (which also owned the init marker and the published kubeconfig): it keeps
    that URN through an alias, and its children with it (inherited aliases)."""

    def __init__(self, name: str, args: JoinTokenArgs, opts: pulumi.ResourceOptions | None = None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
            aliases=[pulumi.Alias(type_=OLD_TYPE, parent=pulumi.ROOT_STACK_RESOURCE)]))
        super().__init__("rke-aws:secrets:JoinTokens", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def secure(suffix: str, parameter_name: str, what: str) -> tuple[aws.ssm.Parameter, pulumi.Output[str]]:
            password = random.RandomPassword(f"{name}-{suffix}", length=TOKEN_LENGTH, special=False, opts=child)
            parameter = aws.ssm.Parameter(
                f"{name}-{suffix}",
                name=parameter_name,
                type="SecureString",  # encrypted with the account's aws/ssm key
                value=password.result,
                description=f"RKE2 {what} of cluster {args.cluster_id} (rke-aws)",
                tags=tags.named(f"{name}-{suffix}", args.extra_tags),
                opts=child,
            )
            return parameter, pulumi.Output.secret(password.result)

        server, self.token = secure("rke2-token", token_parameter_name(args.cluster_id), "server join token")
        self.parameter_name = token_parameter_name(args.cluster_id)
        self.parameter_arn = server.arn
        self.agent_parameter_name: str | None = None
        self.agent_parameter_arn: pulumi.Output[str] | None = None
        self.agent_token: pulumi.Output[str] | None = None
        self.parameters: list[pulumi.Resource] = [server]
        if args.agent_token:
            agent, self.agent_token = secure("rke2-agent-token", agent_token_parameter_name(args.cluster_id),
                                             "agent join token")
            self.agent_parameter_name = agent_token_parameter_name(args.cluster_id)
            self.agent_parameter_arn = agent.arn
            self.parameters.append(agent)
        self.register_outputs({"parameterName": self.parameter_name})


class InitMarker(pulumi.ComponentResource):
    """The init marker: `pending` until the first server has initialised the cluster (module docstring)."""

    def __init__(self, name: str, args: JoinTokenArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:secrets:InitMarker", name, None, opts)
        self.marker_name = marker_parameter_name(args.cluster_id)
        marker = aws.ssm.Parameter(
            f"{name}-rke2-initialized",
            name=self.marker_name,
            type="String",
            # Not secret, and shown in previews (`value` would be masked as a secret).
            insecure_value=MARKER_EXISTING if args.cluster_exists else MARKER_PENDING,
            description=f"Whether cluster {args.cluster_id} was initialised; written by its first server (rke-aws)",
            tags=tags.named(f"{name}-rke2-initialized", args.extra_tags),
            # The first server overwrites the value once it has initialised the cluster; an update
            # of the parameter would send `pending` again, so only tags may change.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["insecureValue", "description"],
                                        aliases=[_moved_from_join_token(name)]),
        )
        self.marker_arn = marker.arn
        self.parameters: list[pulumi.Resource] = [marker]
        self.register_outputs({"markerName": self.marker_name})


class PublishedKubeconfig(pulumi.ComponentResource):
    """Where the first server publishes the admin kubeconfig: a SecureString parameter under a KMS key
    of its own, which only principals allowed kms:Decrypt on it can read."""

    def __init__(self, name: str, args: JoinTokenArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:secrets:PublishedKubeconfig", name, None, opts)
        moved = pulumi.ResourceOptions(parent=self, aliases=[_moved_from_join_token(name)])
        kname = f"{name}-admin-kubeconfig"
        key = aws.kms.Key(
            kname,
            description=f"Encrypts the admin kubeconfig of cluster {args.cluster_id} (rke-aws)",
            enable_key_rotation=True,
            deletion_window_in_days=7,
            policy=kubeconfig_key_policy(args.partition, args.account_id),
            tags=tags.named(kname, args.extra_tags),
            opts=moved,
        )
        alias = aws.kms.Alias(kname, name=kubeconfig_key_alias(args.cluster_id), target_key_id=key.key_id,
                              opts=moved)
        self.parameter_name = kubeconfig_parameter_name(args.cluster_id)
        kubeconfig = aws.ssm.Parameter(
            kname,
            name=self.parameter_name,
            type="SecureString",
            key_id=alias.name,  # as the first server names it when it overwrites the parameter
            tier="Advanced",  # an admin kubeconfig with embedded certificates can pass 4 KB
            value=KUBECONFIG_PENDING,
            description=f"Admin kubeconfig of cluster {args.cluster_id}, written by its first server (rke-aws)",
            tags=tags.named(kname, args.extra_tags),
            # The first server overwrites the value. Any update of the parameter would send the
            # placeholder again (the provider puts value and attributes together), so nothing
            # but tags (a separate call) may ever change it.
            opts=pulumi.ResourceOptions.merge(moved, pulumi.ResourceOptions(
                ignore_changes=["value", "description", "keyId", "tier"])),
        )
        self.key_alias = alias
        self.parameter_arn = kubeconfig.arn
        self.key_arn = key.arn
        self.parameters: list[pulumi.Resource] = [kubeconfig, alias]
        self.register_outputs({"parameterName": self.parameter_name})
