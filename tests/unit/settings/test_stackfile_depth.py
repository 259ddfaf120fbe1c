"""A stack file nesting deeper than the reader follows is refused after bounded work, with the diagnostic it always
had (`<file>: nests deeper than the YAML reader follows`).

PyYAML's pure-Python scanner keeps one possible simple key per open flow collection and, before every token, walks
all of them (scanner.py stale_possible_simple_keys / next_possible_simple_key), scanning up to 1,024 characters
ahead while the first is pending: 2,000 `[` on one line cost ~1.5 s of CPU before the composer's recursion stopped
it. stackfile._BoundedLoader counts every level in the composer, and its scanner refuses a `[` or `{` that would
open a level past MAX_YAML_DEPTH (its indents and flow level) before reading on. The CLI's own reader refuses the same way, at 10,000
levels, while scanning (go-yaml scannerc.go: max_flow_level, max_indents: "exceeded max depth of 10000").

The reader is PyYAML's own scanner, so brackets in quoted scalars, comments and block scalars are never counted; the
property tests check it against PyYAML's unbounded reader with a small MAX_YAML_DEPTH.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import stackfile
from tests.support.properties import examples

ROOT = Path(__file__).resolve().parents[3]
WHERE = "Pulumi.dev.yaml"
TODAY = f"{WHERE}: nests deeper than the YAML reader follows"
HEAD = "config:\n  rke-aws:network: "

# Hostile values n levels deep, and the characters each level takes (each at most that many tokens).
HOSTILE = {
    "flow sequences": (lambda n: "[" * n + "]" * n, 1),
    "flow maps": (lambda n: "{" * n + "}" * n, 1),  # each `{` a possible key (the quadratic case, as `[`)
    "flow maps with keys": (lambda n: "{a: " * n + "x" + "}" * n, 4),
    "mixed flow": (lambda n: "[{a: " * (n // 2) + "x" + "}]" * (n // 2), 5),
    "block sequences": (lambda n: "\n    " + "- " * n + "x", 2),
    "block, then flow": (lambda n: "\n    " + "- " * 400 + "[" * n, 2),  # the scanner counts both kinds of level
    "unclosed": (lambda n: "[" * n, 1),
}


class _Work:
    """Counts the scanner's work: tokens fetched and how far into the text it read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.tokens = 0
        self.read = 0
        fetch = yaml.scanner.Scanner.fetch_more_tokens

        def counting(scanner: Any) -> Any:
            self.tokens += 1
            self.read = max(self.read, scanner.index)
            return fetch(scanner)

        monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", counting)


@pytest.mark.parametrize("n", [2_000, 100_000])
@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_file_is_refused_as_before_after_bounded_work(kind, n, monkeypatch):
    make, per_level = HOSTILE[kind]
    text = HEAD + make(n) + "\n"
    work = _Work(monkeypatch)
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_text(text, WHERE)
    assert info.value.problems == [TODAY]
    # The scanner stops at the first level too deep: it reads no further than that level's opening. (Unbounded, it
    # read ~1,500 tokens ahead of the composer, whose recursion then failed, whatever n.)
    levels = stackfile.MAX_YAML_DEPTH + 1
    assert work.read <= len(HEAD) + 5 + per_level * levels, (work.read, work.tokens)
    assert work.tokens <= per_level * levels + 10, (work.read, work.tokens)  # a level takes a character or more


def test_the_deepest_value_the_flattener_takes_is_still_read():
    """MAX_DEPTH + 1 levels: the reader follows it and the CLI's JSON text comes out; one more is the reader's."""
    deepest = stackfile.MAX_DEPTH + 1
    flat, _ = stackfile.load_stack_text(HEAD + "[" * deepest + "]" * deepest + "\n", WHERE)
    assert flat["rke-aws:network"] == "[" * deepest + "]" * deepest
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_text(HEAD + "[" * (deepest + 1) + "]" * (deepest + 1) + "\n", WHERE)
    assert info.value.problems == [TODAY]


def test_a_value_deep_through_aliases_is_refused_naming_the_key():
    """Aliases nest without the text nesting (each anchor one level deeper): the flattener refuses past MAX_DEPTH,
    naming the key, instead of overflowing Python's stack (it took three frames a level: RecursionError)."""
    n = stackfile.MAX_DEPTH + 5
    text = "a0: &a0 x\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, n)) + f"config:\n  rke-aws:x: *a{n - 1}\n"
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_text(text, WHERE)
    assert info.value.problems == [f"rke-aws:x: nests deeper than {stackfile.MAX_DEPTH} levels; the Pulumi CLI "
                                   "refuses such a stack file"]


def _stack_files() -> list[Path]:
    return sorted((ROOT / "stacks").glob("Pulumi.*.yaml")) + sorted((ROOT / "tests" / "stacks").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("path", _stack_files(), ids=lambda p: p.name)
def test_every_stack_file_reads_as_before(path):
    text = path.read_text()
    doc = yaml.load(text, Loader=stackfile._CliLoader)  # noqa: S506 - the unbounded reader (a SafeLoader subclass)
    assert stackfile.read_yaml(text) == doc
    assert stackfile.load_stack_text(text, path.name) == stackfile.flatten_stack(doc, path.name)


# ---- the bound against PyYAML's unbounded reader, with a small MAX_YAML_DEPTH ----------------------------------

def text_depth(text: str) -> int:
    """How deep the text nests: its nodes' levels as PyYAML's parser reports them (an alias refers to a node, it is
    not one; the flattener bounds how deep aliases nest)."""
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent):
            deepest = max(deepest, depth + 1)
    return deepest


