"""What comes from the configuration model stays in step with it: the stack-file JSON Schema, the
README's configuration reference, Pulumi.yaml's declared keys and each stack file's schema line;
and the schema, applied by a real validator (jsonschema), accepts every stack file and refuses the
mistakes an editor should flag."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from components import config, config_model
from offline import harness, schema
from tests.test_config import INVALID, VPC_ID, put


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    doc = json.loads(schema.SCHEMA_PATH.read_text())
    jsonschema.Draft7Validator.check_schema(doc)
    return jsonschema.Draft7Validator(doc)


def test_generated_files_are_current():
    assert schema.stale() == [], "run `make schema` (python3 -m offline.tasks schema --write)"


def test_the_reference_covers_every_key():
    table = schema.readme_table()
    for key in config.TOP_LEVEL_KEYS:
        section = config_model.SECTIONS.get(key)
        if section is not None:
            assert all(f"`{key}.{sub}`" in table for sub in section.model_fields), key
        elif key == "nodePools":
            assert all(f"`nodePools[i].{sub}`" in table for sub in config.POOL_KEYS)
        else:
            assert f"`{key}`" in table, key
    declared = yaml.safe_load(schema.PULUMI_YAML.read_text())["config"]
    assert set(declared) == {"distribution", "clusterId", "kubernetesVersion", "hardening", "kubeconfig",
                             "allowUninstall", "protectServers", "confirmClusterState"}
    assert declared["protectServers"]["type"] == "boolean" and declared["hardening"]["default"] == "none"


@pytest.mark.parametrize("target", ["SCHEMA_PATH", "README", "PULUMI_YAML"])
def test_a_hand_edit_of_a_generated_file_is_caught(target, tmp_path, monkeypatch):
    original = getattr(schema, target)
    copy_ = tmp_path / original.name
    text = original.read_text()
    edited = text.replace("Number of nodes, 0-500", "Number of nodes, 0-5000") if target != "PULUMI_YAML" else \
        text.replace("type: boolean", "type: string")
    assert edited != text, f"{target}: nothing to plant"
    copy_.write_text(edited)
    monkeypatch.setattr(schema, "ROOT", tmp_path)
    monkeypatch.setattr(schema, target, copy_)
    assert copy_.name in " ".join(schema.stale()), schema.stale()


def _one_stack_dir(tmp_path, monkeypatch, text: str) -> Path:
    """A checkout whose only stack file holds `text`; every generated file current."""
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    path = stacks / schema.stack_files()[0].name
    path.write_text(text)
    monkeypatch.setattr(schema, "STACKS_DIR", stacks)
    monkeypatch.setattr(schema, "FIXTURE_STACKS_DIR", tmp_path / "none")
    monkeypatch.setattr(schema, "ROOT", tmp_path)
    for name in ("SCHEMA_PATH", "README", "PULUMI_YAML"):
        original = getattr(schema, name)
        (tmp_path / original.name).write_text(original.read_text())
        monkeypatch.setattr(schema, name, tmp_path / original.name)
    return path


def test_a_stack_file_as_pulumi_config_set_writes_it_is_accepted_and_the_line_restorable(tmp_path, monkeypatch):
    # The CLI re-marshals the whole file (ProjectStack.Save in pulumi/pulumi): no comments survive.
    # A user who ran `pulumi config set` must not get a red CI for it.
    src = schema.stack_files()[0]
    data = yaml.safe_load(src.read_text())
    path = _one_stack_dir(tmp_path, monkeypatch, yaml.safe_dump(data, sort_keys=True))
    assert schema.stale() == []
    assert schema.restore_schema_line(path) is True
    assert path.read_text().splitlines()[0] == schema.schema_line(path)
    assert yaml.safe_load(path.read_text()) == data
    assert schema.restore_schema_line(path) is False


def test_a_stack_file_naming_another_schema_is_caught(tmp_path, monkeypatch):
    src = schema.stack_files()[0]
    lines = src.read_text().splitlines(keepends=True)
    path = _one_stack_dir(tmp_path, monkeypatch, "# yaml-language-server: $schema=../elsewhere.json\n" + "".join(lines[1:]))
    assert schema.stale() == [f"stacks/{src.name} (first line must be `{schema.schema_line(path)}`)"]


@pytest.mark.parametrize("path", schema.stack_files(), ids=lambda p: p.name)
def test_every_stack_file_is_valid_and_names_the_schema(path, validator):
    text = path.read_text()
    first = text.splitlines()[0]
    # The line may be missing (`pulumi config set` drops comments); when present it names this schema.
    assert first == schema.schema_line(path) or not first.startswith(schema.SCHEMA_COMMENT), f"{path}: {first}"
    target = (path.parent / schema.schema_line(path).split("$schema=", 1)[1]).resolve()
    assert target == schema.SCHEMA_PATH.resolve(), f"{path}: the $schema line points at {target}"
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(text))]
    assert not errors, f"{path.name}: {errors}"


def _stack(stack: str = "rke2-dev") -> dict:
    return yaml.safe_load(harness.stack_file(stack).read_text())


def _planted(mutate) -> dict:
    doc = _stack()
    mutate(doc["config"])
    return doc


@pytest.mark.parametrize("mutate, what", [
    (lambda c: c.__setitem__("rke-aws:nodepools", c.pop("rke-aws:nodePools")), "top-level typo"),
    (lambda c: c["rke-aws:network"].__setitem__("vpcCIDR", "10.0.0.0/16"), "nested typo"),
    (lambda c: c["rke-aws:nodePools"][0].__setitem__("instancetype", "m6i.large"), "pool key typo"),
    (lambda c: c["rke-aws:nodePools"][0].__setitem__("count", "two"), "wrong type"),
    (lambda c: c["rke-aws:nodePools"][0].pop("roles"), "missing pool roles"),
    (lambda c: c.__setitem__("rke-aws:hardening", "stig"), "unknown value"),
    (lambda c: c.__setitem__("rke-aws:etcdBackup", {"intervalHours": 48}), "out of range"),
    (lambda c: c.__setitem__("rke-aws:kubeconfig", "apiVersion: v1\nkind: Config\n"), "plain-text kubeconfig"),
    (lambda c: c.__setitem__("rke-aws:clusterId", "Prod"), "pattern"),
    (lambda c: c.pop("rke-aws:distribution"), "missing distribution"),
])
def test_planted_mistakes_fail_the_schema(mutate, what, validator):
    assert list(validator.iter_errors(_planted(mutate))), f"the schema accepts a {what}"


@pytest.mark.parametrize("mutate, what", [
    (lambda c: c.update({"rke-aws:kubeconfig": {"secure": "v1:abc"}, "aws:profile": "dev",
                         "pulumi:tags": {"team": "platform"}}), "a secret and other namespaces"),
    (lambda c: c.update({"rke-aws:protectServers": "true"}), "a boolean as `pulumi config set` writes it"),
    (lambda c: c["rke-aws:nodePools"][0].update({"count": "3", "rootVolumeGb": " 60 "}), "numbers as text"),
    (lambda c: c.update({"rke-aws:etcdBackup": {"intervalHours": "12", "enabled": "false"}}), "an enum of numbers as text"),
    (lambda c: c.update({"rke-aws:clusterId": "", "rke-aws:kubernetesVersion": "", "rke-aws:kubeconfig": ""}),
     "Pulumi.yaml's empty defaults"),
    (lambda c: c["rke-aws:access"].update({"sshKeyName": {"secure": "v1:xyz"}})
     if "rke-aws:access" in c else c.update({"rke-aws:access": {"sshKeyName": {"secure": "v1:xyz"}}}),
     "a secret inside an object (`config set --secret --path`)"),
])
def test_what_the_program_accepts_the_schema_accepts(mutate, what, validator):
    doc = _planted(mutate)
    errors = [e.message for e in validator.iter_errors(doc)]
    assert not errors, f"{what}: {errors}"


def test_required_keys_may_come_from_an_esc_environment(validator):
    doc = _planted(lambda c: [c.pop(k) for k in ("aws:region", "rke-aws:distribution")])
    assert list(validator.iter_errors(doc)), "required keys missing and no environment: must fail"
    doc["environment"] = ["platform/aws-dev"]
    assert not list(validator.iter_errors(doc))


def test_a_malformed_version_fails_even_when_it_contains_a_valid_one(validator):
    for bad in ("junk v1.33.5+rke2r1", "v1.33.5+rke2r1 junk", "v1.33.5"):
        assert list(validator.iter_errors(_planted(lambda c, b=bad: c.update({"rke-aws:kubernetesVersion": b})))), bad


# Rows of the bad-input table whose mistake lies in one key alone: the editor flags them too.
SINGLE_KEY_ROWS = ("count-string", "count-bool", "count-negative", "count-fraction", "rootVolumeGb-too-small",
                   "az-count-0", "ipBlock-out-of-range", "natGateways-unknown", "role-master", "distribution-unknown",
                   "unknown-network-key", "unknown-access-key", "unknown-pool-key", "unknown-ccm-key",
                   "clusterId-uppercase", "clusterId-too-long-for-iam", "ssm-garbage", "endpoint-unknown",
                   "imds-hop-3", "ccm-install-unknown", "etcdBackup-typo", "etcdBackup-interval-zero", "hardening-unknown",
                   "addons-ebsCsi-string", "tag-value-not-string", "byo-malformed-vpc-id", "byo-malformed-subnet-id",
                   "kubernetesVersion-malformed", "extraArgs-not-a-flag")


@pytest.mark.parametrize("row_id, mutate", [pytest.param(r.id, r.values[0], id=r.id) for r in INVALID
                                             if r.id in SINGLE_KEY_ROWS])
def test_single_key_mistakes_of_the_bad_input_table_fail_the_schema(row_id, mutate, validator, base_config):
    flat = copy.deepcopy(base_config)
    mutate(flat)
    cfg = {}
    for key, value in flat.items():
        try:
            cfg[key] = json.loads(value) if key.split(":", 1)[1] not in config.STRING_KEYS else value
        except (ValueError, IndexError):
            cfg[key] = value
    errors = list(validator.iter_errors({"config": cfg}))
    if row_id == "extraArgs-not-a-flag":  # a cross-key rule (flags the program sets) lives in config.py
        assert not errors
        return
    assert errors, f"{row_id}: the schema accepts what the program refuses"


def test_table_rows_named_above_exist():
    assert set(SINGLE_KEY_ROWS) <= {r.id for r in INVALID}
    assert put and VPC_ID  # the helpers imported above are the table's own
