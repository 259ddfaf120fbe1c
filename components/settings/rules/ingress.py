"""ingress: what one release can deploy. RKE1: cluster.yml's ingress.provider, nginx or none (rancher/rke
cluster/addons.go deployIngress); RKE2: versions.RKE2_TRAEFIK_SINCE. Whether a running cluster may change, and
ingress-nginx from v1.37 on, are plan/ingress.py's and guards.py's."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from .. import versions
from .base import Context, Keys, error


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    controller, distribution, kver = keys.valid.ingress.controller, keys.valid.distribution, ctx.kubernetes_version
    if controller is None or distribution is None:
        return []
    if distribution == "rke":
        if controller == "traefik":
            return [error("ingress.controller", "'traefik' is not an RKE1 ingress provider: RKE deploys ingress-nginx or "
                                                "nothing (cluster.yml ingress.provider nginx or none); use ingress-nginx "
                                                "or none", "ingress.traefik-rke1", controller)]
        return []
    if kver is not None and controller == "traefik" and not versions.rke2_patch_at_least(kver, *versions.RKE2_TRAEFIK_SINCE):
        return [error("ingress.controller", f"'traefik' is bundled from RKE2 v1.30.3 (and in every 1.31 and later), but "
                                            f"kubernetesVersion {kver} ships ingress-nginx only; use ingress-nginx or "
                                            "none, or a later release", "ingress.traefik-release", controller)]
    return []