def unbounded(text: str) -> tuple[str, Any]:
    try:
        return "ok", (yaml.load(text, Loader=stackfile._CliLoader), text_depth(text))  # noqa: S506 - as above
    except yaml.YAMLError:
        return "error", None


def bounded(text: str) -> tuple[str, Any]:
    try:
        return "ok", stackfile.read_yaml(text)
    except stackfile.TooDeep:
        return "too deep", None
    except yaml.YAMLError:
        return "error", None


# Scalars whose text holds what opens a level elsewhere: brackets and dashes in quotes (with their escapes), in
# comments, in block scalars.
TRAPS = ["'[[[{{'", "'it''s [[['", '"[{\\"[[\\\\"', '"\\"]]]"', "'- - -'", "\"{a: [b]}\"", "'? [x]: {y}'"]
WORDS = ["a", "b1", "x-y", "", "~", "&n a", "!!str a"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A YAML text nesting a few levels, in every style (block and flow, indentless sequences, `[a: b]` pairs, flow
    keys), with traps in its scalars, comments and block scalars; sometimes cut or spliced to be malformed."""
    def scalar() -> str:
        return draw(st.sampled_from(TRAPS + WORDS))

    def flow(budget: int) -> str:
        kind = draw(st.sampled_from(["scalar", "seq", "map", "pair"])) if budget else "scalar"
        if kind == "scalar":
            return scalar()
        items = [flow(budget - 1) for _ in range(draw(st.integers(0, 2)))]
        if kind == "seq":
            return "[" + ", ".join(items) + "]"
        if kind == "pair":
            return "[" + scalar().lstrip("&!n sr") + ": " + flow(budget - 1) + "]"
        return "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}"

    def block(budget: int, indent: int) -> list[str]:
        pad = " " * indent
        kind = draw(st.sampled_from(["flow", "seq", "map", "literal", "indentless"])) if budget else "flow"
        comment = draw(st.sampled_from(["", "  # [[[ {{ - ", " #]"]))
        if kind == "flow":
            return [pad + flow(budget) + comment]
        if kind == "literal":
            return [pad + "k: " + draw(st.sampled_from(["|", ">", "|-", ">+"])) + comment,
                    pad + "  [[[ {{ '\"", pad + "  - - ]"]
        lines: list[str] = []
        for i in range(draw(st.integers(1, 2))):
            child = block(budget - 1, indent + 2)
            if kind == "seq":
                lines += [pad + "-" + comment, *child]
            elif kind == "indentless":
                lines += [pad + f"k{i}:" + comment, pad + "- " + scalar()] + [pad + "- x" for _ in child[:1]]
            else:
                lines += [pad + f"k{i}:" + comment, *child]
        return lines

    lines = block(draw(st.integers(0, 6)), 0)
    if draw(st.booleans()):
        lines = ["# [[[ {{{", *lines]
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 4)) == 0:  # malformed: cut, or a stray bracket
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "[", "]", "{", "'", '"', "\n- "])) + text[cut:]
    return text


YAMLISH = st.text(alphabet=st.sampled_from(list("[]{}'\"#|>-:?,&*! \n\\ax")), max_size=40)


def bounded_at(text: str, limit: int) -> tuple[str, Any]:
    """`bounded` with MAX_YAML_DEPTH = limit (set and restored here: monkeypatch is function-scoped, @given repeats)."""
    old = stackfile.MAX_YAML_DEPTH
    stackfile.MAX_YAML_DEPTH = limit
    try:
        return bounded(text)
    finally:
        stackfile.MAX_YAML_DEPTH = old


def _agrees(text: str, limit: int) -> None:
    ref, got = unbounded(text), bounded_at(text, limit)
    if ref[0] == "error":
        assert got[0] != "ok", text  # a text PyYAML refuses stays refused (perhaps as too deep, if it also is)
    elif ref[1][1] > limit:
        assert got[0] == "too deep", (text, ref[1][1])
    else:
        assert got == ("ok", ref[1][0]) or (got[0] == "ok" and repr(got[1]) == repr(ref[1][0])), text


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(documents(), YAMLISH), limit=st.integers(1, 5))
def test_the_reader_refuses_exactly_past_the_depth(text, limit):
    """For any text: PyYAML's unbounded reader accepts it nesting at most `limit` levels <=> the bounded reader
    accepts it, with the same document; deeper, it is refused as too deep; malformed, it stays refused."""
    _agrees(text, limit)


@pytest.mark.parametrize("text, depth", [
    ("a: '[[[[[[[['\n", 2),
    ("a: \"[[\\\"[[[[\"\n", 2),
    ("a: 'it''s [[[[['\n", 2),
    ("a: b  # [[[[[[[\n", 2),
    ("a: |\n  [[[[[[[\n  {{{{{{\n", 2),
    ("a: >\n  - - - - - -\n", 2),
    ("a: [{b: [c]}]\n", 5),
    ("a: [b: [c: d]]\n", 6),
    ("a:\n- - - x\n", 5),
])
def test_traps_count_as_the_parser_counts(text, depth):
    """Brackets in quotes (with '' and \\" escapes), comments and block scalars open nothing; `{`, `[b: c]`'s
    implied map and an indentless sequence each open a level."""
    assert text_depth(text) == depth
    for limit in (depth - 1, depth):
        _agrees(text, limit)
        assert bounded_at(text, limit)[0] == ("ok" if limit == depth else "too deep"), (text, limit)
