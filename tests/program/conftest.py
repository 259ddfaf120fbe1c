"""Fixtures of the program-level tests (tests/program/**): the fake cluster API a day-2 run reads."""

from __future__ import annotations

import pytest

from rke_aws.plan import running
from rke_aws_offline.engine import harness
from tests.support.day2 import fake_api, node


@pytest.fixture
def cluster(monkeypatch):
    """Install a fake API: cluster(run, versions={name: version}, etcd=[names], not_ready=[names])."""
    state: dict = {}

    def install(r: harness.ProgramRun, version: str | None = None, *, versions_by_node=None, etcd=None,
                not_ready=(), charts=None, plans=None):
        items = []
        names = etcd if etcd is not None else [n["name"] for n in r.outputs["nodes"] if "etcd" in n["roles"]]
        for n in r.outputs["nodes"]:
            v = (versions_by_node or {}).get(n["name"], version or r.outputs["kubernetesVersion"])
            items.append(node(n["name"], v, etcd=n["name"] in names, cp="controlplane" in n["roles"],
                              ready=n["name"] not in not_ready))
        for extra in set(names) - {n["name"] for n in r.outputs["nodes"]}:  # removed members still registered
            items.append(node(extra, version or r.outputs["kubernetesVersion"], etcd=True, cp=True, ready=False))
        state["get"] = fake_api(items, plans if plans is not None else [], charts if charts is not None else [])
        monkeypatch.setattr(running, "TRANSPORT", lambda access: state["get"])
    return install
