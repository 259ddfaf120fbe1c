"""The generated boot scripts, run: each node's cloud-init files are written into a scratch root and
its boot script executed with stand-ins for curl (IMDS, SSM, the supervisor probe, downloads),
systemctl and sleep (tests/support/stubs/). What matters is which path a script takes: a first server
initialises a cluster only when none exists, and joins one otherwise.

Also: shellcheck on every generated script, and cloud-init's own schema on every user data.
"""

# split: this module mixes levels (issue 33 §7.2); the user-data checks -> tests/unit/node, the program runs ->
# tests/program/test_user_data.py.

from __future__ import annotations

import json
import os
import re
import stat
import subprocess

import jsonschema
import pytest
import yaml

from rke_aws.node import rke2_config, scripts
from rke_aws.plan.lookups import published_kubeconfig_problem
from rke_aws_offline.engine import harness
from tests.support import upstream
from tests.support.boot import (
    INSTANCE,
    STUBS,
    boot,
    first_server,
    rke2_parameters,
)
from tests.support.runs import STACKS, run_stack_cached
from tests.support.shell import clean_verdicts, shellcheck, shellcheck_each
from tests.support.userdata import cloud_config, server_ips

SCHEMA = upstream.CLOUD_INIT_SCHEMA  # cloud-init's own schema, stored in the repository


@pytest.fixture(scope="module")
def prod() -> harness.ProgramRun:
    """An RKE2 cluster of three servers and agents with their own token: a fixture stack (tests/stacks),
    so that what a user puts in stacks/ cannot change what these tests see."""
    return run_stack_cached("rke2-govcloud")


# ---- the first server: initialise only when no cluster exists ----------------------------------

