"""Rancher registration meeting the other features, and the values a careless or hostile user gives it
(issue 32). Each rule is Rancher's, terraform-provider-rancher2's or Go's, cited where it is tested:

- CIS: RKE2's profile enforces Pod Security `restricted`; Rancher's docs list the namespaces a restricted
  cluster must exempt (ranchermanager.docs.rancher.com v2.14 reference-guides/rancher-security/
  psa-restricted-exemptions); without them the agent's pods are refused (rancher/rancher #47255,
  #39148, #42039; rancher/fleet#2887).
- proxy: Rancher never connects to an imported cluster, its agent connects out (Rancher docs, "Using
  Fleet behind a proxy"); the Cluster's agentEnvVars reach the agent's Deployment (rancher/rancher
  pkg/systemtemplate/import.go) and a change redeploys it (pkg/controllers/management/clusterdeploy/
  clusterdeploy.go redeployAgent).
- split roles: Rancher's worker Plan takes every node without the control-plane label with the worker
  concurrency (pkg/controllers/management/k3sbasedupgrade/template.go generateWorkerPlan, deployPlans.go).
- the registration token: terraform-provider-rancher2 rancher2/schema_cluster.go marks only
  cluster_registration_token.token Sensitive, and manifest_url, command, node_command, insecure_command
  embed it; pulumi-rancher2 13.x marks only caCert and kubeConfig secret.
- rancher.url: the provider empties the path (rancher2/util.go NormalizeURL) and appends /v3 (config.go);
  Go's url.Parse checks only that a port is digits, and its resolver answers "no such host" for a name
  with an empty or over-long label (net/dnsclient.go isDomainName).
- rancher.token: sent as `Authorization: Bearer <token>` as given (rancher/norman clientbase/common.go
  getAuthHeader).
- clusterName: Rancher's own cluster is `local` (pkg/data/dashboard/cluster_data.go), and it refuses a
  second cluster of a name it has, letter case ignored (pkg/api/norman/store/cluster/cluster_store.go
  canUseClusterName).
"""

# split: this module mixes levels (issue 33 §7.2); the config-only tests -> tests/unit.

from __future__ import annotations

import copy
import json
import re
import urllib.parse

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.cluster.rancher import REGISTRATION_TOKEN_OUTPUT
from rke_aws.node import rke2_config
from rke_aws.plan import rancher as rancher_plan
from rke_aws.settings import fields, stackfile, versions
from rke_aws.settings.rules import rancher as rancher_rules
from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.day2 import KUBECONFIG, code_in, readable, refused
from tests.support.day2 import run_shared as run  # a step several tests walk through is made once
from tests.support.rancher import CLUSTER, TOKEN, helm, parse, problems, warned, with_rancher
from tests.support.runs import run_cached
from tests.support.userdata import cloud_config, written_file

INSTANCE = "aws:ec2/instance:Instance"
# Where Rancher's agent, Fleet's agent and the impersonation accounts run (what Rancher's cleanup deletes:
# rancher/rancher pkg/agent/clean/cluster.go).
AGENT_NAMESPACES = {"cattle-system", "cattle-fleet-system", "cattle-impersonation-system"}


def _cis(cfg: dict) -> dict:
    return set_key(copy.deepcopy(cfg), "hardening", "cis")


def _exempted(run_: harness.ProgramRun) -> dict[str, set[str]]:
    """Each server's Pod Security exemptions, as its user data writes them."""
    out = {}
    for inst in run_.of_type(INSTANCE):
        doc = cloud_config(inst)
        conf = yaml.safe_load(written_file(doc, rke2_config.RKE2_CONFIG_PATH))
        path = conf.get("pod-security-admission-config-file")
        if path:
            (plugin,) = yaml.safe_load(written_file(doc, path))["plugins"]
            out[inst.inputs["tags"]["Name"]] = set(plugin["configuration"]["exemptions"]["namespaces"])
    return out


# ---- 1. CIS + Rancher -------------------------------------------------------------------------------

