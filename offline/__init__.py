"""The offline tooling, installed as the package rke_aws_offline (pyproject.toml). Imports nothing: offline/tasks.py
runs as `python3 -m offline.tasks` with the system Python alone, before any dependency exists."""
