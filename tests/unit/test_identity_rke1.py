"""Workload identity on RKE1 (issue 36, "RKE1 where kube-api extra_args allow it"): cluster.yml's
`services.kube-api` read the way `rke up` turns it into kube-apiserver's command line, the tokens that command
line signs and accepts, what else kube-api holds kept, and the refusals on a running RKE1 cluster.

Upstream, read for these tests:
- rancher/rke cluster/plan.go `BuildKubeAPIProcess` (rancher/rke@40c5dd46): RKE's own map of flags (it holds
  `service-account-key-file` = /etc/kubernetes/ssl/kube-service-account-token-key.pem), then the KDM defaults
  over it (`serviceOptions.KubeAPI`), then `extra_args` over both (a flag set there replaces the default);
  `appendArgs` writes every map flag, then `appendArrayArgs` every `extra_args_array` value as its own flag;
  `extra_binds` are appended to RKE's binds (`/etc/kubernetes` only).
- rancher/kontainer-driver-metadata pkg/rke/k8s_service_options.go `getKubeAPIOptions121/124` (@3fdb48c3): KDM
  sets `service-account-issuer=rke`, `service-account-signing-key-file=<RKE's key>`, `api-audiences=unknown`
  for every line this program deploys (1.26+ use getKubeAPIOptions124).
- kubernetes pkg/kubeapiserver/options/authentication.go: `--service-account-issuer` and
  `--service-account-key-file` repeat (the first issuer signs, all are accepted); without `--api-audiences`
  the API audiences default to the issuer list; a TokenRequest without audiences (the kubelet's projected
  `kube-api-access` token) gets the API audiences; pkg/serviceaccount/jwt.go: a token is accepted when its
  `iss` is listed, a trusted key verifies it, and its `aud` meets the API audiences.
"""

from __future__ import annotations

import pytest

from rke_aws.node import rke1_cluster
from rke_aws.plan import identity as identity_plan
from rke_aws.plan import identity_apiserver as api
from rke_aws.plan import identity_issuer as issuer
from rke_aws.settings.resolve import from_flat
from rke_aws.state.model import ClusterState, NodeState

ISSUER = "https://c1-oidc-0a1b2c3d.s3.us-east-2.amazonaws.com"
RKE_KEY = "/etc/kubernetes/ssl/kube-service-account-token-key.pem"
# RKE's own map (cluster/plan.go, the service-account part), then KDM 1.24+ (getKubeAPIOptions124).
RKE_OWN = {"service-account-key-file": RKE_KEY}
KDM_124 = {"service-account-issuer": "rke", "service-account-signing-key-file": RKE_KEY, "api-audiences": "unknown"}


def rke_up(kube_api: dict, kdm: dict = KDM_124) -> list[str]:
    """kube-apiserver's flags as BuildKubeAPIProcess writes them from cluster.yml's services.kube-api."""
    args = {**RKE_OWN, **kdm, **kube_api.get("extra_args", {})}
    return [f"--{k}={v}" for k, v in args.items()] + [
        f"--{k}={v}" for k, vs in kube_api.get("extra_args_array", {}).items() for v in vs]


def flag(cmd: list[str], name: str) -> list[str]:
    return [a.split("=", 1)[1] for a in cmd if a.startswith(f"--{name}=")]


def apiserver(cmd: list[str], files: dict[str, set[str]]) -> dict:
    """What the server signs with and accepts (kubernetes authentication.go defaults included)."""
    issuers = flag(cmd, "service-account-issuer")
    audiences = (flag(cmd, "api-audiences")[-1].split(",") if flag(cmd, "api-audiences") else issuers)
    (signing,) = flag(cmd, "service-account-signing-key-file")
    return {"iss": issuers[0], "signing": next(iter(files[signing])), "issuers": set(issuers),
            "keys": set().union(*(files[f] for f in flag(cmd, "service-account-key-file"))), "audiences": audiences}


def authenticates(server: dict, iss: str, key: str, aud: list[str]) -> bool:
    return iss in server["issuers"] and key in server["keys"] and bool(set(aud) & set(server["audiences"]))


FILES = {RKE_KEY: {"rke-key"}, api.RKE1_SIGNING_KEY_FILE: {"our-key"}, api.RKE1_TRUSTED_KEYS_FILE: {"our-key"}}


def test_signing_our_issuer_first_rkes_issuer_and_key_still_accepted():
    cmd = rke_up(api.rke1_args(ISSUER, signing=True))
    assert flag(cmd, "service-account-issuer") == [ISSUER, "rke"]
    assert flag(cmd, "service-account-key-file") == [RKE_KEY, api.RKE1_TRUSTED_KEYS_FILE]
    assert flag(cmd, "service-account-signing-key-file") == [api.RKE1_SIGNING_KEY_FILE]
    assert flag(cmd, "service-account-jwks-uri") == [issuer.jwks_uri(ISSUER)]
    server = apiserver(cmd, FILES)
    assert (server["iss"], server["signing"]) == (ISSUER, "our-key")
    # A token RKE's own issuer and key signed before (kube-controller-manager keeps RKE's key) stays valid.
    assert authenticates(server, "rke", "rke-key", ["unknown"])