def test_cis_servers_exempt_ranchers_namespaces_only_when_registered():
    """Under RKE2's CIS profile every namespace not exempted enforces `restricted`; Rancher's agent pods do
    not meet it (rancher/rancher #47255, #39148, #42039; rancher/fleet#2887), so a registered CIS cluster
    stays pending unless its servers exempt the namespaces Rancher's docs list."""
    registered = _exempted(run_cached(with_rancher(_cis(harness.stack_config("rke2-dev"))), "rke2-dev"))
    assert registered
    for name, namespaces in registered.items():
        assert AGENT_NAMESPACES <= namespaces, name
        assert set(rancher_plan.PSA_EXEMPT_NAMESPACES) <= namespaces, name
        assert set(rke2_config.PSA_EXEMPT_NAMESPACES) <= namespaces, name  # RKE2's own and system-upgrade stay
    alone = _exempted(run_cached(_cis(harness.stack_config("rke2-dev")), "rke2-dev"))
    assert alone and all(not ns & set(rancher_plan.PSA_EXEMPT_NAMESPACES) - set(rke2_config.PSA_EXEMPT_NAMESPACES)
                         for ns in alone.values()), alone


def test_the_rancher_list_is_the_one_ranchers_docs_give():
    # As the v2.14 page lists it (44 namespaces, sorted there); the agent's three among them.
    listed = rancher_plan.PSA_EXEMPT_NAMESPACES
    assert len(listed) == 44 and list(listed) == sorted(listed) and len(set(listed)) == 44
    assert AGENT_NAMESPACES <= set(listed) and {"fleet-default", "fleet-local", "cattle-turtles-system"} <= set(listed)
    assert rke2_config.psa_exempt_namespaces(False) == rke2_config.PSA_EXEMPT_NAMESPACES


