"""What EC2 does with running spot nodes' persistent requests that Pulumi does not see (warnings)."""

from __future__ import annotations

from collections.abc import Sequence

from ..diagnostics import Diagnostic, Severity
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from .environment import Environment
from .lookups import LookupFailed
from .nodes import PlannedNode


def spot_request_warnings(cfg: StackConfig, previous: ClusterState | None, nodes: Sequence[PlannedNode],
                          env: Environment) -> tuple[Diagnostic, ...]:
    """What EC2 does with running spot nodes' persistent requests that Pulumi does not see.

    - A request launches its instance again when the instance is terminated without the request being
      cancelled first (EC2 User Guide, "Cancel a Spot Instance request"; only deleting the node through
      Pulumi cancels it: terraform-provider-aws resourceInstanceDelete). The relaunch carries the node's
      launch specification (address, user data), and it is not in the state: found by the requests
      this stack's outputs record (DescribeInstances filter spot-instance-request-id) and by the node's
      Name and cluster tags, each instance not among the outputs' instance IDs.
    - A request with an end date (valid_until, read back by the provider) ends then, and EC2 never starts
      an interrupted node of an ended request again. This program sets none (nodes.SPOT_VALID_UNTIL)."""
    if previous is None:
        return ()
    planned = {(n.pool.name, n.index) for n in nodes if n.pool.is_spot}
    running = [r for r in previous.nodes if r.market == "spot" and r.key in planned]
    if not running:
        return ()
    known = {r.instance_id for r in previous.nodes if r.instance_id}
    out: list[Diagnostic] = []
    found: dict[str, set[str]] = {}  # node name ("": not known) -> instances not in the outputs
    by_ip = {r.private_ip: r.name for r in running}
    states = ["pending", "running", "stopping", "stopped"]
    requests = sorted(r.spot_request_id for r in running if r.spot_request_id)
    searches = [("launched by this stack's spot requests",
                 [{"name": "spot-instance-request-id", "values": requests}])] if requests else []
    searches.append(("named like this stack's spot nodes",
                     [{"name": f"tag:{cfg.cluster_tag_key}", "values": ["owned"]},
                      {"name": "tag:Name", "values": sorted(r.name for r in running)}]))
    for what, filters in searches:
        try:
            listed = env.lookups.instances(filters, states)
        except LookupFailed as err:  # a look-up for a warning does not stop the update
            out.append(Diagnostic("nodePools", f"looking up instances {what} failed ({err.text}), so this update "
                                  "cannot tell whether a spot request launched a node again outside Pulumi ("
                                  "docs/features/nodes.md, 'Spot worker pools')", "spot.lookup-failed", Severity.WARNING))
            continue
        ips = list(listed.private_ips or ())
        for k, iid in enumerate(listed.ids or ()):
            if iid not in known:
                found.setdefault(by_ip.get(ips[k] if k < len(ips) else "", ""), set()).add(iid)
    for name, ids in sorted(found.items()):
        request = next((r.spot_request_id for r in running if r.name == name and r.spot_request_id), None)
        which = f"node {name}" if name else "a spot node of this stack"
        cancel = (f"`aws ec2 cancel-spot-instance-requests --spot-instance-request-ids {request}`" if request else
                  "cancel the node's spot request (`aws ec2 describe-instances --instance-ids <id> --query "
                  "'Reservations[].Instances[].SpotInstanceRequestId'`, then `aws ec2 "
                  "cancel-spot-instance-requests`)")
        out.append(Diagnostic(
            "nodePools", f"instance(s) {', '.join(sorted(ids))} carry the name, address or spot request of {which} but "
            "are not among this stack's instances: EC2 launches a persistent spot request's instance again when it "
            "is terminated without the request being cancelled first, with the same user data and address, billed "
            "and not managed by Pulumi. If the last `pulumi up` failed after launching it, the next successful one "
            f"records it and this goes away; otherwise: {cancel} first (cancelling terminates nothing), then `aws ec2 "
            f"terminate-instances --instance-ids {' '.join(sorted(ids))}` and wait until they are terminated (their "
            "address is the node's), then `pulumi up --refresh` (docs/features/nodes.md, 'Spot worker pools')", "spot.relaunched",
            Severity.WARNING))
    for r in running:
        if r.spot_valid_until:
            out.append(Diagnostic(
                "nodePools", f"the spot request of {r.name} ({r.spot_request_id or 'its request'}) ends at "
                f"{r.spot_valid_until} (EC2's ValidUntil for it): from then on EC2 never starts the node again once "
                "it is interrupted. Replace the node (`pulumi up --replace <urn>`, "
                "docs/operations/replace-node.md, 'Replacing a node'): this program asks for requests without an end date", "spot.request-ends",
                Severity.WARNING))
    return tuple(out)
