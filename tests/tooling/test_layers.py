"""The program's layers (components/, the package rke_aws): each module imports only its own layer and the
layers below it, function-local imports included, and no two modules import each other, directly or around a
cycle. The README's architecture section lists exactly the modules there are, under their layers.
(pyproject [tool.importlinter] holds the same layers, and what the package may not import, as contracts.)"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "components"
NAME = "rke_aws"  # the package's import name (pyproject [tool.setuptools] package-dir)
# Lowest first. The package root (components/__init__.py) exports the top. `ops` (the tools for a real
# account) sits beside the stack: nothing below imports it.
LAYERS = ("_version", "diagnostics", "settings", "plan", "node", "aws", "cluster", "rke_cluster", "ops")


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = (NAME, *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def layer(module: str) -> int:
    """rke_aws.<layer>[...]; the package root sits above every layer."""
    parts = module.split(".")
    if len(parts) == 1:
        return len(LAYERS)
    return LAYERS.index(parts[1])


def imports(module: str, path: pathlib.Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, imported module of this package) for every import statement anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from package import module` imports the module; `from module import name` the module.
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != module:
                found.append((node.lineno, target))
    return found


def graph() -> dict[str, list[tuple[int, str]]]:
    mods = modules()
    return {m: imports(m, p, set(mods)) for m, p in mods.items()}


def test_every_module_sits_in_a_layer():
    for module in modules():
        parts = module.split(".")
        assert len(parts) == 1 or parts[1] in LAYERS, f"{module}: not in a layer folder ({', '.join(LAYERS)})"


def test_no_upward_import():
    upward = [f"{m}:{line} imports {t} ({LAYERS[layer(t)] if layer(t) < len(LAYERS) else 'the package root'} is "
              f"above {LAYERS[layer(m)]})"
              for m, targets in graph().items() for line, t in targets if layer(t) > layer(m)]
    assert not upward, "\n".join(upward)


def test_no_cycle():
    edges = {m: sorted({t for _, t in targets}) for m, targets in graph().items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in edges[m]:
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_the_checks_see_function_local_and_relative_imports(tmp_path, monkeypatch):
    """The walk itself: an upward import inside a function, written relatively, is found."""
    pkg = tmp_path / "components"
    for folder in ("settings", "cluster"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "cluster" / "charts.py").write_text("X = 1\n")
    (pkg / "settings" / "model.py").write_text("def f():\n    from ..cluster import charts\n    return charts\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", pkg)
    g = graph()
    assert g["rke_aws.settings.model"] == [(2, "rke_aws.cluster.charts")]
    with pytest.raises(AssertionError, match="rke_aws.settings.model:2 imports rke_aws.cluster.charts"):
        test_no_upward_import()


README_BLOCK = re.compile(r"<!-- layers -->\n```\n(.*?)```\n<!-- /layers -->", re.S)


def readme_modules() -> set[str]:
    """The modules the README's architecture section lists: `  <layer>/` headings, then `    <name>.py`."""
    match = README_BLOCK.search((ROOT / "README.md").read_text())
    assert match, "README.md: the architecture section's layer listing (<!-- layers --> ... <!-- /layers -->) is missing"
    listed, folder = set(), None
    for line in match.group(1).splitlines():
        m = re.match(r"^  (\w+)/\s", line + " ")
        if m:
            folder = m.group(1)
            continue
        m = re.match(r"^  (\w+)\.py\s", line + " ")
        if m:
            folder = None
            listed.add(f"{NAME}.{m.group(1)}" if m.group(1) != "__init__" else NAME)
            continue
        m = re.match(r"^    (\w+)\.py\s", line + " ")
        if m and folder:
            name = m.group(1)
            listed.add(f"{NAME}.{folder}" if name == "__init__" else f"{NAME}.{folder}.{name}")
    return listed


def test_readme_architecture_lists_the_layers_as_they_are():
    folders = {f"{NAME}.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    actual = set(modules()) - folders
    listed = readme_modules()
    assert listed == actual, (f"README architecture section: missing {sorted(actual - listed)}, "
                              f"no such module {sorted(listed - actual)}")
