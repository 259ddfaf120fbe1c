"""`proxy` (issue 26, feature 4): an HTTP(S) proxy that every download and SSM call of the boot scripts,
RKE2 (its /etc/default environment file), RKE1's Docker, the CCM and the EBS CSI driver go through, with
what always bypasses it; bad proxy URLs and credentials refused at config time; what a change does on day 2.

Upstream facts encoded here (briefs/facts-26.md section 5):
- rancher/rke2-docs docs/advanced.md "Configuring an HTTP proxy" (9477b7b1): HTTP_PROXY, HTTPS_PROXY and
  NO_PROXY in /etc/default/rke2-server or /etc/default/rke2-agent; CONTAINERD_-prefixed copies for
  containerd; rancher/rke2 bundle/lib/systemd/system/rke2-server.service (6ce1a801):
  `EnvironmentFile=-/etc/default/%N`.
- docs.docker.com/engine/daemon/proxy: a systemd drop-in `docker.service.d/http-proxy.conf` with
  `[Service] Environment="HTTP_PROXY=..."`.
- kubernetes/cloud-provider-aws chart 0.0.11 values.yaml `env: []`, templates/daemonset.yaml puts it on
  the container; kubernetes-sigs/aws-ebs-csi-driver (429e202e) values.yaml `proxy: {http_proxy, no_proxy}`
  and templates/_helpers.tpl "aws-ebs-csi-driver.http-proxy" (HTTP_PROXY and HTTPS_PROXY from http_proxy).
- aws/aws-sdk-go-v2 aws/transport/http/client.go: `Proxy: http.ProxyFromEnvironment`; Go bypasses only
  localhost and loopback by itself, so instance metadata (169.254.169.254) must be listed.
- RKE2's and RKE1's default pod and service networks: 10.42.0.0/16 and 10.43.0.0/16 (docs.rke2.io
  reference/server_config cluster-cidr / service-cidr; rancher/rke cluster/defaults.go).
"""

# split: this module mixes levels (issue 33 §7.2); the program runs -> tests/program; the boot script under stubs
# -> tests/tooling.

from __future__ import annotations

import copy
import json
import urllib.parse

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import proxy as proxy_plan
from rke_aws.settings import fields, stackconfig, stackfile
from rke_aws.settings.resolve import ProxyConfig
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.boot import boot, instances, rke2_parameters
from tests.support.charts import ebs_release_values
from tests.support.configs import config_problems as problems
from tests.support.configs import parse_config as parse
from tests.support.configs import set_key
from tests.support.runs import run_after_cached, run_cached, run_stack_cached
from tests.support.userdata import cloud_config

INSTANCE = "aws:ec2/instance:Instance"
RELEASE = "kubernetes:helm.sh/v3:Release"
PROXY = "http://proxy.corp.example:3128"
# Independent of the program's constants: the distributions' documented defaults.
POD_NETWORK, SERVICE_NETWORK = "10.42.0.0/16", "10.43.0.0/16"
ALWAYS = {"localhost", "127.0.0.1", "169.254.169.254", POD_NETWORK, SERVICE_NETWORK, ".svc", ".cluster.local"}
URL_RULE = "a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)"
ENTRY_RULE = "NO_PROXY entries: host names, .domain suffixes, IPv4 addresses or canonical CIDRs"


def with_proxy(cfg: dict, proxy) -> dict:
    return set_key(copy.deepcopy(cfg), "proxy", proxy)


def written(inst, path: str) -> str | None:
    return next((f["content"] for f in cloud_config(inst).get("write_files") or [] if f["path"] == path), None)


