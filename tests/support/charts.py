"""Readers of what the program hands Helm (the EBS CSI driver's release values)."""

from __future__ import annotations

import yaml

from rke_aws.settings import versions

RELEASE = "kubernetes:helm.sh/v3:Release"


def ebs_release_values(run) -> dict | None:
    for rel in run.of_type(RELEASE):
        if rel.inputs["chart"] == versions.EBS_CSI_CHART_NAME:
            return rel.inputs["values"]
    for param in run.of_type("aws:ssm/parameter:Parameter"):
        if param.inputs["name"].endswith("/manifests/ebs-csi.yaml"):
            return yaml.safe_load(yaml.safe_load(param.inputs["insecureValue"])["spec"]["valuesContent"])
    return None
