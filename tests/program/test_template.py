"""`pulumi new <repository URL>`: the `template:` block of Pulumi.yaml and the stack file it gives.

The CLI reads the block into ProjectTemplate / ProjectTemplateConfigValue (pulumi/pulumi
sdk/go/common/apitype/templates.go; schema sdk/go/common/workspace/project.json "template",
additionalProperties false): a field the CLI does not know makes Pulumi.yaml invalid, and `default` is a Go
string (a YAML number or boolean there is refused). `pulumi new` prompts for each config key and writes the
answers as the stack's `config:`; with stackConfigDir the file lands in stacks/. A template key without a
namespace gets the project's name (pkg/cmd/pulumi/project/newcmd/config.go resolveTemplateConfig, through
pkg/cmd/pulumi/config/io.go ParseConfigKeyForProject), and `pulumi new` names the project anew
(newcmd/new.go), so the program's keys are asked bare; tests/tooling/test_pulumi_new.py checks the whole project.
"""

# split: this module mixes levels (issue 33 §7.2); the tests on Pulumi.yaml alone -> tests/tooling.
from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
import yaml

from rke_aws.settings import stackfile, versions
from rke_aws_offline.engine import harness
from tests.support.template import cli_key, stack_text

ROOT = Path(__file__).resolve().parents[2]
# Field names as pulumi/pulumi sdk/go/common/apitype/templates.go declares them (yaml tags).
TEMPLATE_FIELDS = {"displayName", "description", "quickstart", "config", "important", "metadata"}
TEMPLATE_CONFIG_FIELDS = {"description", "default", "secret"}


def _project() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


# A project `pulumi new` made has no template block (newcmd/new.go removes it): the tests of the block do
# not apply there; the stacks it wrote are planned by the tests over stacks/ and checked below.
template_only = pytest.mark.skipif("template" not in _project(), reason="no template block: a project `pulumi new` made")


def _template() -> dict:
    return _project()["template"]


def _stack_text(answers: dict[str, str]) -> str:
    return stack_text(answers, harness.project_name())


def _run(answers: dict[str, str], stack: str):
    config, secret_keys = stackfile.load_stack_text(_stack_text(answers), stack, project=harness.project_name())
    return harness.run_program(config, stack=stack, secret_keys=secret_keys, project=harness.project_name())


def _defaults() -> dict[str, str]:
    return {k: v.get("default", "") for k, v in _template()["config"].items()}


@template_only
def test_the_template_block_has_only_fields_the_cli_reads():
    template = _template()
    assert set(template) <= TEMPLATE_FIELDS, f"Pulumi.yaml template: unknown fields {set(template) - TEMPLATE_FIELDS}"
    assert "important" not in template, "Pulumi.yaml template: `important` is deprecated and ignored by the CLI"
    for key, value in template["config"].items():
        assert set(value) <= TEMPLATE_CONFIG_FIELDS, f"Pulumi.yaml template.config.{key}: unknown fields"
        assert isinstance(value.get("default", ""), str), f"Pulumi.yaml template.config.{key}: default must be a string"
        assert value.get("description"), f"Pulumi.yaml template.config.{key}: the prompt needs a description"


@template_only
def test_the_template_asks_only_for_keys_the_program_declares():
    declared = {k for k in _project()["config"] if ":" not in k} | {"aws:region"}
    asked = set(_template()["config"])
    assert asked <= declared, f"Pulumi.yaml template asks for undeclared keys {asked - declared}"
    assert {"aws:region", "distribution", "kubernetesVersion", "clusterId"} <= asked


@template_only
@pytest.mark.parametrize("project", [harness.PROJECT, "platform-eu"])
def test_the_answers_land_in_the_namespace_of_the_project_pulumi_new_names(project):
    """`pulumi new --name platform-eu`: the declared keys are namespaced `platform-eu:` (pkg/workspace/config.go
    mergeConfig: a declared key without a value or default is required, "Stack 'x' is missing configuration
    value 'distribution'"), so the answers must be too. A template key written `rke-aws:distribution` would stay
    in the old namespace (ParseConfigKeyForProject keeps a namespaced key) and the stack could not be planned."""
    written = yaml.safe_load(stack_text(_defaults(), project))["config"]
    required = {cli_key(k, project) for k, v in _project()["config"].items() if ":" not in k and "default" not in v}
    assert required and required <= set(written), f"missing configuration values: {required - set(written)}"


@template_only
def test_the_template_offers_the_release_the_program_pins():
    # When the pinned RKE2 release moves, the template's default moves with it.
    assert _defaults()["kubernetesVersion"] == versions.RKE2_VERSION
    assert _defaults()["distribution"] == "rke2"


@template_only
def test_the_stack_file_pulumi_new_writes_from_the_defaults_is_planned():
    run = _run(_defaults(), "dev")
    instances = [r for r in run.resources if r.type == "aws:ec2/instance:Instance"]
    # No nodePools in the file: the default layout, three servers and two workers (config_model.DEFAULT_NODE_POOLS).
    names = sorted(r.name for r in instances)
    assert names == ["dev-agents-0", "dev-agents-1", "dev-server-0", "dev-server-1", "dev-server-2"], names
    assert run.outputs["clusterId"] == "dev"


@template_only
@pytest.mark.parametrize("version", [versions.RKE_KUBERNETES_VERSION])
def test_an_rke1_answer_with_an_rke1_release_is_planned(version):
    answers = dict(_defaults(), **{"distribution": "rke", "kubernetesVersion": version, "clusterId": "legacy-rke"})
    run = _run(answers, "legacy")
    assert run.outputs["clusterId"] == "legacy-rke"


@template_only
def test_an_rke1_answer_keeping_the_rke2_default_release_is_refused_naming_the_key():
    answers = dict(_defaults(), **{"distribution": "rke"})
    with pytest.raises(pulumi.RunError) as refused:
        _run(answers, "legacy")
    key = cli_key("kubernetesVersion", harness.project_name())
    assert f'{key}: "{versions.RKE2_VERSION}" is not an RKE release name' in str(refused.value)


def test_each_environment_has_the_keys_the_cli_requires():
    """The CLI refuses a stack missing a declared key without a default, in the project's namespace
    (pkg/workspace/config.go mergeConfig, "Stack '<stack>' is missing configuration value ..."). A stack
    taking its configuration from an ESC environment (`environment:`) may get it from there."""
    project = _project()
    required = [k for k, v in project["config"].items() if ":" not in k and "default" not in v and "value" not in v]
    for stack in harness.stack_names(include_fixtures=False):
        doc = yaml.safe_load(harness.stack_file(stack).read_text()) or {}
        if doc.get("environment"):
            continue
        have = set(harness.stack_config(stack))
        missing = [k for k in required if cli_key(k, harness.project_of(stack)) not in have]
        assert not missing, f"Pulumi.{stack}.yaml: the CLI refuses it, missing configuration values {missing}"
