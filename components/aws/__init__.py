"""Layer 4: the AWS components."""
