"""Regular expressions that mean the same to every engine that evaluates them.

The configuration model's patterns are read by three engines: pydantic (Python's `re`, see
settings/section.py Section), the JSON Schema validators in Python (jsonschema calls `re.search`) and
editors (ECMA-262, yaml-language-server). They agree only on a small common subset, so every
pattern here is built from it:

- ASCII only: explicit classes (`[0-9]`, `[a-z]`), never `\\d`, `\\w` or `\\s`, which match
  Arabic-Indic digits, accented letters or Unicode spaces in Python and not in ECMA-262.
- Anchored with `whole()`: `^(?:...)$(?!\\n)`. In Python `$` also matches before a final newline,
  so "prod\\n" would pass `^[a-z]+$`; the look-ahead refuses it there and changes nothing in
  ECMA-262, where `$` is the end of the text. (`\\Z` would be Python only, `\\z` Rust only.)
- Look-aheads for exclusions (ECMA-262 and Python both have them; pydantic's default Rust engine
  does not, which is why the model uses Python's).

CIDR patterns are generated: a canonical IPv4 CIDR (no host bits, no netmask or zero-padded form)
of a prefix range inside given networks, outside others, as one alternation per prefix length.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
from collections.abc import Iterable


def whole(body: str) -> str:
    """`body` matching the whole text in Python's re (search or match) and in ECMA-262."""
    return f"^(?:{body})$(?!\\n)"


