"""The one error a configuration problem raises: every problem found, each naming the key, the value and
what is allowed, in one message (the CLI prints it alone). Defined with the Diagnostics it carries
(rke_aws.diagnostics); imported from here by the checks not yet converted to Diagnostics."""

from __future__ import annotations

from ..diagnostics import ConfigError

__all__ = ["ConfigError"]
