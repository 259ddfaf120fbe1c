"""rke-aws policy pack: `pulumi preview --policy-pack policies` (from the project root).

The rules live in rules.py so tests can import them without constructing `PolicyPack`, which
starts the analyzer's gRPC server and blocks.
"""

import sys
from pathlib import Path

from pulumi_policy import EnforcementLevel, PolicyPack

# The analyzer runs this directory with runpy (the directory is sys.path[0] then); be explicit anyway.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rules  # noqa: E402

PolicyPack(
    name="rke-aws",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=rules.POLICIES,
)
