"""Offline performance bench for the rke-aws program (`make bench`; see bench/run.py)."""
