"""Layer 1, pure: the configuration."""
