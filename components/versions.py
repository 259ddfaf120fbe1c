"""Every external version the program depends on, pinned in one place.

Bumping one of these is a deliberate change that shows up in review; nothing else in the
code base names a version. None of them could be checked against the live registries from where
they were written (no internet); each says where it was read.
"""

# aws-cloud-controller-manager chart (app v1.35.0); values in components/ccm_values.py are
# written against this chart's defaults (../shared/reference/aws-cloud-controller-manager-0.0.11).
CCM_CHART_REPO = "https://kubernetes.github.io/cloud-provider-aws"
CCM_CHART_NAME = "aws-cloud-controller-manager"
CCM_CHART_VERSION = "0.0.11"

# aws-ebs-csi-driver chart (driver v1.64.0), addons.ebsCsi; kubernetes-sigs/aws-ebs-csi-driver
# charts/aws-ebs-csi-driver, newest version seen 2026-08. Values in components/addons.py.
EBS_CSI_CHART_REPO = "https://kubernetes-sigs.github.io/aws-ebs-csi-driver"
EBS_CSI_CHART_NAME = "aws-ebs-csi-driver"
EBS_CSI_CHART_VERSION = "2.64.0"

# The CCM image per Kubernetes minor. Kubernetes' version-skew policy: a cloud-controller-manager
# must not be newer than kube-apiserver (it may be one minor older, during an upgrade), and
# kubernetes/cloud-provider-aws publishes one release line per minor. Newest tag per line seen in
# kubernetes/cloud-provider-aws (tags, 2026-07) and domain.md section 6. The chart's own default
# (v1.35.0) is never used: ccm_values sets image.tag from this table.
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
# This is a Kubernetes version that series ships (`rke config --list-version --all`); community
# builds of newer 1.31/1.32 patches need RKE's extended-life subscription.
RKE_KUBERNETES_VERSION = "v1.32.5-rancher1-1"

# Default RKE2 release (INSTALL_RKE2_VERSION); stacks normally pin kubernetesVersion themselves.
# Community releases only (rancher/rke2 release notes mark Prime-only ones).
RKE2_VERSION = "v1.33.5+rke2r1"

# Docker engine for RKE1 nodes, installed by Rancher's install-docker script of that name; RKE
# v1.8 supports the 27.x series.
RKE_DOCKER_VERSION = "27.5.1"

# RKE2 automated upgrades (docs.rke2.io upgrades/automated): rancher/system-upgrade-controller,
# newest release seen v0.20.1 (2026-05); its two release assets are applied as published.
SUC_VERSION = "v0.20.1"
SUC_MANIFEST_URLS = (
    f"https://github.com/rancher/system-upgrade-controller/releases/download/{SUC_VERSION}/crd.yaml",
    f"https://github.com/rancher/system-upgrade-controller/releases/download/{SUC_VERSION}/system-upgrade-controller.yaml",
)
# The upgrade image the Plans run; the Plan's `version` selects its tag.
RKE2_UPGRADE_IMAGE = "rancher/rke2-upgrade"

# Default node image: Canonical's Ubuntu 24.04 LTS; the owner account is per partition
# (components/partition.py).
UBUNTU_AMI_NAME = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"
