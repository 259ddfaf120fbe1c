"""The stack program (__main__.py) with the running cluster read through tests/support/fake_cluster.py."""

from rke_aws import RkeCluster, RkeClusterArgs
from rke_aws.plan.environment import Environment
from tests.support import fake_cluster

args = RkeClusterArgs.from_pulumi_config()
cluster = RkeCluster(args.cluster_id, args, flat_outputs=True,
                     environment=Environment.from_runtime(cluster_reader=fake_cluster.reader))
