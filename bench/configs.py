"""Synthetic stack configs of N nodes: 3 controlplane+etcd servers plus worker pools.

Pools are cut to the address plan's capacity (components/plan/nodes.py: one address block per
pool and AZ, 117 nodes per block with a /16 VPC), so every config is one the program accepts.
"""

from __future__ import annotations

import json

from rke_aws.plan.network import default_subnet_cidr
from rke_aws.plan.nodes import block_capacity
from rke_aws.settings import stackfile
from rke_aws.settings.fields import MAX_POOL_BLOCKS

DISTRIBUTIONS = ("rke", "rke2")
REGION = "us-west-2"
VPC_CIDR = "10.0.0.0/16"
AZS = 3
SERVERS = 3
# A syntactically valid kubeconfig: with it the program also registers the CCM's kubernetes
# Provider and helm Release, i.e. the full resource set a stack ever holds (phase two).
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: "https://10.0.0.10:6443"}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
users: [{name: bench, user: {token: bench}}]
"""


def pool_capacity() -> int:
    """Nodes one pool can hold: one block per private subnet, one subnet per AZ."""
    return block_capacity(default_subnet_cidr(VPC_CIDR, "private", 0)) * AZS


def node_pools(n: int) -> list[dict]:
    if n < SERVERS + 1:
        raise ValueError(f"{n} nodes: need at least {SERVERS + 1}")
    cap = pool_capacity()
    workers = n - SERVERS
    k = -(-workers // cap)
    if k + 1 > MAX_POOL_BLOCKS:
        raise ValueError(f"{n} nodes need {k + 1} pools; the address plan has {MAX_POOL_BLOCKS}")
    pools = [{"name": "servers", "roles": ["controlplane", "etcd"], "count": SERVERS, "instanceType": "m6i.xlarge"}]
    for i in range(k):
        count = workers // k + (1 if i < workers % k else 0)
        pools.append({"name": f"workers-{i}", "roles": ["worker"], "count": count, "instanceType": "m6i.2xlarge"})
    return pools


def stack_config(distribution: str, n: int, kubeconfig: bool = True) -> dict[str, str]:
    """The flat config map the engine would hand the program (as rke_aws.settings.stackfile.flatten_stack makes it)."""
    cfg = {
        "aws:region": REGION,
        "rke-aws:distribution": distribution,
        "rke-aws:clusterId": f"bench-{distribution}-{n}",
        "rke-aws:network": json.dumps({"vpcCidr": VPC_CIDR, "availabilityZones": AZS, "natGateways": "perAz"}),
        "rke-aws:access": json.dumps({"adminCidrs": ["10.0.0.0/8"]}),
        "rke-aws:nodePools": json.dumps(node_pools(n)),
        "rke-aws:tags": json.dumps({"environment": "bench"}),
    }
    if kubeconfig:
        # Secret, as `pulumi config set --secret` stores it: the program refuses a plain-text kubeconfig.
        cfg["rke-aws:kubeconfig"] = stackfile.secret(KUBECONFIG)
    return cfg


def stack_name(distribution: str, n: int) -> str:
    return f"bench-{distribution}-{n}"
