"""What a plan does not need, it does not import (issue 33.7): the SDK of a provider only some stacks use is
imported where its resources are created, never at a module's top level in components/, so a stack without that
feature never loads it (`python -m bench.commands --cpu` measures what that saves; no test here times anything).

pulumi-rancher2: only stacks with `rancher` set create rancher2 resources (components/cluster/rancher.py); its
import costs about a third of a bare `import pulumi_aws` (python -X importtime, pulumi-rancher2 13.x)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "components"
# Provider SDKs for optional features -> the feature (the stack key) that needs them.
OPTIONAL_SDKS = {"pulumi_rancher2": "rancher"}


def top_level_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of the imports a module runs when it is imported: its body, not its functions'
    (imports under `if TYPE_CHECKING:` never run)."""
    found: list[tuple[int, str]] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.append((node.lineno, node.module or ""))
            elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)

    visit(ast.parse(path.read_text(), str(path)).body)
    return found


def test_optional_provider_sdks_are_imported_where_their_resources_are_created():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: imports {module} at module level (only `{OPTIONAL_SDKS[module.split('.')[0]]}` "
        "stacks need it: import it in the function that creates its resources)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, module in top_level_imports(path)
        if module.split(".")[0] in OPTIONAL_SDKS
    ]
    assert not offenders, "\n".join(offenders)


def test_the_check_sees_a_module_level_import(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import pulumi_rancher2 as r\nif True:\n    from pulumi_rancher2 import x\n"
                      "def f():\n    import pulumi_rancher2\n")
    assert [m for _, m in top_level_imports(sample)] == ["pulumi_rancher2", "pulumi_rancher2"]
