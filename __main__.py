"""rke-aws: AWS infrastructure for an RKE or RKE2 cluster running the out-of-tree AWS cloud provider.

The stack's configuration and last outputs, resolved into one spec before anything is registered
(components/plan/spec.py), then the cluster (components/rke_cluster.py) and its outputs.
"""

import pulumi

from rke_aws import RkeCluster, load_spec

spec = load_spec()
cluster = RkeCluster(spec.config.cluster_id, spec)
for key, value in cluster.outputs.items():
    pulumi.export(key, value)
