"""A private registry (components/node/registries.py): RKE2's registries.yaml as rke2-docs
install/private_registry.md describes it, RKE1's private_registries as rancher/rke reads them, and which
images the program deploys need a mirror."""

from __future__ import annotations

import pytest
import yaml

from rke_aws.node import registries as reg
from rke_aws.settings import versions
from tests.support.rke2_keys import RKE2_AGENT_KEYS, RKE2_SERVER_KEYS

MIRRORS = {"docker.io": "https://registry.corp.example:5000", "registry.k8s.io": "https://registry.corp.example:5000",
           "public.ecr.aws": "https://registry.corp.example:5000/ecr"}


def test_auth_and_tls_are_keyed_by_the_mirror_s_host_not_the_upstream():
    """private_registry.md: mirror docker.io to https://registry.example.com:5000, auth goes under
    configs."registry.example.com:5000"."""
    doc = yaml.safe_load(reg.rke2_registries_yaml(MIRRORS, username="robot", has_password=True, ca_bundle=True))
    assert set(doc["configs"]) == {"registry.corp.example:5000"}
    entry = doc["configs"]["registry.corp.example:5000"]
    assert entry["auth"] == {"username": "robot", "password": reg.PASSWORD_PLACEHOLDER}
    assert entry["tls"] == {"ca_file": reg.REGISTRY_CA_PATH}
    assert "docker.io" not in doc["configs"]


def test_a_mirror_path_is_a_rewrite_of_the_repository():
    """containerd takes an endpoint as the registry's root; rewrites transform the name, never the tag."""
    doc = reg.rke2_registries(MIRRORS)
    assert doc["mirrors"]["public.ecr.aws"] == {"endpoint": ["https://registry.corp.example:5000"],
                                               "rewrite": {"^(.*)$": "ecr/$1"}}
    assert doc["mirrors"]["docker.io"] == {"endpoint": ["https://registry.corp.example:5000"]}
    # the same place RKE1 is told to pull from
    assert reg.rewrite_image("public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.64.0", MIRRORS) == \
        "registry.corp.example:5000/ecr/ebs-csi-driver/aws-ebs-csi-driver:v1.64.0"


def test_no_credentials_no_configs_and_no_placeholder():
    text = reg.rke2_registries_yaml({"docker.io": "https://mirror.example"})
    assert "configs" not in yaml.safe_load(text) and reg.PASSWORD_PLACEHOLDER not in text


def test_placeholder_is_quoted_as_the_boot_script_replaces_it():
    text = reg.rke2_registries_yaml(MIRRORS, username="u", has_password=True)
    assert text.count(reg.PASSWORD_PLACEHOLDER_YAML) == 1


def test_system_default_registry_is_valid_on_servers_and_agents():
    keys = reg.rke2_registry_config_keys("registry.corp.example:5000")
    assert set(keys) <= RKE2_AGENT_KEYS and set(keys) <= RKE2_SERVER_KEYS
    assert reg.rke2_registry_config_keys(None) == {}
    # it also needs the mirror's credentials: RKE2 pulls its own images from it by name
    doc = reg.rke2_registries({"docker.io": "https://a.example"}, username="u", has_password=True,
                              system_default="b.example:443")
    assert set(doc["configs"]) == {"a.example", "b.example:443"}


@pytest.mark.parametrize("mirrors, kwargs, fragment", [
    ({"docker io": "https://m.example"}, {}, "'docker io' is not a registry host"),
    ({"docker.io": "m.example"}, {}, "is not a registry endpoint"),
    ({"docker.io": "ftp://m.example"}, {}, "is not a registry endpoint"),
    ({"docker.io": "https://m.example:99999"}, {}, "is not a registry endpoint"),
    ({"docker.io": "https://m.example/?x=1"}, {}, "query"),
    ({"docker.io": "http://m.example"}, {"username": "u", "has_password": True}, "plain http"),
    ({"docker.io": "https://m.example"}, {"username": "u"}, "username and password go together"),
    ({"docker.io": "https://m.example"}, {"ca_bundle": "not a pem"}, "caBundle is not a PEM"),
    ({"docker.io": "https://m.example"}, {"system_default": "https://m.example"}, "RFC 3986 authority"),
])
def test_bad_registry_input_is_refused(mirrors, kwargs, fragment):
    problems = reg.registry_problems(mirrors, **kwargs)
    assert any(fragment in p for p in problems), problems


def test_good_registry_input():
    assert reg.registry_problems(MIRRORS, username="u", has_password=True,
                                 ca_bundle="-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
                                 system_default="registry.corp.example:5000") == []
    assert reg.registry_problems({"*": "http://10.0.0.5:5000"}) == []  # no credentials: plain http allowed


