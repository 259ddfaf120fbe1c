"""Progress lines for the commands that take more than a moment (issue 34 §6): one stderr line per phase or
stack, so `plan` and `diff` never sit silent for seconds; `--quiet` silences them. stdout stays the result
alone (`rke-aws plan x --json > plan.json`, `rke-aws diff --format markdown > comment.md`).

On a terminal each line replaces the previous one and the last is cleared when the command is done; in a log
(CI) every phase stays, one line each.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._shown = False

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        if self.live:
            self.stream.write("\r\033[K" + message)
        else:
            self.stream.write(message + "\n")
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        """Clear the live line (a terminal), so the result starts on a clean line."""
        if self.live and self._shown and not self.quiet:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self._shown = False

    def elapsed(self) -> str:
        return f"{time.monotonic() - self.start:.0f} s"
