"""The stack files `pulumi new` writes from the answers to examples/rke2-cluster's template (its `template:`
block: tests/tooling/test_template.py; the project as a whole: tests/tooling/test_pulumi_new.py), planned in the
namespace of the project it makes: a template key without a namespace gets the project's name
(pulumi/pulumi pkg/cmd/pulumi/project/newcmd/config.go resolveTemplateConfig, pkg/cmd/pulumi/config/io.go
ParseConfigKeyForProject), which is the namespace the program reads.
"""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
import yaml

from rke_aws.settings import stackfile, versions
from rke_aws_offline.engine import harness
from tests.support.template import EXAMPLE, cli_key, make_project, stack_text, template_block

PROJECT = "platform-eu"  # the name a user gives the project `pulumi new` makes


STACK = "staging"
INSTANCE = "aws:ec2/instance:Instance"


def _plan(project: Path, stack: str):
    """The project's stack file as `pulumi new` left it, planned in the project's namespace."""
    text = (project / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    config, secret_keys = stackfile.load_stack_text(text, f"Pulumi.{stack}.yaml", project=PROJECT)
    return harness.run_program(config, stack=stack, secret_keys=secret_keys, project=PROJECT)


def _run(answers: dict[str, str], stack: str):
    config, secret_keys = stackfile.load_stack_text(stack_text(answers, PROJECT), stack, project=PROJECT)
    return harness.run_program(config, stack=stack, secret_keys=secret_keys, project=PROJECT)


def _defaults() -> dict[str, str]:
    return {k: v.get("default", "") for k, v in template_block(EXAMPLE)["config"].items()}


@pytest.mark.parametrize("version", [versions.RKE_KUBERNETES_VERSION])
def test_an_rke1_answer_with_an_rke1_release_is_planned(version):
    answers = dict(_defaults(), **{"distribution": "rke", "kubernetesVersion": version, "clusterId": "legacy-rke"})
    run = _run(answers, "legacy")
    assert run.outputs["clusterId"] == "legacy-rke"


def test_an_rke1_answer_keeping_the_rke2_default_release_is_refused_naming_the_key():
    answers = dict(_defaults(), **{"distribution": "rke"})
    with pytest.raises(pulumi.RunError) as refused:
        _run(answers, "legacy")
    assert f"{cli_key('kubernetesVersion', PROJECT)}: \"{versions.RKE2_VERSION}\"" in str(refused.value)


def test_the_stack_pulumi_new_writes_is_planned_in_the_projects_namespace(tmp_path):
    """The template's answers alone (a stack the example holds no file for): the default layout, three servers
    and two workers, named after the stack (clusterId empty: the stack's name)."""
    new_project = make_project(tmp_path / PROJECT, stack=STACK)
    run = _plan(new_project, STACK)
    names = sorted(r.name for r in run.of_type(INSTANCE))
    assert names == [f"{STACK}-agents-0", f"{STACK}-agents-1", f"{STACK}-server-0", f"{STACK}-server-1",
                     f"{STACK}-server-2"], names
    assert {r.urn.split("::")[1] for r in run.resources} == {PROJECT}


def test_the_examples_dev_stack_with_the_answers_merged_is_planned(tmp_path):
    """`pulumi new --stack dev`: the template's stacks/Pulumi.dev.yaml, with the answers saved into it."""
    project = make_project(tmp_path / PROJECT, stack="dev")
    doc = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())
    assert doc["config"][f"{PROJECT}:access"] == {"adminCidrs": ["203.0.113.0/24"]}
    assert doc["config"][f"{PROJECT}:kubernetesVersion"] == template_block(EXAMPLE)["config"]["kubernetesVersion"]["default"]
    run = _plan(project, "dev")
    assert sorted(r.name for r in run.of_type(INSTANCE)) == ["dev-agents-0", "dev-agents-1", "dev-server-0"]