def env_file(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


# ---- config -------------------------------------------------------------------------------------------

def test_one_url_stands_for_both_and_the_users_entries_are_kept(base_config):
    cfg = parse(with_proxy(base_config, {"httpsProxy": PROXY, "noProxy": [".amazonaws.com", "10.9.0.0/16"]}))
    assert cfg.proxy == ProxyConfig(http_proxy=PROXY, https_proxy=PROXY, no_proxy=(".amazonaws.com", "10.9.0.0/16"))
    cfg = parse(with_proxy(base_config, {"httpProxy": "http://10.0.0.5:8080"}))
    assert cfg.proxy == ProxyConfig(http_proxy="http://10.0.0.5:8080", https_proxy="http://10.0.0.5:8080")
    both = parse(with_proxy(base_config, {"httpProxy": "http://a.example:80", "httpsProxy": "https://b.example:443/"}))
    assert (both.proxy.http_proxy, both.proxy.https_proxy) == ("http://a.example:80", "https://b.example:443/")
    assert parse(base_config).proxy is None


REFUSED = [
    ("scheme", {"httpsProxy": "socks5://proxy:1080"},
     f"rke-aws:proxy.httpsProxy: 'socks5://proxy:1080' has scheme socks5; the proxy variables take http or https; "
     f"expected {URL_RULE}"),
    ("no-scheme", {"httpsProxy": "proxy:3128"},
     f"rke-aws:proxy.httpsProxy: 'proxy:3128' has no scheme:// (write http://host:port); expected {URL_RULE}"),
    ("no-port", {"httpProxy": "http://proxy.corp.example"},
     "rke-aws:proxy.httpProxy: 'http://proxy.corp.example' has no :port, or something after the port (a path, query "
     f"or fragment); expected {URL_RULE}"),
    ("path", {"httpsProxy": "http://proxy:3128/pac"},
     "rke-aws:proxy.httpsProxy: 'http://proxy:3128/pac' has no :port, or something after the port (a path, query or "
     f"fragment); expected {URL_RULE}"),
    ("port-range", {"httpsProxy": "http://proxy:65536"},
     f"rke-aws:proxy.httpsProxy: 'http://proxy:65536' has port 65536 (1 to 65535); expected {URL_RULE}"),
    ("port-zero", {"httpsProxy": "http://proxy:0"},
     f"rke-aws:proxy.httpsProxy: 'http://proxy:0' has port 0 (1 to 65535); expected {URL_RULE}"),
    ("space", {"httpsProxy": "http://proxy :3128"},
     "rke-aws:proxy.httpsProxy: 'http://proxy :3128' has a space, a control or a non-ASCII character; "
     f"expected {URL_RULE}"),
    ("newline", {"httpsProxy": "http://proxy:3128\n"},
     '"http://proxy:3128\\n" has a space, a control or a non-ASCII character; '
     f"expected {URL_RULE}"),
    ("non-ascii", {"httpsProxy": "http://prøxy:3128"},
     'rke-aws:proxy.httpsProxy: "http://pr\\u00f8xy:3128" has a space, a control or a non-ASCII character; '
     f"expected {URL_RULE}"),
    ("upper-scheme", {"httpsProxy": "HTTP://proxy:3128"},
     f"rke-aws:proxy.httpsProxy: 'HTTP://proxy:3128' has scheme HTTP; the proxy variables take http or https; "
     f"expected {URL_RULE}"),
    ("bad-address", {"httpsProxy": "http://300.1.1.1:3128"},
     f"rke-aws:proxy.httpsProxy: 'http://300.1.1.1:3128' is not valid; expected {URL_RULE}"),
    ("not-a-string", {"httpsProxy": 3128},
     f"rke-aws:proxy.httpsProxy: 3128 is not a string; expected {URL_RULE}"),
    ("no-url", {"noProxy": [".corp.example"]},
     "rke-aws:proxy: sets no httpProxy or httpsProxy; give the proxy's URL, like "
     "{httpsProxy: http://proxy.example.com:3128}, or remove the proxy section"),
    ("typo", {"httpProxy": PROXY, "noproxy": ["x"]},
     "rke-aws:proxy.noproxy: unknown key; did you mean noProxy? allowed keys are httpProxy, httpsProxy, noProxy"),
    ("star", {"httpsProxy": PROXY, "noProxy": ["*"]},
     f"rke-aws:proxy.noProxy[0]: '*' would send nothing through the proxy; expected {ENTRY_RULE}"),
    ("wildcard", {"httpsProxy": PROXY, "noProxy": ["*.corp.example"]},
     "rke-aws:proxy.noProxy[0]: '*.corp.example' is a wildcard only Go reads; write the domain with a leading dot "
     f"(.example.com); expected {ENTRY_RULE}"),
    ("host-port", {"httpsProxy": PROXY, "noProxy": ["registry:5000"]},
     f"rke-aws:proxy.noProxy[0]: 'registry:5000' has a port, which only Go reads; expected {ENTRY_RULE}"),
    ("host-bits", {"httpsProxy": PROXY, "noProxy": ["10.1.2.3/16"]},
     f"rke-aws:proxy.noProxy[0]: '10.1.2.3/16' is not a canonical IPv4 CIDR; expected {ENTRY_RULE}"),
    ("comma", {"httpsProxy": PROXY, "noProxy": ["a.example,b.example"]},
     f"rke-aws:proxy.noProxy[0]: 'a.example,b.example' is not valid; expected {ENTRY_RULE}"),
    ("duplicate", {"httpsProxy": PROXY, "noProxy": [".corp.example", ".CORP.example"]},
     "rke-aws:proxy.noProxy[1]: '.CORP.example' is already listed as proxy.noProxy[0]; list each entry once"),
    ("too-many", {"httpsProxy": PROXY, "noProxy": [f"h{i}.example" for i in range(33)]},
     "rke-aws:proxy.noProxy: lists 33 entries; at most 32 (a .domain suffix covers every name under it)"),
    ("too-long", {"httpsProxy": PROXY, "noProxy": [f"{c * 63}.{c * 63}.{c * 63}" for c in "abcdefghijk"]},
     "rke-aws:proxy.noProxy: is 2111 characters joined; at most 2048 (it is written into every node's user data, "
     "which EC2 limits to 16 KiB)"),
    ("section-list", [PROXY],
     '["http://proxy.corp.example:3128"] is not an object; expected a map of proxy settings'),
]


@pytest.mark.parametrize("proxy, expected", [(p, e) for _, p, e in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_a_bad_proxy_is_refused_naming_the_key_the_value_and_what_is_allowed(base_config, proxy, expected):
    found = problems(with_proxy(base_config, proxy))
    assert len(found) == 1 and found[0].endswith(expected), found


@pytest.mark.parametrize("key", ["httpProxy", "httpsProxy"])
def test_credentials_are_refused_without_being_shown(base_config, key):
    """User data is readable with ec2:DescribeInstanceAttribute: no password may go there, nor into a message."""
    found = problems(with_proxy(base_config, {key: "http://alice:s3cr3t@proxy.corp.example:3128"}))
    assert found == [f"rke-aws:proxy.{key}: {fields.PROXY_CREDENTIALS}"], found
    assert "s3cr3t" not in " ".join(found) and "alice" not in " ".join(found)


def test_a_secret_proxy_is_refused_without_being_read(base_config):
    cfg = copy.deepcopy(base_config)
    cfg["rke-aws:proxy"] = stackfile.secret(json.dumps({"httpsProxy": "http://bob:pw@proxy:3128"}))
    found = problems(cfg)
    assert found == [f"rke-aws:proxy: {stackconfig.PROXY_SECRET}"], found
    assert "pw@" not in found[0]


def test_the_refused_program_registers_nothing(base_config):
    mocks = MotoMocks("us-east-1")
    import pulumi
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(with_proxy(base_config, {"httpsProxy": "http://u:p@proxy:3128"}), stack="test", mocks=mocks)
    assert "rke-aws:proxy.httpsProxy: holds credentials" in str(info.value)
    assert mocks.resources == []


# What curl and Go would make of an accepted URL, read by Python's own URL parser (not the program's rule).
URL_RE = __import__("re").compile(fields.PROXY_URL_PATTERN)


def _sound(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    assert parts.scheme in ("http", "https"), url
    assert parts.hostname and parts.port is not None and 1 <= parts.port <= 65535, url
    assert parts.username is None and parts.password is None, url
    assert parts.path in ("", "/") and not parts.query and not parts.fragment, url
    assert url.isascii() and not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url), url
    assert len(parts.hostname) <= 253 and ",".join([url]).count(",") == 0, url


@settings(max_examples=300, deadline=None)
@given(st.from_regex(URL_RE))
def test_every_url_the_pattern_accepts_has_a_scheme_a_host_and_a_port(url):
    _sound(url)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("htps:/@.-_ 0123456789abcXYZ%?#\n")), max_size=40).map(lambda s: "http://" + s))
