"""nodePools[].os and fips: each pool's OS where its vendor publishes it (or the pool's own `ami`), RKE1 only
where RKE runs Docker, FIPS only on RKE2 with OSes in FIPS mode (settings/os_images.py os_problems says which
combination is refused and why; this rule names the key). The CPU architecture is known only at plan time:
what differs on arm64 is judged there (plan/machine_checks.py architecture_problems)."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from .. import partitions
from ..os_images import os_problems
from .base import Context, Keys, error, warning

# os_problems' sentence for FIPS on RKE1: said once, at `fips`, not once per pool.
_FIPS_RKE1 = "fips is for RKE2"


def partition_of(region: str | None) -> str:
    """The partition the pools' images come from; a region not known yet is judged as a commercial one (the
    region's own rule reports it)."""
    return partitions.of_region(region).name if region else "aws"


def pool_problems(keys: Keys, ctx: Context, arch: str = "x86_64") -> list[tuple[str, str, str]]:
    """(key, value, sentence) for each pool's `os` refused on `arch` (airgap: not configurable in this branch)."""
    distribution = keys.valid.distribution or "rke2"
    fips = keys.valid.fips
    partition = partition_of(ctx.region)
    out: list[tuple[str, str, str]] = []
    for entry in keys.pools:
        pool = entry.pool
        if pool is None or not pool.count:
            continue
        # airgap=False: the air-gapped install is another branch's key (issue 35 items 1-2).
        for sentence in os_problems(pool.os, distribution, partition, arch, fips, False,
                                    custom_image=pool.ami is not None):
            if not sentence.startswith(_FIPS_RKE1):
                out.append((f"{entry.key}.os", pool.os, sentence))
    return out


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    found = [error(key, f"'{value}': {sentence}", "pool.os", value) for key, value, sentence in pool_problems(keys, ctx)]
    if keys.valid.fips and keys.valid.distribution == "rke":
        found.append(error("fips", "true, but fips is for RKE2 (its FIPS 140 build, rke2-docs security/fips_support.md); "
                                   "RKE1 has none: set distribution rke2 or remove fips", "fips.rke1", True))
    if keys.valid.fips and keys.valid.distribution == "rke2":
        # rke2-docs security/fips_support.md lists what RKE2 builds with BoringCrypto; the AWS cloud controller
        # manager is not RKE2's (kubernetes/cloud-provider-aws has no FIPS build or option).
        found.append(warning("fips", "true: RKE2's own components run its FIPS 140 build, but the AWS cloud controller "
                                     "manager (and any image you add) is not FIPS-validated; "
                                     "docs/features/airgap-os-fips.md, 'Operating systems, SELinux and FIPS' says what is", "fips.ccm-not-validated", True))
        controller = keys.valid.ingress.controller
        if controller != "none" and controller != "ingress-nginx":
            # rke2-docs security/fips_support.md "Ingress": RKE2's FIPS-compliant ingress is its NGINX (controller
            # built with the FIPS Go compiler, server on a FIPS-validated OpenSSL); Traefik is not listed.
            found.append(warning("ingress.controller", f"{controller or 'unset (Traefik on new clusters)'}: RKE2's FIPS "
                                 "document names its NGINX ingress as the FIPS-compliant one and says nothing of "
                                 "Traefik; set ingress-nginx (while RKE2 ships it) or none with fips",
                                 "fips.ingress", controller))
    return found
