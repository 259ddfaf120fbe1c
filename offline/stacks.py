"""The environments: one per stacks/Pulumi.<stack>.yaml. Standard library only (CI runs it bare).

    python3 -m offline.stacks            # GitHub step outputs: all=[...], first=[...], production=[...]

The workflows take their matrices from here, so adding an environment is adding its stack file
(and its snapshot, `make snapshots`); nothing else lists the stacks. Stacks whose name ends in
`-prod` are production: deployed after every other stack succeeded, one at a time.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# RKE_AWS_STACKS_DIR: another directory of stack files in place of stacks/, for tests only
# (tests/test_user_stacks.py runs the tests over stacks/ against a copy whose files all carry a
# kubeconfig, as a user's own stacks may).
STACKS_DIR = Path(os.environ["RKE_AWS_STACKS_DIR"]) if os.environ.get("RKE_AWS_STACKS_DIR") else ROOT / "stacks"
PRODUCTION_SUFFIX = "-prod"


def environments() -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def is_production(stack: str) -> bool:
    return stack.endswith(PRODUCTION_SUFFIX)


def matrices() -> dict[str, list[str]]:
    stacks = environments()
    return {
        "all": stacks,
        "first": [s for s in stacks if not is_production(s)],
        "production": [s for s in stacks if is_production(s)],
    }


def main() -> int:
    for key, stacks in matrices().items():
        print(f"{key}={json.dumps(stacks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
