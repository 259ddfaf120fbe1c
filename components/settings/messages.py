"""Pydantic's verdict on one key, in the program's words: `<key path>: <value as written> <what is wrong>;
<what is allowed>`, as a Diagnostic with a stable code (tests match the code, never the wording).

`from_pydantic` turns a whole ValidationError into Diagnostics (a section built in Python);
`check` validates what a stack file gave for one section and keeps what is valid: a field with a problem is
left out and validation repeated, so the rules that span keys (settings/rules/) still judge the rest.
Generic over pydantic models (the sections are settings/sections.py's, which imports this module).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from ..diagnostics import Diagnostic, suggest
from .fields import EMPTY_PROBLEM, NULL_PROBLEM, POOL_NAME_RE, Msg, Whole, json_text, shown

# Codes of the problems one key has alone (the rules' codes are `<section>.<rule>`).
UNKNOWN_KEY = "config.unknown-key"
TYPE = "config.type"
RANGE = "config.range"
ALLOWED = "config.allowed-values"
EMPTY = "config.empty"
TOO_LONG = "config.too-long"
PATTERN = "config.pattern"
INVALID = "config.invalid"
MISSING = "config.missing"
NULL = "config.null"
EMPTY_VALUE = "config.empty-value"

# Set while a section validates inside another (or inside `check`): the outermost reports every error at
# once, in the program's words; the inner ones hand pydantic's errors up.
_NESTED: ContextVar[bool] = ContextVar("rke_aws_settings_nested", default=False)


def nested() -> bool:
    return _NESTED.get()


@contextmanager
def pydantic_errors() -> Iterator[None]:
    """Within: sections raise pydantic's ValidationError (read here), not ConfigError."""
    token = _NESTED.set(True)
    try:
        yield
    finally:
        _NESTED.reset(token)


@dataclass(frozen=True)
class Item:
    """A list entry in a key path, named by its label: `nodePools[workers]` (a pool's name) or `nodePools[1]`."""
    label: str | int


def path_text(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, Item):
            out += f"[{part.label}]"
        elif isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def stack_keys(section: type[BaseModel]) -> tuple[str, ...]:
    """A section's keys as the stack file spells them (the fields' aliases), in declaration order."""
    return tuple(info.alias or name for name, info in section.model_fields.items())


def field_name(section: type[BaseModel], key: object) -> str | None:
    """The field a stack key (or a field name) stands for in `section`, or None."""
    if not isinstance(key, str):
        return None
    if key in section.model_fields:
        return key
    return next((name for name, info in section.model_fields.items() if info.alias == key), None)


def alias(section: type[BaseModel], name: str) -> str:
    return section.model_fields[name].alias or name


_M = TypeVar("_M")


def meta(info: Any, cls: type[_M]) -> _M | None:
    """The field's first `cls` metadata object (a Msg, a Whole), or None."""
    for m in getattr(info, "metadata", ()):
        if isinstance(m, cls):
            return m
    return find(info.annotation, cls) if hasattr(info, "annotation") else None


def find(annotation: Any, cls: type) -> Any:
    """The first `cls` object in an annotation's Annotated metadata, searched depth-first."""
    for m in getattr(annotation, "__metadata__", ()):
        if isinstance(m, cls):
            return m
    for arg in typing.get_args(annotation):
        found = find(arg, cls)
        if found is not None:
            return found
    return None


def submodel(annotation: Any) -> type[BaseModel] | None:
    """The section a field holds (itself, or as the items of a list), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = submodel(arg)
        if found is not None:
            return found
    return None


def find_literal(annotation: Any) -> Any:
    if typing.get_origin(annotation) is Literal:
        return annotation
    for arg in typing.get_args(annotation):
        found = find_literal(arg)
        if found is not None:
            return found
    return None


def is_secret(info: FieldInfo | None) -> bool:
    """A SecretStr field: its value never goes into a Diagnostic."""
    return info is not None and _holds(info.annotation, SecretStr)


def _holds(annotation: Any, cls: type) -> bool:
    return annotation is cls or any(_holds(a, cls) for a in typing.get_args(annotation))


def missing(section: type[BaseModel], name: str) -> str:
    """What a rule says when a required key of `section` is absent (its Msg.missing)."""
    msg = meta(section.model_fields[name], Msg)
    assert msg is not None and msg.missing, f"{section.__name__}.{name} says what is missing with a Msg"
    return msg.missing


def _at(value: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def unknown_key_message(key: str, allowed: Iterable[str]) -> str:
    """An unknown key's message: the closest allowed key (a typo, most likely) and all of them."""
    allowed = list(allowed)
    close = suggest(key, allowed)
    hint = f"did you mean {close}? " if close else ""
    return f"unknown key; {hint}allowed keys are {', '.join(allowed)}"


