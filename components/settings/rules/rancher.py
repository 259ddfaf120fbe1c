"""rancher: an address, an encrypted token that is a token, a name Rancher takes, and an upgrade owner that
fits the distribution and the pools. The token is never shown, not even in a message."""

from __future__ import annotations

import re
import unicodedata

from ...diagnostics import Diagnostic
from ..fields import RANCHER_CLUSTER_NAME_PATTERN, RANCHER_LOCAL_CLUSTER, json_text
from ..messages import missing
from ..sections import Rancher
from .base import Context, Keys, error

RANCHER_CLUSTER_NAME_RE = re.compile(RANCHER_CLUSTER_NAME_PATTERN)
RANCHER_TOKEN_SET = "`pulumi config set --secret --path rancher.token <token>`"


def rancher_token_problem(token: str) -> str | None:
    """Why `token` may not be rancher.token (never showing it), or None. The rancher2 provider sends it
    as `Authorization: Bearer <token>` as given (rancher/norman clientbase/common.go getAuthHeader):
    a `Bearer ` of the user's own would be sent twice, and whitespace at either end (a newline from
    `pulumi config set ... < file`) would become part of the header; Go's net/http refuses a header
    value with a control character (golang.org/x/net/http/httpguts ValidHeaderFieldValue). Refused
    rather than trimmed: the stored secret stays the one that is used."""
    if not token.strip():
        return f"is blank; set Rancher's API token (token-<id>:<secret>) with {RANCHER_TOKEN_SET}"
    if re.match(r"(?i)\s*bearer(?:\s|$)", token):
        return ("starts with 'Bearer': the rancher2 provider adds 'Bearer ' itself (it sends Authorization: Bearer "
                f"<token>), so it would be sent twice; set the token alone (token-<id>:<secret>) with {RANCHER_TOKEN_SET}")
    if token != token.strip():
        return ("has whitespace at either end (a newline from a file, most likely): the provider would send it as part "
                f"of the Authorization header; set it again without, with {RANCHER_TOKEN_SET}")
    if any(unicodedata.category(c) == "Cc" for c in token):
        return ("has a control character inside it: the provider would send it in the Authorization header, which Go's "
                f"net/http refuses; set it again without, with {RANCHER_TOKEN_SET}")
    return None


def cluster_name(keys: Keys, cluster_id: str | None) -> str | None:
    """The cluster's name in Rancher: rancher.clusterName, else the cluster ID."""
    section = keys.valid.rancher
    return (section.cluster_name if section is not None else None) or cluster_id


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    section = keys.valid.rancher
    if section is None or not isinstance(keys.section("rancher"), dict):
        return []  # not registered, or not a map (the model said so, without the value)
    found: list[Diagnostic] = []
    distribution, cluster_id = keys.valid.distribution, keys.valid.cluster_id
    if not keys.gave("rancher", "url"):
        found.append(error("rancher.url", missing(Rancher, "url"), "config.missing"))
    token = section.token
    if not keys.gave("rancher", "token"):
        found.append(error("rancher.token", missing(Rancher, "token"), "config.missing"))
    elif token is not None:
        if ctx.secret_keys is not None and "rancher" not in ctx.secret_keys:
            # Like the kubeconfig: a plain-text token would sit in the stack file, in git, unencrypted.
            found.append(error("rancher.token", "is stored as plain text in the stack file; it acts as a Rancher user: "
                                                f"set it with {RANCHER_TOKEN_SET}", "secrets.plain-text"))
        elif (why := rancher_token_problem(token.get_secret_value())) is not None:
            found.append(error("rancher.token", why, "rancher.token"))
    if not keys.gave("rancher", "clusterName") and cluster_id == RANCHER_LOCAL_CLUSTER:
        found.append(error("rancher.clusterName", "missing, and clusterId 'local' is the name every Rancher gives the "
                                                  "cluster it runs in, and Rancher refuses a second cluster of a name it "
                                                  "has; set rancher.clusterName to another lowercase DNS label",
                           "rancher.name-local"))
    elif not keys.gave("rancher", "clusterName") and cluster_id is not None \
            and not RANCHER_CLUSTER_NAME_RE.fullmatch(cluster_id):
        found.append(error("rancher.clusterName", f"missing, and clusterId {json_text(cluster_id)} is not a name Rancher "
                                                  "takes (it ends with -); set rancher.clusterName to a lowercase DNS "
                                                  "label", "rancher.name-from-id"))
    if section.upgrades == "rancher" and distribution == "rke":
        found.append(error("rancher.upgrades", "'rancher' but distribution is rke: Rancher manages the version of "
                                               "imported RKE2 and K3s clusters only (its imported-cluster-version-"
                                               "management is recognised on those); use rke-aws (rke up with a new "
                                               "kubernetesVersion)", "rancher.upgrades-rke1"))
    etcd_only = [pl.name or "" for pl in keys.complete_pools if pl.is_etcd and not pl.is_controlplane] \
        if distribution == "rke2" else []
    if section.upgrades == "rancher" and etcd_only:
        found.append(error("rancher.upgrades", f"'rancher' with etcd-only server pools ({', '.join(etcd_only)}): "
                                               "Rancher's worker Plan takes every node without the control-plane label, "
                                               "etcd-only servers too, and upgrades them with the worker concurrency "
                                               "(rancher/rancher pkg/controllers/management/k3sbasedupgrade template.go, "
                                               "deployPlans.go), which whoever may edit the cluster in Rancher can raise "
                                               "(Edit Config > Upgrade Strategy) and this program cannot pin for an "
                                               "imported cluster: several etcd members would restart at once. Use "
                                               "rancher.upgrades: rke-aws (its own etcd Plan upgrades them one at a time "
                                               "after the control plane), or give the etcd pools the controlplane role "
                                               "too", "rancher.upgrades-etcd-only"))
    return found


