"""The node security group's admin rules on stacks from releases that named them by list position."""

from __future__ import annotations

import re

from ..diagnostics import ConfigError, Diagnostic
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from .environment import Environment
from .lookups import looked_up
from .names import ADMIN_PORTS, KUBE_API_PORT, cidr_key


def admin_rule_aliases(cfg: StackConfig, previous: ClusterState | None, env: Environment) -> dict[str, str]:
    """Releases before the CIDR-keyed names numbered admin rules by list position, and their last
    outputs do not say which CIDR each position held. An alias from the list's current order would
    match a new CIDR to another CIDR's old rule when adminCidrs changes in the same update (review
    finding 3): the engine updates that rule's cidrIpv4 (ModifySecurityGroupRules) before it deletes
    the rule already holding the CIDR, and AWS refuses duplicate rules (InvalidPermission.Duplicate).
    So the existing rules are read (DescribeSecurityGroupRules: aws.vpc.get_security_group_rules,
    then get_security_group_rule for each) and each CIDR and port is aliased to the rule that holds
    it, by that rule's Name tag, which the old release set to the rule's resource name. A CIDR no
    rule holds gets no alias (a new rule); old rules for CIDRs no longer listed are deleted."""
    if previous is None or previous.children_keyed or not cfg.access.admin_cidrs:
        return {}
    name = cfg.cluster_id
    groups: list[tuple[str, str, tuple[int, ...], str]] = []  # (group ID, child prefix, ports, old-name pattern)
    fix = "or leave access.adminCidrs as it was for this update and change it in the next one"
    key = "access.adminCidrs"
    if previous.security_group_id:
        groups.append((previous.security_group_id, f"{name}-nodes-admin", ADMIN_PORTS,
                       rf"{re.escape(name)}-nodes-admin-\d+-(\d+)"))
    vpc_id = previous.vpc_id
    if cfg.endpoint == "nlb" and previous.control_plane_endpoint_type in (None, "nlb") and vpc_id:
        found = looked_up(key, f"looking up the control-plane load balancer's security group ({name}-endpoint)",
                          f"check the VPC {vpc_id}, {fix}",
                          lambda: env.lookups.security_groups(vpc_id, f"{name}-endpoint"), env.offline)
        for gid in found:
            groups.append((gid, f"{name}-endpoint-admin", (KUBE_API_PORT,), rf"{re.escape(name)}-endpoint-admin-\d+()"))
    aliases: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for gid, prefix, ports, pattern in groups:
        listed = looked_up(key, f"looking up the rules of security group {gid}, whose admin rules this update "
                           "renames", f"check the security group, {fix}",
                           lambda gid=gid: env.lookups.security_group_rule_ids(gid), env.offline)  # type: ignore[misc]
        for rid in listed:
            rule = looked_up(key, f"looking up security group rule {rid}", f"check the security group, {fix}",
                             lambda rid=rid: env.lookups.security_group_rule(rid), env.offline)  # type: ignore[misc]
            if rule.is_egress or rule.cidr_ipv4 not in cfg.access.admin_cidrs or rule.from_port not in ports \
                    or rule.to_port != rule.from_port or rule.ip_protocol != "tcp":
                continue
            old = (rule.tags or {}).get("Name") or ""
            m = re.fullmatch(pattern, old, re.ASCII)
            new = f"{prefix}-{cidr_key(rule.cidr_ipv4)}" + (f"-{rule.from_port}" if len(ports) > 1 else "")
            if m is None or (m.group(1) and int(m.group(1)) != rule.from_port) or new in aliases:
                # Not a rule this program named: the new rule would duplicate it, which AWS refuses.
                problems.append(Diagnostic(
                    key, f"security group {gid} already has rule {rid} (Name '{old}') for {rule.cidr_ipv4} port "
                    f"{rule.from_port}, which is not one of this stack's admin rules, so the rule this update creates "
                    "would duplicate it (InvalidPermission.Duplicate); remove that rule, or leave this CIDR out of "
                    "access.adminCidrs for this update", "access.admin-rule-duplicate", value=rule.cidr_ipv4))
                continue
            aliases[new] = old
    if problems:
        raise ConfigError(problems)
    return aliases
