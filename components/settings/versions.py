"""Every external version the program depends on, pinned in one place.

Bumping one of these is a deliberate change that shows up in review; nothing else in the
code base names a version. None of them could be checked against the live registries from where
they were written (no internet); each says where it was read (repository, path, commit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# aws-cloud-controller-manager chart (app v1.35.0; kubernetes/cloud-provider-aws charts/
# aws-cloud-controller-manager/Chart.yaml at 63ec440c, 2026-07-07, still 0.0.11); values in
# components/plan/ccm_values.py are written against this chart's defaults
# (tests/data/upstream/aws-cloud-controller-manager-0.0.11).
CCM_CHART_REPO = "https://kubernetes.github.io/cloud-provider-aws"
CCM_CHART_NAME = "aws-cloud-controller-manager"
CCM_CHART_VERSION = "0.0.11"

# aws-ebs-csi-driver chart (driver v1.64.0), addons.ebsCsi; kubernetes-sigs/aws-ebs-csi-driver
# charts/aws-ebs-csi-driver/Chart.yaml at 429e202e (2026-08-19). Values in components/cluster/ebs_csi.py.
EBS_CSI_CHART_REPO = "https://kubernetes-sigs.github.io/aws-ebs-csi-driver"
EBS_CSI_CHART_NAME = "aws-ebs-csi-driver"
EBS_CSI_CHART_VERSION = "2.64.0"
# The images that chart deploys, which the program does not set (values path -> repository:tag): read from
# charts/aws-ebs-csi-driver/values.yaml at tag helm-chart-aws-ebs-csi-driver-2.64.0 (commit 9767d852);
# `image` has no tag there, and templates/_helpers.tpl fullImagePath defaults it to v<appVersion> (1.64.0).
# Only what its templates deploy with this program's values: the snapshotter where the cluster serves
# snapshot.storage.k8s.io (templates/controller.yaml; RKE2 bundles those CRDs, rke2-snapshot-controller-crd
# in rancher/rke2 charts/chart_versions.yaml from v1.26.11, v1.27.8, v1.28.4 and 1.29), not `volumemodifier`
# (controller.volumeModificationFeature.enabled is false and never set here). Mirrors copy them at these tags.
EBS_CSI_IMAGES = {
    "image": "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.64.0",
    "sidecars.provisioner": "public.ecr.aws/csi-components/csi-provisioner:v6.3.0-eksbuild.4",
    "sidecars.attacher": "public.ecr.aws/csi-components/csi-attacher:v4.12.0-eksbuild.5",
    "sidecars.snapshotter": "public.ecr.aws/csi-components/csi-snapshotter:v8.6.0-eksbuild.5",
    "sidecars.livenessProbe": "public.ecr.aws/csi-components/livenessprobe:v2.19.0-eksbuild.5",
    "sidecars.resizer": "public.ecr.aws/csi-components/csi-resizer:v2.2.1-eksbuild.3",
    "sidecars.nodeDriverRegistrar": "public.ecr.aws/csi-components/csi-node-driver-registrar:v2.17.0-eksbuild.5",
}

# The CCM image per Kubernetes minor. Kubernetes' version-skew policy: a cloud-controller-manager
# must not be newer than kube-apiserver (it may be one minor older, during an upgrade), and
# kubernetes/cloud-provider-aws publishes one release line per minor. Newest tag per line, read from
# kubernetes/cloud-provider-aws tags at 63ec440c (2026-07-07; no v1.37 line yet), as domain.md
# section 6 lists them. The chart's own default (v1.35.0, charts/aws-cloud-controller-manager/
# Chart.yaml appVersion there) is never used: ccm_values sets image.tag from this table.
CCM_IMAGE_REPOSITORY = "registry.k8s.io/provider-aws/cloud-controller-manager"
CCM_IMAGE_TAGS = {
    30: "v1.30.10",
    31: "v1.31.9",
    32: "v1.32.8",
    33: "v1.33.4",
    34: "v1.34.3",
    35: "v1.35.2",
    36: "v1.36.1",
}

# RKE1 reached end of life on 2025-07-31; rancher/rke was archived with v1.8.14 as its last release.
# The Kubernetes versions an `rke` binary deploys are the ones its own release lists ("RKE Kubernetes
# versions" on github.com/rancher/rke/releases, read 2026-08 for the releases below; the v1.8.5-v1.8.9
# pages could not be read from here, so their patches are missing). Each binary deploys only its own
# list; `rke config --list-version --all` prints it.
RKE_RELEASES = (
    # rke v1.5.8: the last line with Kubernetes 1.26, where the in-tree provider still runs
    # (ccm.leaderMigration); 1.25 -> 1.26 -> 1.27 ... is the way up from there.
    "v1.25.16-rancher2-3", "v1.26.15-rancher1-1", "v1.27.12-rancher1-1", "v1.28.8-rancher1-1",
    # rke v1.6.9
    "v1.27.16-rancher1-1", "v1.28.15-rancher1-1", "v1.29.15-rancher1-1", "v1.30.11-rancher1-1",
    # rke v1.7.3
    "v1.29.13-rancher1-1", "v1.30.9-rancher1-1", "v1.31.5-rancher1-1",
    # rke v1.8.3 and v1.8.4
    "v1.30.12-rancher1-1", "v1.31.8-rancher1-1", "v1.32.4-rancher1-1",
    "v1.30.13-rancher1-1", "v1.31.9-rancher1-1", "v1.32.5-rancher1-1",
    # rke v1.8.10-v1.8.14; the 1.31.14 and 1.32.11+ images need RKE's Extended Life subscription
    # (their release notes say so), 1.30.14 does not.
    "v1.30.14-rancher1-1", "v1.31.14-rancher1-1", "v1.32.11-rancher1-1", "v1.32.12-rancher1-1",
    "v1.32.13-rancher1-1", "v1.32.13-rancher1-2", "v1.32.13-rancher1-3",
)
# Default for new RKE1 stacks: the newest 1.32 patch the v1.8 line ships without a subscription
# (rke v1.8.4's default).
RKE_KUBERNETES_VERSION = "v1.32.5-rancher1-1"

# Every RKE2 release with the etcd version it runs: the Version and Etcd columns of the release
# notes (rancher/rke2-docs docs/release-notes/v1.33.X.md ... v1.36.X.md and release-notes-old/
# v1.24.X.md ... v1.32.X.md at 9477b7b1, 2026-08-20; k3s build suffix dropped). Community releases
# only: v1.31.14+rke2r2 and v1.32.13+rke2r2 are Prime-only (their notes say so) and get.rke2.io
# cannot install them. A release missing here is refused with this list (config.py); add it, with
# its etcd version from its release notes, to use it.
RKE2_RELEASES = {
    "v1.24.1+rke2r2": "3.5.4", "v1.24.2+rke2r1": "3.5.4", "v1.24.3+rke2r1": "3.5.4", "v1.24.4+rke2r1": "3.5.4",
    "v1.24.6+rke2r1": "3.5.4", "v1.24.7+rke2r1": "3.5.4", "v1.24.8+rke2r1": "3.5.4", "v1.24.9+rke2r1": "3.5.4",
    "v1.24.9+rke2r2": "3.5.4", "v1.24.10+rke2r1": "3.5.4", "v1.24.11+rke2r1": "3.5.4", "v1.24.12+rke2r1": "3.5.4",
    "v1.24.13+rke2r1": "3.5.7", "v1.24.14+rke2r1": "3.5.7", "v1.24.15+rke2r1": "3.5.7", "v1.24.16+rke2r1": "3.5.7",
    "v1.24.17+rke2r1": "3.5.9",
    "v1.25.0+rke2r1": "3.5.4", "v1.25.2+rke2r1": "3.5.4", "v1.25.3+rke2r1": "3.5.4", "v1.25.4+rke2r1": "3.5.4",
    "v1.25.5+rke2r1": "3.5.4", "v1.25.5+rke2r2": "3.5.4", "v1.25.6+rke2r1": "3.5.4", "v1.25.7+rke2r1": "3.5.4",
    "v1.25.8+rke2r1": "3.5.4", "v1.25.9+rke2r1": "3.5.7", "v1.25.10+rke2r1": "3.5.7", "v1.25.11+rke2r1": "3.5.7",
    "v1.25.12+rke2r1": "3.5.7", "v1.25.13+rke2r1": "3.5.9", "v1.25.14+rke2r1": "3.5.9", "v1.25.15+rke2r1": "3.5.9",
    "v1.25.15+rke2r2": "3.5.9", "v1.25.16+rke2r1": "3.5.9", "v1.25.16+rke2r2": "3.5.9",
    "v1.26.0+rke2r1": "3.5.5", "v1.26.0+rke2r2": "3.5.5", "v1.26.1+rke2r1": "3.5.5", "v1.26.2+rke2r1": "3.5.5",
    "v1.26.3+rke2r1": "3.5.5", "v1.26.4+rke2r1": "3.5.7", "v1.26.5+rke2r1": "3.5.7", "v1.26.6+rke2r1": "3.5.7",
    "v1.26.7+rke2r1": "3.5.7", "v1.26.8+rke2r1": "3.5.9", "v1.26.9+rke2r1": "3.5.9", "v1.26.10+rke2r1": "3.5.9",
    "v1.26.10+rke2r2": "3.5.9", "v1.26.11+rke2r1": "3.5.9", "v1.26.12+rke2r1": "3.5.9", "v1.26.13+rke2r1": "3.5.9",
    "v1.26.14+rke2r1": "3.5.9", "v1.26.15+rke2r1": "3.5.9",
    "v1.27.1+rke2r1": "3.5.7", "v1.27.2+rke2r1": "3.5.7", "v1.27.3+rke2r1": "3.5.7", "v1.27.4+rke2r1": "3.5.7",
    "v1.27.5+rke2r1": "3.5.9", "v1.27.6+rke2r1": "3.5.9", "v1.27.7+rke2r1": "3.5.9", "v1.27.7+rke2r2": "3.5.9",
    "v1.27.8+rke2r1": "3.5.9", "v1.27.9+rke2r1": "3.5.9", "v1.27.10+rke2r1": "3.5.9", "v1.27.11+rke2r1": "3.5.9",
    "v1.27.12+rke2r1": "3.5.9", "v1.27.13+rke2r1": "3.5.9", "v1.27.14+rke2r1": "3.5.9",
    "v1.27.15+rke2r1": "3.5.13", "v1.27.16+rke2r1": "3.5.13", "v1.27.16+rke2r2": "3.5.13",
    "v1.28.2+rke2r1": "3.5.9", "v1.28.3+rke2r1": "3.5.9", "v1.28.3+rke2r2": "3.5.9", "v1.28.4+rke2r1": "3.5.9",
    "v1.28.5+rke2r1": "3.5.9", "v1.28.6+rke2r1": "3.5.9", "v1.28.7+rke2r1": "3.5.9", "v1.28.8+rke2r1": "3.5.9",
    "v1.28.9+rke2r1": "3.5.9", "v1.28.10+rke2r1": "3.5.9", "v1.28.11+rke2r1": "3.5.13",
    "v1.28.12+rke2r1": "3.5.13", "v1.28.13+rke2r1": "3.5.13", "v1.28.14+rke2r1": "3.5.13",
    "v1.28.15+rke2r1": "3.5.13",
    "v1.29.0+rke2r1": "3.5.9", "v1.29.1+rke2r1": "3.5.9", "v1.29.2+rke2r1": "3.5.9", "v1.29.3+rke2r1": "3.5.9",
    "v1.29.4+rke2r1": "3.5.9", "v1.29.5+rke2r1": "3.5.9", "v1.29.6+rke2r1": "3.5.13", "v1.29.7+rke2r1": "3.5.13",
    "v1.29.8+rke2r1": "3.5.13", "v1.29.9+rke2r1": "3.5.13", "v1.29.10+rke2r1": "3.5.13",
    "v1.29.11+rke2r1": "3.5.16", "v1.29.12+rke2r1": "3.5.16", "v1.29.13+rke2r1": "3.5.16",
    "v1.29.14+rke2r1": "3.5.18", "v1.29.15+rke2r1": "3.5.19",
    "v1.30.0+rke2r1": "3.5.9", "v1.30.1+rke2r1": "3.5.9", "v1.30.2+rke2r1": "3.5.13", "v1.30.3+rke2r1": "3.5.13",
    "v1.30.4+rke2r1": "3.5.13", "v1.30.5+rke2r1": "3.5.13", "v1.30.6+rke2r1": "3.5.13", "v1.30.7+rke2r1": "3.5.16",
    "v1.30.8+rke2r1": "3.5.16", "v1.30.9+rke2r1": "3.5.16", "v1.30.10+rke2r1": "3.5.18",
    "v1.30.11+rke2r1": "3.5.19", "v1.30.12+rke2r1": "3.5.21", "v1.30.13+rke2r1": "3.5.21",
    "v1.30.14+rke2r1": "3.5.21", "v1.30.14+rke2r2": "3.5.21", "v1.30.14+rke2r4": "3.5.21",
    "v1.31.0+rke2r1": "3.5.13", "v1.31.1+rke2r1": "3.5.13", "v1.31.2+rke2r1": "3.5.13", "v1.31.3+rke2r1": "3.5.16",
    "v1.31.4+rke2r1": "3.5.16", "v1.31.5+rke2r1": "3.5.16", "v1.31.6+rke2r1": "3.5.18", "v1.31.7+rke2r1": "3.5.19",
    "v1.31.8+rke2r1": "3.5.21", "v1.31.9+rke2r1": "3.5.21", "v1.31.10+rke2r1": "3.5.21",
    "v1.31.11+rke2r1": "3.5.21", "v1.31.12+rke2r1": "3.5.21", "v1.31.13+rke2r1": "3.5.21",
    "v1.31.14+rke2r1": "3.5.21",
    "v1.32.0+rke2r1": "3.5.16", "v1.32.1+rke2r1": "3.5.16", "v1.32.2+rke2r1": "3.5.18", "v1.32.3+rke2r1": "3.5.19",
    "v1.32.4+rke2r1": "3.5.21", "v1.32.5+rke2r1": "3.5.21", "v1.32.6+rke2r1": "3.5.21", "v1.32.7+rke2r1": "3.5.21",
    "v1.32.8+rke2r1": "3.5.21", "v1.32.9+rke2r1": "3.5.21", "v1.32.10+rke2r1": "3.5.21",
    "v1.32.11+rke2r1": "3.5.25", "v1.32.11+rke2r3": "3.5.26", "v1.32.12+rke2r1": "3.5.26",
    "v1.32.13+rke2r1": "3.5.26",
    "v1.33.0+rke2r1": "3.5.21", "v1.33.1+rke2r1": "3.5.21", "v1.33.2+rke2r1": "3.5.21", "v1.33.3+rke2r1": "3.5.21",
    "v1.33.4+rke2r1": "3.5.21", "v1.33.5+rke2r1": "3.5.21", "v1.33.6+rke2r1": "3.5.21", "v1.33.7+rke2r1": "3.5.25",
    "v1.33.7+rke2r3": "3.5.26", "v1.33.8+rke2r1": "3.5.26", "v1.33.9+rke2r1": "3.5.26",
    "v1.33.10+rke2r1": "3.5.26", "v1.33.10+rke2r3": "3.5.26", "v1.33.11+rke2r1": "3.6.7",
    "v1.33.12+rke2r1": "3.6.7", "v1.33.12+rke2r2": "3.6.7", "v1.33.13+rke2r1": "3.6.12",
    "v1.33.13+rke2r2": "3.6.14",
    "v1.34.1+rke2r1": "3.6.4", "v1.34.2+rke2r1": "3.6.5", "v1.34.3+rke2r1": "3.6.6", "v1.34.3+rke2r3": "3.6.7",
    "v1.34.4+rke2r1": "3.6.7", "v1.34.5+rke2r1": "3.6.7", "v1.34.6+rke2r1": "3.6.7", "v1.34.6+rke2r3": "3.6.7",
    "v1.34.7+rke2r1": "3.6.7", "v1.34.8+rke2r1": "3.6.7", "v1.34.8+rke2r2": "3.6.7", "v1.34.9+rke2r1": "3.6.12",
    "v1.34.10+rke2r1": "3.6.14",
    "v1.35.0+rke2r1": "3.6.6", "v1.35.0+rke2r3": "3.6.7", "v1.35.1+rke2r1": "3.6.7", "v1.35.2+rke2r1": "3.6.7",
    "v1.35.3+rke2r1": "3.6.7", "v1.35.3+rke2r3": "3.6.7", "v1.35.4+rke2r1": "3.6.7", "v1.35.5+rke2r1": "3.6.7",
    "v1.35.5+rke2r2": "3.6.7", "v1.35.6+rke2r1": "3.6.12", "v1.35.7+rke2r1": "3.6.14",
    "v1.36.0+rke2r1": "3.6.7", "v1.36.1+rke2r1": "3.6.7", "v1.36.1+rke2r2": "3.6.7", "v1.36.2+rke2r1": "3.6.12",
    "v1.36.3+rke2r1": "3.6.14",
}
# Default for new RKE2 stacks: the newest release of RKE2's stable channel (v1.35.x; RKE2 supports
# 1.33-1.36). A running stack that does not set kubernetesVersion stays on what it runs
# (config.py): a new default never upgrades a cluster.
RKE2_VERSION = "v1.35.7+rke2r1"
# RKE2's notes (v1.33.X.md, "RKE2 v1.34 Upgrade Warning" under v1.33.7+rke2r3): "there is NO safe
# path from etcd 3.5 to 3.6 except by upgrading to v3.5.26 first" (etcd.io/blog/2025/
# zombie_members_upgrade); history.etcd_stepping_stone_problems enforces it.
ETCD_SAFE_BEFORE_3_6 = (3, 5, 26)

# RKE2's bundled ingress controllers, read at each release tag of rancher/rke2 (IngressItems and the
# `ingress-controller` server flag: pkg/rke2/rke2.go, from 1.35 pkg/cli/types.go and pkg/cli/cmds/server.go).
# The `ingress-controller` option exists from v1.27.16 / v1.28.12 / v1.29.7 / v1.30.3 and in every 1.31+;
# releases before it ship ingress-nginx alone (disabled with `disable: rke2-ingress-nginx`) and skip the
# key with a warning (k3s pkg/configfilearg: "Unknown flag ... found in config.yaml, skipping",
# k3s-io/k3s#4464), so a key written for them takes effect once the server is upgraded past it.
RKE2_INGRESS_OPTION_SINCE = ({27: 16, 28: 12, 29: 7, 30: 3}, 31)
# `traefik` is one of its values from v1.30.3 and in every 1.31+; 1.27-1.29 know ingress-nginx (and
# none) only, and rke2-server exits on any other value ("Invalid value ... must be one of").
RKE2_TRAEFIK_SINCE = ({30: 3}, 31)
# Which controller a server deploys when its config.yaml names none: ingress-nginx before v1.36; from
# v1.36 the one whose HelmChart already runs, else Traefik (pkg/bootstrap/bootstrap.go
# getDefaultIngressClassFromCharts): "Traefik is now the default for new clusters starting in v1.36
# (existing clusters will keep their current ingress upon upgrade)" (rke2-docs release-notes/v1.36.X.md).
RKE2_TRAEFIK_DEFAULT_FROM_MINOR = 36
# From v1.37 `ingress-controller: ingress-nginx` alone is refused; only `traefik, ingress-nginx` remains,
# as a last step of the migration (rancher/rke2 PR #11156, "[Release-1.37] Remove standalone
# ingress-nginx controller option", merged 2026-09-02; the v1.36 notes: the chart "will be completely
# removed in v1.37 for community users"). guards.ingress_removal_problems holds every release from this
# minor on to it, known to RKE2_RELEASES or not.
RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR = 37

# Docker engine for RKE1 nodes, installed by Rancher's install-docker script of that name
# (rancher/install-docker dist/27.5.1.sh at d69b486d); RKE v1.8 supports the 27.x series.
RKE_DOCKER_VERSION = "27.5.1"

# RKE2 automated upgrades (docs.rke2.io upgrades/automated): rancher/system-upgrade-controller,
# newest release tag v0.20.1 (its tags at d357e230, 2026-08-06); its two release assets are applied
# as published.
SUC_VERSION = "v0.20.1"
SUC_MANIFEST_URLS = (
    f"https://github.com/rancher/system-upgrade-controller/releases/download/{SUC_VERSION}/crd.yaml",
    f"https://github.com/rancher/system-upgrade-controller/releases/download/{SUC_VERSION}/system-upgrade-controller.yaml",
)
# The images in that release's system-upgrade-controller.yaml (scripts/package-controller at v0.20.1, commit
# f1362a3f: `kustomize edit set image` names the controller rancher/system-upgrade-controller:<release>;
# manifests/system-upgrade-controller.yaml's ConfigMap sets SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE, the image of
# the Plans' drain/cordon jobs). Docker Hub images.
SUC_IMAGE = f"rancher/system-upgrade-controller:{SUC_VERSION}"
SUC_KUBECTL_IMAGE = "rancher/kubectl:v1.30.3"
# How long the rancher2 provider waits for Rancher's API (it retries every 5 s; Go duration).
RANCHER_API_TIMEOUT = "120s"
# RKE2's `disable-default-registry-endpoint` (server and agent): containerd pulls a mirrored registry's images
# from its mirrors only, never falling back to the public registry (rke2-docs install/private_registry.md
# "Default Endpoint Fallback", for "a true air-gapped environment"). In pkg/cli/cmds/agent.go and server.go
# from v1.26.13, v1.27.10, v1.28.6 and every 1.29+ (read at each release tag of rancher/rke2).
RKE2_DISABLE_DEFAULT_ENDPOINT_SINCE = ({26: 13, 27: 10, 28: 6}, 29)
# The upgrade image the Plans run; the Plan's `version` selects its tag.
RKE2_UPGRADE_IMAGE = "rancher/rke2-upgrade"


def rke2_upgrade_tag(release: str) -> str:
    """The tag of RKE2_UPGRADE_IMAGE a Plan of `release` runs: the version with + replaced by -, as
    system-upgrade-controller does (pkg/upgrade/plan/plan.go at v0.20.1; rke2-docs install/airgap.md)."""
    return release.replace("+", "-")

# Default node image: Canonical's Ubuntu 24.04 LTS; the owner account is per partition
# (components/settings/partitions.py).
UBUNTU_AMI_NAME = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"
# Per EC2 CPU architecture (DescribeInstanceTypes' SupportedArchitectures): Canonical names its arm64
# (Graviton) images the same way with arm64 in place of amd64.
UBUNTU_AMI_NAMES = {"x86_64": UBUNTU_AMI_NAME,
                    "arm64": "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-*"}
# RKE2 publishes arm64 artifacts from v1.27.3 (rke2-docs release notes v1.27.X, "Add arm64 support
# (#4335)"), and its arm64 CNI images from v1.27.10 (rancher/rke2#5262): the oldest release on Graviton.
RKE2_ARM64_SINCE = "v1.27.10+rke2r1"


def rke2_patch_at_least(version: str, first: Mapping[int, int], from_minor: int) -> bool:
    """Whether `version` (v1.X.Y+rke2rN) is at least first[X].first[X]..., or X >= from_minor."""
    m = re.match(r"^v1\.(\d+)\.(\d+)", version)
    if not m:
        return False
    minor, patch = int(m.group(1)), int(m.group(2))
    return minor >= from_minor or (minor in first and patch >= first[minor])

# Workload identity (issue 36, components/plan/identity_*.py). amazon-eks-pod-identity-webhook through the
# jkroepke chart: jkroepke/helm-charts charts/amazon-eks-pod-identity-webhook/Chart.yaml at 39808e02
# (2026-08-14): version 2.6.5, appVersion v0.6.17 (aws/amazon-eks-pod-identity-webhook tag v0.6.17,
# c1be3015). The chart's webhook speaks admission v1beta1; the webhook's HEAD moved to v1 after
# v0.6.17, so chart and image are pinned together. Values in components/plan/identity_webhook.py.
POD_IDENTITY_WEBHOOK_CHART_REPO = "https://jkroepke.github.io/helm-charts"
POD_IDENTITY_WEBHOOK_CHART_NAME = "amazon-eks-pod-identity-webhook"
POD_IDENTITY_WEBHOOK_CHART_VERSION = "2.6.5"
POD_IDENTITY_WEBHOOK_IMAGE = "public.ecr.aws/eks/amazon-eks-pod-identity-webhook:v0.6.17"

# AWS Load Balancer Controller: aws/eks-charts stable/aws-load-balancer-controller/Chart.yaml at
# 52396092 (2026-08-03): version 3.5.0, appVersion v3.5.0; its IAM policy is vendored from
# kubernetes-sigs/aws-load-balancer-controller tag v3.5.0 (components/plan/upstream/).
LOAD_BALANCER_CONTROLLER_CHART_REPO = "https://aws.github.io/eks-charts"
LOAD_BALANCER_CONTROLLER_CHART_NAME = "aws-load-balancer-controller"
LOAD_BALANCER_CONTROLLER_CHART_VERSION = "3.5.0"
LOAD_BALANCER_CONTROLLER_IMAGE = "public.ecr.aws/eks/aws-load-balancer-controller:v3.5.0"
