"""One configuration model: a plain key is one field in components/settings/model.py.

The parsed objects components receive (config.StackConfig and its sections) declare typed fields
for the keys the code reads, and read every other key of their model section through from the
validated model object. These tests hold that: every model key of every section is on the parsed
object under its snake_case name, and a key added to a model section alone (under monkeypatch)
reaches the parsed config with no line in config.py.
"""

# split: this module mixes levels (issue 33 §7.2); the program run -> tests/program (stream A replaces this file).

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from rke_aws.settings import config, model, stackfile
from rke_aws_offline.engine import harness

PROJECT = "rke-aws"
STACK = "rke2-everything"  # every section set (tests/stacks/)


def parse(cfg: dict) -> config.StackConfig:
    return config.parse(cfg, project=PROJECT, stack=STACK, region=cfg.get("aws:region"),
                        secret_keys=stackfile.secret_keys_of(cfg))


def sections_of(parsed: config.StackConfig) -> dict[str, tuple[type[model.BaseModel], list[Any]]]:
    """Each model section and the parsed objects that stand for it."""
    return {
        "": (model.StackConfiguration, [parsed]),
        "network": (model.Network, [parsed.network]),
        "access": (model.Access, [parsed.access]),
        "nodePools": (model.NodePool, list(parsed.node_pools)),
        "ccm": (model.Ccm, [parsed.ccm]),
        "controlPlane": (model.ControlPlane, [parsed.control_plane]),
        "etcdBackup": (model.EtcdBackup, [parsed.etcd_backup]),
        "addons": (model.Addons, [parsed.addons]),
        "proxy": (model.Proxy, [parsed.proxy]),
        "rancher": (model.Rancher, [parsed.rancher]),
        "ingress": (model.Ingress, [parsed.ingress]),
        "rotation": (model.Rotation, [parsed.rotation]),
    }


def test_every_section_of_the_model_has_a_parsed_object():
    parsed = parse(harness.stack_config(STACK))
    covered = set(sections_of(parsed)) - {"", "nodePools"}
    # A new section (not a plain key) needs its parsed object; this says where it is missing.
    assert covered == set(model.SECTIONS), set(model.SECTIONS) ^ covered


def test_every_model_key_is_on_the_parsed_object_under_its_snake_case_name():
    parsed = parse(harness.stack_config(STACK))
    missing = []
    for where, (section, objects) in sections_of(parsed).items():
        assert objects and all(o is not None for o in objects), f"{STACK} sets no {where or 'top-level'} section"
        for obj in objects:
            for key in section.model_fields:
                if where == "" and key in (*model.SECTIONS, "nodePools"):
                    continue  # sections: the parsed objects above
                name = config.snake(key)
                try:
                    getattr(obj, name)
                except AttributeError:
                    missing.append(f"{where or 'top level'}.{key} as {type(obj).__name__}.{name}")
    assert not missing, missing


def test_a_key_the_dataclass_does_not_declare_reads_through_from_the_model():
    parsed = parse(harness.stack_config(STACK))
    # controlPlane.endpoint is declared on StackConfig only; the section object reads it from the model.
    assert "endpoint" not in config.ControlPlaneConfig.__dataclass_fields__
    assert parsed.control_plane.endpoint == "nlb" == parsed.endpoint
    with pytest.raises(AttributeError):
        parsed.etcd_backup.no_such_key  # noqa: B018 - an unknown name is still an error
    with pytest.raises(AttributeError):
        parsed.etcd_backup.intervalHours  # noqa: B018 - only the snake_case name


def _with_key(monkeypatch: pytest.MonkeyPatch, section: type[model._Section], name: str, annotation: Any,
              default: Any) -> type[model._Section]:
    """`section` with one more key, as if written into model.py, in place of the original."""
    extended = type(section.__name__, (section,), {
        "__annotations__": {name: annotation}, name: Field(default, description="a key added by a test"),
        "__module__": section.__module__})
    monkeypatch.setattr(model, section.__name__, extended)
    return extended


SECTION_KEYS = [
    # (config key of the section, model class, attribute path on the parsed config, value written, value parsed)
    ("etcdBackup", "EtcdBackup", ("etcd_backup",), True, True),
    ("ccm", "Ccm", ("ccm",), ["a", "b"], ("a", "b")),
    ("network", "Network", ("network",), True, True),
    ("access", "Access", ("access",), True, True),
    ("controlPlane", "ControlPlane", ("control_plane",), True, True),
    ("addons", "Addons", ("addons",), True, True),
    ("proxy", "Proxy", ("proxy",), True, True),
    ("rancher", "Rancher", ("rancher",), True, True),
]


