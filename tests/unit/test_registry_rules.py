"""`registry` and `airgap` (issue 35 items 1, 2 and "Bad input"): each problem refused before any resource,
naming the key, the value as written (never the password) and what is allowed.

Upstream facts these rules encode (research sheet 35 §1, §2, §8):
- rancher/rke2-docs docs/install/private_registry.md: a mirror endpoint is a URL, https unless `http://` is
  written; auth and tls are keyed by the mirror's host[:port]. docs/install/airgap.md: system-default-registry
  is only an RFC 3986 authority (host[:port]); an air-gapped node gets its images from a registry or tarballs.
- rancher/rke types/rke_types.go PrivateRegistry: url/user/password/is_default, no CA field.
- rancher/rke2 pkg/images, pkg/bootstrap: system-default-registry is not read by the upstream CCM and EBS CSI
  charts, SUC or Rancher's agent, so each of their registries needs a mirror.
"""

from __future__ import annotations

import json
import string
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.settings import registry_hosts, stackfile
from tests.support.configs import config_problems, parse_config, scenario_config, set_key
from tests.support.properties import examples

PASSWORD = "offline-placeholder"  # what the offline stack reader puts for the `secure:` password


@pytest.fixture
def airgap() -> dict[str, str]:
    return scenario_config("rke2-airgap")


def _section(cfg: dict[str, str], key: str) -> dict:
    return json.loads(cfg[f"rke-aws:{key}"])


def _with(cfg: dict[str, str], key: str, change: dict, secret: bool = False) -> dict[str, str]:
    section = {**_section(cfg, key), **change}
    section = {k: v for k, v in section.items() if v is not None}
    cfg[f"rke-aws:{key}"] = stackfile.secret(json.dumps(section)) if secret else json.dumps(section)
    return cfg


def test_the_air_gapped_fixture_is_valid(airgap):
    cfg = parse_config(airgap)
    assert cfg.airgap is not None and cfg.airgap.artifacts_bucket == "corp-rke2-artifacts"
    assert cfg.registry is not None and cfg.registry.password is not None


def test_a_registry_host_that_is_not_a_host_is_refused(airgap):
    mirrors = {**_section(airgap, "registry")["mirrors"], "docker hub": "https://registry.corp.example"}
    found = config_problems(_with(airgap, "registry", {"mirrors": mirrors}, secret=True))
    assert any(p.startswith("rke-aws:registry.mirrors.docker hub: ") and "is not a registry host" in p for p in found), found


def test_a_mirror_endpoint_that_is_not_a_url_is_refused(airgap):
    mirrors = {**_section(airgap, "registry")["mirrors"], "docker.io": "registry.corp.example"}
    found = config_problems(_with(airgap, "registry", {"mirrors": mirrors}, secret=True))
    assert any(p.startswith("rke-aws:registry.mirrors.docker.io: ") and "'registry.corp.example' is not a registry "
               "endpoint" in p for p in found), found


def test_credentials_over_plain_http_are_refused(airgap):
    mirrors = {**_section(airgap, "registry")["mirrors"], "docker.io": "http://registry.corp.example"}
    found = config_problems(_with(airgap, "registry", {"mirrors": mirrors}, secret=True))
    assert any("plain http" in p and "use https" in p for p in found), found
    assert all(PASSWORD not in p for p in found)


def test_a_plain_text_password_is_refused_without_showing_it(airgap):
    cfg = _with(airgap, "registry", {"password": "hunter2-not-secret"})
    found = config_problems(cfg, secret_keys=frozenset())
    assert any(p.startswith("rke-aws:registry.password: is stored as plain text") for p in found), found
    assert all("hunter2" not in p for p in found)


def test_username_without_password_is_refused(airgap):
    found = config_problems(_with(airgap, "registry", {"password": None}))
    assert any(p.startswith("rke-aws:registry.password: username and password go together") for p in found), found


def test_system_default_must_be_an_authority(airgap):
    found = config_problems(_with(airgap, "registry", {"systemDefault": "https://registry.corp.example"}, secret=True))
    assert any(p.startswith("rke-aws:registry.systemDefault") for p in found), found


def test_airgap_on_rke1_is_refused_naming_the_key(airgap):
    set_key(airgap, "distribution", "rke")
    set_key(airgap, "kubernetesVersion", "v1.32.7-rancher1-1")
    found = config_problems(airgap)
    assert any(p.startswith("rke-aws:airgap: applies to RKE2 only") for p in found), found


def test_airgap_with_a_public_pool_is_refused(airgap):
    pools = json.loads(airgap["rke-aws:nodePools"])
    pools[1]["subnet"] = "public"
    airgap["rke-aws:nodePools"] = json.dumps(pools)
    found = config_problems(airgap)
    assert any(p.startswith("rke-aws:nodePools[agents].subnet: 'public'") and "airgap" in p for p in found), found


@pytest.mark.parametrize("nat", ["single", "perAz"])
def test_airgap_with_nat_gateways_is_refused(airgap, nat):
    found = config_problems(_with(airgap, "network", {"natGateways": nat}))
    assert any(p.startswith(f"rke-aws:network.natGateways: '{nat}'") and "none" in p for p in found), found