def test_an_in_cluster_token_authenticates_and_an_sts_token_does_not():
    """What tokens in-cluster need (§2.7): a pod's own token is requested without an audience, so it carries the
    API audiences, `unknown` on RKE1, and must authenticate to every API server; the webhook's token for
    `sts.amazonaws.com` must not. `api-audiences` is written out so that this holds whatever KDM the `rke`
    binary carries: without it (a KDM that sets none) the audiences would follow the issuer list, and pods'
    tokens would carry our public issuer URL as audience instead of the `unknown` RKE's tokens carry."""
    kube_api = api.rke1_args(ISSUER, signing=True)
    assert kube_api["extra_args"]["api-audiences"] == "unknown"
    assert "sts.amazonaws.com" not in kube_api["extra_args"]["api-audiences"]
    for kdm in (KDM_124, {k: v for k, v in KDM_124.items() if k != "api-audiences"}):
        server = apiserver(rke_up(kube_api, kdm), FILES)
        assert server["audiences"] == ["unknown"], kdm
        pod_token = (server["iss"], server["signing"], server["audiences"])  # TokenRequest without audiences
        assert authenticates(server, *pod_token)
        assert not authenticates(server, ISSUER, "our-key", [issuer.STS_AUDIENCE])


def test_trusting_only_keeps_rke_signing():
    cmd = rke_up(api.rke1_args(ISSUER, signing=False))
    assert flag(cmd, "service-account-issuer") == ["rke", ISSUER]
    assert flag(cmd, "service-account-signing-key-file") == [RKE_KEY]
    server = apiserver(cmd, FILES)
    assert authenticates(server, ISSUER, "our-key", ["unknown"])


def test_the_key_directory_is_bound_read_only_outside_etc_kubernetes():
    """RKE binds only /etc/kubernetes, which it manages itself (certificates it rewrites): ours is apart."""
    binds = api.rke1_args(ISSUER, True)["extra_binds"]
    assert binds == [f"{api.RKE1_KEY_DIR}:{api.RKE1_KEY_DIR}:ro"]
    assert not api.RKE1_KEY_DIR.startswith("/etc/kubernetes")
    for path in (api.RKE1_SIGNING_KEY_FILE, api.RKE1_TRUSTED_KEYS_FILE):
        assert path.startswith(api.RKE1_KEY_DIR + "/")


def test_merging_keeps_what_kube_api_already_holds():
    """cluster.yml's kube-api may hold other flags, arrays and binds (audit logs, admission files): the issuer's
    are added, nothing is dropped; RKE would keep one value of a map flag set twice, so that is an error."""
    base = {"extra_args": {"audit-log-path": "/var/log/kube-audit/audit.log"},
            "extra_args_array": {"service-account-key-file": ["/etc/other/sa.pub"], "feature-gates": ["A=true"]},
            "extra_binds": ["/var/log/kube-audit:/var/log/kube-audit"], "audit_log": {"enabled": True}}
    merged = rke1_cluster.merge_service(base, api.rke1_args(ISSUER, True))
    assert merged["extra_args"]["audit-log-path"] == "/var/log/kube-audit/audit.log"
    assert merged["extra_args"]["service-account-issuer"] == ISSUER
    assert merged["extra_args_array"]["service-account-key-file"] == ["/etc/other/sa.pub", api.RKE1_TRUSTED_KEYS_FILE]
    assert merged["extra_args_array"]["feature-gates"] == ["A=true"]
    assert merged["extra_binds"] == ["/var/log/kube-audit:/var/log/kube-audit", f"{api.RKE1_KEY_DIR}:{api.RKE1_KEY_DIR}:ro"]
    assert merged["audit_log"] == {"enabled": True} and base["extra_binds"] == ["/var/log/kube-audit:/var/log/kube-audit"]
    with pytest.raises(ValueError, match="service-account-issuer"):
        rke1_cluster.merge_service({"extra_args": {"service-account-issuer": "rke"}}, api.rke1_args(ISSUER, True))


def _identity(signing: bool = True) -> rke1_cluster.Rke1Identity:
    return rke1_cluster.Rke1Identity(ISSUER, signing, "/rke-aws/c1/identity/signing-key",
                                     "/rke-aws/c1/identity/trusted-keys", "us-east-2", "ssm.us-east-2.amazonaws.com")


