"""What the plan reads from outside the stack file and must judge before using."""

from __future__ import annotations

# What an admin kubeconfig from RKE2 holds (k3s writeKubeConfig: one cluster, one client
# certificate). Anything else in a published copy was put there by someone else: `exec` and
# `auth-provider` run commands on the machine that uses it, file paths read its files.
KUBECONFIG_CLUSTER_KEYS = frozenset({"server", "certificate-authority-data"})


KUBECONFIG_USER_KEYS = frozenset({"client-certificate-data", "client-key-data"})


def published_kubeconfig_problem(text: str, api_url: str) -> str | None:
    """Why a published kubeconfig must not be used, or None: it must be exactly what RKE2 writes,
    pointed at this cluster's endpoint. Every server may overwrite the parameter (the first one
    publishes it), so its content is checked before anything runs with it."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return "it is not YAML"
    if not isinstance(doc, dict) or doc.get("kind") != "Config":
        return "it is not a kubeconfig"
    clusters = [c.get("cluster") or {} for c in doc.get("clusters") or [] if isinstance(c, dict)]
    users = [u.get("user") or {} for u in doc.get("users") or [] if isinstance(u, dict)]
    if len(clusters) != 1 or len(users) != 1:
        return f"it names {len(clusters)} clusters and {len(users)} users, RKE2 writes one of each"
    extra = sorted(set(clusters[0]) - KUBECONFIG_CLUSTER_KEYS) + sorted(set(users[0]) - KUBECONFIG_USER_KEYS)
    if extra:
        return f"it carries {', '.join(extra)}, which RKE2 never writes (exec and auth-provider run commands)"
    if clusters[0].get("server") != api_url:
        return f"its server is {clusters[0].get('server')!r}, not this cluster's {api_url}"
    return None
