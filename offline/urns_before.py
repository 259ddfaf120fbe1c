"""`python -m rke_aws_offline.urns_before <git ref> [--out FILE]`: every URN each stack (stacks/ and tests/stacks/)
registers with the program of <ref>, as a new stack, into tests/data/urns-0.1.json (or FILE), which
tests/program/test_urns.py checks today's program against (every old URN taken over, by URN or alias, as the engine
resolves them). tests/data/urns-0.2.json, from main before the package layout (issue 33), is checked by URN.

The ref's program runs in a fresh interpreter from a `git archive` of it (offline/report/diff.py evaluate), with
this checkout's harness, so URNs are made the same way on both sides (harness.make_urn: the engine's)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from rke_aws_offline.engine import harness
from rke_aws_offline.report import diff

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "urns-0.1.json"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = OUT
    if len(argv) == 3 and argv[1] == "--out":
        out, argv = Path(argv[2]), argv[:1]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    ref = argv[0]
    urns = {}
    texts = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = diff.checkout(ref, diff.ROOT, Path(tmp))
        for stack in harness.stack_names():
            result = diff.evaluate(root, harness.stack_file(stack), None)
            if "refused" in result:
                print(f"{stack}: refused at {ref}: {result['refused'][:300]}", file=sys.stderr)
                return 1
            urns[stack] = [r["urn"] for r in result["resources"]]
            # The stack file as run: tests/program/test_urns.py runs today's program on it, not on stacks/ as a user
            # has since changed it (their stacks' URNs are theirs; these are the data's).
            texts[stack] = harness.stack_file(stack).read_text()
    out.write_text(json.dumps({"comment": f"Every URN each stack registered with the program of {ref}, as new "
                                          "stacks, and the stack file each was run with; written by python -m "
                                          "rke_aws_offline.urns_before.",
                               "ref": ref, "urns": urns, "stacks": texts}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
