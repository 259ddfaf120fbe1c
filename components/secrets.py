"""RKE2's join tokens and its init marker, in SSM Parameter Store; never in user data.

- the server token (`token`), read by servers only;
- the agent token (`agent-token`; RKE2 accepts it from agents, not from joining servers), read by
  agents, and by servers, which must all be configured with it;
- the init marker, `pending` until the first server has initialised the cluster and writes
  `initialized ...` (bootstrap.py): from then on no server ever initialises a second cluster.

Nodes read them at boot with their instance role, which may read only the parameters of its own
kind (components/iam.py), so user data stays free of secrets and readable in `pulumi preview`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from . import tags

TOKEN_LENGTH = 48  # RKE2 accepts any string; 48 alphanumerics is ~285 bits
MARKER_PENDING = "pending"
# Stacks deployed before the marker existed already run a cluster: its first server must join.
MARKER_EXISTING = "initialized before rke-aws kept an init marker"


def token_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-join-token"


def agent_token_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-agent-token"


def marker_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-initialized"


@dataclass(frozen=True)
class JoinTokenArgs:
    cluster_id: str
    # False keeps one token for servers and agents: clusters created before agent tokens have
    # servers without `agent-token`, and a new server configured with one could not join them.
    agent_token: bool = True
    cluster_exists: bool = False
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class JoinToken(pulumi.ComponentResource):
    def __init__(self, name: str, args: JoinTokenArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("rke-aws:secrets:JoinToken", name, None, opts)
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
        self.agent_parameter_name: Optional[str] = None
        self.agent_parameter_arn: Optional[pulumi.Output[str]] = None
        self.agent_token: Optional[pulumi.Output[str]] = None
        if args.agent_token:
            agent, self.agent_token = secure("rke2-agent-token", agent_token_parameter_name(args.cluster_id),
                                             "agent join token")
            self.agent_parameter_name = agent_token_parameter_name(args.cluster_id)
            self.agent_parameter_arn = agent.arn
        self.marker_name = marker_parameter_name(args.cluster_id)
        marker = aws.ssm.Parameter(
            f"{name}-rke2-initialized",
            name=self.marker_name,
            type="String",
            # Not secret, and shown in previews (`value` would be masked as a secret).
            insecure_value=MARKER_EXISTING if args.cluster_exists else MARKER_PENDING,
            description=f"Whether cluster {args.cluster_id} was initialised; written by its first server (rke-aws)",
            tags=tags.named(f"{name}-rke2-initialized", args.extra_tags),
            # The first server overwrites the value once it has initialised the cluster.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["insecureValue"]),
        )
        self.marker_arn = marker.arn
        # Everything a node reads at boot exists before it boots.
        self.parameters = [p for p in (server, marker, agent if args.agent_token else None) if p is not None]
        self.register_outputs({"parameterName": self.parameter_name, "markerName": self.marker_name})
