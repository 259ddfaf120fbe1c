"""Reading this stack's configuration from the Pulumi runtime, resolved against its last outputs."""

from __future__ import annotations

from typing import Any

from .resolve import ClusterConfig, Running, from_flat


def load_config(previous: Any = None) -> ClusterConfig:
    """This stack's keys (the project's namespace) read, checked and resolved in one step: every problem at
    once. `previous`: the stack's last outputs (history.Previous), or None for a new stack."""
    import pulumi  # noqa: PLC0415 - the one reader of the Pulumi runtime
    from pulumi.runtime import config as runtime_config  # noqa: PLC0415

    raw: dict[str, Any] = dict(runtime_config.get_config_env())
    raw.update(runtime_config.CONFIG.get())
    secret = set(runtime_config.get_config_secret_keys_env()) | {k for k in raw if runtime_config.is_config_secret(k)}
    running = Running(kubernetes_version=previous.kubernetes_version, etcd_members=len(previous.etcd_members)) \
        if previous else None
    return from_flat(raw, project=pulumi.get_project(), stack=pulumi.get_stack(), secret_keys=secret, running=running)
