"""Which cluster a stack runs: a different cluster ID or region is a different cluster, so nothing else
compares; both refuse before anything else is judged."""

from __future__ import annotations

from ..diagnostics import Diagnostic
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState


def cluster_id_problems(previous: ClusterState | None, cluster_id: str, stack: str) -> list[Diagnostic]:
    """A new cluster ID renames every resource: a second cluster, the running one deleted."""
    if previous is None or previous.cluster_id in (None, cluster_id):
        return []
    old = previous.cluster_id
    servers = len(previous.etcd_members)
    defaulted = (" (clusterId is not set here and defaults to the stack name, so a renamed stack changes it: "
                 f"set it to '{old}')") if cluster_id == stack else ""
    return [Diagnostic(
        "clusterId", f"'{cluster_id}', but this stack runs cluster '{old}' ({len(previous.nodes)} nodes, {servers} "
        f"etcd members, endpoint api.{old}.rke-aws.internal){defaulted}. The cluster ID names every resource: this "
        "update would build a new VPC, new tokens and new servers under the new ID and delete every running node, "
        f"etcd members included. Set it back: `pulumi config set clusterId {old}`. To move a cluster to a new ID, "
        "create a new stack with it, restore an etcd snapshot there ("
        "docs/operations/restore-snapshot.md, 'Restoring a snapshot onto new servers'), move the workloads, then `pulumi destroy` this stack", "cluster.id-changed", value=cluster_id)]


def region_problems(previous: ClusterState | None, region: str) -> list[Diagnostic]:
    if previous is None or previous.region in (None, region):
        return []
    return [Diagnostic(
        "aws:region", f"'{region}', but this stack runs its cluster in {previous.region}; a cluster does not move "
        f"between regions (every node, subnet and address would be new): set it back (`pulumi config set "
        f"aws:region {previous.region}`). For a cluster in {region}, create a new stack there and restore an etcd "
        "snapshot into it (docs/operations/restore-snapshot.md, 'Restoring a snapshot onto new servers')", "cluster.region-changed", value=region)]


def check(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """Both, as the planner's first step."""
    return cluster_id_problems(previous, cfg.cluster_id, cfg.stack) + region_problems(previous, cfg.region)
