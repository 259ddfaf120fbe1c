"""The `template:` block of examples/rke2-cluster/Pulumi.yaml, what `pulumi new` asks, and this repository's own
stacks against its Pulumi.yaml.

The CLI reads the block into ProjectTemplate / ProjectTemplateConfigValue (pulumi/pulumi
sdk/go/common/apitype/templates.go; schema sdk/go/common/workspace/project.json "template",
additionalProperties false): a field the CLI does not know makes Pulumi.yaml invalid, and `default` is a Go
string (a YAML number or boolean there is refused). A template key without a namespace gets the project's name
(pkg/cmd/pulumi/project/newcmd/config.go resolveTemplateConfig, through pkg/cmd/pulumi/config/io.go
ParseConfigKeyForProject), so the program's keys are asked bare. The stack files the answers give are planned in
tests/program/test_template.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from tests.support.template import EXAMPLE, cli_key, template_block

ROOT = Path(__file__).resolve().parents[2]
# Field names as pulumi/pulumi sdk/go/common/apitype/templates.go declares them (yaml tags).
TEMPLATE_FIELDS = {"displayName", "description", "quickstart", "config", "important", "metadata"}
TEMPLATE_CONFIG_FIELDS = {"description", "default", "secret"}


def _project() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def _defaults() -> dict[str, str]:
    return {k: v.get("default", "") for k, v in template_block(EXAMPLE)["config"].items()}


def test_the_template_block_has_only_fields_the_cli_reads():
    template = template_block(EXAMPLE)
    assert set(template) <= TEMPLATE_FIELDS, f"template: unknown fields {set(template) - TEMPLATE_FIELDS}"
    assert "important" not in template, "template: `important` is deprecated and ignored by the CLI"
    for key, value in template["config"].items():
        assert set(value) <= TEMPLATE_CONFIG_FIELDS, f"template.config.{key}: unknown fields"
        assert isinstance(value.get("default", ""), str), f"template.config.{key}: default must be a string"
        assert value.get("description"), f"template.config.{key}: the prompt needs a description"


def test_the_template_asks_only_for_keys_of_the_configuration():
    """Keys of the stack-file schema (generated from the configuration model), bare, and `aws:region`."""
    schema = json.loads((ROOT / "schema" / "stack-config.schema.json").read_text())
    keys = set(schema["properties"]["config"]["propertyNames"]["anyOf"][0]["enum"])
    asked = set(template_block(EXAMPLE)["config"])
    assert asked - {"aws:region"} <= keys, f"template asks for keys the program does not read: {asked - keys}"
    assert {"aws:region", "distribution", "kubernetesVersion", "clusterId"} <= asked


def test_the_template_offers_the_release_the_program_pins():
    # When the pinned RKE2 release moves, the template's default moves with it.
    assert _defaults()["kubernetesVersion"] == versions.RKE2_VERSION
    assert _defaults()["distribution"] == "rke2"


def test_each_environment_has_the_keys_the_cli_requires():
    """This repository's stacks against its own Pulumi.yaml: the CLI refuses a stack missing a declared key
    without a default, in the project's namespace (pkg/workspace/config.go mergeConfig, "Stack '<stack>' is
    missing configuration value ..."). A stack taking its configuration from an ESC environment (`environment:`)
    may get it from there."""
    project = _project()
    required = [k for k, v in project["config"].items() if ":" not in k and "default" not in v and "value" not in v]
    for stack in harness.stack_names(include_fixtures=False):
        doc = yaml.safe_load(harness.stack_file(stack).read_text()) or {}
        if doc.get("environment"):
            continue
        have = set(harness.stack_config(stack))
        missing = [k for k in required if cli_key(k, harness.project_of(stack)) not in have]
        assert not missing, f"Pulumi.{stack}.yaml: the CLI refuses it, missing configuration values {missing}"