def test_near_misses_the_pattern_accepts_are_sound_too(url):
    if URL_RE.search(url):
        _sound(url)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(__import__("re").compile(fields.NO_PROXY_ITEM_PATTERN)))
def test_no_proxy_entries_are_one_comma_free_ascii_word(entry):
    assert entry.isascii() and "," not in entry and not any(c.isspace() for c in entry)
    assert entry != "*" and not entry.startswith("*") and ":" not in entry


# ---- what bypasses the proxy ----------------------------------------------------------------------------

def test_no_proxy_always_holds_the_cluster_and_then_the_users_entries():
    env = proxy_plan.proxy_env(ProxyConfig(http_proxy=PROXY, https_proxy=PROXY, no_proxy=(".amazonaws.com", "LOCALHOST")), ("10.5.0.0/16",),
                               "api.c.rke-aws.internal")
    assert ALWAYS | {"10.5.0.0/16", "api.c.rke-aws.internal", ".amazonaws.com"} <= set(env.no_proxy)
    assert env.no_proxy[-1] == ".amazonaws.com" and "LOCALHOST" not in env.no_proxy  # listed once
    assert env.variables() == {"HTTP_PROXY": PROXY, "HTTPS_PROXY": PROXY, "NO_PROXY": ",".join(env.no_proxy)}
    # curl reads only the lower-case http_proxy (httpoxy); wget and apt the lower-case ones.
    assert {"http_proxy", "https_proxy", "no_proxy", "HTTPS_PROXY"} <= set(env.shell_variables())
    assert proxy_plan.proxy_env(None, ("10.5.0.0/16",), "x") is None


