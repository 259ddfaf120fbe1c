"""The RKE2 join token: generated once, kept in SSM Parameter Store, never in user data.

Nodes fetch it at boot with their instance role (which may read this one parameter only), so
user data stays free of secrets and readable in `pulumi preview` diffs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from . import tags

TOKEN_LENGTH = 48  # RKE2 accepts any string; 48 alphanumerics is ~285 bits


def token_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-join-token"


@dataclass(frozen=True)
class JoinTokenArgs:
    cluster_id: str
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class JoinToken(pulumi.ComponentResource):
    def __init__(self, name: str, args: JoinTokenArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("rke-aws:secrets:JoinToken", name, None, opts)
        password = random.RandomPassword(
            f"{name}-rke2-token", length=TOKEN_LENGTH, special=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.parameter_name = token_parameter_name(args.cluster_id)
        parameter = aws.ssm.Parameter(
            f"{name}-rke2-token",
            name=self.parameter_name,
            type="SecureString",  # encrypted with the account's aws/ssm key
            value=password.result,
            description=f"RKE2 join token of cluster {args.cluster_id} (rke-aws)",
            tags=tags.named(f"{name}-rke2-token", args.extra_tags),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.parameter_arn = parameter.arn
        self.token = pulumi.Output.secret(password.result)
        self.register_outputs({"parameterName": self.parameter_name, "parameterArn": self.parameter_arn})
