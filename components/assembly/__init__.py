"""RkeCluster's parts: each function creates the resources of the components it owns (children of the
cluster, with the alias of the time they were children of the stack) and returns their handles; the
cluster's constructor (components/rke_cluster.py) wires them in order. No component levels of their own:
a new parent would change every child's URN."""