# ---- the program, per distribution and mode ---------------------------------------------------------------

@pytest.fixture(scope="module")
def manifest_run() -> harness.ProgramRun:
    return run_stack_cached("rke2-proxy")  # RKE2, ccm.install manifest, EBS CSI, proxy


def _check_node_env(run: harness.ProgramRun, vpc_cidr: str) -> None:
    expected_no_proxy = ALWAYS | {vpc_cidr, run.outputs["kubernetesApiUrl"].split("//")[1].split(":")[0]}
    for inst in run.of_type(INSTANCE):
        script = written(inst, "/usr/local/sbin/rke-aws-bootstrap")
        for var in ("HTTPS_PROXY", "https_proxy", "http_proxy", "NO_PROXY", "no_proxy"):
            assert f"\nexport {var}='" in script, f"{inst.urn}: {var} not exported by the boot script"
        if run.outputs["distribution"] == "rke2":
            server = "worker" != inst.inputs["tags"]["rke-aws/roles"]
            kind = "server" if server else "agent"
            text = written(inst, f"/etc/default/rke2-{kind}")
            assert text is not None and written(inst, f"/etc/default/rke2-{'agent' if server else 'server'}") is None
            env = env_file(text)
            assert env["HTTPS_PROXY"] == env["CONTAINERD_HTTPS_PROXY"] == PROXY, inst.urn
            assert env["HTTP_PROXY"] == env["CONTAINERD_HTTP_PROXY"] == PROXY, inst.urn
            assert env["NO_PROXY"] == env["CONTAINERD_NO_PROXY"]
            assert expected_no_proxy <= set(env["NO_PROXY"].split(",")), (inst.urn, env["NO_PROXY"])
            sync = written(inst, "/usr/local/sbin/rke-aws-sync-manifests")
            if sync is not None:
                assert f"\nexport https_proxy='{PROXY}'" in sync, f"{inst.urn}: the manifest sync calls SSM without it"
        # Session Manager: the SSM agent's drop-in (a Go program: the upper-case variables).
        agent = written(inst, "/etc/systemd/system/snap.amazon-ssm-agent.amazon-ssm-agent.service.d/http-proxy.conf")
        assert agent is not None and f'Environment="HTTPS_PROXY={PROXY}"' in agent, inst.urn
        assert "169.254.169.254" in agent, inst.urn
        assert 'systemctl restart "$SSM_AGENT_UNIT"' in script, inst.urn
        if run.outputs["distribution"] == "rke":
            drop_in = written(inst, "/etc/systemd/system/docker.service.d/http-proxy.conf")
            assert drop_in is not None and drop_in.startswith("[Service]\n"), inst.urn
            env = dict(line[len('Environment="'):-1].split("=", 1) for line in drop_in.splitlines()[1:])
            assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == PROXY
            assert expected_no_proxy <= set(env["NO_PROXY"].split(","))
            assert "DOCKER_PROXY='yes'" in script


