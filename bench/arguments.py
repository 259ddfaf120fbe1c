"""Argument types the bench's commands share (`python -m bench`, `python -m bench.commands`): argparse refuses a
value they cannot run with, naming the option and the value (usage, exit 2), before any work. Standard library only."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def count(least: int) -> Callable[[str], int]:
    """A whole number of at least `least`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r}: a whole number, at least {least}")
        return value
    return parse


def sizes(text: str) -> tuple[int, ...]:
    """Node counts separated by commas, each at least 1."""
    try:
        return tuple(count(1)(x) for x in text.split(","))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r}: node counts separated by commas, each at least 1") from None