def ci(text: str) -> str:
    """`text` in any letter case, without a flag (flags are not portable in JSON Schema)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else _escape(c) for c in text)


def _escape(c: str) -> str:
    # Only what is special outside a class: an escaped `-` or `/` is an error in ECMA-262's
    # unicode mode, which some JSON Schema validators use.
    return "\\" + c if c in ".^$*+?()[]{}|\\" else c


def literal(text: str) -> str:
    return "".join(_escape(c) for c in text)


# ---- decimal numbers -------------------------------------------------------------------------------

def int_set_regex(values: Iterable[int]) -> str:
    """A regex matching exactly the decimal forms (no leading zeros) of `values` (0..999)."""
    return _words_regex(tuple(sorted({str(v) for v in values})))


@functools.cache
def _words_regex(words: tuple[str, ...]) -> str:
    # Cached: the CIDR patterns ask for the same few octet sets ~150 times (settings/fields.py, at import).
    return _trie_regex(list(words)) if words else "(?!)"


def _trie_regex(words: list[str]) -> str:
    """Alternation of `words` as a trie; siblings with the same continuation share a class."""
    end = "" in words
    children: dict[str, list[str]] = {}
    for w in words:
        if w:
            children.setdefault(w[0], []).append(w[1:])
    by_rest: dict[str, list[str]] = {}
    for ch, rests in sorted(children.items()):
        by_rest.setdefault(_trie_regex(rests) if rests != [""] else "", []).append(ch)
    alts = [_char_class(chars) + rest for rest, chars in by_rest.items()]
    if not alts:
        return ""
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    if end:
        atomic = len(alts) == 1 and (len(body) == 1 or (body.startswith("[") and body.endswith("]") and body.count("[") == 1))
        return f"{body}?" if atomic else f"(?:{body})?"
    return body


def _char_class(chars: list[str]) -> str:
    if len(chars) == 1:
        return _escape(chars[0])
    digits = sorted(chars)
    runs: list[tuple[str, str]] = []
    for c in digits:
        if runs and ord(c) == ord(runs[-1][1]) + 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    inner = "".join(a if a == b else (a + b if ord(b) == ord(a) + 1 else f"{a}-{b}") for a, b in runs)
    return f"[{inner}]"


# ---- canonical CIDRs -------------------------------------------------------------------------------

Interval = tuple[int, int]  # inclusive


def cidr_regex(parents: Iterable[str], lo: int, hi: int, exclude: Iterable[str] = ()) -> str:
    """Canonical IPv4 CIDRs `a.b.c.d/p` with lo <= p <= hi, inside one of `parents`, overlapping none
    of `exclude`; the body of a pattern (wrap it with `whole`)."""
    parent_nets = [ipaddress.IPv4Network(p) for p in parents]
    excluded = [ipaddress.IPv4Network(e) for e in exclude]
    alts = []
    for p in range(lo, hi + 1):
        intervals: list[Interval] = []
        for net in parent_nets:
            if net.prefixlen > p:
                continue
            intervals.append((int(net.network_address), int(net.broadcast_address)))
        # A network of prefix p overlaps an excluded one iff one contains the other: remove the
        # excluded range widened to whole p-networks.
        step = 1 << (32 - p)
        for e in excluded:
            start = int(e.network_address) // step * step
            end = max(int(e.broadcast_address), start + step - 1)
            intervals = _subtract(intervals, (start, end))
        intervals = [(-(-a // step) * step, b) for a, b in intervals]
        # A tuple: _address_regex is cached, so its arguments must be hashable.
        nonempty = tuple((a, b) for a, b in intervals if a <= b)
        if not nonempty:
            continue
        alts.append(f"{_address_regex(nonempty, step, 0)}/{p}")
    return "(?:" + "|".join(alts) + ")" if alts else "(?!)"


def _subtract(intervals: list[Interval], cut: Interval) -> list[Interval]:
    out = []
    for a, b in intervals:
        if b < cut[0] or a > cut[1]:
            out.append((a, b))
            continue
        if a < cut[0]:
            out.append((a, cut[0] - 1))
        if b > cut[1]:
            out.append((cut[1] + 1, b))
    return out


@functools.cache
def _address_regex(intervals: tuple[Interval, ...], step: int, level: int) -> str:
    """Dotted octets `level`..3 of the addresses in `intervals` (relative to this level's span)
    that are multiples of `step`."""
    size = 1 << (8 * (3 - level))  # addresses one value of this octet spans
    zeros = "\\.".join(["0"] * (3 - level))  # the later octets of an address this octet is the last one of
    groups: dict[str, list[int]] = {}
    for first, last, full in _octet_runs(intervals, size):
        if full:
            # Every address of these octet values is in: one continuation for the whole run.
            if step >= size:
                multiple = step // size  # the octet must be a multiple of the step, every later octet 0
                octets = list(range(-(-first // multiple) * multiple, last + 1, multiple))
                if octets:
                    groups.setdefault(zeros, []).extend(octets)
            else:
                groups.setdefault(_address_regex(((0, size - 1),), step, level + 1), []).extend(range(first, last + 1))
            continue
        base = first * size
        sub = tuple((max(a, base) - base, min(b, base + size - 1) - base)
                    for a, b in intervals if a <= base + size - 1 and b >= base)
        if step >= size:
            # This octet is the last one the prefix reaches: it must be a multiple of the step,
            # and every later octet 0.
            if base % step or sub[0][0] != 0:
                continue
            rest = zeros
        else:
            rest = _address_regex(sub, step, level + 1)
        groups.setdefault(rest, []).append(first)
    alts = []
    for rest, octets in groups.items():
        head = int_set_regex(octets)
        head = head if len(octets) == 1 or head.startswith("(?:") else f"(?:{head})"
        alts.append(head + (f"\\.{rest}" if rest else ""))
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _octet_runs(intervals: tuple[Interval, ...], size: int) -> list[tuple[int, int, bool]]:
    """The values (0..255) of an octet spanning `size` addresses that `intervals` reach, ascending, as
    (first, last, full) runs: `full` when every address of each value is in one interval, else one value
    (first == last) the intervals cover only in part. Intervals that overlap: every value its own run."""
    ordered = sorted(intervals)
    if any(b >= a2 for (_, b), (a2, _) in itertools.pairwise(ordered)):
        reached = sorted({v for a, b in intervals for v in range(max(a // size, 0), min(b // size, 255) + 1)})
        return [(v, v, False) for v in reached]
    runs: list[tuple[int, int, bool]] = []
    for a, b in ordered:
        lo, hi = max(a // size, 0), min(b // size, 255)
        whole_lo = lo if a <= lo * size else lo + 1
        whole_hi = hi if b >= hi * size + size - 1 else hi - 1
        if whole_lo > lo and runs[-1:] != [(lo, lo, False)]:  # the interval before may end inside it
            runs.append((lo, lo, False))
        if whole_lo <= whole_hi:
            runs.append((whole_lo, whole_hi, True))
        if whole_hi < hi and runs[-1:] != [(hi, hi, False)]:
            runs.append((hi, hi, False))
    return runs
