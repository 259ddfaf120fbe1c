"""The documentation as tests read it: README.md and docs/**/*.md, their fenced code blocks and links."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# The namespace every stack file in the docs is written in: the quickstart's project, `my-cluster`.
PROJECT = "my-cluster"
STACK_FILE = re.compile(r"^# (?:stacks/)?Pulumi\.([A-Za-z0-9_.-]+)\.yaml\s*$")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def stack(self) -> str | None:
        """The stack a YAML block is the file of (its first line `# stacks/Pulumi.<stack>.yaml`)."""
        first = self.text.split("\n", 1)[0]
        m = STACK_FILE.match(first) if self.lang == "yaml" else None
        return m.group(1) if m else None


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    out, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group("lang") is not None:
            indent, start, body = len(m.group("indent")), i, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                i += 1
            out.append(Block(path, start + 1, m.group("lang"), "\n".join(body) + "\n"))
        i += 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


def stack_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.stack]


def program_blocks() -> list[Block]:
    """Python blocks that are programs using the package."""
    return [b for b in all_blocks() if b.lang == "python" and re.search(r"^from rke_aws import", b.text, re.M)]


def prose(path: Path) -> str:
    """A page without its code blocks and HTML comments."""
    text = re.sub(r"<!--.*?-->", "", path.read_text(), flags=re.S)
    return re.sub(r"^ *```[\w-]*\n.*?^ *```\n", "", text, flags=re.S | re.M)


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def quickstart() -> tuple[Block, Block, list[str]]:
    """The README's quickstart: the `pulumi new` block, the stack file, and the commands that follow it."""
    found = blocks(README)
    stack = next(b for b in found if b.stack)
    new = next(b for b in found if "pulumi new " in b.text)
    after = [b for b in found if b.lang == "sh" and b.line > stack.line]
    commands = [line.split("#", 1)[0].strip() for line in after[0].text.splitlines()] if after else []
    return new, stack, [c for c in commands if c]


def stack_config(block: Block) -> dict:
    return yaml.safe_load(block.text)["config"]
