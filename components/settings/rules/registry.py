"""registry and airgap (issue 35): a private registry's mirrors, credentials and CA; an air-gapped RKE2
cluster's bucket, network and images. What the account must show (the bucket's region and listing, a
brought VPC's endpoints) is judged at plan time (components/plan/airgap.py).

Sources (research sheet 35 §1, §2, §8):
- rke2-docs `docs/install/private_registry.md`: mirror endpoints are URLs (https unless `http://` is
  written); auth and tls are keyed by the mirror's host. `docs/install/airgap.md`: system-default-registry
  is only an RFC 3986 authority; a node needs its artifacts or a registry, and a default route.
- rancher/rke `types/rke_types.go` PrivateRegistry has url/user/password/is_default and no CA field
  (Docker reads /etc/docker/certs.d/<host>/ca.crt, which RKE never writes); RKE1 has no air-gapped install
  path in this program (Docker comes from releases.rancher.com).
- AWS Systems Manager User Guide `setup-create-vpc.md`: VPC endpoints serve their own region only.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic
from .. import registry_hosts as registries
from .base import Context, Keys, error, given

PASSWORD_SET = "`pulumi config set --secret --path registry.password <password>`"


def _registry(keys: Keys, ctx: Context) -> list[Diagnostic]:
    reg = keys.valid.registry
    if reg is None or not isinstance(keys.section("registry"), dict):
        return []
    found: list[Diagnostic] = []
    has_password = reg.password is not None
    for upstream, endpoint in reg.mirrors.items():
        for why in registries.registry_problems({upstream: endpoint}, username=reg.username, has_password=has_password):
            found.append(error(f"registry.mirrors.{upstream}", why, "registry.mirror",
                               endpoint if why.startswith("mirrors.") else upstream))
    if not reg.mirrors and (reg.username or has_password or reg.ca_bundle):
        found.append(error("registry.mirrors", "is empty, so the credentials and CA apply to nothing; map each upstream "
                                               "registry (docker.io, registry.k8s.io, public.ecr.aws) to your mirror's "
                                               "https endpoint", "registry.no-mirrors"))
    for why in registries.registry_problems({}, username=reg.username, has_password=has_password,
                                            ca_bundle=reg.ca_bundle, system_default=reg.system_default):
        if why.startswith("username and password"):
            key = "registry.password" if reg.username else "registry.username"
            found.append(error(key, why, "registry.auth-pair"))
        elif why.startswith("caBundle"):
            found.append(error("registry.caBundle", why, "registry.ca"))  # a PEM is not a secret, but long: not shown
        elif why.startswith("systemDefault"):
            found.append(error("registry.systemDefault", why.split(": ", 1)[1], "registry.system-default",
                               reg.system_default))
    if has_password and ctx.secret_keys is not None and "registry" not in ctx.secret_keys:
        found.append(error("registry.password", f"is stored as plain text in the stack file; set it with {PASSWORD_SET}",
                           "secrets.plain-text"))
    elif reg.password is not None and not reg.password.get_secret_value().strip():
        found.append(error("registry.password", f"is blank; set it with {PASSWORD_SET}", "secrets.blank"))
    if keys.valid.distribution == "rke":
        if reg.system_default is not None:
            found.append(error("registry.systemDefault", "is RKE2's system-default-registry; RKE1 takes the docker.io "
                                                         "mirror as its default registry (private_registries is_default)",
                               "registry.rke1-system-default", reg.system_default))
        if reg.ca_bundle is not None:
            found.append(error("registry.caBundle", "cannot reach RKE1's Docker: cluster.yml's private_registries has no CA "
                                                    "field (rancher/rke types/rke_types.go); use a mirror whose certificate "
                                                    "the image trusts", "registry.rke1-ca"))
    return found


def _airgap(keys: Keys, ctx: Context) -> list[Diagnostic]:
    ag = keys.valid.airgap
    if ag is None or not isinstance(keys.section("airgap"), dict):
        return []
    found: list[Diagnostic] = []
    if keys.valid.distribution == "rke":
        found.append(error("airgap", "applies to RKE2 only: RKE1 nodes install Docker from releases.rancher.com and "
                                     "RKE pulls over SSH from the machine running `rke up`; use distribution rke2, or "
                                     "remove airgap", "airgap.rke1"))
        return found
    if not ag.preinstalled and ag.artifacts_bucket is None and not keys.gave("airgap", "artifactsBucket"):
        found.append(error("airgap.artifactsBucket", "missing; name the bucket (in the cluster's region) holding RKE2's "
                                                     "release assets, or set airgap.preinstalled: true for an image that "
                                                     "holds RKE2", "config.missing"))
    reg = keys.valid.registry
    if reg is None or not reg.mirrors:
        found.append(error("registry.mirrors", "missing, but airgap nodes cannot reach a public registry; map docker.io, "
                                               "registry.k8s.io and public.ecr.aws to your mirror (or \"*\")",
                           "airgap.no-registry"))
    else:
        features = {"identity"} if keys.valid.identity.service_accounts == "irsa" else set()
        missing = registries.unmirrored_images(reg.mirrors, "rke2", features=features)
        for upstream, components in sorted(missing.items()):
            found.append(error(f"registry.mirrors.{upstream}", f"missing: air-gapped nodes pull {', '.join(components)} "
                                                               f"from {upstream}; add a mirror for it (or \"*\")",
                               "airgap.unmirrored"))
    if reg is not None and reg.mirrors and reg.charts is None:
        found.append(error("registry.charts", "missing, but airgap nodes cannot reach the charts' public repositories; "
                                              "give your mirror of the aws-cloud-controller-manager and aws-ebs-csi-driver "
                                              "charts, and amazon-eks-pod-identity-webhook with identity (https://host/path "
                                              "or oci://host/path)", "airgap.no-charts"))
    if ag.preinstalled and ag.artifacts_bucket is None and keys.valid.ccm.install != "helm":
        found.append(error("airgap.artifactsBucket", "missing; with preinstalled images it still holds system-upgrade-"
                                                     "controller's manifests, which the servers apply for upgrades "
                                                     "(docs/features/airgap-os-fips.md, 'Air-gapped clusters and a private registry')", "airgap.no-suc-bucket"))
    if keys.valid.proxy is not None:
        # A proxy is a way out of the VPC: an air-gapped cluster has none by definition, and every AWS call
        # goes to a VPC endpoint of the VPC (refused rather than defined: NO_PROXY would have to name every
        # endpoint and the registry, and one missing name sends that traffic to the proxy).
        found.append(error("proxy", "is a way out of the VPC, but airgap nodes have none: their AWS calls go to the VPC's "
                                    "endpoints and their images to registry.mirrors; remove proxy or airgap",
                           "airgap.proxy"))
    if keys.valid.addons.load_balancer_controller:
        # Its upstream policy (plan/identity_lbc.py) calls ACM, WAF, WAF Regional, Shield and Cognito as well as
        # EC2 and ELB: the endpoints for those are not derived here yet, so an air-gapped controller would fail
        # on the first Ingress that names them.
        found.append(error("addons.loadBalancerController", "true, but with airgap its calls to ACM, WAF, Shield and "
                                                            "Cognito would have no VPC endpoint (not derived yet); "
                                                            "remove it, or airgap", "airgap.load-balancer-controller"))
    net = keys.valid.network
    if not (given(net) & {"vpcId", "publicSubnetIds", "privateSubnetIds"}) and net.nat_gateways != "none":
        found.append(error("network.natGateways", f"'{net.nat_gateways}' gives the nodes a way to the internet, but airgap "
                                                  "has none (no NAT gateway, no internet gateway); set network.natGateways: "
                                                  "none", "airgap.nat", net.nat_gateways))
    if keys.gave("network", "publicSubnetIds") and net.public_subnet_ids:
        found.append(error("network.publicSubnetIds", "airgap builds nothing in public subnets; leave them out",
                           "airgap.public-subnets"))
    for entry in keys.pools:
        if entry.pool is not None and entry.pool.subnet == "public":
            found.append(error(f"{entry.key}.subnet", "'public' puts the pool's nodes on the internet, but airgap nodes "
                                                      "have no way out; use subnet private", "airgap.public-pool", "public"))
    return found


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    return _registry(keys, ctx) + _airgap(keys, ctx)
