"""The one error a configuration problem raises: every problem found, each naming the key, the value and
what is allowed, in one message (the CLI prints it alone)."""

from __future__ import annotations


class ConfigError(Exception):
    """All problems found in one stack configuration."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid stack configuration ({len(self.problems)} problem(s)):\n{lines}")