def _ccm_env(run: harness.ProgramRun) -> dict[str, str]:
    values = run.outputs["ccmValues"]
    return {e["name"]: e["value"] for e in values.get("env") or []}


def test_rke2_manifest_mode_nodes_ccm_and_ebs_csi_go_through_the_proxy(manifest_run):
    run = manifest_run
    _check_node_env(run, "10.80.0.0/16")
    # What the servers mirror is what the CCM and the driver get.
    params = {p.inputs["name"]: p for p in run.of_type("aws:ssm/parameter:Parameter")}
    ccm = yaml.safe_load(params["/rke-aws/rke2-proxy/manifests/ccm.yaml"].inputs["insecureValue"])
    env = {e["name"]: e["value"] for e in yaml.safe_load(ccm["spec"]["valuesContent"])["env"]}
    assert env["HTTPS_PROXY"] == PROXY and ALWAYS <= set(env["NO_PROXY"].split(","))
    assert env == _ccm_env(run)
    ebs = ebs_release_values(run)["proxy"]
    assert ebs["http_proxy"] == PROXY and ebs["no_proxy"] == env["NO_PROXY"]
    assert run.outputs["proxy"] == env


@pytest.mark.parametrize("stack", ["rke2-prod", "rke-prod"])
def test_helm_mode_releases_and_nodes_go_through_the_proxy(stack):
    cfg = harness.stack_config(stack)
    cfg["rke-aws:kubeconfig"] = "apiVersion: v1\nkind: Config\n"
    set_key(cfg, "proxy", {"httpsProxy": PROXY})
    set_key(cfg, "addons", {"ebsCsi": True})
    run = harness.run_program(cfg, stack=stack, secret_keys=["rke-aws:kubeconfig"])
    _check_node_env(run, json.loads(cfg["rke-aws:network"]).get("vpcCidr", fields.DEFAULT_VPC_CIDR))
    (ccm,) = [r for r in run.of_type(RELEASE) if r.inputs["chart"] == "aws-cloud-controller-manager"]
    env = {e["name"]: e["value"] for e in ccm.inputs["values"]["env"]}
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == PROXY and "169.254.169.254" in env["NO_PROXY"].split(",")
    assert ebs_release_values(run)["proxy"] == {"http_proxy": PROXY, "no_proxy": env["NO_PROXY"]}


