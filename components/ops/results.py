"""What a doctor check reports: PASS, WARN or FAIL for one subject, with the fix."""

from __future__ import annotations

from dataclasses import dataclass

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"


@dataclass
class Result:
    check: str
    status: str
    subject: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status}  {self.check:<14} {self.subject}: {self.detail}"
        return text + (f"\n      fix: {self.fix}" if self.fix and self.status != PASS else "")


def report(results: list[Result], title: str) -> str:
    counts = {s: sum(r.status == s for r in results) for s in (PASS, WARN, FAIL)}
    lines = [r.line() for r in results]
    lines.append(f"{title}: {counts[PASS]} passed, {counts[WARN]} warning(s), {counts[FAIL]} failed")
    return "\n".join(lines)


def failed(results: list[Result]) -> list[Result]:
    return [r for r in results if r.status == FAIL]
