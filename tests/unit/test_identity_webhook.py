"""The pod identity webhook's chart values (components/plan/identity_webhook.py), rendered against the
chart's stored defaults (tests/data/upstream/amazon-eks-pod-identity-webhook-2.6.5, jkroepke/helm-charts
@39808e02) the way Helm combines them, and scheduled on each distribution's control plane.

Nothing is taken from the module for the oracle: the chart's templates (read at that commit) and the
node labels and taints (domain.md section 3) are written out here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from rke_aws.plan import identity_webhook as webhook
from rke_aws.settings import versions
from tests.support.charts import NODES, coalesce, schedules, unknown_keys

CHART_DIR = Path(__file__).resolve().parents[1] / "data" / "upstream" / "amazon-eks-pod-identity-webhook-2.6.5"
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def fullname(release: str, values: dict) -> str:
    """templates/_helpers.tpl amazon-eks-pod-identity-webhook.fullname."""
    if values.get("fullnameOverride"):
        return values["fullnameOverride"][:63].rstrip("-")
    name = values.get("nameOverride") or CHART["name"]
    return release[:63].rstrip("-") if name in release else f"{release}-{name}"[:63].rstrip("-")


POOLS = {"rke2": [SimpleNamespace(is_controlplane=True, is_etcd=True, is_worker=False)],
         "rke": [SimpleNamespace(is_controlplane=True, is_etcd=True, is_worker=False),
                 SimpleNamespace(is_controlplane=False, is_etcd=False, is_worker=True)]}


def test_the_stored_chart_is_the_pinned_one():
    assert CHART["version"] == versions.POD_IDENTITY_WEBHOOK_CHART_VERSION
    assert CHART_DIR.name == f"{CHART['name']}-{CHART['version']}"
    assert versions.POD_IDENTITY_WEBHOOK_IMAGE.endswith(":" + CHART["appVersion"])


@pytest.mark.parametrize("distribution", ["rke2", "rke"])
def test_values_render_and_schedule_on_the_control_plane_only(distribution):
    user = webhook.values(distribution, POOLS[distribution], "us-gov-west-1", CA)
    assert unknown_keys(user, DEFAULTS) == []
    eff = coalesce(user, DEFAULTS)
    # templates/deployment.yaml: image "<registry>/<repository>:<tag | default appVersion>"
    assert f"{eff['image']['registry']}/{eff['image']['repository']}:{eff['image']['tag']}" == \
        versions.POD_IDENTITY_WEBHOOK_IMAGE
    assert eff["config"]["defaultAwsRegion"] == "us-gov-west-1"  # the chart's default is us-east-1
    assert eff["config"]["tokenAudience"] == "sts.amazonaws.com" and eff["config"]["stsRegionalEndpoint"] is True
    # no cert-manager: the program's certificate, in a Secret the chart mounts, its CA in the webhook
    assert eff["pki"]["certManager"]["enabled"] is False
    assert eff["pki"]["existingSecret"] == webhook.TLS_SECRET and eff["pki"]["caBundle"] == CA
    assert eff["mutatingWebhook"]["failurePolicy"] == "Ignore"
    assert eff["replicaCount"] >= 2 and eff["podDisruptionBudget"]["enabled"]
    for kind, (labels, taints) in NODES[distribution].items():
        expected = "server" in kind or "controlplane" in kind
        assert schedules(eff, labels, taints) == expected, (distribution, kind)


def test_the_certificate_names_the_service_the_api_server_calls():
    """templates/service.yaml names the Service <fullname>; templates/mutatingwebhook.yaml points the
    webhook at it in the release namespace, so the API server dials <fullname>.<namespace>.svc."""
    user = webhook.values("rke2", POOLS["rke2"], "us-east-1", CA)
    service = fullname(webhook.CHART.name, coalesce(user, DEFAULTS))
    assert f"{service}.{webhook.NAMESPACE}.svc" in webhook.serving_dns_names()
    secret = webhook.tls_secret("CERT", "KEY")
    assert secret["type"] == "kubernetes.io/tls" and set(secret["stringData"]) == {"tls.crt", "tls.key"}


def test_manifest_mode_carries_the_same_values():
    user = webhook.values("rke2", POOLS["rke2"], "us-east-1", CA)
    doc = yaml.safe_load(webhook.CHART.manifest(user))
    assert doc["kind"] == "HelmChart" and doc["spec"]["version"] == versions.POD_IDENTITY_WEBHOOK_CHART_VERSION
    assert yaml.safe_load(doc["spec"]["valuesContent"]) == user
    assert "PRIVATE KEY" not in webhook.CHART.manifest(user)  # the key travels in its own Secret


def test_an_image_splits_into_the_charts_registry_repository_and_tag():
    from rke_aws.plan import identity_webhook as images

    assert images.split_image("registry.example.cn:5000/eks/webhook:v0.6.17") == {
        "registry": "registry.example.cn:5000", "repository": "eks/webhook", "tag": "v0.6.17"}
    with pytest.raises(ValueError):
        webhook.values("rke2", POOLS["rke2"], "us-east-1", "not a certificate")
