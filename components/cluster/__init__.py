"""Layer 5: what is installed in the cluster."""
