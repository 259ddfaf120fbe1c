"""A stack file as the Pulumi CLI reads it: `load_stack_text` gives the flat map of strings the CLI hands a
program, and the keys it marks secret, or a ConfigError naming the key. Pure (PyYAML only): the offline
plan and diff (rke_aws_offline.engine.harness) and the tools for a real account (rke_aws.ops) read stack
files with it."""

from __future__ import annotations

import decimal
import json
import math
import re
from collections.abc import Callable
from typing import Any

import yaml

from ..diagnostics import ConfigError

# What an encrypted stack value becomes offline: present and secret, its text unknown.
SECURE_PLACEHOLDER = "offline-placeholder: encrypted value, not decrypted offline"
# The namespace a key without one gets when no project is named: this repository's project name.
PROJECT = "rke-aws"


# ---- the stack file as the Pulumi CLI reads it ------------------------------------------------------
#
# The CLI parses the stack file (gopkg.in/yaml.v3, pulumi/pulumi sdk/go/common/workspace/loaders.go
# LoadProjectStackBytes) and hands the program a flat map of strings (config.Map.Decrypt, then
# Plaintext.marshalText in sdk/go/common/resource/config/{map,plaintext,object,value}.go):
# - a string stays itself; a `secure:` value is decrypted and its key marked secret (Map.SecureKeys);
# - true/false and numbers become their JSON text (`3`, `1.5`; Go's float format: 3.0 is `3`);
# - a list or map becomes JSON (Go's encoding: keys sorted); secure values inside are decrypted into
#   it and the whole key is secret; nulls inside stay JSON null;
# - a top-level null (`key: ~`, or nothing after the colon) becomes the empty string: yaml.v3 never
#   calls config.Value's UnmarshalYAML for a null node, so the Value stays zero (the CLI warns that
#   this "will be treated as null in a future version": the text `null`; the program refuses both);
# - a key without a namespace gets the project's (stackConfigNamespacedWithProject); `ns:config:name`
#   is `ns:name` (config.ParseKey); any other key with colons is refused;
# - a document that is not a map, a `config:` that is not a map, a non-text map key anywhere
#   (SimplifyMarshalledValue), a duplicate key, a recursive alias or a number JSON cannot hold (NaN,
#   infinity) make the CLI refuse the file before the program runs.
# yaml.v3 reads YAML 1.2's booleans (true/false in three cases; `yes`, `on` stay text), Go's integers
# (ParseInt with base prefixes 0x, 0o, 0b and a leading 0 for octal; underscores dropped) and keeps
# timestamps as text when the target is untyped; `!!binary` becomes the decoded bytes as text.
# load_stack_text does the same; its refusals are ConfigErrors naming the key, as the program's are.