def test_registering_a_running_cis_cluster_says_its_servers_keep_refusing_the_agent():
    """The Pod Security file is user data, read at first boot only (nodes.IGNORED_ON_UPDATE): servers
    already running keep refusing the agent until they are replaced or edited."""
    cfg = _cis(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    assert "cattle-system" not in base.outputs["podSecurityExemptions"]
    after = run(with_rancher(cfg), base, stack="rke2-dev")
    w = warned(after, "keep the Pod Security configuration they booted with")
    assert w.startswith("rke-aws:rancher:") and "cattle-system" in w and "systemctl restart rke2-server" in w
    assert "cattle-system" in after.outputs["podSecurityExemptions"]
    # New servers get them (the user data of every server in the plan has them).
    assert all(AGENT_NAMESPACES <= ns for ns in _exempted(after).values())
    # Outputs of a release that never exempted Rancher's namespaces: the registered cluster's servers lack them.
    old = {k: v for k, v in after.outputs.items() if k != "podSecurityExemptions"}
    again = harness.run_program(with_rancher(cfg), stack="rke2-dev", previous_outputs=old)
    assert [m for lvl, m in again.logs if lvl == "warning" and "keep the Pod Security configuration" in m]
    # Once recorded, said no more; and never without CIS.
    later = run(with_rancher(cfg), after, stack="rke2-dev")
    assert not [m for lvl, m in later.logs if "keep the Pod Security configuration" in m]
    plain = run(harness.stack_config("rke2-dev"), stack="rke2-dev")
    assert "podSecurityExemptions" not in plain.outputs
    assert not [m for lvl, m in run(with_rancher(harness.stack_config("rke2-dev")), plain, stack="rke2-dev").logs
                if "Pod Security" in m]


# ---- 2. proxy + Rancher ----------------------------------------------------------------------------

def _proxied(cfg: dict) -> dict:
    return set_key(copy.deepcopy(cfg), "proxy", {"httpsProxy": "http://proxy.corp.example:3128"})


def test_behind_a_proxy_the_agent_gets_the_nodes_proxy_environment():
    """Rancher's agent connects out to Rancher (Rancher docs, "Using Fleet behind a proxy"): without
    HTTP(S)_PROXY it cannot reach Rancher from a cluster that goes out only through the proxy."""
    r = run_cached(with_rancher(_proxied(harness.stack_config("rke2-dev"))), "rke2-dev")
    (imported,) = r.of_type(CLUSTER)
    env = {e["name"]: e["value"] for e in imported.inputs["agentEnvVars"]}
    assert env == r.outputs["proxy"] and set(env) == {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}
    # The agent reaches the Kubernetes API through the service network, never through the proxy.
    assert "10.43.0.0/16" in env["NO_PROXY"].split(",") and ".svc" in env["NO_PROXY"].split(",")
    assert r.outputs["rancherCluster"]["agentEnvVars"] == env
    plain = run_cached(with_rancher(harness.stack_config("rke2-dev")), "rke2-dev")
    (imported,) = plain.of_type(CLUSTER)
    assert not imported.inputs.get("agentEnvVars")


def test_changing_the_agents_proxy_says_rancher_redeploys_it():
    cfg = with_rancher(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    after = run(_proxied(cfg), base, stack="rke2-dev")
    w = warned(after, "the Rancher agent's environment changes")
    assert "redeploys cattle-cluster-agent" in w and "proxy.corp.example:3128" in w
    # Unchanged: nothing said. Removed: said again (the agent loses its proxy).
    assert not [m for _, m in run(_proxied(cfg), after, stack="rke2-dev").logs if "agent's environment" in m]
    assert "no proxy variables" in warned(run(cfg, after, stack="rke2-dev"), "the Rancher agent's environment changes")
    # Outputs from before agentEnvVars existed: the agent had none, so a proxy now redeploys it.
    old = copy.deepcopy(after.outputs)
    del old["rancherCluster"]["agentEnvVars"]
    again = harness.run_program(_proxied(cfg), stack="rke2-dev", previous_outputs=old)
    assert [m for lvl, m in again.logs if lvl == "warning" and "agent's environment changes" in m]


# ---- 3. split roles + Rancher-owned upgrades -------------------------------------------------------

def test_rancher_owned_upgrades_are_refused_with_etcd_only_servers():
    """Rancher's rke2-worker-plan selects `node-role.kubernetes.io/control-plane` DoesNotExist (etcd-only
    servers carry only the etcd label) with the worker concurrency, which Rancher lets anyone raise: etcd
    members would restart together. With controlplane and etcd on every server pool it is fine."""
    def split(owner: str) -> dict:
        keys = ("rke-aws:rancher", "rke-aws:nodePools", "rke-aws:controlPlane")
        return {k: v for k, v in with_rancher(harness.stack_config("rke2-split"), upgrades=owner).items() if k in keys}

    msg = problems(split("rancher"))
    assert "rke-aws:rancher.upgrades: 'rancher' with etcd-only server pools (etcd)" in msg
    assert "worker concurrency" in msg and "rancher.upgrades: rke-aws" in msg
    cfg = parse(split("rke-aws"))
    assert cfg.rancher is not None and cfg.rancher.upgrades == "rke-aws"
    # Every server pool with both roles (the default pools): Rancher's master Plan takes them all.
    assert parse({"rke-aws:rancher": with_rancher({}, upgrades="rancher")["rke-aws:rancher"]}).rancher is not None


# ---- 5. the registration token in the state --------------------------------------------------------

def _texts(value) -> str:
    return json.dumps(value, default=str, sort_keys=True)


@pytest.mark.parametrize("stack,cfg", [("rke2-dev", lambda: with_rancher(harness.stack_config("rke2-dev"))),
                                       ("rke2-prod", lambda: with_rancher(helm()))], ids=["manifest", "helm"])
def test_the_registration_token_is_stored_only_as_a_secret(stack, cfg):
    """The engine stores what a provider answers as the resource's state, in plain text unless the output is
    secret; the token's output is one object (manifestUrl, command, nodeCommand, insecureCommand, ... embed
    it), so the whole `clusterRegistrationToken` output must be secret, and whatever carries the token on
    (the manifest address) a secret input or output."""
    r = run_cached(cfg(), stack)
    (imported,) = r.of_type(CLUSTER)
    token = imported.state[REGISTRATION_TOKEN_OUTPUT]["token"]
    assert token and token in imported.state[REGISTRATION_TOKEN_OUTPUT]["manifestUrl"]
    # The output's name as pulumi-rancher2 declares it (@pulumi.getter(name=...) on Cluster.cluster_registration_token).
    import pulumi_rancher2 as rancher2
    assert rancher2.Cluster.cluster_registration_token.fget._pulumi_name == REGISTRATION_TOKEN_OUTPUT
    seen = 0
    for reg in r.resources:
        for key, value in reg.state.items():
            if token in _texts(value):
                seen += 1
                # Stored secret: named in additionalSecretOutputs, or the output of a secret input of the same
                # name (providers carry an input's secretness to its output: pulumi-kubernetes provider/pkg/
                # provider/provider.go annotateSecrets; pulumi/pulumi tests/integration/secret_outputs).
                assert key in reg.additional_secret_outputs or key in reg.secret_inputs, \
                    f"{reg.urn}: output {key} holds the token in plain text"
        for key, value in reg.inputs.items():
            if token in _texts(value):
                assert key in reg.secret_inputs, f"{reg.urn}: input {key} holds the token in plain text"
    assert seen
    for key, value in r.outputs.items():
        assert token not in _texts(value) or key in r.secret_outputs, key
    assert not [m for _, m in r.logs if token in m]
    assert TOKEN not in _texts(r.outputs) and not [m for _, m in r.logs if TOKEN in m]


# ---- Also: rancher.url, rancher.token, clusterName --------------------------------------------------

@pytest.mark.parametrize("url,why", [
    ("https://r.example.com/rancher", "has a path (/rancher), which the rancher2 provider drops"),
    ("https://r.example.com/v3", "has a path (/v3)"),
    ("https://r.example.com:70000", "has port 70000 (1 to 65535)"),
    ("https://r.example.com:0", "has port '0'"),
    ("https://r..example.com", "has an empty DNS label"),
    ("https://r.example.com.", "has an empty DNS label"),
    ("https://-r.example.com", "has a DNS label that starts or ends with '-' (-r)"),
    (f"https://{'a' * 64}.example.com", "has a DNS label of 64 characters"),
    ("HTTPS://r.example.com", "has its scheme in capitals"),
])
def test_urls_the_provider_would_change_or_go_would_refuse_are_refused(url, why):
    msg = problems({"rke-aws:rancher": json.dumps({"url": url, "token": TOKEN})})
    assert f"rke-aws:rancher.url: {fields.shown(url)} {why}" in msg, msg


@pytest.mark.parametrize("url", ["https://alice:s3cr3t-pw@r.example.com", "https://s3cr3t-pw@r.example.com:8443",
                                 "https://r.example.com/?token=s3cr3t-pw", "https://r.example.com#s3cr3t-pw",
                                 "http://alice:s3cr3t-pw@r.example.com/path"])
def test_a_credential_in_the_url_is_never_echoed(url):
    msg = problems({"rke-aws:rancher": json.dumps({"url": url, "token": TOKEN})})
    assert f"rke-aws:rancher.url: {fields.RANCHER_URL_HIDDEN}" in msg
    assert "s3cr3t-pw" not in msg and "alice" not in msg and TOKEN not in msg


@pytest.mark.parametrize("token,why", [
    (f" {TOKEN}", "at either end"), (f"{TOKEN}\n", "at either end"), (f"{TOKEN}\r\n", "at either end"),
    (f"token-abcde:\n{TOKEN[12:]}", "has a control character inside it"), (f"Bearer {TOKEN}", "starts with 'Bearer'"),
    (f"bearer  {TOKEN}", "starts with 'Bearer'"), (f"{TOKEN}\u00a0", "at either end"),
])
def test_a_token_the_provider_would_send_broken_is_refused_unseen(token, why):
    """norman's client sends `Authorization: Bearer ` + the token as given: a `Bearer ` of its own is sent
    twice, whitespace and control characters become part of the header (Go refuses a header value with a
    control character)."""
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": token})})
    assert "rke-aws:rancher.token:" in msg and why in msg, msg
    assert TOKEN not in msg and TOKEN[12:] not in msg


def test_ranchers_own_cluster_name_is_refused():
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN, "clusterName": "local"})})
    assert "rke-aws:rancher.clusterName: 'local' is the name every Rancher gives the cluster it runs in" in msg
    assert not re.fullmatch(fields.RANCHER_CLUSTER_NAME_PATTERN, "local")  # the schema says it too
    msg = problems({"rke-aws:clusterId": "local", "rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN})})
    assert "rke-aws:rancher.clusterName: missing, and clusterId 'local' is the name every Rancher gives" in msg
    assert parse({"rke-aws:clusterId": "local", "rke-aws:rancher": json.dumps(
        {"url": "https://r.example.com", "token": TOKEN, "clusterName": "local-1"})}).rancher is not None


def test_all_problems_at_once_each_naming_its_key():
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://u:p@r.example.com/x", "token": f"Bearer {TOKEN}",
                                                   "clusterName": "local"})})
    for key in ("rancher.url", "rancher.token", "rancher.clusterName"):
        assert f"rke-aws:{key}:" in msg, key
    assert "u:p" not in msg and TOKEN not in msg


