"""What this update knows beyond the stack's last state, and the user's confirmations.

Outputs say what the last update configured, not what runs: a version change rolls through the nodes for a
while after the update, and etcd keeps the members of removed servers until their Nodes are deleted. The
day-2 guards therefore judge against, in this order: the cluster itself when it can be read
(components/plan/running.py), what earlier updates recorded as confirmed (`kubernetesVersionConfirmed`,
`etcdMembersRemoved`, `etcdSnapshotsRunning`), and what the user confirms with `confirmClusterState`. A
confirmation is a code naming one exact statement ("every node runs v1.34.1+rke2r1", "etcd lists exactly
these members"); a refusal carries the statement (`Diagnostic.confirm`) and prints it with its code, and a
code left in the stack file confirms nothing once the state has moved on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...diagnostics import CONFIRM_CLI_KEY, Diagnostic, Severity, Statement

CONFIRM_KEY = "confirmClusterState"


def parse_codes(value: str | None) -> frozenset[str]:
    return frozenset(c for c in re.split(r"[\s,]+", value or "") if c)


@dataclass(frozen=True)
class Observed:
    """What this update can know beyond the last outputs: the cluster as read (or why not) and the
    user's confirmation codes."""
    live: Any = None  # running.LiveCluster, or None
    unreadable: str | None = None  # why the cluster was not read
    codes: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        return "the cluster" if self.live is not None else "this stack's last outputs"

    def confirmed(self, statement: Statement) -> bool:
        return statement.code in self.codes

    def no_read(self) -> str:
        return (f"the cluster could not be read ({self.unreadable})" if self.unreadable
                else "no kubeconfig reaches the cluster")


def with_combined_confirmation(problems: Sequence[Diagnostic], observed: Observed) -> list[Diagnostic]:
    """Each refusal asking for a confirmation prints `pulumi config set confirmClusterState <its code>`, and
    each such command replaces the value: with more than one code pending (or one pending and others
    already set), running them in turn keeps only the last (review finding 10). One more problem gives the
    value holding all of them, comma-separated (CONFIRM_CODES_PATTERN in settings/model.py)."""
    pending = list(dict.fromkeys(d.confirm.code for d in problems if d.confirm is not None))
    if not pending:
        return list(problems)
    codes = sorted(set(observed.codes) - set(pending)) + pending
    if len(codes) < 2:
        return list(problems)
    return [*problems, Diagnostic(
        CONFIRM_KEY, f"to confirm {'these' if len(pending) > 1 else 'this'} together with "
        f"{'each other' if len(codes) == len(pending) else 'what is already confirmed'}, set every code at once "
        f"(each command above replaces the value): `pulumi config set {CONFIRM_CLI_KEY} {','.join(codes)}`, then "
        "`pulumi up` again", "confirm.combined")]


def stale_confirmations(observed: Observed, statements: Iterable[Statement | None]) -> tuple[Diagnostic, ...]:
    """A code that confirms nothing this update needs (`statements`: what this update used or asks for):
    the state it confirmed has moved on."""
    current = {s.code for s in statements if s is not None}
    stale = sorted(observed.codes - current)
    if not stale:
        return ()
    return (Diagnostic(CONFIRM_KEY, f"{', '.join(stale)} confirms nothing this update needs (a confirmation names "
                                    "one exact state, and the cluster has moved on from it); remove it: `pulumi "
                                    f"config rm {CONFIRM_CLI_KEY}`", "confirm.stale", Severity.WARNING),)
