"""Operations on a running cluster, run from a workstation against the real backend and AWS (rotation)."""
