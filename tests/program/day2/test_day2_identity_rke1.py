"""Day 2 for workload identity on RKE1 (issue 36), judged per URN with the providers' replace rules
(offline/report/compare.py): the issuer's key files reach a controlplane host only at its first boot (the boot
script, components/node/scripts.py rke_boot_script), because `rke up` writes no host files (rancher/rke
cluster/plan.go only binds what is there) and `rke-aws rotate` replaces RKE2 nodes only. So a running RKE1
cluster refuses irsa turned on and a raised identity.keyGeneration before any resource, naming the key; a new
RKE1 cluster with irsa plans its next update without replacing anything."""

from __future__ import annotations

import copy
import json

from rke_aws_offline.engine import harness
from rke_aws_offline.report import compare, diff
from tests.support.configs import set_key
from tests.support.day2 import refused, run

STACK = "rke1-irsa"


def _config(irsa: bool) -> dict:
    cfg = copy.deepcopy(harness.stack_config(STACK))
    if not irsa:
        cfg.pop("rke-aws:identity")
        set_key(cfg, "addons", {"ebsCsi": True, "loadBalancerController": False})
    return cfg


def test_a_running_rke1_cluster_refuses_irsa_on_naming_the_key():
    base = run(_config(False), stack=STACK)
    assert base.outputs["nodes"] and "identityIssuerUrl" not in base.outputs
    message = refused(_config(True), base, stack=STACK)
    assert "rke-aws:identity.serviceAccounts: 'irsa' cannot be turned on here" in message, message
    assert "rke up" in message and "new RKE1 cluster" in message, message


def test_a_new_rke1_cluster_with_irsa_keeps_every_resource_and_refuses_a_new_key():
    cfg = _config(True)
    base = run(cfg, stack=STACK)
    assert base.outputs["identitySigning"] is True and base.outputs["identityKeyGenerations"] == [1]
    nxt = run(cfg, base, stack=STACK)
    d = compare.compare(STACK, diff.result_of(base), diff.result_of(nxt))
    changed = [c for c in d.changes if c.action in ("replace", "delete", "unknown")]
    assert not changed, changed
    assert nxt.outputs["rkeClusterYml"] == base.outputs["rkeClusterYml"]
    rotate = set_key(copy.deepcopy(cfg), "identity", {**json.loads(cfg["rke-aws:identity"]), "keyGeneration": 2})
    message = refused(rotate, nxt, stack=STACK)
    assert "rke-aws:identity.keyGeneration: 2 would rotate the signing key" in message, message
