"""Every external version the program depends on, pinned in one place.

Bumping one of these is a deliberate change that shows up in review; nothing else in the
code base names a version.
"""

# aws-cloud-controller-manager chart (app v1.35.0); values in components/ccm_values.py are
# written against this chart's defaults.
CCM_CHART_REPO = "https://kubernetes.github.io/cloud-provider-aws"
CCM_CHART_NAME = "aws-cloud-controller-manager"
CCM_CHART_VERSION = "0.0.11"

# RKE1 reached end of life on 2025-07-31; v1.8 is its final series. This is a Kubernetes
# version that series ships (`rke config --list-version --all`).
RKE_KUBERNETES_VERSION = "v1.32.5-rancher1-1"

# RKE2 release installed by get.rke2.io through INSTALL_RKE2_VERSION.
RKE2_VERSION = "v1.33.5+rke2r1"

# Docker engine for RKE1 nodes, installed by Rancher's install-docker script of that name; RKE
# v1.8 supports the 27.x series.
RKE_DOCKER_VERSION = "27.5.1"

# Default node image: Canonical's Ubuntu 24.04 LTS (owner ID is Canonical's publisher account).
UBUNTU_AMI_OWNER = "099720109477"
UBUNTU_AMI_NAME = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"
