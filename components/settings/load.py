"""Reading this stack's configuration from the Pulumi runtime: the only place that does."""

from __future__ import annotations

from typing import Any

from .config import StackConfig, parse


def load_config(previous: Any = None) -> StackConfig:
    """Read this stack's configuration from the Pulumi runtime (the only place that does).
    `previous`: the stack's last outputs (history.Previous), or None for a new stack."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    raw: dict[str, Any] = dict(runtime_config.get_config_env())
    raw.update(runtime_config.CONFIG.get())
    secret = set(runtime_config.get_config_secret_keys_env()) | {k for k in raw if runtime_config.is_config_secret(k)}
    region = raw.get("aws:region")
    return parse(raw, project=pulumi.get_project(), stack=pulumi.get_stack(), region=region, secret_keys=secret,
                 running_version=previous.kubernetes_version if previous else None,
                 running_etcd_members=len(previous.etcd_members) if previous else 0)
