"""Values as a reviewer reads them in the plan and the diff: as YAML or JSON would show them.

The engine hands numbers over as floats (`30.0`) and Python prints `True`/`None`; a reviewer reads `30`,
`true`, `null`. Only the text is converted: the plan's JSON (tests/snapshots) keeps what the engine gave.
Imports nothing of rke_aws (the diff runs beside another checkout's program).
"""

from __future__ import annotations

import json
import re
from typing import Any

# An identifier the emulated account made up in AWS's shape (`vpc-02e3f6b8a78100b6f`): shown shortened and
# marked, so nobody takes it for a real resource.
_AWS_ID = re.compile(r"^([a-z]+(?:-[a-z]+)?)-([0-9a-f]{8,17})$")
# An access key ID's shape (AKIA long-term, ASIA temporary): never shown, even an emulated one.
_ACCESS_KEY_ID = re.compile(r"^(?:AKIA|ASIA)[A-Z0-9]{12,}$")
ELLIPSIS = "…"


def plain(value: Any) -> Any:
    """`value` with integral floats as ints (`30.0` -> `30`), recursively: what YAML and JSON would show."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def scalar(value: Any) -> str:
    """One value on one line: strings bare, everything else as JSON (`true`, `null`, `30`, `["a", "b"]`)."""
    value = plain(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=False, default=str)


def short(value: Any, width: int = 80) -> str:
    """`scalar(value)` cut to `width` characters (with an ellipsis)."""
    text = " ".join(scalar(value).split())
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def emulated_id(resource_id: str | None) -> str | None:
    """How the text shows an ID the emulated account made: `vpc-02e3… (emulated)`; an access key ID never
    (`(emulated access key)`); other IDs (names, ARNs) as they are, marked."""
    if not resource_id:
        return None
    if _ACCESS_KEY_ID.match(resource_id):
        return "(emulated access key)"
    m = _AWS_ID.match(resource_id)
    if m:
        return f"{m.group(1)}-{m.group(2)[:4]}{ELLIPSIS} (emulated)"
    return f"{resource_id} (emulated)"


def natural_key(text: str) -> tuple:
    """Sort key putting `private-2` before `private-10`."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
