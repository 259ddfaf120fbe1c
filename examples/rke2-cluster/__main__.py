"""One RKE2 cluster from this stack's keys (namespace: this project's name); its state is exported under its name."""
from rke_aws import RkeCluster, RkeClusterArgs

args = RkeClusterArgs.from_pulumi_config()  # every problem in the stack file at once, before anything is created
RkeCluster(args.cluster_id, args)
