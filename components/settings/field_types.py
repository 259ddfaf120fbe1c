"""How a field is declared and how its values read: `Msg` (a field's messages and reference), the constrained
types (`Whole`, `NonEmpty`, `SchemaPattern`, `Bool`, `Hours`, `OrUnset`), the text forms a stack file may
hold numbers and booleans in, and how a message shows a value (`shown`, `number`, `json_text`). Part of the
vocabulary settings/fields.py gathers."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

import annotated_types
from pydantic import BeforeValidator, Strict, StringConstraints
from pydantic.json_schema import WithJsonSchema
from pydantic_core import PydanticCustomError

from .field_patterns import BOOL_TEXTS, INT_TEXT_PATTERN


@dataclass(frozen=True)
class Msg:
    """How a field's problems read, and how the reference shows it."""

    what: str = ""  # what a valid value is: "an EC2 key pair name"
    kind: str = ""  # for allowed values: "a NAT layout" -> '"x" is not a NAT layout; use ...'
    allowed: str = ""  # the allowed values as the message lists them (default: "a or b")
    pattern: str = ""  # message for a value the pattern refuses ({json}, {value})
    type: str = ""  # message for a value of the wrong type ({json})
    item: str = ""  # message for a bad item of a list or map ({json}, {repr})
    missing: str = ""  # message when a required key is absent
    default: str = ""  # the default as the reference shows it, when it is not a plain value
    reason: str = ""  # why the default
    type_name: str = ""  # the type as the reference shows it
    declare: bool = False  # declared in Pulumi.yaml (scalar top-level keys)
    why: Callable[[str], str | None] | None = None  # which rule a value the pattern refuses breaks
    # A value never to be shown (it may carry a credential): (code, message) instead of the pattern's message.
    hide: Callable[[str], tuple[str, str] | None] | None = None


INT_TEXT_RE = re.compile(INT_TEXT_PATTERN)


def numeric_string(value: Any) -> Any:
    # `pulumi config set --path a.b 3` stores the text "3"; ASCII digits only (int() would also
    # take "٣" or " 3 ", which the schema could not say the same way).
    if isinstance(value, str) and INT_TEXT_RE.fullmatch(value):
        return int(value)
    return value


def boolean_string(value: Any) -> Any:
    if isinstance(value, str) and value in BOOL_TEXTS:
        return value.lower() == "true"
    return value


# A key's constrained type is written the way a type checker reads it, `Annotated[int, Whole(0, 500)]`: the
# Python type first, then metadata objects pydantic expands into its own constraints (annotated_types'
# GroupedMetadata, as pydantic's StringConstraints is). A call in the type position would be opaque to mypy.

@dataclass(frozen=True)
class Whole(annotated_types.GroupedMetadata):
    """An integer from `lo` to `hi`, given as a number or its decimal text; `_message` names the range."""

    lo: int
    hi: int

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        # Constraints before the string conversion: they land on the integer (and in the schema as minimum/maximum).
        yield annotated_types.Ge(self.lo)
        yield annotated_types.Le(self.hi)
        yield BeforeValidator(numeric_string)


Bool = Annotated[bool, Strict(), BeforeValidator(boolean_string)]


def _whole_hours(value: Any) -> Any:
    if isinstance(value, bool):  # True == 1 would pass as one hour
        raise PydanticCustomError("literal_error", "a boolean is not a number of hours")
    return numeric_string(value)


# Snapshot intervals a cron `0 */N * * *` spaces evenly over a day.
HourCount = Literal[1, 2, 3, 4, 6, 8, 12, 24]
HOURS: tuple[int, ...] = typing.get_args(HourCount)
Hours = Annotated[HourCount, BeforeValidator(_whole_hours)]


@dataclass(frozen=True)
class NonEmpty(annotated_types.GroupedMetadata):
    """A non-empty string, matching `pattern` when given: `Annotated[str, NonEmpty(PATTERN)]`."""

    pattern: str | None = None
    max_length: int | None = None

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        yield from StringConstraints(min_length=1, max_length=self.max_length, pattern=self.pattern)


@dataclass(frozen=True)
class SchemaPattern(annotated_types.GroupedMetadata):
    """A string checked by config.py (its message depends on other keys, or needs more words than
    a pattern's); the schema still says the form, and tests/tooling/test_schema.py holds both to one verdict."""

    pattern: str

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        yield WithJsonSchema({"type": "string", "pattern": self.pattern})


def shown(value: Any, limit: int = 80) -> str:
    """A value as a message shows it: 'text' when it is plain printable ASCII, else JSON (control,
    zero-width and non-ASCII characters escaped); long values cut."""
    if isinstance(value, str) and re.fullmatch(r"[ -&(-~]*", value) and len(value) <= limit:
        return f"'{value}'"
    text = json_text(value)
    size = len(value) if isinstance(value, str) else len(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({size} characters)"


def number(value: Any) -> str:
    """A number as a message shows it, as the user wrote it: 6, not 6.0. Numbers read back from the
    stack's last outputs are doubles (a protobuf Struct: pulumi/pulumi sdk/python/lib/pulumi/runtime/
    rpc.py), so an exported 6 comes back 6.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_text(value: Any) -> str:
    """json.dumps that cannot fail: hostile input nests deeper than the encoder recurses."""
    try:
        return json.dumps(value)
    except (RecursionError, TypeError, ValueError):
        return "<a value nested too deeply to show>"


NULL_PROBLEM = "is null (YAML `~`, `null` or nothing after the colon); give a value, or remove the key for its default"
# What the Pulumi CLI hands a program today for a top-level `key: ~` (offline/engine/harness.py says why).
EMPTY_PROBLEM = ("is empty (what the Pulumi CLI passes for `key: ~` or nothing after the colon); give a value, or remove "
                 "the key for its default")


_T = TypeVar("_T")
if TYPE_CHECKING:
    # A key whose default is None ("not set"): its attribute reads a value or None, while a value given
    # must have the key's type (pydantic validates what is given, never the default; `key: ~` is refused).
    # Type checkers see the Optional; pydantic sees the bare type, so None stays an invalid input.
    OrUnset: TypeAlias = _T | None
else:
    class OrUnset:
        def __class_getitem__(cls, item: Any) -> Any:
            return item