def test_every_deployed_image_needs_a_mirror_system_default_registry_does_not_cover_them():
    """None of the charts and manifests the program deploys read global.systemDefaultRegistry (rke2 bootstrap.go
    injects it into RKE2's own charts, and into user HelmCharts only with rke2.cattle.io/inject-cluster-config)."""
    missing = reg.unmirrored_images({})
    assert set(missing) == {"registry.k8s.io", "public.ecr.aws", "docker.io"}
    assert "cloud-controller-manager" in missing["registry.k8s.io"]
    assert {"system-upgrade-controller", "kubectl in upgrade jobs", "rke2-upgrade in Plans", "rancher agent"} <= \
        set(missing["docker.io"])
    assert reg.unmirrored_images(MIRRORS) == {}
    assert reg.unmirrored_images({"*": "https://all.example"}) == {}
    # RKE1 runs no system-upgrade-controller
    assert "system-upgrade-controller" not in reg.unmirrored_images({}, "rke")["docker.io"]


def test_deployed_images_follow_the_pinned_versions():
    repos = {i.repository for i in reg.DEPLOYED_IMAGES}
    assert versions.CCM_IMAGE_REPOSITORY in repos and f"docker.io/{versions.RKE2_UPGRADE_IMAGE}" in repos


@pytest.mark.parametrize("image, split", [
    ("rancher/rke2-upgrade", ("docker.io", "rancher/rke2-upgrade")),
    ("busybox", ("docker.io", "library/busybox")),
    ("registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.2", ("registry.k8s.io", "provider-aws/cloud-controller-manager:v1.35.2")),
    ("localhost/x", ("localhost", "x")),
    ("reg:5000/x/y", ("reg:5000", "x/y")),
])
def test_image_names_normalise_as_docker_does(image, split):
    assert reg.split_image(image) == split


def test_rke1_private_registries():
    """rancher/rke: the first is_default url prefixes RKE's default system images (Docker Hub images) as
    <url>/<image>; url has no scheme."""
    entries = reg.rke1_private_registries(MIRRORS, "robot", "pw")
    assert entries[0] == {"url": "registry.corp.example:5000", "user": "robot", "password": "pw", "is_default": True}
    assert entries[1] == {"url": "registry.corp.example:5000/ecr", "user": "robot", "password": "pw"}
    assert [e for e in entries if e.get("is_default")] == [entries[0]]
    assert reg.rke1_private_registries({"registry.k8s.io": "https://k.example"}) == [{"url": "k.example"}]


@pytest.mark.parametrize("version, airgap, written", [
    ("v1.33.5+rke2r1", True, True), ("v1.28.6+rke2r1", True, True), ("v1.29.0+rke2r1", True, True),
    ("v1.28.5+rke2r1", True, False), ("v1.26.12+rke2r1", True, False), ("v1.33.5+rke2r1", False, False),
])
def test_air_gapped_nodes_never_fall_back_to_the_public_registries(version, airgap, written):
    """rke2-docs install/private_registry.md "Default Endpoint Fallback": containerd tries a mirrored registry's
    public endpoint last unless `disable-default-registry-endpoint: true`, the setting for "a true air-gapped
    environment" (a server and agent key, reference/server_config.md, linux_agent_config.md; in rancher/rke2
    pkg/cli/cmds/agent.go and server.go from v1.26.13, v1.27.10, v1.28.6 and 1.29.0)."""
    from pathlib import Path

    from rke_aws.node import rke2_config as rc
    from rke_aws.plan.network import PlannedSubnet
    from rke_aws.plan.nodes import PlannedNode
    from rke_aws.settings import stackfile
    from rke_aws.settings.resolve import from_flat

    root = Path(__file__).resolve().parents[2]
    flat, secret_keys = stackfile.load_stack_text((root / "tests" / "stacks" / "Pulumi.rke2-airgap.yaml").read_text())
    cfg = from_flat(flat, project="rke-aws", stack="rke2-airgap", secret_keys=secret_keys)
    boot = rc.Rke2Boot(region="us-west-2", ssm_host="ssm.us-west-2.amazonaws.com", install_version=version,
                       endpoint="api.x.rke-aws.internal", server_ips=(), token_parameter="t", marker_parameter="m",
                       airgap=airgap)
    for pool, keys in zip(cfg.node_pools, (RKE2_SERVER_KEYS, RKE2_AGENT_KEYS), strict=True):
        node = PlannedNode(pool=pool, index=0, resource_name="n-0", private_ip="10.96.4.10",
                           name="ip-10-96-4-10.us-west-2.compute.internal", az="us-west-2a", az_index=0,
                           subnet=PlannedSubnet("private", 0, "us-west-2a", "10.96.0.0/20"), is_first_server=False,
                           rke2=True)
        doc = rc.rke2_config(node, boot)
        assert doc.get("disable-default-registry-endpoint") is (True if written else None), pool.name
        assert "disable-default-registry-endpoint" in keys
