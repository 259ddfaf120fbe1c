"""Node IAM: a controlplane role and a worker role, their policies and instance profiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..settings import tags
from . import iam_policies as iam_policy

NODE_IAM_ROLES = ("controlplane", "worker")
# RKE2 etcd-only servers (split roles): declared only where such nodes are planned.
ETCD_IAM_ROLE = "etcd"


@dataclass(frozen=True)
class ParameterAccess:
    """SSM parameters one role uses at boot (ARNs; outputs of the parameters)."""
    read: Sequence[pulumi.Input[str]] = ()
    write: Sequence[pulumi.Input[str]] = ()
    read_path: Sequence[pulumi.Input[str]] = ()
    encrypt_keys: Sequence[pulumi.Input[str]] = ()


@dataclass(frozen=True)
class NodeIamArgs:
    cluster_id: str
    ssm: bool
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    partition: str = "aws"
    ec2_principal: str = "ec2.amazonaws.com"
    # role -> the parameters it reads/writes at boot (RKE2), and only these
    parameters: Mapping[str, ParameterAccess] = field(default_factory=dict)
    # role -> further inline policies (suffix, JSON document): etcd snapshots, the EBS CSI controller
    extra_policies: Mapping[str, Sequence[tuple[str, str]]] = field(default_factory=dict)
    roles: Sequence[str] = NODE_IAM_ROLES  # + ETCD_IAM_ROLE with RKE2 etcd-only servers


class NodeIam(pulumi.ComponentResource):
    """Roles trusted by EC2; controlplane nodes get the CCM's policy, etcd-only and worker nodes the read-only one
    (RKE2 etcd-only servers in a role of their own, with the server's parameters)."""

    def __init__(self, name: str, args: NodeIamArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:iam:NodeIam", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role_names: dict[str, pulumi.Output[str]] = {}
        self.role_arns: dict[str, pulumi.Output[str]] = {}
        self.profile_names: dict[str, pulumi.Output[str]] = {}
        self.profile_arns: dict[str, pulumi.Output[str]] = {}
        # Everything a booting node needs granted before it starts.
        self.grants: list[pulumi.Resource] = []
        for role in args.roles:
            rname = f"{name}-{role}"
            r = aws.iam.Role(
                rname,
                assume_role_policy=iam_policy.ec2_assume_role_policy(args.ec2_principal),
                description=f"{role} nodes of cluster {args.cluster_id} (rke-aws)",
                tags=tags.named(rname, args.extra_tags),
                opts=child,
            )
            self.grants.append(aws.iam.RolePolicy(
                f"{rname}-cloud-provider",
                role=r.id,
                policy=iam_policy.policy_json(role, args.cluster_id, args.partition),
                opts=child,
            ))
            access = args.parameters.get(role)
            if access is not None:
                arns = pulumi.Output.all(list(access.read), list(access.write), list(access.read_path),
                                         list(access.encrypt_keys))
                self.grants.append(aws.iam.RolePolicy(
                    f"{rname}-join-token",
                    role=r.id,
                    policy=arns.apply(lambda a: iam_policy.parameter_policy(a[0], a[1], a[2], a[3])),
                    opts=child,
                ))
            for suffix, document in args.extra_policies.get(role, ()):
                self.grants.append(aws.iam.RolePolicy(f"{rname}-{suffix}", role=r.id, policy=document, opts=child))
            if args.ssm:
                aws.iam.RolePolicy(
                    f"{rname}-session-manager",
                    role=r.id,
                    policy=iam_policy.session_manager_policy(),
                    opts=child,
                )
            profile = aws.iam.InstanceProfile(
                rname,
                role=r.name,
                tags=tags.named(rname, args.extra_tags),
                opts=child,
            )
            self.role_names[role] = r.name
            self.role_arns[role] = r.arn
            self.profile_names[role] = profile.name
            self.profile_arns[role] = profile.arn
        self.register_outputs({
            "roleNames": self.role_names,
            "instanceProfileNames": self.profile_names,
            "instanceProfileArns": self.profile_arns,
        })
