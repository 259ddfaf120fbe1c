"""Issue 34.8 over a sequence: manifest mode is the default for NEW RKE2 stacks only. A running stack whose CCM is
a Helm release keeps it when the key is removed (or was never written: stacks from releases whose default was
helm): its state records the mode (components/state/model.py running_ccm_install), the configuration resolves
against it (settings/resolve.py ccm_install), and nothing in the plan moves to manifests. A new stack of the same
configuration gets the manifests."""

from __future__ import annotations

import json

from tests.support.configs import scenario_config
from tests.support.day2 import run, run_shared

MANIFESTS = "/manifests/"  # the SSM parameters the servers mirror (components/cluster/manifests.py)


def _manifests(r) -> list[str]:
    return sorted(p.inputs["name"] for p in r.of_type("aws:ssm/parameter:Parameter") if MANIFESTS in p.inputs["name"])


def test_a_running_helm_stack_keeps_helm_when_the_key_goes_and_a_new_stack_gets_manifests():
    helm = scenario_config("rke2-prod")  # ccm.install: helm, written
    assert json.loads(helm["rke-aws:ccm"]) == {"install": "helm"}
    first = run(helm)
    assert _manifests(first) == []
    unset = {k: v for k, v in helm.items() if k != "rke-aws:ccm"}
    after = run_shared(unset, first)
    assert _manifests(after) == [], "a running helm stack moved to manifest mode"
    # and the next update still plans (after's outputs equal first's: then it is the evaluation above, made once)
    assert run_shared(after.config, after) is not None
    fresh = run(unset)
    assert _manifests(fresh), "a new RKE2 stack without ccm.install has no manifests"
