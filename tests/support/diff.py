"""The offline diff's runs shared by tests: a base evaluated once, a change judged against it."""

from __future__ import annotations

import json
from functools import cache

from rke_aws_offline.report import diff

from .runs import run_stack_cached

NLB_STACK = "rke2-govcloud"  # tests/stacks: RKE2, three servers, NLB endpoint, manifest mode


@cache
def _evaluated(stack: str) -> str:
    return json.dumps(diff.result_of(run_stack_cached(stack)), default=str)


def base_of(stack: str) -> dict:
    return json.loads(_evaluated(stack))


def res(result: dict, typ: str, name: str | None = None) -> dict:
    return next(r for r in result["resources"] if r["type"] == typ and (name is None or r["name"] == name))


def change_of(d: diff.StackDiff, name: str) -> diff.Change:
    (c,) = [c for c in d.changes if c.name == name]
    return c
