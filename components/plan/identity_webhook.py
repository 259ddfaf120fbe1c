"""amazon-eks-pod-identity-webhook (issue 36, workload identity): the chart's values, its serving
certificate's names, its TLS Secret for manifest mode; and where the identity add-ons' images come
from per partition (at the end). Pure.

What it does (aws/amazon-eks-pod-identity-webhook README and pkg/handler/handler.go): on pod CREATE,
for a pod whose service account carries `eks.amazonaws.com/role-arn`, it adds a projected service
account token for the audience `--token-audience` at
/var/run/secrets/eks.amazonaws.com/serviceaccount/token and the env AWS_ROLE_ARN,
AWS_WEB_IDENTITY_TOKEN_FILE, AWS_REGION/AWS_DEFAULT_REGION (`--aws-default-region`) and
AWS_STS_REGIONAL_ENDPOINTS=regional (`--sts-regional-endpoint`).

Chart: jkroepke/helm-charts charts/amazon-eks-pod-identity-webhook 2.6.5 (values and Chart.yaml stored
in tests/data/upstream/amazon-eks-pod-identity-webhook-2.6.5):
- the deployment always runs `--in-cluster=false` and reads its certificate from a Secret mounted at
  /etc/webhook/certs (templates/deployment.yaml); the README says `--in-cluster=true` no longer works
  after v0.3.0, so the serving certificate has to come from outside;
- `pki.certManager.enabled` defaults to true (needs cert-manager, which this program does not
  install): here it is off, the certificate is the program's own (a CA and a serving certificate it
  generates), its Secret is `pki.existingSecret`, and `pki.caBundle` (PEM; the chart base64-encodes
  it) goes into the MutatingWebhookConfiguration's clientConfig (templates/mutatingwebhook.yaml);
- `config.defaultAwsRegion` defaults to us-east-1: set to the cluster's region;
- the webhook's service is `<fullname>` on port `config.ports.webhook` (8443), so the certificate
  names `<fullname>.<namespace>.svc` (the name the API server connects to); `fullnameOverride` fixes
  the fullname;
- `mutatingWebhook.failurePolicy: Ignore` (the chart's and upstream's default) is kept: with `Fail`,
  no pod at all could be created while the webhook is down, the network's own pods included, and
  the webhook needs the pod network to come back. The cost: a pod created while it is down runs
  without the role until it is restarted, hence two replicas and a disruption budget.
Placement: the control-plane nodes, with the CCM's node selector and tolerations
(components/plan/ccm_values.py): it serves the API server and must be up before workloads need it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..settings import versions
from .ccm_values import node_selector, tolerations
from .cluster_documents import Chart, dump_yaml
from .identity_issuer import STS_AUDIENCE

NAMESPACE = "kube-system"
FULLNAME = "pod-identity-webhook"  # fullnameOverride: the Deployment, Service and webhook names
TLS_SECRET = f"{FULLNAME}-tls"  # pki.existingSecret (type kubernetes.io/tls)
REPLICAS = 2  # failurePolicy Ignore: a pod created while no replica serves misses its role
TOKEN_EXPIRATION_SECONDS = 86400  # the chart's and the webhook's default (and maximum)

CHART = Chart(versions.POD_IDENTITY_WEBHOOK_CHART_NAME, versions.POD_IDENTITY_WEBHOOK_CHART_REPO,
              versions.POD_IDENTITY_WEBHOOK_CHART_VERSION, NAMESPACE)


def serving_dns_names(namespace: str = NAMESPACE) -> list[str]:
    """The serving certificate's DNS names: the API server calls `<service>.<namespace>.svc`."""
    return [f"{FULLNAME}.{namespace}.svc", f"{FULLNAME}.{namespace}.svc.cluster.local"]


def values(distribution: str, pools: Iterable[Any], region: str, ca_bundle_pem: str,
           image: str = versions.POD_IDENTITY_WEBHOOK_IMAGE) -> dict[str, Any]:
    """The chart's values (Release `values`, or HelmChart `valuesContent`). `pools`: the node pools
    (anything with is_controlplane / is_etcd / is_worker), for the CCM's tolerations."""
    if "-----BEGIN CERTIFICATE-----" not in ca_bundle_pem:
        raise ValueError("ca_bundle_pem must be the serving certificate's CA, in PEM")
    return {
        "fullnameOverride": FULLNAME,
        "replicaCount": REPLICAS,
        "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
        "image": split_image(image),
        "config": {
            "defaultAwsRegion": region,
            "stsRegionalEndpoint": True,
            "tokenAudience": STS_AUDIENCE,
            "tokenExpiration": TOKEN_EXPIRATION_SECONDS,
        },
        "pki": {"certManager": {"enabled": False}, "existingSecret": TLS_SECRET, "caBundle": ca_bundle_pem},
        "nodeSelector": node_selector(distribution),
        "tolerations": tolerations(distribution, list(pools)),
    }


def tls_secret(cert_pem: str, key_pem: str, namespace: str = NAMESPACE) -> dict[str, Any]:
    """The Secret the webhook serves with (manifest mode: written to a SecureString the servers
    mirror; helm mode: a kubernetes Secret resource with these fields)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": TLS_SECRET, "namespace": namespace},
        "stringData": {"tls.crt": cert_pem, "tls.key": key_pem},
    }


def tls_secret_manifest(cert_pem: str, key_pem: str, namespace: str = NAMESPACE) -> str:
    return dump_yaml(tls_secret(cert_pem, key_pem, namespace))


# --- images -------------------------------------------------------------------------------------------------
#
# Both the pod identity webhook and the AWS Load Balancer Controller publish their images on
# `public.ecr.aws` (aws/amazon-eks-pod-identity-webhook .github/workflows/build.yaml; aws/eks-charts
# stable/aws-load-balancer-controller/values.yaml `image.repository`), which serves anonymous pulls,
# so nodes need no registry credentials. EKS' own regional copies are private ECR registries that
# need IAM authentication (EKS user guide, "View Amazon container image registries for Amazon EKS
# add-ons"); RKE/RKE2 nodes here have no ECR credential helper. In China, where EKS pulls add-ons from
# registries inside the China regions, the settings warn unless registry.mirrors covers public.ecr.aws
# (settings/rules/identity.py, `identity.china-images`).


def split_image(image: str) -> dict[str, str]:
    """`registry/repository:tag` as the charts' image.registry / image.repository / image.tag (a
    registry port stays in the registry)."""
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        raise ValueError(f"{image!r}: expected <registry>/<repository>:<tag>")
    registry, _, repository = name.partition("/")
    if not repository or not any(c in registry for c in ".:") and registry != "localhost":
        raise ValueError(f"{image!r}: the image must name its registry (e.g. public.ecr.aws/...)")
    return {"registry": registry, "repository": repository, "tag": tag}