def test_first_server_initialises_a_new_cluster_and_writes_the_marker(prod, tmp_path):
    first = first_server(prod)
    b = boot(first, tmp_path, rke2_parameters(prod))
    assert b.returncode == 0, b.stderr
    assert b.config_at_start is not None and "server" not in b.config_at_start, \
        f"{first.urn}: RKE2 started on the init path with a server: key"
    # Afterwards it is a member like the others: were its etcd data dropped (member removed), RKE2
    # would otherwise initialise a second, empty cluster on restart (k3s-io/k3s#13623).
    assert b.config()["server"] == f"https://{prod.outputs['controlPlaneEndpoint']}:9345", \
        f"{first.urn}: no join address for later restarts: {b.config()}"
    assert "no cluster exists yet: initialising it" in b.stderr
    assert [c for c in b.systemctl if " rke2-" in c] == ["systemctl enable --now rke2-server.service"], b.systemctl
    marker = b.state["parameters"][prod.outputs["rke2InitMarkerParameter"]]
    assert marker.startswith(f"initialized by {first.inputs['tags']['Name']} at "), marker
    assert b.installed == f"server {prod.outputs['kubernetesVersion']}", b.installed
    # The admin kubeconfig, pointed at the endpoint, encrypted with the cluster's own key.
    (put,) = [p for p in b.state["puts"] if p["Name"] == prod.outputs["rke2KubeconfigParameter"]]
    (alias,) = prod.of_type("aws:kms/alias:Alias")
    (param,) = [p for p in prod.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"] == put["Name"]]
    assert put["Type"] == "SecureString" and put["KeyId"] == alias.inputs["name"] == param.inputs["keyId"], put
    assert put["Tier"] == param.inputs["tier"] == "Advanced" and put["Overwrite"] is True, put
    assert f"server: https://{prod.outputs['controlPlaneEndpoint']}:6443" in put["Value"], put["Value"]
    # What the first server publishes is what the next `pulumi up` accepts (components/plan/lookups.py).
    assert published_kubeconfig_problem(put["Value"], prod.outputs["kubernetesApiUrl"]) is None
    token = b.root / b.config_at_start["token-file"].lstrip("/")
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert token.read_text() == rke2_parameters(prod)[prod.outputs["rke2TokenParameter"]], "not the server token"
    assert not list(b.root.rglob("*.tmp")), "a .tmp file was left behind"


def test_replaced_first_server_joins_when_the_marker_says_initialised(prod, tmp_path):
    """The README's server replacement: fresh disk, same user data. It must not start a second cluster."""
    first = first_server(prod)
    b = boot(first, tmp_path, rke2_parameters(prod, marker="initialized by ip-10-40-0-10 at 2026-01-01T00:00:00Z"))
    assert b.returncode == 0, b.stderr
    endpoint = prod.outputs["controlPlaneEndpoint"]
    assert b.config_at_start["server"] == f"https://{endpoint}:9345", b.config_at_start
    assert "joining" in b.stderr
    assert b.state["parameters"][prod.outputs["rke2InitMarkerParameter"]].startswith("initialized by ip-10-40-0-10"), \
        "the join path rewrote the marker"
    assert [c for c in b.systemctl if " rke2-" in c] == ["systemctl enable --now rke2-server.service"]


def test_first_server_joins_when_another_server_answers_even_without_marker(prod, tmp_path):
    first = first_server(prod)
    peer = next(ip for ip in server_ips(prod) if ip != first.inputs["privateIp"])
    b = boot(first, tmp_path, rke2_parameters(prod), serving=[peer])
    assert b.returncode == 0, b.stderr
    assert "server" in b.config_at_start and "another server answers" in b.stderr
    probed = [c["url"] for c in b.calls if c["url"].endswith("/cacerts")]
    assert f"https://{first.inputs['privateIp']}:9345/cacerts" not in probed, "probed itself"


def test_unreadable_marker_stops_the_boot_instead_of_initialising(prod, tmp_path):
    first = first_server(prod)
    b = boot(first, tmp_path, rke2_parameters(prod), denied=[prod.outputs["rke2InitMarkerParameter"]])
    assert b.returncode != 0
    assert not b.systemctl and not b.installed, "RKE2 started although the marker could not be read"
    assert "AccessDeniedException" in b.stderr, "SSM's error text is not in the boot log"


# ---- other nodes -------------------------------------------------------------------------------

def test_other_servers_and_agents_join_the_endpoint(prod, tmp_path):
    endpoint = prod.outputs["controlPlaneEndpoint"]
    first = first_server(prod)
    params = rke2_parameters(prod)
    assert params[prod.outputs["rke2TokenParameter"]] != params[prod.outputs["rke2AgentTokenParameter"]]
    for i, inst in enumerate(i for i in prod.of_type(INSTANCE) if i is not first):
        b = boot(inst, tmp_path / str(i), params)
        assert b.returncode == 0, f"{inst.urn}: {b.stderr}"
        cfg = b.config_at_start
        assert cfg is not None and cfg["server"] == f"https://{endpoint}:9345", inst.urn
        kind = "agent" if inst.inputs["tags"]["rke-aws/roles"] == "worker" else "server"
        assert b.systemctl[0] == f"systemctl enable --now rke2-{kind}.service", inst.urn
        assert not any("PutParameter" in c["target"] for c in b.calls), f"{inst.urn} wrote the marker"
        read = {json.loads(c["data"])["Name"] for c in b.calls if c["target"].endswith("GetParameter")}
        # What RKE2 reads as its token is the token of its kind: a server holding the agent token
        # cannot join the servers (domain.md section 6: token and agent-token differ).
        own = prod.outputs["rke2AgentTokenParameter" if kind == "agent" else "rke2TokenParameter"]
        assert (b.root / cfg["token-file"].lstrip("/")).read_text() == params[own], f"{inst.urn}: {cfg['token-file']}"
        if kind == "agent":
            assert read == {prod.outputs["rke2AgentTokenParameter"]}, f"{inst.urn} read {read}"
        else:
            assert prod.outputs["rke2TokenParameter"] in read, inst.urn


def test_token_failure_leaves_nothing_and_logs_ssm_error(prod, tmp_path):
    agent = next(i for i in prod.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker")
    b = boot(agent, tmp_path, rke2_parameters(prod), denied=[prod.outputs["rke2AgentTokenParameter"]])
    assert b.returncode != 0 and not b.installed and not b.systemctl
    assert "not authorized to perform ssm:GetParameter" in b.stderr
    # The node's log holds SSM's own error once per try, never python3's traceback on an empty answer.
    assert "Traceback" not in b.stderr, b.stderr
    assert not list(b.root.rglob("*agent-token*")), "a token file (or .tmp) was left behind"


def test_an_empty_token_is_refused(prod, tmp_path):
    """An empty answer is no token: the boot stops before RKE2 is installed with it. (SSM never
    stores an empty value, PutParameter's Value has a minimum length of 1, so an empty answer means
    something else went wrong.)"""
    agent = next(i for i in prod.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker")
    params = rke2_parameters(prod)
    params[prod.outputs["rke2AgentTokenParameter"]] = ""
    b = boot(agent, tmp_path, params)
    assert b.returncode != 0 and not b.installed and not b.systemctl, b.stderr
    assert "is empty" in b.stderr and not list(b.root.rglob("*agent-token*"))


def test_the_ssm_stand_in_keeps_ssms_limits(tmp_path):
    """tests/support/stubs/curl refuses what SSM refuses (API reference: GetParametersByPath MaxResults 1-10,
    PutParameter Value at least 1 character), so a script that asked for more would fail here too."""
    state, log = tmp_path / "state.json", tmp_path / "log"
    state.write_text(json.dumps({"parameters": {"/p/a": "x"}}))

    def ssm(action: str, body: dict) -> subprocess.CompletedProcess:
        return subprocess.run([str(STUBS / "curl"), "--fail-with-body", "-H", f"X-Amz-Target: AmazonSSM.{action}",
                               "--user", "AKIA:secret", "-H", "x-amz-security-token: session",
                               "--data", json.dumps(body), "https://ssm.us-east-1.amazonaws.com/"],
                              env={"STUB_STATE": str(state), "STUB_LOG": str(log), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=30)
    assert ssm("GetParametersByPath", {"Path": "/p", "MaxResults": 10}).returncode == 0
    for bad in (11, 50, 0):
        proc = ssm("GetParametersByPath", {"Path": "/p", "MaxResults": bad})
        assert proc.returncode != 0 and "ValidationException" in proc.stdout, bad
    unsigned = subprocess.run([str(STUBS / "curl"), "--fail-with-body", "-H", "X-Amz-Target: AmazonSSM.GetParameter",
                               "--user", "AKIA:session", "-H", "x-amz-security-token: secret",
                               "--data", json.dumps({"Name": "/p/a"}), "https://ssm.us-east-1.amazonaws.com/"],
                              env={"STUB_STATE": str(state), "STUB_LOG": str(log), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=30)
    assert unsigned.returncode != 0 and "UnrecognizedClientException" in unsigned.stdout, "keys in the wrong places"
    proc = ssm("PutParameter", {"Name": "/p/b", "Value": "", "Type": "String"})
    assert proc.returncode != 0 and "ValidationException" in proc.stdout


def test_boot_uses_the_partitions_ssm_endpoint(tmp_path):
    # Air-gapped stacks also fetch from S3: their boot runs with S3 served in tests/unit/test_node_boot.py.
    for stack in [s for s in STACKS if harness.stack_config(s)["rke-aws:distribution"] == "rke2"
                  and "rke-aws:airgap" not in harness.stack_config(s)]:
        run = run_stack_cached(stack)
        region = run.outputs["region"]
        suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
        # Ubuntu agents: the base stubs are Ubuntu's (other OSes boot against their package managers' stubs in
        # tests/tooling/test_os_boot.py, partitions included).
        pools = json.loads(harness.stack_config(stack).get("rke-aws:nodePools", "[]"))
        other = {p["name"] for p in pools if p.get("os", "ubuntu-24.04") != "ubuntu-24.04"}
        agent = next((i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker"
                      and i.inputs["tags"]["rke-aws/pool"] not in other), None)
        if agent is None:
            continue
        b = boot(agent, tmp_path / stack, rke2_parameters(run), ssm_host=f"ssm.{region}.{suffix}")
        assert b.returncode == 0, f"{stack}: {b.stderr}"
        assert all(c["sigv4"] == f"aws:amz:{region}:ssm" for c in b.calls if c["target"]), stack


# ---- manifest mode: servers mirror the manifests from SSM ------------------------------------------

def test_manifest_sync_mirrors_adds_updates_and_removes(tmp_path):
    run = run_stack_cached("rke2-dev")  # ccm.install: manifest
    path = run.outputs["rke2ManifestPath"]
    server = first_server(run)
    params = rke2_parameters(run)
    b = boot(server, tmp_path / "first", params)
    assert b.returncode == 0, b.stderr
    manifests = b.root / rke2_config.RKE2_MANIFESTS_DIR.lstrip("/")
    files = sorted(p.name for p in manifests.iterdir() if not p.name.endswith(".source"))
    expected = sorted(f"rke-aws-{k.rsplit('/', 1)[1]}".removesuffix(".url") + (".yaml" if k.endswith(".url") else "")
                      for k in params if k.startswith(path + "/"))
    assert files == expected, files
    helm_chart = yaml.safe_load((manifests / "rke-aws-ccm.yaml").read_text())
    assert helm_chart["kind"] == "HelmChart"
    assert "systemctl enable --now rke-aws-sync-manifests.timer" in b.systemctl
    # The sync ran before RKE2 started, so the first start applies the manifests: they were all in
    # RKE2's manifests directory at the moment it was started.
    assert b.manifests_at_start is not None and sorted(b.manifests_at_start) == sorted(
        p.name for p in manifests.iterdir()), (b.manifests_at_start, files)

    # A later run of the timer: one manifest changed, one gone.
    state = json.loads((tmp_path / "first" / "state.json").read_text())
    state["parameters"][f"{path}/ccm.yaml"] = "kind: Changed\n"
    del state["parameters"][f"{path}/upgrade-plans.yaml"]
    (tmp_path / "first" / "state.json").write_text(json.dumps(state))
    env = {"PATH": f"{STUBS}:/usr/bin:/bin", "STUB_STATE": str(tmp_path / "first" / "state.json"),
           "STUB_LOG": str(tmp_path / "first" / "calls.log"), "RKE_AWS_ROOT": str(b.root),
           "RKE_AWS_RETRY_SECONDS": "1", "RKE_AWS_RETRY_DELAY": "0"}
    proc = subprocess.run(["sh", str(b.root / scripts.SYNC_PATH.lstrip("/"))], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (manifests / "rke-aws-ccm.yaml").read_text() == "kind: Changed\n"
    assert not (manifests / "rke-aws-upgrade-plans.yaml").exists(), "a removed manifest stayed"


def test_manifest_sync_reads_every_page(tmp_path):
    """SSM answers GetParametersByPath in pages; a sync that read one page would delete the rest."""
    run = run_stack_cached("rke2-dev")  # ccm.install: manifest
    path = run.outputs["rke2ManifestPath"]
    params = rke2_parameters(run)
    for i in range(12):  # more than one page of 10
        params[f"{path}/extra-{i:02d}.yaml"] = f"kind: Extra{i}\n"
    b = boot(first_server(run), tmp_path, params, page_size=3, indent=2)
    assert b.returncode == 0, b.stderr
    manifests = b.root / rke2_config.RKE2_MANIFESTS_DIR.lstrip("/")
    got = {p.name for p in manifests.iterdir() if p.name.startswith("rke-aws-extra-")}
    assert got == {f"rke-aws-extra-{i:02d}.yaml" for i in range(12)}, sorted(got)
    pages = [c for c in b.calls if c["target"] == "AmazonSSM.GetParametersByPath"]
    assert len(pages) >= 5, len(pages)


# ---- static checks on every generated script and user data ---------------------------------------

def test_every_generated_script_passes_shellcheck(stack_run, tmp_path, tmp_path_factory):
    seen: dict[str, str] = {}  # each distinct script: where it was found first
    for inst in stack_run.of_type(INSTANCE):
        for f in cloud_config(inst).get("write_files") or []:
            if f["content"].startswith("#!/bin/sh") and f["content"] not in seen:
                seen[f["content"]] = f"{inst.urn} {f['path']}"
    assert seen, f"{stack_run.stack}: no boot script"
    # One shellcheck process for the stack's scripts (each file checked on its own, tests/support/shell.py); a
    # script this run (or the run that started it: test_user_stacks.py) found clean byte for byte is not again.
    found = shellcheck_each(list(seen), tmp_path, clean_verdicts(tmp_path_factory))
    for where, problems in zip(seen.values(), found, strict=True):
        assert not problems, f"{where}:\n{problems}"


def test_one_shellcheck_process_gives_each_script_its_own_findings(tmp_path):
    """shellcheck_each, which the test above uses: a finding planted in one of three scripts is that script's
    alone, and equals what a process of its own reports (the file name aside)."""
    clean = "#!/bin/sh\nset -eu\nNODE_NAME=\"$1\"\necho \"$NODE_NAME\"\n"
    planted = clean.replace('echo "$NODE_NAME"', "echo $NODE_NAME")  # SC2086 (a value shellcheck cannot know)
    found = shellcheck_each([clean, planted, clean], tmp_path)
    assert found[0] == found[2] == "" and "[SC2086]" in found[1], found
    alone = shellcheck(planted, tmp_path / "alone.sh")
    assert found[1].replace(str(tmp_path / "script-1.sh"), "S") == alone.replace(str(tmp_path / "alone.sh"), "S")
    # With kept verdicts: only the clean script's is kept; the planted one is reported again, by shellcheck.
    def unnamed(findings: list[str]) -> list[str]:
        return [re.sub(r"^[^:]*:", "", line, flags=re.M) for line in findings]

    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    assert unnamed(shellcheck_each([clean, planted], tmp_path, clean_dir)) == unnamed(["", found[1]])
    assert len(list(clean_dir.iterdir())) == 1
    assert unnamed(shellcheck_each([clean, planted], tmp_path, clean_dir)) == unnamed(["", found[1]])


def test_user_data_is_valid_cloud_config_for_ubuntu_24_04(stack_run):
    validator = jsonschema.Draft4Validator(upstream.cloud_init_schema())
    for inst in stack_run.of_type(INSTANCE):
        errors = sorted(validator.iter_errors(cloud_config(inst)), key=lambda e: list(e.path))
        assert not errors, f"{inst.urn}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_cloud_config_schema_check_catches_a_mistake(stack_run):
    validator = jsonschema.Draft4Validator(upstream.cloud_init_schema())
    doc = cloud_config(stack_run.of_type(INSTANCE)[0])
    doc["write_files"][0]["permissions"] = 600  # an int: cloud-init wants the octal string
    assert list(validator.iter_errors(doc)), "the schema accepted permissions: 600"


# terraform-provider-aws internal/service/ec2/vpc_nat_gateway.go: Timeouts Create 10 minutes, the
# longest the provider waits for a NAT gateway to become available. Nodes do not wait for it.
NAT_GATEWAY_CREATE_TIMEOUT = 600


def test_a_node_booted_before_its_nat_gateway_is_available_still_joins(tmp_path):
    """The boot script's own retry budget and delay, on a fake clock: nothing outside the instance
    answers (SSM, downloads) until the NAT gateway is available, as late as the provider waits."""
    run = run_stack_cached("rke2-govcloud")  # tests/stacks: private subnets behind NAT gateways
    agent = next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker")
    b = boot(agent, tmp_path, rke2_parameters(run), budget=None, online_at=NAT_GATEWAY_CREATE_TIMEOUT)
    assert b.returncode == 0, b.stderr
    assert b.installed and b.systemctl == ["systemctl enable --now rke2-agent.service"], b.systemctl
    # One SSM attempt per RETRY_DELAY of the fake clock until the NAT gateway answers, none more: the
    # script's own delay, slept between tries (tests/support/stubs/sleep moves the clock on).
    assert _offline_ssm_attempts(b) == NAT_GATEWAY_CREATE_TIMEOUT // scripts.RETRY_DELAY, _offline_ssm_attempts(b)


def test_the_retry_budget_runs_out(tmp_path):
    """... and the fake clock is real enough to end it: a node that never gets out fails."""
    run = run_stack_cached("rke2-govcloud")
    agent = next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker")
    b = boot(agent, tmp_path, rke2_parameters(run), budget=None, online_at=10 ** 9)
    assert b.returncode != 0 and not b.installed and "giving up after" in b.stderr, b.stderr
    # A try at 0, RETRY_DELAY, ..., RETRY_SECONDS of the fake clock (retry.sh gives up once a failed try ends
    # at or past its deadline).
    assert _offline_ssm_attempts(b) == scripts.RETRY_SECONDS // scripts.RETRY_DELAY + 1, _offline_ssm_attempts(b)


def _offline_ssm_attempts(b) -> int:
    """SSM calls tests/support/stubs/curl refused while nothing outside the instance answered."""
    return sum(1 for c in b.calls if c.get("offline") and c["url"].startswith("https://ssm."))


def test_retry_budget_is_the_one_the_scripts_use():
    for stack in ("rke-dev", "rke2-dev"):
        inst = run_stack_cached(stack).of_type(INSTANCE)[0]
        script = next(f["content"] for f in cloud_config(inst)["write_files"] if f["path"] == scripts.BOOTSTRAP_PATH)
        assert f'RETRY_SECONDS="${{RKE_AWS_RETRY_SECONDS:-{scripts.RETRY_SECONDS}}}"' in script
        downloads = [line for line in script.splitlines() if line.strip().startswith("retry download")]
        assert downloads, f"{stack}: downloads are not retried"


def test_scratch_root_is_the_only_thing_tests_can_redirect():
    """RKE_AWS_* are the only environment a boot script reads besides PATH: a node sets none of them."""
    script = scripts._script("x", {}, "")
    assert os.environ.get("RKE_AWS_ROOT") is None
    assert [line for line in script.splitlines() if "${RKE_AWS_" in line] == [
        'ROOT="${RKE_AWS_ROOT:-}"', f'RETRY_SECONDS="${{RKE_AWS_RETRY_SECONDS:-{scripts.RETRY_SECONDS}}}"',
        f'RETRY_DELAY="${{RKE_AWS_RETRY_DELAY:-{scripts.RETRY_DELAY}}}"']


def test_a_failed_kubeconfig_publish_leaves_the_server_running(prod, tmp_path):
    first = first_server(prod)
    b = boot(first, tmp_path, rke2_parameters(prod), denied=[prod.outputs["rke2KubeconfigParameter"]])
    assert b.returncode == 0, b.stderr
    assert "admin kubeconfig NOT published" in b.stderr and "bootstrap done (init)" in b.stderr, b.stderr
    marker = b.state["parameters"][prod.outputs["rke2InitMarkerParameter"]]
    assert marker.startswith("initialized by "), "the marker must be written before the kubeconfig"
