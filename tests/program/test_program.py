"""Program-level checks: every stack evaluates, the component tree and the project file."""

# split: this module mixes levels (issue 33 §7.2); the tests that read files only -> tests/tooling.

from __future__ import annotations

import json
from pathlib import Path

import yaml

from rke_aws.settings import fields, sections, versions
from rke_aws_offline.engine import harness
from tests.support.runs import run_stack_cached
from tests.support.stackconfig import parse_flat

ROOT = Path(__file__).resolve().parents[2]
COMPONENT_TYPES = {
    "rke-aws:iam:NodeIam",
    "rke-aws:network:Network",
    "rke-aws:security:ClusterSecurityGroup",
    "rke-aws:endpoint:ControlPlaneEndpoint",
    "rke-aws:nodes:Nodes",
}
OPTIONAL_COMPONENT_TYPES = {"rke-aws:secrets:JoinTokens", "rke-aws:secrets:InitMarker",
                            "rke-aws:secrets:PublishedKubeconfig", "rke-aws:ccm:CloudControllerManager",
                            "rke-aws:manifests:ServerManifests", "rke-aws:upgrades:SystemUpgrades",
                            "rke-aws:backups:EtcdBackupBucket", "rke-aws:addons:EbsCsiDriver",
                            "rke-aws:addons:EbsCsiCredentials"}
EXPECTED_OUTPUTS = {
    "clusterId", "distribution", "kubernetesVersion", "region", "vpcId", "subnetIds", "subnets", "securityGroupId",
    "instanceProfileNames", "instanceProfileArns", "nodes", "ccmValues", "ccmImage", "controlPlaneEndpoint",
    "kubernetesApiUrl",
}
NODE_OUTPUT_KEYS = {"name", "pool", "index", "roles", "instanceId", "privateIp", "privateDns", "publicIp",
                    "availabilityZone", "subnet", "ipBlock", "keyName", "instanceType", "market",
                    # rotation (components/plan/stale.py, components/ops/rotate/): what runs, what is wanted
                    "urn", "image", "bootDigest", "rootVolumeGb", "wanted", "firstServer"}
# Spot nodes also name their persistent request and its end date (README "Spot worker pools").
SPOT_NODE_OUTPUT_KEYS = NODE_OUTPUT_KEYS | {"spotRequestId", "spotValidUntil"}


def test_every_stack_file_evaluates(stack_run):
    assert stack_run.resources, f"{stack_run.stack}: nothing registered"
    missing = EXPECTED_OUTPUTS - set(stack_run.outputs)
    assert not missing, f"{stack_run.stack}: missing outputs {missing}"
    extra = "rkeClusterYml" if stack_run.outputs["distribution"] == "rke" else "rke2RegistrationAddress"
    assert extra in stack_run.outputs
    assert not [m for lvl, m in stack_run.logs if lvl == "error"], stack_run.logs


def test_node_outputs_match_the_pools(stack_run):
    pools = json.loads(stack_run.config["rke-aws:nodePools"])
    assert len(stack_run.outputs["nodes"]) == sum(p["count"] for p in pools)
    assert len(stack_run.of_type("aws:ec2/instance:Instance")) == sum(p["count"] for p in pools)
    for node in stack_run.outputs["nodes"]:
        assert set(node) == (SPOT_NODE_OUTPUT_KEYS if node["market"] == "spot" else NODE_OUTPUT_KEYS), node
        assert node["instanceId"].startswith("i-")


def test_components_parent_their_children(stack_run):
    by_urn = {r.urn: r for r in stack_run.resources}
    components = [r for r in stack_run.resources if r.type in COMPONENT_TYPES]
    assert {c.type for c in components} == COMPONENT_TYPES, stack_run.stack
    has_token = any(r.type == "rke-aws:secrets:JoinTokens" for r in stack_run.resources)
    assert has_token is (stack_run.outputs["distribution"] == "rke2"), stack_run.stack
    (root,) = [r for r in stack_run.resources if r.type == "rke-aws:index:RkeCluster"]
    assert not by_urn.get(root.parent), f"{root.urn}: the cluster component is a child of the stack"
    for reg in stack_run.resources:
        if reg is root:
            continue
        parent = by_urn.get(reg.parent)
        if reg.type in COMPONENT_TYPES | OPTIONAL_COMPONENT_TYPES:
            assert parent is root, f"{reg.urn}: not a child of the RkeCluster"
            continue
        assert parent is not None and parent.type.startswith("rke-aws:"), f"{reg.urn}: not parented by a component"
        assert reg.name.startswith(parent.name), f"{reg.urn}: name not derived from component {parent.name}"


