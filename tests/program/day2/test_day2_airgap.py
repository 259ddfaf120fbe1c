"""`airgap` is decided when a cluster is created (issue 35). Set on a running cluster built online, the network
the update plans has no internet gateway, NAT gateways or public subnets, so the engine would delete them
(terraform-provider-aws: a removed aws_internet_gateway / aws_nat_gateway / aws_subnet is destroyed) while the
running nodes still install and pull online: refused before any resource, naming `airgap`."""

from __future__ import annotations

import json

from rke_aws_offline.engine import harness
from tests.support.day2 import refused, run


def _online(config: dict) -> dict:
    """The air-gapped fixture as an online cluster: the same registry, NAT, no airgap."""
    online = {k: v for k, v in config.items() if k != "rke-aws:airgap"}
    network = json.loads(online["rke-aws:network"])
    network["natGateways"] = "single"
    online["rke-aws:network"] = json.dumps(network)
    return online


def test_airgap_set_on_a_running_online_cluster_is_refused():
    airgapped = harness.stack_config("rke2-airgap")
    base = run(_online(airgapped))
    assert any(k.startswith("public-") for k in base.outputs["subnetIds"]), base.outputs["subnetIds"]
    message = refused(airgapped, base)
    assert "rke-aws:airgap: set on a running cluster built online" in message, message
    assert "public-0" in message and "new stack" in message, message


def test_the_online_cluster_keeps_planning_without_airgap():
    """The same online configuration after itself: nothing refused (the guard is about the change)."""
    online = _online(harness.stack_config("rke2-airgap"))
    base = run(online)
    again = run(online, base)
    assert again.outputs["subnetIds"] == base.outputs["subnetIds"]
