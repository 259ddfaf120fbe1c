"""rke-aws: AWS infrastructure for an RKE or RKE2 cluster running the out-of-tree AWS cloud provider.

The stack program: one RkeCluster from this stack's keys (namespace: the project's name), exporting its
state as this repository's 0.x stacks always did (flat outputs, components/state).
"""

from rke_aws import RkeCluster, RkeClusterArgs

args = RkeClusterArgs.from_pulumi_config()
cluster = RkeCluster(args.cluster_id, args, flat_outputs=True)
