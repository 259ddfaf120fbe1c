"""The offline engine loads provider SDK sub-packages class by class (rke_aws_offline.engine.lazy_sdk, issue 33.7).

The layout it relies on is the one pulumi-language-python generates for every sub-package (installed pulumi-aws
7.51.1: pulumi_aws/ec2/__init__.py is `from .<module> import *` per module, then `from ._inputs import *` and
`from . import outputs`; pulumi_aws/__init__.py defers each sub-package with `_utilities.lazy_import`). A lookup
must give the very object the eager package gives, fall back to the real __init__ for what the naming convention
cannot place, and never reach `pulumi up` (the program does not install it)."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from rke_aws_offline.engine import lazy_sdk
from tests.support import fakesdk as fake_sdk

ROOT = pathlib.Path(__file__).resolve().parents[2]

# ---- a generated-layout package of our own, to see each behaviour in isolation ---------------------------------

_MODULE = '''import builtins as _builtins
from .. import _utilities
from . import outputs
from ._enums import *
from ._inputs import *
__all__ = [{names}]
{body}
'''
_FILES = {
    "fakesdk/__init__.py": "",
    "fakesdk/_utilities.py": "",
    "fakesdk/pkg/__init__.py": "# generated\nimport builtins as _builtins\nfrom .. import _utilities\nimport typing\n"
                               "from ._enums import *\nfrom .widget import *\nfrom .get_widget import *\n"
                               "from .odd_name import *\nfrom ._inputs import *\nfrom . import outputs\n",
    "fakesdk/pkg/_enums.py": "__all__ = ['Colour']\nclass Colour: pass\n",
    "fakesdk/pkg/_inputs.py": "from ._enums import *\n__all__ = ['WidgetPartArgs', 'WidgetPartArgsDict']\n"
                              "class WidgetPartArgs: pass\nclass WidgetPartArgsDict: pass\n",
    "fakesdk/pkg/outputs.py": "from . import outputs\n__all__ = ['WidgetPart']\nclass WidgetPart: pass\n",
    "fakesdk/pkg/widget.py": _MODULE.format(names="'WidgetArgs', 'Widget'",
                                            body="class WidgetArgs: pass\nclass Widget: pass\n"),
    "fakesdk/pkg/get_widget.py": _MODULE.format(
        names="'GetWidgetResult', 'AwaitableGetWidgetResult', 'get_widget', 'get_widget_output'",
        body="class GetWidgetResult: pass\nclass AwaitableGetWidgetResult: pass\n"
             "def get_widget(): pass\ndef get_widget_output(): pass\n"),
    "fakesdk/pkg/odd_name.py": _MODULE.format(names="'Unplaceable'", body="class Unplaceable: pass\n"),
    # Not the generated layout (a statement the finder does not know): runs as written.
    "fakesdk/other/__init__.py": "from .thing import *\nVALUE = 1\n",
    "fakesdk/other/thing.py": "__all__ = ['Thing']\nclass Thing: pass\n",
}


@pytest.fixture
def fakesdk(tmp_path, monkeypatch):
    yield from fake_sdk.installed(tmp_path, monkeypatch, _FILES)


def loaded() -> set[str]:
    return {m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("fakesdk.pkg.")}


def test_a_class_loads_only_the_module_that_defines_it(fakesdk):
    import fakesdk.pkg as pkg

    assert isinstance(pkg, lazy_sdk.LazyPackage)
    assert pkg.Widget is sys.modules["fakesdk.pkg.widget"].Widget
    assert pkg.WidgetArgs is sys.modules["fakesdk.pkg.widget"].WidgetArgs
    # widget.py's own imports (outputs runs `from . import outputs` on itself) and nothing else
    assert loaded() == {"widget", "outputs", "_enums", "_inputs"}
    assert pkg.get_widget is sys.modules["fakesdk.pkg.get_widget"].get_widget  # the function, not its module
    assert pkg.AwaitableGetWidgetResult is sys.modules["fakesdk.pkg.get_widget"].AwaitableGetWidgetResult
    assert pkg.WidgetPartArgsDict is sys.modules["fakesdk.pkg._inputs"].WidgetPartArgsDict
    assert pkg.Colour is sys.modules["fakesdk.pkg._enums"].Colour
    assert pkg.outputs is sys.modules["fakesdk.pkg.outputs"]
    assert "odd_name" not in loaded() and not lazy_sdk.FALLBACKS


def test_a_name_the_convention_cannot_place_runs_the_real_init(fakesdk):
    import fakesdk.pkg as pkg

    assert pkg.Unplaceable is sys.modules["fakesdk.pkg.odd_name"].Unplaceable
    assert lazy_sdk.FALLBACKS == ["fakesdk.pkg.Unplaceable"]
    assert pkg.typing is __import__("typing")  # the header's names, as the real file binds them


def test_an_unknown_name_raises_attribute_error(fakesdk):
    import fakesdk.pkg as pkg

    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        pkg.Nothing  # noqa: B018
    assert not hasattr(pkg, "NothingArgs")
    with pytest.raises(ImportError):
        exec("from fakesdk.pkg import Nothing", {})


def test_dir_and_star_import_see_the_whole_package(fakesdk):
    import fakesdk.pkg as pkg

    space: dict = {}
    exec("from fakesdk.pkg import *", space)
    assert {"Widget", "get_widget", "Unplaceable", "WidgetPartArgs", "Colour", "outputs"} <= set(space)
    assert {"Widget", "Unplaceable", "outputs"} <= set(dir(pkg))


def test_threads_resolving_at_once_get_the_same_objects(fakesdk):
    """The engine's mocks answer registrations on worker threads: lookups there, at the same time, agree."""
    import threading

    import fakesdk.pkg as pkg

    start, got = threading.Barrier(6), []

    def look(name: str) -> None:
        start.wait()
        got.append((name, getattr(pkg, name)))

    threads = [threading.Thread(target=look, args=(n,)) for n in ("Widget", "Unplaceable", "get_widget") * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    owner = {"Widget": "widget", "Unplaceable": "odd_name", "get_widget": "get_widget"}
    assert len(got) == 6
    assert all(obj is getattr(sys.modules[f"fakesdk.pkg.{owner[name]}"], name) for name, obj in got)


def test_a_package_in_another_layout_runs_as_written(fakesdk):
    import fakesdk.other as other

    assert type(other) is type(sys) and other.VALUE == 1 and other.Thing.__name__ == "Thing"


# ---- the installed SDKs -----------------------------------------------------------------------------------------

def _generated_packages(root: str) -> list[pathlib.Path]:
    site = pathlib.Path(__import__(root).__file__).parent
    return [p.parent for p in sorted(site.rglob("__init__.py"))
            if lazy_sdk.parse_layout(p.read_text()) is not None]


_ALL = re.compile(r"^__all__ = (\[.*?\])", re.S | re.M)


@pytest.mark.parametrize("root", lazy_sdk.ROOTS)
def test_the_convention_places_every_exported_name_and_no_name_is_exported_twice(root):
    """Every public name of every generated sub-package (read from the modules' `__all__`, nothing imported) is placed
    by `candidates` in the module that exports it, and no two star-imported modules of one package export the same
    name (the lazy package binds a module's names when it loads it; were a later module to export one of them too,
    only the eager package would know it wins). The exceptions run the real __init__ (the fallback)."""
    unplaced, twice = [], []
    for package in _generated_packages(root):
        layout = lazy_sdk.parse_layout((package / "__init__.py").read_text())
        assert layout is not None
        owner: dict[str, str] = {}
        for module in layout.star:
            match = _ALL.search((package / f"{module}.py").read_text())
            names = ast.literal_eval(match.group(1)) if match else []
            for name in names:
                if name in owner:
                    twice.append(f"{package.name}: {name} in {owner[name]} and {module}")
                owner[name] = module
                found = lazy_sdk.candidates(name, layout)
                if module not in found or any(name in _exports(package, m) for m in found[: found.index(module)]):
                    unplaced.append(f"{package.relative_to(package.parents[len(package.parts) - 1])}.{name}")
    assert not twice
    # pulumi_kubernetes/yaml/yaml.py and kustomize/kustomize.py hold classes named otherwise (fallback)
    assert len(unplaced) <= 3, unplaced


def _exports(package: pathlib.Path, module: str) -> set[str]:
    path = package / f"{module}.py"
    match = _ALL.search(path.read_text()) if path.exists() else None
    return set(ast.literal_eval(match.group(1))) if match else set()


_IDENTITY = textwrap.dedent("""
    import importlib, json, sys
    sys.path.insert(0, sys.argv[1])
    from rke_aws_offline.engine import lazy_sdk
    if sys.argv[2] == "lazy":
        lazy_sdk.install()
    from rke_aws_offline.engine.resource_types import TYPES
    from rke_aws_offline.engine.emulated.invokes import InvokeHandlers
    def place(token):
        # pulumi_aws/__init__.py's resource_modules table, by rule: aws:ec2/instance:Instance -> pulumi_aws.ec2
        pkg, mod, name = token.split(":")
        if pkg == "pulumi":
            return f"pulumi_{name}", "Provider"
        parts = mod.split("/")
        if parts[-1] == name[:1].lower() + name[1:]:
            parts = parts[:-1]
        if pkg == "kubernetes" and "." in parts[0] and not parts[0].startswith("helm.sh"):
            return "pulumi_kubernetes.apiextensions", "CustomResource"  # a custom kind (upgrade.cattle.io Plan)
        return ".".join([f"pulumi_{pkg}", *[p.split(".")[0] for p in parts if p != "index"]]), name
    got = {}
    for token in sorted(TYPES):
        if "rancher2" in token:
            continue  # pulumi_rancher2 is not a lazy root
        where, name = place(token)
        got[token] = (where, name, getattr(importlib.import_module(where), name))
    for token in sorted(InvokeHandlers._INVOKES):
        where, name = place(token)
        for fn in (lazy_sdk.snake(name), lazy_sdk.snake(name) + "_output"):
            got[f"{token} {fn}"] = (where, fn, getattr(importlib.import_module(where), fn))
    lazy = sorted(n for n, m in sys.modules.items() if isinstance(m, lazy_sdk.LazyPackage))
    fallbacks = list(lazy_sdk.FALLBACKS)
    wrong = []
    for key, (where, name, obj) in got.items():
        if getattr(sys.modules[obj.__module__], obj.__name__) is not obj:
            wrong.append(key + ": not the defining module's object")
    for name in lazy:
        dir(sys.modules[name])  # the real __init__ runs: the module is the eager one
    for key, (where, name, obj) in got.items():
        if getattr(sys.modules[where], name) is not obj:
            wrong.append(key + ": the eager package holds another object")
    print(json.dumps({"lazy": lazy, "fallbacks": fallbacks, "wrong": wrong, "count": len(got)}))
""")


def test_every_type_and_invoke_is_the_object_the_eager_package_gives():
    """Each class of a type token the offline engine knows (resource_types.TYPES) and each invoke it answers
    (emulated/invokes.py), looked up through the lazy packages, `is` the defining module's attribute and, once the
    real __init__ has run in the package (dir()), the eager package's attribute. In a fresh interpreter: the
    packages must not have been imported before."""
    out = subprocess.run([sys.executable, "-c", _IDENTITY, str(ROOT), "lazy"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    result = json.loads(out)
    assert result["count"] > 70
    assert not result["wrong"]
    assert not result["fallbacks"]  # every class the engine knows is placed by the convention
    assert {"pulumi_aws.ec2", "pulumi_aws.iam", "pulumi_aws.s3", "pulumi_kubernetes.helm.v3"} <= set(result["lazy"])


def test_pulumi_up_never_installs_it():
    """`pulumi up` runs __main__.py with the SDK as it ships: only the offline engine installs the lazy packages."""
    program = [ROOT / "__main__.py", *sorted((ROOT / "components").rglob("*.py"))]
    assert [p for p in program if "lazy_sdk" in p.read_text()] == []
    installers = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "offline").rglob("*.py"))
                  if "lazy_sdk.install()" in p.read_text()]
    assert installers == ["offline/engine/harness.py"]