def test_a_brought_vpcs_cidr_blocks_bypass_the_proxy(base_config):
    from tests.support.configs import _byo_config, _existing_subnets
    cfg = with_proxy(_byo_config(base_config), {"httpsProxy": PROXY})
    run = harness.run_program(cfg, stack="test", mocks=MotoMocks("us-east-1", existing_subnets=_existing_subnets()))
    # The brought VPC's block (the emulated account gives it the /16 around its subnets, 10.50.x.0/20).
    assert {lk.result["cidrBlock"] for lk in run.lookups if lk.token == "aws:ec2/getVpc:getVpc"} == {"10.50.0.0/16"}
    assert "10.50.0.0/16" in run.outputs["proxy"]["NO_PROXY"].split(",")


def test_without_a_proxy_nothing_names_one(base_config):
    run = run_cached(base_config, stack="test")  # the base config's first run, shared
    for inst in run.of_type(INSTANCE):
        text = json.dumps(cloud_config(inst))
        assert "PROXY=" not in text.upper() and "PROXY='" not in text.upper(), inst.urn
        assert not [f for f in cloud_config(inst)["write_files"] if f["path"].startswith("/etc/default/")]
    assert "env" not in run.outputs["ccmValues"] and "proxy" not in run.outputs


# ---- the boot script, run ----------------------------------------------------------------------------------

def test_ssm_calls_and_downloads_go_through_the_proxy_metadata_and_peers_never(manifest_run, tmp_path):
    run = manifest_run
    nodes = instances(run)
    first = next(i for n, i in nodes.items() if "server:" not in written(i, "/etc/rancher/rke2/config.yaml"))
    b = boot(first, tmp_path, rke2_parameters(run))
    assert b.returncode == 0, b.stderr
    ssm = [c for c in b.calls if c["target"]]
    peers = [c for c in b.calls if (c["url"] or "").endswith("/cacerts")]
    downloads = [c for c in b.calls if not c["target"] and c not in peers and "169.254.169.254" not in (c["url"] or "")]
    assert ssm and peers and downloads
    for c in ssm + downloads:
        assert c.get("https_proxy") == PROXY and c.get("http_proxy") == PROXY, c
        assert "169.254.169.254" in c["no_proxy"].split(","), c
    for c in peers:
        assert c.get("noproxy") == "*", f"the supervisor probe of a peer may go to the proxy: {c}"


def test_metadata_calls_bypass_any_proxy():
    from rke_aws.node import scripts
    for line in scripts.fragment("ssm").splitlines():
        if "curl " in line and "$IMDS" in line or "imds_token=$(curl" in line or "=$(curl --noproxy" in line:
            assert "--noproxy '*'" in line, line


# ---- day 2 --------------------------------------------------------------------------------------------------

def test_a_changed_proxy_reaches_new_nodes_and_says_what_running_ones_keep(base_config):
    before = harness.run_program(with_proxy(base_config, {"httpsProxy": PROXY}), stack="day2")
    new = "http://proxy2.corp.example:8080"
    after = harness.run_program(with_proxy(base_config, {"httpsProxy": new}), stack="day2",
                                previous_outputs=before.outputs)
    (warning,) = [m for lvl, m in after.logs if lvl == "warning" and m.startswith("rke-aws:proxy:")]
    assert f"{PROXY} (NO_PROXY" in warning and f"-> {new}" in warning and "until replaced" in warning
    # Running instances are neither replaced nor updated (their user data is ignored on update).
    old = {i.name: i for i in before.of_type(INSTANCE)}
    for inst in after.of_type(INSTANCE):
        assert {"userData", "userDataBase64"} <= set(inst.ignore_changes), inst.urn
        assert inst.name in old
    assert after.outputs["proxy"]["HTTPS_PROXY"] == new
    # The same proxy again: nothing to say. Removing it: said too.
    again = harness.run_program(with_proxy(base_config, {"httpsProxy": new}), stack="day2",
                                previous_outputs=after.outputs)
    assert not [m for lvl, m in again.logs if m.startswith("rke-aws:proxy:")]
    gone = harness.run_program(base_config, stack="day2", previous_outputs=after.outputs)
    (warning,) = [m for lvl, m in gone.logs if lvl == "warning" and m.startswith("rke-aws:proxy:")]
    assert "-> no proxy" in warning


