"""Secrets stay secret end to end: kubeconfig, the RKE2 join token."""

from __future__ import annotations

import json

import pytest

from offline import harness

KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: kubeconfig-secret-marker\n"


@pytest.mark.parametrize("stack", ["rke-prod", "rke2-prod"])
def test_kubeconfig_is_secret_in_the_provider_and_absent_from_outputs(stack):
    cfg = harness.stack_config(stack)
    cfg["rke-aws:kubeconfig"] = KUBECONFIG
    run = harness.run_program(cfg, stack=stack)
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == KUBECONFIG
    assert "kubeconfig" in provider.secret_inputs, f"{provider.urn}: kubeconfig is not secret"
    (release,) = run.of_type("kubernetes:helm.sh/v3:Release")
    assert release.provider.startswith(provider.urn), f"{release.urn} does not use the cluster's provider"
    everything = json.dumps(run.outputs, default=str)
    assert "kubeconfig-secret-marker" not in everything, f"{stack}: kubeconfig leaked into outputs"
    for reg in run.resources:
        if reg is provider:
            continue
        assert "kubeconfig-secret-marker" not in json.dumps(reg.inputs, default=str), f"{reg.urn} carries the kubeconfig"


def test_secret_config_key_is_declared_secret_in_the_project():
    import yaml
    from pathlib import Path

    doc = yaml.safe_load((Path(__file__).resolve().parent.parent / "Pulumi.yaml").read_text())
    assert doc["config"]["kubeconfig"]["secret"] is True