_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _TIME_TAG, _VALUE_TAG = (
    f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float", "timestamp", "value"))
_NUMBER_TAG = "tag:rke-aws,offline:go-number"
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_SPECIAL_FLOATS = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf,
                   "+.INF": math.inf, "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
                   ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
# Nodes a document may expand to through aliases before it is refused (yaml.v3 refuses documents
# with "excessive aliasing"; an alias bomb must not hang the offline plan).
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 400
# How many levels of nodes the reader follows (the document's map, `config:`, then a value's MAX_DEPTH + 1 levels);
# deeper is refused as it is read (_BoundedLoader). PyYAML's pure-Python reader slows with depth (its scanner
# rechecks every open bracket's possible key at each token, up to 1,024 characters ahead, and its composer recurses
# per level): 2,000 brackets on one line cost ~1.5 s before the recursion limit stopped it. The CLI's yaml.v3
# refuses the same way at 10,000 (go-yaml scannerc.go: max_flow_level, max_indents).
MAX_YAML_DEPTH = MAX_DEPTH + 3


class _CliLoader(yaml.SafeLoader):
    """PyYAML's safe loader, resolving scalars as yaml.v3 does for an untyped target."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:
                    duplicate = False  # unhashable: PyYAML says so below
                if duplicate:
                    raise yaml.constructor.ConstructorError(None, None, f"mapping key {key!r} already defined",
                                                            key_node.start_mark)
                try:
                    seen.add(key)
                except TypeError:
                    pass
        return super().construct_mapping(node, deep=deep)


_CliLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _TIME_TAG, _VALUE_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_CliLoader.add_implicit_resolver(_BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_CliLoader.add_implicit_resolver(_NUMBER_TAG, re.compile(r"^[-+.0-9]"), list("-+.0123456789"))


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), then ParseUint: base prefixes, a leading 0 for octal."""
    sign, body = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    base = 10
    if body[:2] in ("0x", "0X"):
        base, body = 16, body[2:]
    elif body[:2] in ("0b", "0B"):
        base, body = 2, body[2:]
    elif body[:2] in ("0o", "0O"):
        base, body = 8, body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, body = 8, body[1:]
    digits = "0123456789abcdef"[:base]
    if not body or any(c.lower() not in digits for c in body):
        return None
    value = sign * int(body, base)
    return value if -(1 << 63) <= value < (1 << 64) else None


def _construct_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    plain = text.replace("_", "")
    value = _go_int(plain)
    if value is not None:
        return value
    if _YAML_FLOAT.match(plain):
        return float(plain)
    return text


_CliLoader.add_constructor(_NUMBER_TAG, _construct_number)
_CliLoader.add_constructor("tag:yaml.org,2002:binary",
                           lambda loader, node: yaml.SafeLoader.construct_yaml_binary(loader, node).decode("utf-8", "replace"))


class TooDeep(Exception):
    """A stack file nests deeper than MAX_YAML_DEPTH levels."""


class _BoundedLoader(_CliLoader):
    """_CliLoader refusing (TooDeep) a node deeper than MAX_YAML_DEPTH. The composer counts every level (a scalar,
    a `- ` directly under a key, `[a: b]`'s implied map). The scanner runs ahead of it while the next token may
    be a simple key, and each `[` or `{` may be one, on its own level: so it refuses a flow collection when the
    levels it has open (block collections are its indents, flow collections its flow level: each a node
    enclosing the next) already reach the limit, and never reads far past that depth. (In block context there
    is one possible key at a time: the composer's count bounds the work.)"""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.depth = 0

    def _open(self, levels: int) -> None:
        if levels > MAX_YAML_DEPTH:
            raise TooDeep()

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
        self._open(len(self.indents) + self.flow_level + 1)
        super().fetch_flow_collection_start(TokenClass)

    # The composer enters and leaves every node but an alias through these (no frame added to its recursion).
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        self.depth += 1
        self._open(self.depth)
        super().descend_resolver(current_node, current_index)

    def ascend_resolver(self) -> None:
        super().ascend_resolver()
        self.depth -= 1


def read_yaml(text: str) -> Any:
    """The stack file's document as PyYAML reads it with yaml.v3's scalars (_CliLoader), or TooDeep past
    MAX_YAML_DEPTH levels (also when Python's recursion limit stops it first), or a yaml.YAMLError."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError:
        raise TooDeep() from None
    finally:
        loader.dispose()


def yaml_problem(text: str, where: str, err: yaml.YAMLError) -> str:
    """A YAML error as an editor shows one: `<file>:<line>:<column>: <problem>`, then the line and a caret under
    the column (PyYAML's problem_mark; lines and columns from 1)."""
    mark = getattr(err, "problem_mark", None)
    if mark is None:
        detail = " ".join(str(err).split())
        return f"{where}: not valid YAML as the Pulumi CLI reads it ({detail[:300]})"
    problem = " ".join(str(getattr(err, "problem", None) or err).split())[:200]
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({' '.join(context.split())} started at line {context_mark.line + 1}, column {context_mark.column + 1})"
    lines = text.splitlines()
    line, column = mark.line, mark.column
    if line >= len(lines) and lines:  # at the end of the text: point after the last line's end
        line, column = len(lines) - 1, len(lines[-1])
    shown_line = lines[line][:160].replace("\t", " ") if line < len(lines) else ""
    caret = " " * min(column, 160) + "^"
    return (f"{where}:{line + 1}:{column + 1}: not valid YAML as the Pulumi CLI reads it: {problem}\n"
            f"      {shown_line}\n      {caret}")


def _config_error(problems: list[str]) -> Exception:
    return ConfigError(problems)


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"} and isinstance(value["secure"], str)


def _go_float(f: float) -> str:
    """Go's encoding/json text of a float64 ('f' format below 1e21, else 'e', exponent without padding)."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError("JSON has no NaN or infinity")
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    if abs(f) < 1e-6 or abs(f) >= 1e21:
        text = repr(f)
        return re.sub(r"e([-+])0(\d)$", r"e\1\2", text)
    text = format(decimal.Decimal(repr(f)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


class _Flattener:
    """One config value as the CLI hands it to the program: (text, secret)."""

    def __init__(self, key: str, placeholder: Callable[[str], str] | None = None):
        self.key = key
        # What an encrypted value becomes (its ciphertext -> text); SECURE_PLACEHOLDER by default.
        self.placeholder = placeholder or (lambda _cipher: SECURE_PLACEHOLDER)
        self.nodes = 0
        self.secret = False
        self.open: set[int] = set()

    def problem(self, what: str) -> Exception:
        return _config_error([f"{self.key}: {what}; the Pulumi CLI refuses such a stack file"])

    def text(self, value: Any) -> str:
        if value is None:
            return ""
        if _is_secure(value):
            self.secret = True
            return self.placeholder(value["secure"])
        if isinstance(value, str):
            return value
        return self.json(value, 0)

    def json(self, value: Any, depth: int) -> str:
        self.nodes += 1
        if self.nodes > MAX_EXPANDED_NODES:
            raise self.problem(f"expands to more than {MAX_EXPANDED_NODES:,} values through aliases (excessive aliasing)")
        if depth > MAX_DEPTH:
            raise self.problem(f"nests deeper than {MAX_DEPTH} levels")
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value) if -(1 << 63) <= value < (1 << 64) else self.json(float(value), depth)
        if isinstance(value, float):
            try:
                return _go_float(value)
            except ValueError:
                raise self.problem(f"{value} cannot be a configuration value (JSON has no NaN or infinity)") from None
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        if _is_secure(value):
            self.secret = True
            return json.dumps(self.placeholder(value["secure"]))
        if id(value) in self.open:
            raise self.problem("holds a recursive alias (a value that contains itself)")
        if isinstance(value, (list, dict)):
            self.open.add(id(value))
            try:
                # Plain loops: one Python frame per level (a generator would add one), so MAX_DEPTH levels
                # stay within the recursion limit.
                parts: list[str] = []
                if isinstance(value, list):
                    for v in value:
                        parts.append(self.json(v, depth + 1))
                    return "[" + ",".join(parts) + "]"
                bad = [k for k in value if not isinstance(k, str)]
                if bad:
                    raise self.problem(f"has a map key that is not text ({bad[0]!r}; quote it)")
                for k in sorted(value):
                    parts.append(json.dumps(k, ensure_ascii=False) + ":" + self.json(value[k], depth + 1))
                return "{" + ",".join(parts) + "}"
            finally:
                self.open.discard(id(value))
        raise self.problem(f"holds a {type(value).__name__} value, which YAML in a stack file cannot carry")


def _cli_key(key: Any, project: str = PROJECT) -> str:
    if not isinstance(key, str):
        raise _config_error([f"config: the key {key!r} is not text; the Pulumi CLI refuses such a stack file"])
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}"
    if len(parts) == 2:
        return key
    if len(parts) == 3 and parts[1] == "config":
        return f"{parts[0]}:{parts[2]}"
    raise _config_error([f"{key}: could not parse it as a configuration key (keys are <namespace>:<name>); the "
                         "Pulumi CLI refuses such a stack file"])


def flatten_stack(doc: Any, where: str = "stack file", placeholder: Callable[[str], str] | None = None,
                  project: str = PROJECT) -> tuple[dict[str, str], list[str]]:
    """A parsed stack file's `config:` as the flat map the Pulumi CLI hands a program, and the keys
    it marks secret. An encrypted value cannot be decrypted offline: it becomes SECURE_PLACEHOLDER
    (present, secret, text unknown), so the program takes the path it takes with the real value.
    `project`: the namespace a key without one gets (the project's name)."""
    if doc is None:
        return {}, []
    if not isinstance(doc, dict):
        raise _config_error([f"{where}: is a {type(doc).__name__}, not a map with a `config:` key; the Pulumi "
                             "CLI refuses it"])
    config = doc.get("config")
    if config is None:
        return {}, []
    if not isinstance(config, dict):
        raise _config_error([f"config: is a {type(config).__name__}, not a map of keys to values; the Pulumi CLI "
                             "refuses such a stack file"])
    flat: dict[str, str] = {}
    secret: list[str] = []
    for key, value in config.items():
        name = _cli_key(key, project)
        f = _Flattener(name, placeholder)
        flat[name] = f.text(value)
        if f.secret:
            secret.append(name)
    return flat, sorted(secret)


def load_stack_text(text: str, where: str = "stack file", placeholder: Callable[[str], str] | None = None,
                    project: str = PROJECT) -> tuple[dict[str, str], list[str]]:
    """Parse a stack file as the Pulumi CLI does: (flat config, secret keys), or a ConfigError.
    `placeholder`: what an encrypted value becomes, from its ciphertext (default SECURE_PLACEHOLDER)."""
    try:
        doc = read_yaml(text)
    except TooDeep:
        raise _config_error([f"{where}: nests deeper than the YAML reader follows"]) from None
    except yaml.YAMLError as err:
        raise _config_error([yaml_problem(text, where, err)]) from None
    return flatten_stack(doc, where, placeholder, project)


class SecretValue(str):
    """A flat config value the CLI decrypted from a `secure:` value: tests put a kubeconfig into a
    config map this way (`stackfile.secret(text)`), as `pulumi config set --secret` would."""


def secret(text: str) -> SecretValue:
    return SecretValue(text)


def secret_keys_of(config: dict[str, str]) -> list[str]:
    """Keys the CLI marks secret: those it decrypted (`secure:` in the stack file; the offline
    placeholder, or a SecretValue a test set). Nothing else: a kubeconfig stored as plain text is
    plain text, and the program refuses it, offline as under the CLI."""
    return sorted(k for k, v in config.items() if isinstance(v, SecretValue) or SECURE_PLACEHOLDER in str(v))
