"""Day-2 runs: the program after a previous run's outputs (`run`, `refused`), what changed on running
instances, and a fake cluster API (`fake_api`, `kubeconfig`, `node`) for what the program reads from a running
cluster."""

from __future__ import annotations

import base64
import copy
import json
import re

import pulumi
import pytest
import yaml

from rke_aws.plan import running
from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support import fake_cluster
from tests.support.configs import set_key
from tests.support.runs import run_after_cached, run_cached

INSTANCE = "aws:ec2/instance:Instance"


def placement(cfg: dict, outputs: dict, stack: str = "day2"):
    """The placement step the program calls (plan/nodes.py plan_nodes), with what the program gives it: the stack
    read as it reads it, the last outputs as the ClusterState it makes of them (state/migrations.py from_outputs),
    the subnets planned over the zones (plan/network.py plan_subnets): as listed (network.availabilityZones), else
    the ones those outputs keep. Returns (the stack as read, that state, the planned nodes)."""
    from rke_aws.plan.network import plan_subnets
    from rke_aws.plan.nodes import plan_nodes
    from rke_aws.state.migrations import from_outputs
    from tests.support.configs import parse_config

    state = from_outputs(outputs)
    assert state is not None
    read = parse_config(cfg, stack)
    assert read.network.vpc_cidr is not None
    zones = list(read.network.availability_zones or ()) or [
        z for _, z in sorted((int(k.rsplit("-", 1)[1]), z) for k, z in state.subnet_zones.items()
                             if k.startswith("private-"))]
    subnets = plan_subnets(read.network.vpc_cidr, zones, previous=state.subnet_zones)
    return read, state, plan_nodes(read, subnets, state)


# Inputs that never reach a running instance (ignore_changes in nodes.py): a new AMI release or an
# edited boot script must not replace a node.
IGNORED = {"ami", "userData", "userDataBase64"}


KUBECONFIG = stackfile.secret("apiVersion: v1\nkind: Config\n")  # as `pulumi config set --secret` stores it


def _main() -> dict:
    """The program to run: the stack program, or with a fake cluster API when a test installed one."""
    main = fake_cluster.main()
    return {"main": main} if main is not None else {}


def run(config: dict, previous: harness.ProgramRun | None = None, stack: str = "day2") -> harness.ProgramRun:
    """The program's run of `config` after `previous` (a first run of a config is shared, tests/support/runs.py run_cached)."""
    if previous is None:
        return run_cached(config, stack)
    return harness.run_program(config, stack=stack, previous_outputs=previous.outputs, **_main())


def refused(config: dict, previous: harness.ProgramRun, stack: str = "day2") -> str:
    mocks = MotoMocks(config["aws:region"])
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(config, stack=stack, mocks=mocks, previous_outputs=previous.outputs, **_main())
    assert mocks.resources == [], "registered before refusing"
    return str(info.value)


def by_name(r: harness.ProgramRun, typ: str) -> dict[str, harness.Registration]:
    return {x.name: x for x in r.of_type(typ)}


def changed_instances(before: harness.ProgramRun, after: harness.ProgramRun) -> dict[str, set[str]]:
    """Existing instances whose inputs (other than the ignored ones) differ, with the differing keys."""
    old, new = by_name(before, INSTANCE), by_name(after, INSTANCE)
    out = {}
    for name in old.keys() & new.keys():
        keys = {k for k in old[name].inputs.keys() | new[name].inputs.keys()
                if k not in IGNORED and old[name].inputs.get(k) != new[name].inputs.get(k)}
        if keys:
            out[name] = keys
    return out


def with_pool_key(cfg: dict, pool: str, key: str, value) -> dict:
    """A copy of the flat config with one key of the named pool set (`os`, `instanceType`, ...)."""
    out = dict(cfg)
    pools = json.loads(cfg["rke-aws:nodePools"])
    next(p for p in pools if p["name"] == pool)[key] = value
    out["rke-aws:nodePools"] = json.dumps(pools)
    return out


def pools(config: dict) -> list[dict]:
    return json.loads(config["rke-aws:nodePools"])


CODE_RE = re.compile(r"confirmClusterState ([a-z]+-[0-9a-f]{10})")


def readable(cfg: dict, cluster: str = "rke2-prod") -> dict:
    """The stack with a kubeconfig the reader accepts (a token; the fake transport answers)."""
    return set_key(copy.deepcopy(cfg), "kubeconfig",
                   stackfile.secret(kubeconfig(f"https://api.{cluster}.rke-aws.internal:6443", user={"token": "t"})))


def code_in(message: str, topic: str) -> str:
    codes = [c for c in CODE_RE.findall(message) if c.startswith(topic + "-")]
    assert codes, f"no {topic} confirmation code in: {message}"
    return codes[0]


PEM = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def kubeconfig(server: str = "https://api.c.rke-aws.internal:6443", cluster: dict | None = None,
               user: dict | None = None, current: str | None = "default") -> str:
    doc = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "default", "cluster": cluster if cluster is not None else
                      {"server": server, "certificate-authority-data": b64(PEM)}}],
        "users": [{"name": "default", "user": user if user is not None else
                   {"client-certificate-data": b64(PEM), "client-key-data": b64(PEM.replace("CERTIFICATE", "EC PRIVATE KEY"))}}],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": "default"}}],
    }
    if current:
        doc["current-context"] = current
    return yaml.safe_dump(doc)


def node(name: str, version: str, *, etcd: bool = False, cp: bool = False, ready: bool = True, rke1: bool = False) -> dict:
    labels = {"kubernetes.io/hostname": name}
    if etcd:
        labels["node-role.kubernetes.io/etcd"] = "true"
    if cp:
        labels["node-role.kubernetes.io/controlplane" if rke1 else "node-role.kubernetes.io/control-plane"] = "true"
    return {"metadata": {"name": name, "labels": labels},
            "status": {"nodeInfo": {"kubeletVersion": version},
                       "conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": "True" if ready else "Unknown"}]}}


def fake_api(nodes: list[dict], plans: list[dict] | None = None, charts: list[str] | None = None, calls=None,
             addons: list[str] | None = None):
    """`addons`: the k3s Addons the deploy controller has applied (a checksum set), by name."""
    def get(path: str):
        if calls is not None:
            calls.append(path)
        if path == running.NODES_PATH:
            return {"kind": "NodeList", "items": nodes}
        if path == running.PLANS_PATH:
            return None if plans is None else {"items": plans}
        if path == running.HELMCHARTS_PATH:
            return None if charts is None else {"items": [{"metadata": {"name": c}} for c in charts]}
        if path == running.ADDONS_PATH:
            return {"items": [{"metadata": {"name": a, "namespace": "kube-system"}, "spec": {"checksum": "0" * 64}}
                              for a in addons or ()]}
        raise AssertionError(f"unexpected GET {path}")
    return get


def run_shared(config: dict, previous: harness.ProgramRun | None = None, stack: str = "day2") -> harness.ProgramRun:
    """`run`, with a run after `previous` also made once per session (runs.run_after_cached) while no fake cluster API
    is installed: for sequences whose steps several tests share."""
    if previous is None or fake_cluster.main() is not None:
        return run(config, previous, stack)
    return run_after_cached(config, previous, stack)