# The provider's view of an accepted address, read by Python's URL parser: scheme, host and port only
# (so NormalizeURL changes nothing), a port Go can dial, a host name Go's resolver takes.
URL_RE = re.compile(fields.RANCHER_URL_PATTERN)


def _provider_keeps(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    assert parts.scheme == "https" and parts.hostname, url
    assert parts.username is None and parts.password is None and not parts.query and not parts.fragment, url
    assert parts.path in ("", "/"), url  # NormalizeURL empties the path: nothing lost
    assert parts.port is None or 1 <= parts.port <= 65535, url
    host = parts.hostname
    assert len(host) <= 253 and all(1 <= len(label) <= 63 and not label.startswith("-") and not label.endswith("-")
                                    for label in host.split(".")), url


@settings(max_examples=300, deadline=None)
@given(st.from_regex(URL_RE))
def test_every_accepted_url_reaches_the_provider_unchanged(url):
    _provider_keeps(url)
    assert fields.rancher_url_problem(url) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("htps:/@.-_ 0123456789abcXYZ%?#\n")), max_size=40).map(lambda s: "https://" + s))
def test_near_miss_urls_are_accepted_only_when_sound_and_refused_with_a_reason(url):
    why = fields.rancher_url_problem(url)
    if why is None:
        _provider_keeps(url)
    elif any(c in url for c in "@?#"):
        assert why == fields.RANCHER_URL_HIDDEN  # a fixed text: nothing of the value
    else:
        assert why.startswith(fields.shown(url) + " ") and "expected" in why


