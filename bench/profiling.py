"""Where the program's extra time goes: cProfile of one program run and one baseline run."""

from __future__ import annotations

import cProfile
import pstats
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def profile(fn: Callable[[], object]) -> pstats.Stats:
    prof = cProfile.Profile()
    prof.enable()
    try:
        fn()
    finally:
        prof.disable()
    return pstats.Stats(prof)


def where(filename: str) -> str:
    """A short, stable name for a profiled file: `components/aws/nodes.py`, `yaml/emitter.py`, `asyncio/base_events.py`."""
    if filename == "~":
        return "<built-in>"
    if filename.startswith("<"):
        return filename
    p = Path(filename)
    parts = p.parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1:])
    try:
        return str(p.resolve().relative_to(ROOT))
    except (ValueError, OSError):
        pass
    return "/".join(parts[-2:])  # stdlib: asyncio/base_events.py


def package(w: str) -> str:
    if w.startswith(("components/", "__main__")):
        return "program (components/, __main__.py)"
    return w.split("/")[0] if "/" in w else w


def total(stats: pstats.Stats) -> float:
    return stats.total_tt  # type: ignore[attr-defined]


def _rows(stats: pstats.Stats):
    for (filename, _line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        yield where(filename), func, nc, tt, ct


def by_function(stats: pstats.Stats) -> dict[str, tuple[float, int]]:
    """file:function -> (own seconds, calls); a built-in is named by what it is (e.g. `<built-in>:<method 'join'...>`)."""
    out: dict[str, tuple[float, int]] = {}
    for w, func, nc, tt, _ct in _rows(stats):
        key = f"{w}:{func}"
        t0, n0 = out.get(key, (0.0, 0))
        out[key] = (t0 + tt, n0 + nc)
    return out


def by_package(stats: pstats.Stats) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for w, _func, _nc, tt, _ct in _rows(stats):
        out[package(w)] += tt
    return out


def project_cumulative(stats: pstats.Stats) -> list[tuple[str, float, int]]:
    """(file:function, cumulative seconds, calls) for the program's own functions, largest first."""
    rows = [(f"{w}:{func}", ct, nc) for w, func, nc, _tt, ct in _rows(stats)
            if w.endswith(".py") and (w.startswith("components/") or w == "__main__.py")]
    return sorted(rows, key=lambda r: -r[1])
