"""Problems as data: what a check finds (`Diagnostic`), how bad it is (`Severity`), and the one error a
refused configuration raises (`ConfigError`), every problem at once.

The bottom of the package: imports nothing of rke_aws, so every layer (settings, plan, ...) and the tools
may use it. Checks are converted to return Diagnostics one by one (issue 33); until then a ConfigError
also takes today's problem sentences (`"rke-aws:<key>: <message>"`) and renders both the same way.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

# The prefix of a key in the stack file's words (the project's namespace); a key that names its own
# namespace ("aws:region") keeps it.
STACK_PREFIX = "rke-aws:"
# In commands the confirmation key goes bare: the CLI gives a key without a namespace the project's
# (pulumi/pulumi pkg/cmd/pulumi/config/io.go parseConfigKey), which `pulumi new` may have renamed.
CONFIRM_CLI_KEY = "confirmClusterState"


class Severity(StrEnum):
    ERROR = "error"  # refused: nothing is registered
    WARNING = "warning"  # planned, and logged as a warning
    NOTE = "note"  # planned, and logged for information


@dataclass(frozen=True)
class Statement:
    """Something only the user can vouch for when the cluster cannot be read, and its code."""
    topic: str
    text: str

    @property
    def code(self) -> str:
        return f"{self.topic}-{hashlib.sha256(self.text.encode()).hexdigest()[:10]}"

    def how(self) -> str:
        return (f"confirm it: `pulumi config set {CONFIRM_CLI_KEY} {self.code}` (this code confirms exactly: "
                f"\"{self.text}\") and `pulumi up` again")


@dataclass(frozen=True)
class Diagnostic:
    """One problem (or warning, or note) a check found.

    `key`: the stack key it is about, without the namespace (`nodePools[workers].instanceType`); a key
    with its own namespace (`aws:region`) keeps it; empty for a problem given as a whole sentence.
    `message`: the sentence after "key: ", with the value as the user wrote it.
    `code`: the rule's stable ID (`pool.spot-server`): what tests and tools match on, never the wording.
    `value`: the value as written (never rendered: it may be a secret). `fix`: rendered as "; {fix}".
    `confirm`: the statement a refusal asks the user to confirm (its code is `confirm.code`).
    """
    key: str
    message: str
    code: str
    severity: Severity = Severity.ERROR
    value: object = None
    fix: str = ""
    confirm: Statement | None = None

    @classmethod
    def text(cls, sentence: str, severity: Severity = Severity.ERROR) -> Diagnostic:
        """A problem still written as one sentence (key included), as checks report them before conversion."""
        return cls(key="", message=sentence, code="", severity=severity)

    def render(self, prefix: str = STACK_PREFIX) -> str:
        """`<prefix><key>: <message>[; <fix>]`: "rke-aws:" for the stack file, "cluster dev: " in Python."""
        tail = f"{self.message}; {self.fix}" if self.fix else self.message
        if not self.key:
            return tail
        key = self.key if ":" in self.key else f"{prefix}{self.key}"
        return f"{key}: {tail}"


class ConfigError(Exception):
    """All problems found in one stack configuration (a refusal: nothing is registered).

    Takes Diagnostics or, until every check returns them, problem sentences; `problems` holds each
    rendered as a sentence, `diagnostics` each as a Diagnostic (a sentence as `Diagnostic.text`)."""

    def __init__(self, problems: Sequence[str | Diagnostic], prefix: str = STACK_PREFIX):
        self.prefix = prefix
        self.diagnostics = [p if isinstance(p, Diagnostic) else Diagnostic.text(p) for p in problems]
        self.problems = [d.render(prefix) for d in self.diagnostics]
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid stack configuration ({len(self.problems)} problem(s)):\n{lines}")

    def __reduce__(self) -> tuple[type[ConfigError], tuple[list[Diagnostic], str]]:  # pickled (xdist, shared runs) with its diagnostics, not its message
        return type(self), (self.diagnostics, self.prefix)


def suggest(value: object, choices: Iterable[str]) -> str | None:
    """The choice `value` is most likely a typo of (letter case ignored), or None."""
    if not isinstance(value, str):
        return None
    folded = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(value.lower(), list(folded), n=1, cutoff=0.6)
    return folded[match[0]] if match else None