# How a new stack installs the CCM when ccm.install is not set (README, "manifest, the default for new RKE2 stacks";
# docs/deploying.md): a user's stack in stacks/ may leave it out, as every shipped one sets it.
NEW_STACK_CCM_INSTALL = {"rke": "helm", "rke2": "manifest"}


def test_release_registered_exactly_when_kubeconfig_is_set(stack_run):
    """Phase two: an encrypted kubeconfig in the stack file (text unknown offline) takes the same
    path as the real value; without one, only the hint."""
    releases = [r for r in stack_run.of_type("kubernetes:helm.sh/v3:Release")
                if r.inputs.get("chart") == versions.CCM_CHART_NAME]
    distribution = stack_run.config["rke-aws:distribution"]  # required (settings/sections.py)
    install = json.loads(stack_run.config.get("rke-aws:ccm", "{}")).get("install", NEW_STACK_CCM_INSTALL[distribution])
    helm = install == "helm"
    if "rke-aws:kubeconfig" in stack_run.config and helm:
        assert len(releases) == 1, f"{stack_run.stack}: kubeconfig set but {len(releases)} CCM releases"
        (provider,) = stack_run.of_type("pulumi:providers:kubernetes")
        assert "kubeconfig" in provider.secret_inputs, f"{provider.urn}: kubeconfig not a secret input"
    else:
        assert not releases, f"{stack_run.stack}: Release without kubeconfig"
        if helm:
            assert any("kubeconfig" in m for lvl, m in stack_run.logs if lvl == "info"), "no hint about phase two"


def test_stack_files_hold_secrets_only_encrypted():
    """Encrypted values (`pulumi config set --secret`) may be committed; a plain kubeconfig may not."""
    paths = [*harness.STACKS_DIR.glob("Pulumi.*.yaml"), *harness.FIXTURE_STACKS_DIR.glob("Pulumi.*.yaml")]
    encrypted = 0
    for path in paths:
        doc = yaml.safe_load(path.read_text())
        kubeconfig = doc["config"].get("rke-aws:kubeconfig")
        assert kubeconfig is None or (isinstance(kubeconfig, dict) and set(kubeconfig) == {"secure"}), \
            f"{path.name}: rke-aws:kubeconfig in plain text"
        encrypted += sum(isinstance(v, dict) and set(v) == {"secure"} for v in doc["config"].values())
    assert encrypted >= 2, "no stack fixture carries encrypted values (kubeconfig and one other)"


def test_expected_stacks_exist():
    assert set(harness.stack_names()) >= {"rke-dev", "rke-prod", "rke2-dev", "rke2-prod"}


# Pulumi's project schema (sdk/go/common/workspace/project.json): a declared config key has a
# required `type` among these; arrays need `items`; no other attributes are allowed.
PULUMI_SIMPLE_TYPES = {"string", "integer", "boolean", "array"}
PULUMI_DECLARATION_ATTRS = {"type", "description", "secret", "default", "items"}


def test_project_file_is_valid_for_pulumi():
    doc = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert doc["name"] == "rke-aws" and doc["runtime"]["name"] == "python"
    assert doc["runtime"]["options"]["toolchain"] == "uv"
    assert doc["stackConfigDir"] == "stacks"
    python_type = {"string": str, "boolean": bool, "integer": int}
    for key, decl in doc["config"].items():
        assert set(decl) <= PULUMI_DECLARATION_ATTRS, f"Pulumi.yaml config.{key}: {set(decl) - PULUMI_DECLARATION_ATTRS}"
        assert decl.get("type") in PULUMI_SIMPLE_TYPES, f"Pulumi.yaml config.{key}: type {decl.get('type')!r}"
        assert decl.get("description"), f"Pulumi.yaml config.{key}: no description"
        if "default" in decl:
            assert isinstance(decl["default"], python_type[decl["type"]]), f"config.{key}: default type"