_SECRET = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7e), min_size=8, max_size=60)
_INNER = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=20)


@settings(max_examples=300, deadline=None)
@given(_SECRET, _INNER, _SECRET)
def test_any_printable_token_without_a_bearer_prefix_is_taken_as_given(head, inner, tail):
    # Inner spaces are the token's own business (Rancher answers 401 to a wrong token); the offline
    # harness's stand-in for an encrypted value has some.
    token = head + inner + tail
    if re.match(r"(?i)bearer(?:\s|$)", token):
        return
    assert rancher_rules.rancher_token_problem(token) is None


@settings(max_examples=300, deadline=None)
@given(_SECRET, st.text(alphabet=" \t\r\n\x0b\x0c\u00a0\u2003", min_size=1, max_size=3), st.sampled_from(["lead", "trail", "both", "bearer"]))
def test_a_token_with_whitespace_or_a_bearer_prefix_is_refused_and_never_shown(token, space, where):
    def written(t: str) -> str:
        return {"lead": space + t, "trail": t + space, "both": space + t + space, "bearer": "Bearer" + space + t}[where]

    why = rancher_rules.rancher_token_problem(written(token))
    # Never shown: the reason is the same whatever the token. (Not `token not in why`: a token may be a word of the
    # reason itself, `--secret`, which hypothesis found.)
    assert why is not None and why == rancher_rules.rancher_token_problem(written("q" * len(token)))


# ---- Also, day 2: the owner and the address --------------------------------------------------------

OLDER, NEWER = "v1.35.6+rke2r1", versions.RKE2_VERSION