def _hint(value: Any, allowed: Iterable[Any]) -> str:
    """ "did you mean X? " for a value one letter or two away from an allowed one (issue 34.7)."""
    close = suggest(value, [a for a in allowed if isinstance(a, str)])
    return f"did you mean {close}? " if close else ""


def _diagnostic(where: tuple[Any, ...], loc: tuple[Any, ...], message: str, code: str, value: Any,
                info: FieldInfo | None) -> Diagnostic:
    return Diagnostic(path_text(where + loc), message, code, value=None if is_secret(info) else value)


def one(model: type[BaseModel], err: ErrorDetails, raw: Any, where: tuple[Any, ...] = (),
        labels: Mapping[int, str | int] | None = None) -> Diagnostic:
    """One pydantic error of `model` as a Diagnostic; `where`: the key path of `model` itself; `labels`:
    how the items of a list of sections are named (a pool by its name)."""
    given, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    # Walk to the field, spelling the path as the stack file does: (its info, its model, where its value starts).
    cls: type[BaseModel] | None = model
    info: FieldInfo | None = None
    depth = 0
    loc: list[Any] = []
    for i, part in enumerate(given):
        name = field_name(cls, part) if cls is not None else None
        if cls is not None and name is not None:
            info, depth = cls.model_fields[name], i + 1
            loc.append(alias(cls, name))
            cls = submodel(info.annotation)
        elif isinstance(part, str) and cls is not None and kind == "extra_forbidden" and i == len(given) - 1:
            loc.append(part)
            return _diagnostic(where, tuple(loc), unknown_key_message(part, stack_keys(cls)), UNKNOWN_KEY, value, None)
        elif isinstance(part, int) and labels is not None and len(loc) == 1 and not where:
            loc.append(Item(labels.get(part, part)))  # a list of sections at the top: nodePools[workers]
        else:
            loc.append(part)  # a list index (of a list of models, `cls` stays the item model), or a map key
            if isinstance(part, str):
                cls = None
    key_loc = tuple(loc)
    if kind in ("model_type", "dict_type", "model_attributes_type") and (info is None or depth == len(given)):
        model_msg = meta(info, Msg) if info is not None else None
        name = path_text(where + key_loc)
        text = (model_msg.type.format(json=json_text(value)) if model_msg and model_msg.type
                else f"{json_text(value)} is not an object; expected a map of {name} settings")
        shows = not (model_msg and model_msg.type and "{json}" not in model_msg.type)  # else it may hold a secret
        return _diagnostic(where, key_loc, text, TYPE, value if shows else None, info)
    msg: Msg = meta(info, Msg) or Msg()
    hidden = msg.hide(value) if msg.hide and isinstance(value, str) else None
    if hidden is not None:  # never shown, never kept: it may carry a credential
        return Diagnostic(path_text(where + key_loc), hidden[1], hidden[0])
    field_loc, inner = key_loc[:depth], given[depth:]
    if inner:  # an item of a list (reported at the list) or a map (at its key)
        container = _at(raw, given[:depth])
        if isinstance(inner[0], str):
            field_loc = field_loc + inner[:1]
        if kind.endswith("_type") and not msg.item:
            return _diagnostic(where, field_loc, _type_message(msg, container, list_of=True), TYPE, value, info)
        if msg.item:
            literal = find_literal(info.annotation) if info is not None else None
            hint = _hint(value, typing.get_args(literal)) if kind == "literal_error" and literal is not None else ""
            text = msg.item.format(json=json_text(value), repr=repr(value) if isinstance(value, str) else json_text(value),
                                   hint=hint)
            return _diagnostic(where, field_loc, text, ALLOWED if kind == "literal_error" else TYPE, value, info)
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return _diagnostic(where, key_loc, f"{json_text(value)} is not a whole number; {_int_range(info)}", TYPE, value, info)
    if kind in ("greater_than_equal", "less_than_equal"):
        return _diagnostic(where, key_loc, f"{value} is out of range; {_int_range(info)}", RANGE, value, info)
    if kind in ("bool_type", "bool_parsing"):
        return _diagnostic(where, key_loc, f"{json_text(value)} is not a boolean; use true or false", TYPE, value, info)
    if kind == "literal_error":
        assert info is not None  # a value out of a Literal belongs to a field
        choices = typing.get_args(find_literal(info.annotation))
        allowed = msg.allowed or " or ".join(str(a) for a in choices)
        return _diagnostic(where, key_loc, f"{json_text(value)} is not {msg.kind}; {_hint(value, choices)}use {allowed}",
                           ALLOWED, value, info)
    if kind == "string_too_short":
        return _diagnostic(where, key_loc, f"is empty; expected {msg.what or 'a non-empty string'}", EMPTY, value, info)
    if kind == "string_too_long":
        text = f"{shown(value)} is longer than {err.get('ctx', {}).get('max_length')} characters; expected {msg.what}"
        return _diagnostic(where, key_loc, text, TOO_LONG, value, info)
    if kind == "string_pattern_mismatch":
        reason = msg.why(value) if msg.why and isinstance(value, str) else None
        if msg.pattern:
            text = msg.pattern.format(json=json_text(value), value=value).replace(
                " is not ", f" ({reason}) is not " if reason else " is not ", 1)
        else:
            text = f"{shown(value)} {reason or 'is not valid'}; expected {msg.what}"
        return _diagnostic(where, key_loc, text, PATTERN, value, info)
    if kind == "missing" and msg.missing:
        return _diagnostic(where, key_loc, msg.missing, MISSING, None, info)
    if kind in ("list_type", "tuple_type", "too_short", "string_type", "dict_type") or kind.endswith("_type"):
        return _diagnostic(where, key_loc, _type_message(msg, value), TYPE, value, info)
    text = f"{json_text(value)} is not valid ({err.get('msg')}); expected {msg.what or 'another value'}"
    return _diagnostic(where, key_loc, text, INVALID, value, info)


