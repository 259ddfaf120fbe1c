"""Stacks with Rancher registration: configs and the refusals and warnings they give."""

from __future__ import annotations

import copy
import json

import pytest

from rke_aws.settings import config, stackfile
from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.day2 import KUBECONFIG

CLUSTER = "rancher2:index/cluster:Cluster"


TOKEN = "token-abcde:0123456789abcdef"


def with_rancher(cfg: dict, secret: bool = True, **keys) -> dict:
    section = {"url": "https://rancher.example.com", "token": TOKEN, **keys}
    cfg = copy.deepcopy(cfg)
    cfg["rke-aws:rancher"] = stackfile.secret(json.dumps(section)) if secret else json.dumps(section)
    return cfg


def helm(stack: str = "rke2-prod") -> dict:
    return set_key(harness.stack_config(stack), "kubeconfig", KUBECONFIG)


def warned(r: harness.ProgramRun, text: str) -> str:
    found = [m for lvl, m in r.logs if lvl == "warning" and text in m]
    assert found, [m for _, m in r.logs]
    return found[0]


def parse(extra: dict, secret=("rke-aws:rancher",), distribution="rke2") -> config.StackConfig:
    raw = {k: v for k, v in harness.stack_config(f"{distribution}-dev").items()}
    raw.update(extra)
    return config.parse(raw, project="rke-aws", stack="dev", region=raw["aws:region"], secret_keys=secret)


def problems(extra: dict, **kw) -> str:
    with pytest.raises(config.ConfigError) as info:
        parse(extra, **kw)
    return str(info.value)