def test_project_file_declares_every_scalar_key_and_nothing_unknown():
    declared = set(yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"])
    assert declared <= set(sections.TOP_LEVEL_KEYS), declared - set(sections.TOP_LEVEL_KEYS)
    structured = {"network", "access", "nodePools", "ccm", "controlPlane", "etcdBackup", "addons", "proxy", "tags", "rancher",
                  "ingress", "rotation", "identity", "registry", "airgap"}
    assert declared == set(sections.TOP_LEVEL_KEYS) - structured


def test_project_defaults_mean_program_defaults():
    """Pulumi passes the declared defaults ("" / false) into the config map; they must parse as unset."""
    doc = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    raw = harness.stack_config("rke2-dev")
    for key, decl in doc["config"].items():
        if "default" in decl:
            raw[f"rke-aws:{key}"] = json.dumps(decl["default"]) if not isinstance(decl["default"], str) else decl["default"]
    cfg = parse_flat(raw, project="rke-aws", stack="rke2-dev", region="us-east-1")
    assert cfg.cluster_id == "rke2-dev" and cfg.kubeconfig is None and cfg.protect_servers is False
    assert cfg.kubernetes_version == fields.DEFAULT_KUBERNETES_VERSION["rke2"]


def test_offline_plan_prints_nodes_and_masks_secrets(capsys):
    from rke_aws_offline.report import plan_report

    assert plan_report.main(["rke2-dev", "--full"]) == 0
    text = capsys.readouterr().out
    run = run_stack_cached("rke2-dev")
    for password in run.of_type("random:index/randomPassword:RandomPassword"):
        assert password.state["result"] not in text, f"offline plan printed {password.name}"
    assert "rke2Token:\n    ****" in text
    for node in run.outputs["nodes"]:
        assert node["name"] in text


def test_readme_documents_every_config_key_and_output():
    table = (ROOT / "docs" / "reference" / "configuration.md").read_text()
    nested = {key: sections.stack_keys(section) for key, section in sections.SECTIONS.items()}
    nested["nodePools[i]"] = sections.POOL_KEYS
    for key in sections.TOP_LEVEL_KEYS:
        if key not in nested and key != "nodePools":
            assert f"`{key}`" in table, f"README configuration reference lacks {key}"
    for parent, keys in nested.items():
        for key in keys:
            assert f"`{parent}.{key}`" in table or f"`{key}`" in table or f", {key}`" in table or \
                f"`{parent}.{key}[i]." in table, \
                f"README configuration reference lacks {parent}.{key}"
    outputs = (ROOT / "docs" / "reference" / "outputs.md").read_text()
    from rke_aws.state.model import FLAT_SECRET_OUTPUTS, aliases

    exported = set(aliases().values()) | set(FLAT_SECRET_OUTPUTS.values())
    for name in exported:
        assert f"`{name}`" in outputs, f"README outputs table lacks {name}"


def test_the_readme_lists_every_node_output_field():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "outputs.md").read_text()
    (row,) = [line for line in readme.splitlines() if line.startswith("| `nodes` |")]
    missing = sorted(k for k in SPOT_NODE_OUTPUT_KEYS if f"`{k}`" not in row)
    assert not missing, f"README outputs table, `nodes` row: {missing} not described"


def test_a_run_builds_no_debug_message_and_keeps_its_warnings(tmp_path, monkeypatch):
    """Offline the SDK's debug channel (pulumi/log.py `debug`, a LogRequest per registration) is not sent: the run
    keeps INFO and above (harness._LogCollector). What the program warns still reaches the run, and the SDK's
    function is back once the run ends."""
    import pulumi
    from pulumi.runtime import mocks
    from pulumi.runtime.proto import engine_pb2

    severities: list[int] = []
    real_log = mocks.MockEngine.Log
    monkeypatch.setattr(mocks.MockEngine, "Log", lambda self, req: severities.append(req.severity) or real_log(self, req))
    sent = pulumi.log.debug
    main = tmp_path / "__main__.py"
    main.write_text("import pulumi\nimport pulumi_random\npulumi.log.debug('d')\n"
                    "pulumi_random.RandomPassword('pw', length=16)\npulumi.log.warn('w')\n")
    run = harness.run_program({"aws:region": "us-west-2"}, main=main)
    assert ("warning", "w") in run.logs and engine_pb2.WARNING in severities
    assert engine_pb2.DEBUG not in severities
    assert pulumi.log.debug is sent


def test_a_run_leaves_no_logger_behind(tmp_path):
    """A run's logger (harness._evaluate, non-propagating) leaves the logging registry with the run: pytest's log
    capture (_pytest/logging.py catching_logs) attaches its handlers to every non-propagating logger there, six times a
    test, so a logger kept per run made each later test of a worker slower by the runs before it."""
    import logging

    main = tmp_path / "__main__.py"
    main.write_text("import pulumi\npulumi.log.info('i')\n")
    run = harness.run_program({"aws:region": "us-west-2"}, main=main)
    assert ("info", "i") in run.logs  # the run's logger collected while it ran
    left = [name for name in logging.Logger.manager.loggerDict if name.startswith("rke-aws.offline.")]
    assert not left, left