def _int_range(info: FieldInfo | None) -> str:
    rng = meta(info, Whole)
    assert rng is not None, "an integer error belongs to a key declared with Whole(lo, hi)"
    return f"use an integer from {rng.lo} to {rng.hi}"


def _type_message(msg: Msg, value: Any, list_of: bool = False) -> str:
    if msg.type:
        return msg.type.format(json=json_text(value))
    if list_of or isinstance(value, list) or msg.type_name.startswith("list"):
        return f"{json_text(value)} is not a list of strings; expected a list of {msg.what}"
    return f"{json_text(value)} is not a string; expected {msg.what or 'a non-empty string'}"


def from_pydantic(model: type[BaseModel], exc: ValidationError, raw: Any) -> list[Diagnostic]:
    """Every error of one validation, in the program's words (a section built in Python; pools by name)."""
    labels = pool_labels(raw.get("nodePools", raw.get("node_pools")) if isinstance(raw, Mapping) else None)
    return [one(model, err, raw, (), labels) for err in errors(exc)]


def errors(exc: ValidationError) -> list[ErrorDetails]:
    """pydantic's errors, less a tuple's "too short" that only follows from its items' errors (a list of one
    unknown role is one problem)."""
    return [e for e in exc.errors()
            if not (e["type"] == "too_short" and isinstance(e.get("input"), (list, tuple)) and e["input"])]


def pool_labels(pools: Any) -> dict[int, str | int]:
    """How messages name each pool of a list as written: by its name when that is a valid pool name no other
    pool has (`nodePools[workers]`), else by its position (`nodePools[1]`). Commands inside messages keep the
    position: `pulumi config set --path 'nodePools[1].count'` is what the CLI parses."""
    if not isinstance(pools, (list, tuple)):
        return {}
    names = [p.get("name") if isinstance(p, Mapping) else getattr(p, "name", None) for p in pools]
    valid = [n if isinstance(n, str) and POOL_NAME_RE.fullmatch(n) else None for n in names]
    return {i: n if n is not None and valid.count(n) == 1 else i for i, n in enumerate(valid)}


_S = TypeVar("_S", bound=BaseModel)


def check(model: type[_S], raw: Any, where: tuple[Any, ...] = ()) -> tuple[_S, list[Diagnostic]]:
    """Validate what a stack file gave for `model` (its keys as aliases): (the validated object, or what of it
    is valid; problems). A field with a problem is left out and validation repeated, so the caller gets every
    valid field (the defaults for the others) and can still judge the rules that span several keys. A key
    given as null (`key: ~`) is refused and keeps its default."""
    if raw is None:
        return model(), []
    problems: list[Diagnostic] = []
    if isinstance(raw, dict):
        problems += [Diagnostic(path_text(where + (k,)), NULL_PROBLEM, NULL) for k, v in raw.items() if v is None]
        raw = {k: v for k, v in raw.items() if v is not None}
    current = raw
    with pydantic_errors():
        for _ in range(len(model.model_fields) + 2):
            try:
                return model.model_validate(current, by_alias=True, by_name=False), problems
            except ValidationError as exc:
                drop: set[Any] = set()
                for err in errors(exc):
                    problems.append(one(model, err, current, where))
                    if not err["loc"] or not isinstance(current, dict):
                        return model(), problems
                    drop.add(err["loc"][0])
                current = {k: v for k, v in current.items() if k not in drop}
    raise AssertionError(f"{model.__name__}: validation did not settle")  # pragma: no cover


def null_or_empty(key: str, value: Any, empty_means_default: bool) -> Diagnostic | None:
    """A top-level value the CLI hands over for `key: ~`: the text `null`, or the empty string (Pulumi.yaml's
    "unset" for the keys it declares with default "", which then mean the program's default)."""
    if value == "null":
        return Diagnostic(key, NULL_PROBLEM, NULL)
    if value == "" and not empty_means_default:
        return Diagnostic(key, EMPTY_PROBLEM, EMPTY_VALUE)
    return None
