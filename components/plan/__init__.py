"""Layer 2: everything decided before the first resource (pure, plus look-ups through invokes)."""