def test_cluster_yml_carries_the_issuer_beside_the_etcd_backup():
    from rke_aws.plan.snapshots import EtcdS3

    etcd = EtcdS3(bucket="b", region="us-east-2", folder="c1", endpoint="s3.us-east-2.amazonaws.com",
                  interval_hours=6, retention=28)
    doc = rke1_cluster.rke_cluster_config([], {}, cluster_id="c1", kubernetes_version="v1.32.5-rancher1-1",
                                          ssh_user="ubuntu", ssh_key_path=None, leader_migration=True, etcd_s3=etcd,
                                          identity=_identity())
    services = doc["services"]
    assert set(services) == {"etcd", "kube-controller", "kube-api"}
    assert services["kube-api"] == api.rke1_args(ISSUER, True)
    plain = rke1_cluster.rke_cluster_config([], {}, cluster_id="c1", kubernetes_version="v1.32.5-rancher1-1",
                                            ssh_user="ubuntu", ssh_key_path=None, leader_migration=False)
    assert "services" not in plain  # no issuer: cluster.yml as before


# ---- a running RKE1 cluster ------------------------------------------------------------------------------

POOLS = '[{"name": "control", "roles": ["controlplane", "etcd"], "count": 1}, ' \
        '{"name": "workers", "roles": ["worker"], "count": 1}]'


def _cfg(identity: str | None):
    flat = {"aws:region": "us-east-2", "rke-aws:distribution": "rke", "rke-aws:clusterId": "c1",
            "rke-aws:nodePools": POOLS}
    if identity:
        flat["rke-aws:identity"] = identity
    return from_flat(flat, project="rke-aws", stack="c1")


def _running(**identity) -> ClusterState:
    node = NodeState(name="ip-10-0-0-10.us-east-2.compute.internal", pool="control", index=0,
                     roles=("controlplane", "etcd"), private_ip="10.0.0.10", availability_zone="us-east-2a")
    return ClusterState(cluster_id="c1", distribution="rke", nodes=(node,), **identity)


def test_a_new_rke1_cluster_takes_irsa():
    cfg = _cfg('{"serviceAccounts": "irsa"}')  # the settings rules no longer refuse it
    assert identity_plan.rke1_running_problems(cfg, None) == []
    assert identity_plan.rke1_running_problems(cfg, ClusterState(cluster_id="c1")) == []  # no node launched yet


def test_a_running_rke1_cluster_cannot_turn_irsa_on():
    (problem,) = identity_plan.rke1_running_problems(_cfg('{"serviceAccounts": "irsa"}'), _running())
    text = problem.render("rke-aws:")
    assert text.startswith("rke-aws:identity.serviceAccounts: 'irsa' cannot be turned on here"), text
    assert "rke up" in text and "new RKE1 cluster" in text


def test_a_running_rke1_cluster_cannot_take_a_new_key_generation():
    running = _running(identity_issuer_url=ISSUER, identity_key_generations=(1,), identity_signing_generation=1)
    assert identity_plan.rke1_running_problems(_cfg('{"serviceAccounts": "irsa"}'), running) == []
    (problem,) = identity_plan.rke1_running_problems(_cfg('{"serviceAccounts": "irsa", "keyGeneration": 2}'), running)
    text = problem.render("rke-aws:")
    assert text.startswith("rke-aws:identity.keyGeneration: 2 would rotate the signing key"), text
    assert "keep 1" in text


def test_turning_irsa_off_on_a_running_rke1_cluster_warns_that_pods_tokens_stop_working():
    """Off, cluster.yml drops our flags and `rke up` restarts every kube-apiserver with `rke` alone (cluster/plan.go:
    nothing but KDM's issuer and RKE's key remain), so a token our key signed no longer authenticates."""
    server = apiserver(rke_up({}), FILES)
    assert not authenticates(server, ISSUER, "our-key", ["unknown"])
    running = _running(identity_issuer_url=ISSUER, identity_key_generations=(1,), identity_signing_generation=1)
    plan, found = identity_plan.plan(_cfg(None), running, "123456789012", ebs_csi=False)
    assert plan is None
    (warning,) = found
    assert warning.severity.name == "WARNING"
    assert warning.render("rke-aws:").startswith("rke-aws:identity.serviceAccounts: 'none' on a running RKE1 cluster")
    assert identity_plan.plan(_cfg(None), _running(), "123456789012", ebs_csi=False) == (None, [])


def test_turning_irsa_off_while_rke1_only_trusted_our_key_warns_nothing():
    """A bring-your-own issuer never confirmed: RKE's own key signed every token (identity_apiserver: trusting
    only), so dropping our flags refuses no token in use."""
    running = _running(identity_issuer_url=ISSUER, identity_key_generations=(1,), identity_signing=False)
    assert identity_plan.plan(_cfg(None), running, "123456789012", ebs_csi=False) == (None, [])
