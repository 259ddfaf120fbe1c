"""One configuration model (components/settings/sections.py): every field's alias is its stack key, the
schema editors use names fields by those aliases, and the resolved configuration keeps the arguments' fields
(ClusterConfig narrows RkeClusterArgs: same attribute names, nothing mirrored)."""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from rke_aws.settings import sections
from rke_aws.settings.args import RkeClusterArgs
from rke_aws.settings.resolve import ClusterConfig, PoolConfig
from rke_aws_offline import schema


def test_every_alias_is_its_stack_key():
    for model in (sections.ClusterKeys, sections.NodePool, *sections.SECTIONS.values()):
        for name, info in model.model_fields.items():
            if name == "region":
                continue
            assert info.alias == to_camel(name), f"{model.__name__}.{name}"


def test_the_schema_uses_the_aliases():
    text = schema.schema_text()
    assert '"nodePools"' in text and '"natGateways"' in text
    assert "node_pools" not in text and "nat_gateways" not in text


def test_the_resolved_config_narrows_the_arguments():
    assert issubclass(ClusterConfig, RkeClusterArgs) and issubclass(PoolConfig, sections.NodePool)
    assert set(sections.ClusterKeys.model_fields) <= set(ClusterConfig.model_fields)
    args = RkeClusterArgs(distribution="rke2", node_pools=[{"name": "workers", "roles": ["worker"], "count": 3}])
    assert args.node_pools is not None and args.node_pools[0].name == "workers"
    assert RkeClusterArgs.model_validate({"distribution": "rke2", "nodePools": [{"name": "a"}]}).node_pools
