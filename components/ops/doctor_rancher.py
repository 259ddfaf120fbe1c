"""The doctor's `rancher` check: the Rancher a stack registered its cluster in answers, and (with an API token)
the imported cluster exists, is active and still says who upgrades it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .results import FAIL, PASS, WARN, Result

# Rancher's API, through a transport tests replace: (url, token or None) -> (HTTP status, JSON body or None).
RancherGet = Callable[[str, "str | None"], "tuple[int, Any]"]
RANCHER_SECONDS = 10


def rancher_get(url: str, token: str | None) -> tuple[int, Any]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"Accept": "application/json",
                                               **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=RANCHER_SECONDS) as resp:  # noqa: S310 - https from the stack's outputs
            body = resp.read(4 * 1024 * 1024)
            status = resp.status
    except urllib.error.HTTPError as err:
        return err.code, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


VERSION_MANAGEMENT = "rancher.io/imported-cluster-version-management"


def check_rancher_cluster(r: dict[str, str], token: str | None, get: RancherGet = rancher_get) -> list[Result]:
    """Rancher answers; with a token, the imported cluster exists and its annotation says who upgrades.
    `r`: the stack's rancherCluster output (name, upgrades, id, url)."""
    url, cid = (r.get("url") or "").rstrip("/"), r.get("id") or ""
    if not url:
        return []
    subject = f"{r.get('name') or cid} at {url}"
    try:
        if not token:
            status, body = get(f"{url}/ping", None)
            if status == 200:
                return [Result("rancher", WARN, subject, "Rancher answers /ping; the cluster was not checked",
                               "set RANCHER_TOKEN to an API token to check the imported cluster and who upgrades it")]
            return [Result("rancher", FAIL, subject, f"/ping answered HTTP {status}", "check rancher.url")]
        status, body = get(f"{url}/v3/clusters/{cid}", token)
    except Exception as err:  # noqa: BLE001 - DNS, TLS, timeout: the stack's Rancher is not reachable from here
        return [Result("rancher", FAIL, subject, f"not reachable: {err}",
                       "run where Rancher answers; its certificate must be trusted (a public CA)")]
    if status in (401, 403):
        return [Result("rancher", FAIL, subject, f"HTTP {status} for cluster {cid}",
                       "RANCHER_TOKEN must be a valid token of a user who may see the cluster")]
    if status == 404:
        return [Result("rancher", FAIL, subject, f"cluster {cid} does not exist in Rancher",
                       "`pulumi refresh` then `pulumi up` registers it again")]
    if status != 200 or not isinstance(body, dict):
        return [Result("rancher", FAIL, subject, f"HTTP {status}", "check rancher.url")]
    want = "true" if r.get("upgrades") == "rancher" else "false"
    have = (body.get("annotations") or {}).get(VERSION_MANAGEMENT)
    if have != want:
        return [Result("rancher", FAIL, subject, f"{VERSION_MANAGEMENT} is {have!r}, but rancher.upgrades is "
                       f"{r.get('upgrades')}: both Rancher and this program may write upgrade Plans",
                       f"`pulumi up` sets it back to {want!r} (or change rancher.upgrades)")]
    state = body.get("state")
    if state != "active":
        return [Result("rancher", WARN, subject, f"cluster {cid} is {state!r}, not active",
                       "check the agent: `kubectl -n cattle-system get pods`")]
    return [Result("rancher", PASS, subject, f"cluster {cid} active; version management {want} "
                                             f"({'Rancher' if want == 'true' else 'rke-aws'} upgrades)")]
