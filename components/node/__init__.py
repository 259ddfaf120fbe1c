"""Layer 3, pure: what runs on a node."""
