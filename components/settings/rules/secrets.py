"""kubeconfig: not blank, and encrypted in a stack file (it holds cluster-admin credentials)."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from .base import Context, Keys, error


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    kubeconfig = keys.valid.kubeconfig
    if kubeconfig is None:
        return []
    if not kubeconfig.get_secret_value().strip():
        return [error("kubeconfig", "is blank; set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml` or "
                                    "remove it", "secrets.blank")]
    if ctx.secret_keys is not None and "kubeconfig" not in ctx.secret_keys:
        # Pulumi.yaml cannot declare it `secret: true` (see there), so the program insists instead:
        # a plain-text kubeconfig would sit in the stack file, in git, unencrypted.
        return [error("kubeconfig", "is stored as plain text in the stack file; it holds cluster-admin credentials: set "
                                    "it with `pulumi config set --secret kubeconfig < kubeconfig.yaml`",
                      "secrets.plain-text")]
    return []
