"""What a person reads: the plan, the diff between two checkouts, the review of registered inputs."""
