"""Secrets stay secret end to end: kubeconfig, the RKE2 join token."""

# split: this module mixes levels (issue 33 §7.2); the program runs -> tests/program.

from __future__ import annotations

import json

import pulumi
import pytest
import yaml

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness

KUBECONFIG = stackfile.secret("apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: kubeconfig-secret-marker\n")


@pytest.mark.parametrize("stack", ["rke-prod", "rke2-prod"])
def test_kubeconfig_is_secret_in_the_provider_and_absent_from_outputs(stack):
    cfg = harness.stack_config(stack)
    cfg["rke-aws:kubeconfig"] = KUBECONFIG
    run = harness.run_program(cfg, stack=stack)
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == KUBECONFIG
    assert "kubeconfig" in provider.secret_inputs, f"{provider.urn}: kubeconfig is not secret"
    releases = run.of_type("kubernetes:helm.sh/v3:Release")
    assert releases, stack
    for release in releases:  # the CCM and, where enabled, the EBS CSI driver
        assert release.provider.startswith(provider.urn), f"{release.urn} does not use the cluster's provider"
    everything = json.dumps(run.outputs, default=str)
    assert "kubeconfig-secret-marker" not in everything, f"{stack}: kubeconfig leaked into outputs"
    for reg in run.resources:
        if reg is provider:
            continue
        assert "kubeconfig-secret-marker" not in json.dumps(reg.inputs, default=str), f"{reg.urn} carries the kubeconfig"


def test_plain_text_kubeconfig_is_refused_before_anything_is_registered():
    """Pulumi.yaml cannot declare kubeconfig `secret: true` (pulumi/pulumi#21865); the program insists."""
    from rke_aws_offline.engine.emulated_account import MotoMocks

    cfg = harness.stack_config("rke2-prod")
    cfg["rke-aws:kubeconfig"] = str(KUBECONFIG)  # plain text, as `pulumi config set` without --secret stores it
    mocks = MotoMocks("us-west-2")
    with pytest.raises(pulumi.RunError, match=r"rke-aws:kubeconfig: is stored as plain text .* --secret"):
        # The harness marks secret only what the CLI would (secure: values): nothing here.
        harness.run_program(cfg, stack="rke2-prod", mocks=mocks)
    assert mocks.resources == []


# --- the Pulumi CLI's project-config rules ---------------------------------------------------------
# A model of pulumi/pulumi pkg/workspace/config.go (mergeConfig, validateStackConfigValue; CLI 3.202
# to 3.259 read) and project.go (Project.Validate): what `pulumi preview` checks before the program
# runs. Independent of components/settings/config.py.

def _is_secure(value) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _has_secure(value) -> bool:
    if _is_secure(value):
        return True
    if isinstance(value, dict):
        return any(_has_secure(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_secure(v) for v in value)
    return False


def _type_ok(decl: dict, value) -> bool:
    typ = decl["type"]
    if typ == "string":  # stack scalars are held as strings; maps and lists are not
        return not isinstance(value, (dict, list)) or _is_secure(value)
    if typ == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return True
        return isinstance(value, str) and value.lstrip("-").isdigit()
    if typ == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if typ == "array":
        return isinstance(value, list) and all(_type_ok(decl["items"], v) for v in value)
    if typ == "object":
        return isinstance(value, dict)
    return False


def cli_config_problems(project: dict, stack_name: str, stack: dict) -> list[str]:
    name = project["name"]
    problems: list[str] = []
    stack_cfg = {}
    for key, value in (stack.get("config") or {}).items():
        stack_cfg[key if ":" in key else f"{name}:{key}"] = value
    for key, decl in (project.get("config") or {}).items():
        if not isinstance(decl, dict):  # shorthand: `key: value`
            decl = {"value": decl} if ":" in key else {"default": decl}
        full = key if ":" in key else f"{name}:{key}"
        own = full.startswith(f"{name}:")
        if not own:
            if "type" in decl or "default" in decl or "value" not in decl:
                problems.append(f"Configuration key '{key}' is not namespaced by the project and must give only a 'value'")
            continue
        if "type" in decl and decl["type"] == "array" and "items" not in decl:
            problems.append(f"Configuration key '{key}' declares an array but does not specify the underlying type via the 'items' attribute")
        if full in stack_cfg:
            value, injected = stack_cfg[full], False
        elif "default" in decl or "value" in decl:
            value, injected = decl.get("value", decl.get("default")), True  # injected as plain text
        else:
            problems.append(f"Stack '{stack_name}' is missing configuration value '{key}'")
            continue
        if "type" not in decl:
            continue  # untyped declarations (their `secret:` too) are never validated
        if decl.get("secret") and (injected or not _has_secure(value)):
            problems.append(f"Stack '{stack_name}' with configuration key '{key}' must be encrypted as it's secret")
        elif not _type_ok(decl, value):
            problems.append(f"Stack '{stack_name}' with configuration key '{key}' must be of type '{decl['type']}'")
    return problems


def _project() -> dict:
    return yaml.safe_load((harness.ROOT / "Pulumi.yaml").read_text())


def _stack_files():
    return sorted([*harness.STACKS_DIR.glob("Pulumi.*.yaml"), *harness.FIXTURE_STACKS_DIR.glob("Pulumi.*.yaml")])


@pytest.mark.parametrize("path", _stack_files(), ids=lambda p: p.name)
def test_pulumi_cli_accepts_the_project_and_stack_file(path):
    stack = path.name[len("Pulumi."):-len(".yaml")]
    problems = cli_config_problems(_project(), stack, yaml.safe_load(path.read_text()))
    assert not problems, f"{path.name}: `pulumi preview` would stop with: {problems}"


def test_the_cli_model_catches_a_defaulted_secret_key():
    """The original mistake: kubeconfig declared `secret: true` with a plain default ""."""
    project = _project()
    project["config"]["kubeconfig"]["secret"] = True
    without = yaml.safe_load((harness.STACKS_DIR / "Pulumi.rke2-dev.yaml").read_text())
    without["config"].pop("rke-aws:kubeconfig", None)  # whatever the user's stack holds: the case without
    assert cli_config_problems(project, "rke2-dev", without) == [
        "Stack 'rke2-dev' with configuration key 'kubeconfig' must be encrypted as it's secret"]
    plain = {"config": {**without["config"], "rke-aws:kubeconfig": "apiVersion: v1"}}
    assert cli_config_problems(project, "rke2-dev", plain) == [
        "Stack 'rke2-dev' with configuration key 'kubeconfig' must be encrypted as it's secret"]
    encrypted = {"config": {**without["config"], "rke-aws:kubeconfig": {"secure": "v1:abc"}}}
    assert cli_config_problems(project, "rke2-dev", encrypted) == []


def test_the_cli_model_catches_missing_and_mistyped_keys():
    project = _project()
    stack = yaml.safe_load((harness.STACKS_DIR / "Pulumi.rke2-dev.yaml").read_text())
    del stack["config"]["rke-aws:distribution"]
    stack["config"]["rke-aws:protectServers"] = "maybe"
    assert cli_config_problems(project, "rke2-dev", stack) == [
        "Stack 'rke2-dev' is missing configuration value 'distribution'",
        "Stack 'rke2-dev' with configuration key 'protectServers' must be of type 'boolean'",
    ]
    project["config"]["aws:region"] = {"type": "string", "default": "us-east-1"}
    assert any("not namespaced by the project" in p for p in cli_config_problems(project, "x", {"config": {}}))
