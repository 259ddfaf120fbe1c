""""Did you mean" for a value one edit away from an allowed one (issue 34.7): enumerations (pydantic's literal
errors) and pool roles, in the pool's own key (by name)."""

from __future__ import annotations

import pytest

from rke_aws.diagnostics import ConfigError
from rke_aws.settings.args import RkeClusterArgs

POOL = {"name": "agents", "roles": ["worker"], "count": 2}


@pytest.mark.parametrize("config, key, meant", [
    ({"nodePools": [{**POOL, "roles": ["workers"]}]}, "nodePools[agents].roles", "worker"),
    ({"nodePools": [{**POOL, "market": "Spot"}]}, "nodePools[agents].market", "spot"),
    ({"network": {"natGateways": "perAZ"}}, "network.natGateways", "perAz"),
    ({"distribution": "rke-2"}, "distribution", "rke2"),
])
def test_a_near_miss_is_refused_with_a_suggestion(config, key, meant):
    with pytest.raises(ConfigError) as info:
        RkeClusterArgs.from_stack_config({"distribution": "rke2", **config}, region="us-east-1")
    (d,) = [d for d in info.value.diagnostics if d.key == key]
    assert d.code == "config.allowed-values"
    assert f"did you mean {meant}?" in d.render("rke-aws:")
