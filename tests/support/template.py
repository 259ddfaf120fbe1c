"""Stack files as `pulumi new` writes them from the template's answers."""

from __future__ import annotations

import yaml


def cli_key(key: str, project: str) -> str:
    """A template config key as `pulumi new` stores it (io.go parseConfigKey): one without a namespace
    gets the project's."""
    return key if ":" in key else f"{project}:{key}"


def stack_text(answers: dict[str, str], project: str) -> str:
    """The stack file as `pulumi new` writes it: the prompted keys with the user's answers; empty answers
    are left out (newcmd/config.go encryptTemplateConfig)."""
    return yaml.safe_dump({"config": {cli_key(k, project): v for k, v in answers.items() if v != ""}}, sort_keys=True)