def test_airgap_needs_no_nat_for_private_pools(airgap):
    """Without airgap natGateways none with private pools is refused (no way out for the downloads); with
    airgap it is the point."""
    parse_config(airgap)
    plain = dict(airgap)
    del plain["rke-aws:airgap"]
    assert any("needs a way out" in p for p in config_problems(plain))


def test_airgap_with_a_proxy_is_refused(airgap):
    set_key(airgap, "proxy", {"httpsProxy": "http://proxy.corp.example:3128"})
    found = config_problems(airgap)
    assert any(p.startswith("rke-aws:proxy: is a way out of the VPC") for p in found), found


def test_airgap_without_a_mirror_for_a_deployed_image_lists_what_it_pulls(airgap):
    mirrors = {k: v for k, v in _section(airgap, "registry")["mirrors"].items() if k != "public.ecr.aws"}
    found = config_problems(_with(airgap, "registry", {"mirrors": mirrors}, secret=True))
    ecr = [p for p in found if p.startswith("rke-aws:registry.mirrors.public.ecr.aws: missing")]
    assert len(ecr) == 1 and "ebs-csi driver" in ecr[0], found


def test_airgap_without_a_bucket_or_preinstalled_is_refused(airgap):
    found = config_problems(_with(airgap, "airgap", {"artifactsBucket": None, "artifactsPrefix": None}))
    assert any(p.startswith("rke-aws:airgap.artifactsBucket: missing") for p in found), found
    parse_config(_with(scenario_config("rke2-airgap"), "airgap", {"preinstalled": True}))


def test_preinstalled_still_needs_the_bucket_for_the_upgrade_controller_in_manifest_mode(airgap):
    """The servers apply system-upgrade-controller's manifests from the bucket (airgap_artifacts.suc_keys)
    instead of GitHub; with helm mode the machine running `pulumi up` applies them."""
    cfg = _with(airgap, "airgap", {"artifactsBucket": None, "artifactsPrefix": None, "preinstalled": True})
    found = config_problems(cfg)
    assert [p for p in found if p.startswith("rke-aws:airgap.artifactsBucket: missing; with preinstalled")], found
    parse_config(_with(cfg, "ccm", {"install": "helm"}))


def test_airgap_needs_a_chart_location(airgap):
    found = config_problems(_with(airgap, "registry", {"charts": None}, secret=True))
    assert any(p.startswith("rke-aws:registry.charts: missing") for p in found), found


def test_every_problem_at_once(airgap):
    set_key(airgap, "proxy", {"httpsProxy": "http://proxy.corp.example:3128"})
    _with(airgap, "network", {"natGateways": "single"})
    _with(airgap, "airgap", {"artifactsBucket": None, "artifactsPrefix": None})
    found = config_problems(airgap)
    assert {p.split(":")[1] for p in found} >= {"proxy", "network.natGateways", "airgap.artifactsBucket"}, found


# ---- the host parser against Python's own URL parser (not the program's pattern) ----------------------

_label = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=20).filter(lambda s: s[0] != "-")


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_label, min_size=1, max_size=4), st.one_of(st.none(), st.integers(1, 65535)))
def test_dns_names_with_a_port_are_registry_hosts(labels, port):
    host = ".".join(labels) + (f":{port}" if port else "")
    assert registry_hosts.is_registry_host(host)
    parts = urlsplit(f"https://{host}")
    assert parts.netloc == host and registry_hosts.mirror_authority(f"https://{host}/v2") == host
    assert parts.port == port


@settings(max_examples=examples(300), deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_whatever_is_accepted_parses_as_a_bare_authority(text):
    """Anything accepted is what urlsplit takes as the whole netloc of https://<text>, with no user info,
    path, query or fragment, and a port in range: a host containerd can dial."""
    if not registry_hosts.is_registry_host(text):
        return
    parts = urlsplit(f"https://{text}")
    assert parts.netloc == text and parts.path == "" and "@" not in text
    assert parts.hostname is not None
    _ = parts.port  # raises for a port out of range


@pytest.mark.parametrize("bad", ["", "docker io", "user@registry", "registry/path", "host:0", "host:65536",
                                 "-bad.example", "https://registry.example", "host:port"])
def test_not_hosts(bad):
    assert not registry_hosts.is_registry_host(bad)


def test_with_identity_an_air_gapped_cluster_must_mirror_the_webhook_images_registry(airgap):
    """The pod identity webhook's image is pinned on public.ecr.aws (settings/versions.py
    POD_IDENTITY_WEBHOOK_IMAGE): with identity on, a registry without a public.ecr.aws mirror leaves it unpullable."""
    mirrors = {k: v for k, v in _section(airgap, "registry")["mirrors"].items() if k != "public.ecr.aws"}
    without = _with(airgap, "registry", {"mirrors": mirrors}, secret=True)
    ecr = [p for p in config_problems(without) if p.startswith("rke-aws:registry.mirrors.public.ecr.aws: missing")]
    assert len(ecr) == 1 and "pod identity webhook" not in ecr[0], ecr
    with_identity = {**without, "rke-aws:identity": json.dumps({"serviceAccounts": "irsa"})}
    ecr = [p for p in config_problems(with_identity) if p.startswith("rke-aws:registry.mirrors.public.ecr.aws: missing")]
    assert len(ecr) == 1 and "pod identity webhook" in ecr[0], ecr