def test_adding_a_proxy_to_a_stack_from_before_the_option_warns(base_config):
    before = run_cached(base_config, stack="day2")
    after = run_after_cached(with_proxy(base_config, {"httpsProxy": PROXY}), before, "day2")
    (warning,) = [m for lvl, m in after.logs if lvl == "warning" and m.startswith("rke-aws:proxy:")]
    assert warning.startswith(f"rke-aws:proxy: no proxy -> {PROXY}")


def test_the_review_shows_the_proxy_a_node_boots_with(manifest_run):
    from rke_aws_offline.report.review import review_inputs
    for inst in manifest_run.of_type(INSTANCE):
        shown = review_inputs(inst)["userDataBase64"]["bootSettings"]
        assert shown["HTTPS_PROXY"] == PROXY and "169.254.169.254" in shown["NO_PROXY"], inst.urn


def test_rke1_docker_is_restarted_with_its_proxy_drop_in_read(base_config, tmp_path):
    """The Docker package may start the daemon before systemd has read the drop-in: the boot script reloads
    systemd and restarts Docker, and the install script runs with the proxy in its environment."""
    import os
    import subprocess
    from pathlib import Path

    from rke_aws.settings import versions
    from tests.support.boot import STUBS

    cfg = harness.stack_config("rke-prod")
    set_key(cfg, "proxy", {"httpsProxy": PROXY})
    inst = harness.run_program(cfg, stack="rke-prod").of_type(INSTANCE)[0]
    root = tmp_path / "root"
    for f in cloud_config(inst)["write_files"]:
        path = root / f["path"].lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f["content"])
    extra = tmp_path / "bin"
    extra.mkdir()
    for tool in ("modprobe", "sysctl", "usermod"):
        (extra / tool).write_text("#!/bin/sh\nexit 0\n")
        (extra / tool).chmod(0o755)
    url = f"https://releases.rancher.com/install-docker/{versions.RKE_DOCKER_VERSION}.sh"
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"parameters": {}, "serving": [], "denied": [], "ssm_host": "", "users": [],
                                 "page_size": 10, "indent": None, "online_at": None,
                                 "downloads": {url: 'printf "%s" "$https_proxy" > "$RKE_AWS_ROOT/install-saw"\n'}}))
    log = tmp_path / "calls.log"
    env = {"PATH": f"{extra}:{STUBS}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_STATE": str(state),
           "STUB_LOG": str(log), "RKE_AWS_ROOT": str(root), "RKE_AWS_RETRY_SECONDS": "1", "RKE_AWS_RETRY_DELAY": "0"}
    proc = subprocess.run(["sh", str(root / "usr/local/sbin/rke-aws-bootstrap")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = Path(f"{log}.systemctl").read_text().splitlines()
    agent = "snap.amazon-ssm-agent.amazon-ssm-agent.service"
    # First the SSM agent with its drop-in, then Docker once installed.
    assert calls == ["systemctl daemon-reload", f"systemctl is-active --quiet {agent}", f"systemctl restart {agent}",
                     "systemctl daemon-reload", "systemctl restart docker", "systemctl enable --now docker"], calls
    assert (root / "install-saw").read_text() == PROXY
    assert os.path.exists(root / "etc/systemd/system/docker.service.d/http-proxy.conf")


def test_an_https_proxy_warns_that_session_manager_does_not_take_it(base_config):
    cfg = parse(with_proxy(base_config, {"httpsProxy": "https://proxy.corp.example:443"}))
    assert [w for w in cfg.warnings if w.startswith("rke-aws:proxy: an https:// proxy")], cfg.warnings
    assert parse(with_proxy(base_config, {"httpsProxy": PROXY})).warnings == ()
    off = set_key(with_proxy(base_config, {"httpsProxy": "https://proxy.corp.example:443"}), "access", {"ssm": False})
    assert parse(off).warnings == ()
