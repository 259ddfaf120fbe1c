"""Tools that talk to a real AWS account (or the emulated one): doctor, kubeconfig."""