def test_switching_the_owner_waits_until_the_last_version_change_is_known_complete(cluster):
    """This program's Plans upgrade after `pulumi up` returns; handing upgrades to Rancher while they still
    run would let Rancher's Plans (cattle-system) start on the same nodes (rancher/rancher #40974, #41143)."""
    assert OLDER in versions.RKE2_RELEASES and OLDER != NEWER
    cfg = set_key(readable(with_rancher(harness.stack_config("rke2-prod"))), "kubernetesVersion", OLDER)
    base = run(cfg, stack="rke2-prod")
    upgraded = run(set_key(copy.deepcopy(cfg), "kubernetesVersion", NEWER), base, stack="rke2-prod")
    switched = set_key(readable(with_rancher(harness.stack_config("rke2-prod"), upgrades="rancher")),
                       "kubernetesVersion", NEWER)
    agent = next(n["name"] for n in base.outputs["nodes"] if "controlplane" not in n["roles"])
    cluster(upgraded, NEWER, versions_by_node={agent: OLDER})  # this program's Plans still on one node
    msg = refused(switched, upgraded, stack="rke2-prod")
    assert f"rke-aws:rancher.upgrades: rancher (was rke-aws) while the change to Kubernetes {NEWER} is not known " \
           "complete" in msg and agent in msg
    cluster(upgraded, NEWER)  # every node on it: the switch goes ahead
    after = run(switched, upgraded, stack="rke2-prod")
    assert after.outputs["rancherCluster"]["upgrades"] == "rancher"
    back = set_key(copy.deepcopy(cfg), "kubernetesVersion", NEWER)
    assert run(back, after, stack="rke2-prod").outputs["rancherCluster"]["upgrades"] == "rke-aws"  # and back, once done


def test_switching_the_owner_unread_needs_the_version_confirmed():
    cfg = set_key(with_rancher(helm()), "kubernetesVersion", OLDER)
    base = run(cfg, stack="rke2-prod")
    upgraded = run(set_key(copy.deepcopy(cfg), "kubernetesVersion", NEWER), base, stack="rke2-prod")
    switched = set_key(with_rancher(helm(), upgrades="rancher"), "kubernetesVersion", NEWER)
    msg = refused(switched, upgraded, stack="rke2-prod")
    assert "while the change to Kubernetes" in msg and "not known complete" in msg
    code = code_in(msg, "version")
    after = run(set_key(copy.deepcopy(switched), "confirmClusterState", code), upgraded, stack="rke2-prod")
    assert after.outputs["rancherCluster"]["upgrades"] == "rancher"


def test_a_new_rancher_url_for_a_registered_cluster_is_refused_with_the_steps():
    """A new api_url is a provider configuration change in place (no bridged key forces a new provider):
    the provider looks for the same cluster ID at the new address (terraform-provider-rancher2
    resource_rancher2_cluster.go Read/Update)."""
    cfg = with_rancher(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    moved = copy.deepcopy(cfg)
    moved["rke-aws:rancher"] = stackfile.secret(json.dumps({"url": "https://rancher2.example.com", "token": TOKEN}))
    msg = refused(moved, base, stack="rke2-dev")
    cid = base.outputs["rancherCluster"]["id"]
    assert "rke-aws:rancher.url: https://rancher2.example.com (was https://rancher.example.com)" in msg
    assert f"registered as {cid}" in msg and "remove `rancher` and `pulumi up`" in msg and TOKEN not in msg
    after = run(set_key(copy.deepcopy(moved), "confirmClusterState", code_in(msg, "rancherurl")), base, stack="rke2-dev")
    assert after.outputs["rancherCluster"]["url"] == "https://rancher2.example.com"
    run(moved, after, stack="rke2-dev")  # the next update compares with the new address: nothing to confirm
    # The same address written with a trailing slash or another letter case is the same address.
    same = copy.deepcopy(cfg)
    same["rke-aws:rancher"] = stackfile.secret(json.dumps({"url": "https://Rancher.example.com/", "token": TOKEN}))
    run(same, base, stack="rke2-dev")
    # Registering anew (no earlier registration) says nothing about addresses.
    plain = run(harness.stack_config("rke2-dev"), stack="rke2-dev")
    run(moved, plain, stack="rke2-dev")


def test_the_rke1_kubeconfig_keeps_working_with_the_new_checks():
    # RKE1 registers through the kubeconfig; none of the checks above depends on the distribution's plan.
    r = run(with_rancher(set_key(harness.stack_config("rke-prod"), "kubeconfig", KUBECONFIG)), stack="rke-prod")
    assert r.of_type(CLUSTER)
