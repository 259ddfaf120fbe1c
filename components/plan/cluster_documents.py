"""What is installed in the cluster, as documents, decided before the first resource: the pinned charts
(a Helm release, or a `helm.cattle.io/v1` HelmChart the servers' helm-controller installs) and RKE2's
upgrade Plans. Pure; the cluster layer (components/cluster/) installs them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ..settings import versions

# libyaml's emitter when present: same output, several times faster at hundreds of nodes.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
# libyaml's parser when present, with PyYAML's safe constructor and resolver (the same documents as
# yaml.safe_load): parsing a node's cloud-config (its boot script as one YAML string) costs 60 ms in pure Python.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dump_yaml(doc: Any, *, sort_keys: bool = False, width: int = 80) -> str:
    return yaml.dump(doc, Dumper=_DUMPER, sort_keys=sort_keys, width=width)


def load_yaml(text: str) -> Any:
    """yaml.safe_load, through libyaml when present."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - CSafeLoader / SafeLoader


@dataclass(frozen=True)
class Chart:
    name: str  # chart name, and the release / HelmChart name
    repo: str
    version: str
    namespace: str

    repo_ca: str | None = None  # PEM the chart download trusts (registry.caBundle), HelmChart repoCA

    @property
    def oci(self) -> bool:
        return self.repo.startswith("oci://")

    @property
    def reference(self) -> str:
        """What helm installs: the chart's name in an HTTP repository, its full reference in an OCI one."""
        return f"{self.repo.rstrip('/')}/{self.name}" if self.oci else self.name

    def located(self, charts: str | None, repo_ca: str | None = None) -> Chart:
        """The same chart from `registry.charts` (a mirror of its repository); itself when unset."""
        return dataclasses.replace(self, repo=charts, repo_ca=repo_ca) if charts else self

    def manifest(self, values: Mapping[str, Any], *, bootstrap: bool = False) -> str:
        """The HelmChart; `bootstrap`: installed before the cluster has a pod network or initialised nodes.
        An OCI chart is named by its full reference, with no repo (k3s-io/helm-controller
        pkg/controllers/chart/chart.go: a chart starting with oci:// is pulled from the registry)."""
        spec: dict[str, Any] = {"chart": self.reference, **({} if self.oci else {"repo": self.repo}),
                                "version": self.version, "targetNamespace": self.namespace}
        if self.repo_ca:
            spec["repoCA"] = self.repo_ca  # helm-controller types.go HelmChartSpec.RepoCA: --ca-file
        if bootstrap:
            spec["bootstrap"] = True
        spec["valuesContent"] = dump_yaml(dict(values), sort_keys=True)
        return dump_yaml({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
                          "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec})



def ccm(version: str) -> Chart:
    """The CCM at the configured chart version (ccm.chartVersion)."""
    return Chart(versions.CCM_CHART_NAME, versions.CCM_CHART_REPO, version, "kube-system")


def chart_location(registry: Any) -> tuple[str | None, str | None]:
    """(registry.charts, registry.caBundle) of a resolved `registry` section (None: the public repositories)."""
    return (registry.charts, registry.ca_bundle) if registry is not None and registry.charts else (None, None)


EBS_CSI = Chart(versions.EBS_CSI_CHART_NAME, versions.EBS_CSI_CHART_REPO, versions.EBS_CSI_CHART_VERSION, "kube-system")


NAMESPACE = "system-upgrade"  # the controller's namespace: Plans must live there


SERVICE_ACCOUNT = "system-upgrade"


SERVER_PLAN = "rke2-server"


AGENT_PLAN = "rke2-agent"


# Split roles only: etcd-only servers carry the etcd label but neither control-plane nor master (k3s
# pkg/server/server.go: ControlPlaneRoleLabelKey/MasterRoleLabelKey only where the apiserver runs), so the
# server Plan never selects them and the agent Plan would upgrade them as agents.
ETCD_PLAN = "rke2-etcd"


ETCD_LABEL = "node-role.kubernetes.io/etcd"


CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"


def plans(version: str, etcd_only: bool = False) -> list[dict[str, Any]]:
    """The server and agent Plans for RKE2 `version` (as in RKE2's documented example, with
    `version` instead of a channel, so the cluster runs what the stack says).

    `etcd_only`: the cluster has etcd-only servers (split roles). They get their own Plan after the
    server Plan (their kubelet must not be newer than the API servers), and agents wait for it."""
    upgrade = {"image": versions.RKE2_UPGRADE_IMAGE}
    common = {"concurrency": 1, "cordon": True, "serviceAccountName": SERVICE_ACCOUNT, "version": version,
              "upgrade": upgrade}
    server = {
        **common,
        "nodeSelector": {"matchExpressions": [{"key": CONTROL_PLANE_LABEL, "operator": "In", "values": ["true"]}]},
        # Servers carry no taint by default, but a dedicated control plane may (CriticalAddonsOnly).
        "tolerations": [{"operator": "Exists"}],
    }
    agent = {
        **common,
        "nodeSelector": {"matchExpressions": [{"key": CONTROL_PLANE_LABEL, "operator": "DoesNotExist"}]},
        # Agents only after every server runs the new version.
        "prepare": {"image": versions.RKE2_UPGRADE_IMAGE, "args": ["prepare", SERVER_PLAN]},
    }
    ordered = [(SERVER_PLAN, server)]
    if etcd_only:
        ordered.append((ETCD_PLAN, {
            **common,
            "nodeSelector": {"matchExpressions": [
                {"key": ETCD_LABEL, "operator": "In", "values": ["true"]},
                {"key": CONTROL_PLANE_LABEL, "operator": "DoesNotExist"}]},
            "tolerations": [{"operator": "Exists"}],
            "prepare": {"image": versions.RKE2_UPGRADE_IMAGE, "args": ["prepare", SERVER_PLAN]},
        }))
        agent["nodeSelector"] = {"matchExpressions": [
            {"key": CONTROL_PLANE_LABEL, "operator": "DoesNotExist"},
            {"key": ETCD_LABEL, "operator": "DoesNotExist"}]}
        agent["prepare"] = {"image": versions.RKE2_UPGRADE_IMAGE, "args": ["prepare", ETCD_PLAN]}
    ordered.append((AGENT_PLAN, agent))
    return [
        {"apiVersion": "upgrade.cattle.io/v1", "kind": "Plan",
         "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}
        for name, spec in ordered
    ]


def upgrade_manifests(version: str, etcd_only: bool = False) -> dict[str, str]:
    """Manifest-mode files (name -> content; `.url`: a manifest to download), for the servers' sync."""
    crd, controller = versions.SUC_MANIFEST_URLS
    return {
        "system-upgrade-controller-crd.url": crd,
        "system-upgrade-controller.url": controller,
        "upgrade-plans.yaml": "---\n".join(dump_yaml(p, sort_keys=True) for p in plans(version, etcd_only)),
    }