@pytest.mark.parametrize("key, cls, path, written, parsed_value", SECTION_KEYS, ids=[row[0] for row in SECTION_KEYS])
def test_a_key_added_to_a_model_section_alone_reaches_the_parsed_config(monkeypatch, key, cls, path, written,
                                                                        parsed_value):
    annotation = (Annotated[list[Annotated[str, model.NonEmpty()]], model.Msg(what="test items")] if isinstance(written, list)
                  else Annotated[model.Bool, model.Msg()])
    _with_key(monkeypatch, getattr(model, cls), "brandNewKey", annotation, None)
    cfg = harness.stack_config(STACK)
    section = config._decode(cfg[f"rke-aws:{key}"]) if f"rke-aws:{key}" in cfg else {}
    section["brandNewKey"] = written
    cfg[f"rke-aws:{key}"] = config.json.dumps(section)
    obj: Any = parse(cfg)
    for part in path:
        obj = getattr(obj, part)
    assert obj.brand_new_key == parsed_value
    # Not given: the model's default.
    del section["brandNewKey"]
    cfg[f"rke-aws:{key}"] = config.json.dumps(section)
    obj = parse(cfg)
    for part in path:
        obj = getattr(obj, part)
    assert obj.brand_new_key is None


def test_a_key_added_to_the_pool_model_alone_reaches_every_parsed_pool(monkeypatch):
    _with_key(monkeypatch, model.NodePool, "spotMaxPrice", Annotated[int, model.Whole(1, 100), model.Msg()], 7)
    cfg = harness.stack_config(STACK)
    pools = config._decode(cfg["rke-aws:nodePools"])
    pools[0]["spotMaxPrice"] = "42"  # text, as `pulumi config set --path` stores numbers
    cfg["rke-aws:nodePools"] = config.json.dumps(pools)
    parsed = parse(cfg)
    assert [p.spot_max_price for p in parsed.node_pools] == [42] + [7] * (len(pools) - 1)
    # The model's own messages still name the key.
    pools[0]["spotMaxPrice"] = 500
    cfg["rke-aws:nodePools"] = config.json.dumps(pools)
    with pytest.raises(config.ConfigError) as info:
        parse(cfg)
    assert info.value.problems == ["rke-aws:nodePools[0].spotMaxPrice: 500 is out of range; use an integer from 1 to 100"]


def test_a_scalar_key_added_to_the_top_level_model_reaches_the_parsed_config(monkeypatch):
    extended = _with_key(monkeypatch, model.StackConfiguration, "drainTimeout", Annotated[int, model.Whole(0, 3600), model.Msg()],
                         60)
    # The key lists config.py keeps are derived from the model when the module loads: the same
    # derivation, applied to the extended model (the test cannot re-import the module).
    top = model.keys(extended)
    scalars = tuple(k for k in top if k not in (*model.SECTIONS, "nodePools", "tags"))
    monkeypatch.setattr(config, "TOP_LEVEL_KEYS", top)
    monkeypatch.setattr(config, "SCALAR_KEYS", scalars)
    cfg = harness.stack_config(STACK)
    cfg["rke-aws:drainTimeout"] = "300"
    assert parse(cfg).drain_timeout == 300
    del cfg["rke-aws:drainTimeout"]
    assert parse(cfg).drain_timeout == 60


def test_the_key_lists_config_reads_are_the_models():
    assert config.TOP_LEVEL_KEYS == model.keys(model.StackConfiguration)
    assert set(config.SCALAR_KEYS) == set(config.STRING_KEYS) | set(config.BOOL_KEYS)
    assert set(config.SCALAR_KEYS) | set(model.SECTIONS) | {"nodePools", "tags"} == set(config.TOP_LEVEL_KEYS)
    assert config.BOOL_KEYS == ("allowUninstall", "protectServers")


@pytest.mark.parametrize("name, key", [("root_volume_gb", "rootVolumeGb"), ("kms_key_arn", "kmsKeyArn"),
                                       ("ebs_csi", "ebsCsi"), ("ip_block", "ipBlock"), ("ssm", "ssm")])
def test_snake_and_camel_are_inverse(name, key):
    assert config.snake(key) == name and config.camel(name) == key


def _integer_fields(cls: type, seen: set) -> list[tuple[str, Any]]:
    """(section.key, field) of every key whose type holds an int, in `cls` and the sections it nests."""
    import typing

    from pydantic import BaseModel

    def holds(t: Any, kind: type) -> list:
        inner = [x for a in typing.get_args(t) for x in holds(a, kind)]
        return [t, *inner] if isinstance(t, type) and issubclass(t, kind) else inner

    out: list[tuple[str, Any]] = []
    if cls in seen:
        return out
    seen.add(cls)
    for key, info in cls.model_fields.items():
        if int in holds(info.annotation, int):  # bool is a subclass, never int itself
            out.append((f"{cls.__name__}.{key}", info))
        for sub in holds(info.annotation, BaseModel):
            out += _integer_fields(sub, seen)
    return out


def test_every_integer_key_declares_its_range():
    """model._message names the range of a refused integer from the key's Whole(lo, hi); a plain `int` key
    would fail with an AssertionError instead of a config error on hostile input."""
    fields = _integer_fields(model.StackConfiguration, set())
    assert {name for name, _ in fields} >= {"NodePool.count", "NodePool.rootVolumeGb", "EtcdBackup.retention"}
    undeclared = [name for name, info in fields if model._meta(info, model.Whole) is None]
    assert not undeclared, f"integer keys without Whole(lo, hi): {undeclared}"
