"""The offline engine makes a generated sub-package's enums, input and output types on first use
(rke_aws_offline.engine.lazy_classes, issue 33.7).

The layout it relies on is what pulumi-language-python writes (installed pulumi-aws 7.51.1: pulumi_aws/ec2/_inputs.py,
outputs.py and _enums.py are imports and `__all__`, then one class per exported name, decorated with
`@pulumi.input_type`, `@pulumi.output_type` or `@pulumi.type_token(...)`; every resource module star-imports
`_enums` and `_inputs`). pulumi resolves a type's string annotations in its module's globals (pulumi/_types.py
`_globals_for_cls`, `_raw_return_hints` and `get_type_hints`), so a class's module must hold what it spells by the time
pulumi asks, and a resource module's globals what it spells."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from rke_aws_offline.engine import lazy_classes
from tests.support import fakesdk as fake_sdk

ROOT = pathlib.Path(__file__).resolve().parents[2]

# ---- a generated-layout package of our own ---------------------------------------------------------------------

_HEADER = "import builtins as _builtins\nimport pulumi\nfrom typing import Any, Optional\n"
_FILES = {
    "fakesdk2/__init__.py": "",
    "fakesdk2/_utilities.py": "",
    "fakesdk2/pkg/__init__.py": "import builtins as _builtins\nfrom .. import _utilities\nimport typing\n"
                                "from ._enums import *\nfrom .widget import *\nfrom ._inputs import *\n"
                                "from . import outputs\n",
    "fakesdk2/pkg/_enums.py": "import builtins as _builtins\nimport pulumi\nfrom enum import Enum\n"
                              "__all__ = ['Colour', 'Size']\n\n"
                              "@pulumi.type_token(\"fake:pkg/Colour:Colour\")\nclass Colour(_builtins.str, Enum):\n"
                              "    RED = \"red\"\n\n"
                              "@pulumi.type_token(\"fake:pkg/Size:Size\")\nclass Size(_builtins.str, Enum):\n"
                              "    BIG = \"big\"\n",
    "fakesdk2/pkg/_inputs.py": _HEADER + "from ._enums import *\n"
                               "__all__ = ['PartArgs', 'BoltArgs', 'NutArgs']\n\n"
                               "@pulumi.input_type\nclass PartArgs:\n"
                               "    def __init__(__self__, *, bolt: Optional['BoltArgs'] = None):\n"
                               "        pulumi.set(__self__, 'bolt', bolt)\n\n"
                               "    @_builtins.property\n    @pulumi.getter\n"
                               "    def bolt(self) -> Optional['BoltArgs']:\n        return pulumi.get(self, 'bolt')\n\n"
                               "@pulumi.input_type\nclass BoltArgs:\n"
                               "    def __init__(__self__, *, colour: Optional['Colour'] = None):\n"
                               "        pulumi.set(__self__, 'colour', colour)\n\n"
                               "    @_builtins.property\n    @pulumi.getter\n"
                               "    def colour(self) -> Optional['Colour']:\n        return pulumi.get(self, 'colour')\n\n"
                               "@pulumi.input_type\nclass NutArgs:\n    pass\n",
    "fakesdk2/pkg/outputs.py": _HEADER + "from . import outputs\nfrom ._enums import *\n__all__ = ['Part']\n\n"
                               "@pulumi.output_type\nclass Part(dict):\n    pass\n",
    "fakesdk2/pkg/widget.py": _HEADER + "from .. import _utilities\nfrom . import outputs\nfrom ._enums import *\n"
                              "from ._inputs import *\n__all__ = ['Widget']\n"
                              "class Widget:\n    def f(self, part: Optional['PartArgs'] = None) -> None: ...\n",
}


@pytest.fixture
def fakesdk2(tmp_path, monkeypatch):
    yield from fake_sdk.installed(tmp_path, monkeypatch, _FILES)


def _made(module: str) -> set[str]:
    return set(lazy_classes._INDEXES[module].made)


def test_a_class_is_made_with_what_it_spells_and_nothing_else(fakesdk2):
    import fakesdk2.pkg as pkg

    pkg.Widget  # noqa: B018
    inputs, widget = sys.modules["fakesdk2.pkg._inputs"], sys.modules["fakesdk2.pkg.widget"]
    assert isinstance(inputs, lazy_classes.LazyClassModule)
    # widget.py spells PartArgs: its star-import binds it, and PartArgs spells BoltArgs, which spells Colour
    assert widget.PartArgs is inputs.PartArgs and not hasattr(widget, "NutArgs")
    assert _made("fakesdk2.pkg._inputs") == {"PartArgs", "BoltArgs"}
    assert "Size" not in _made("fakesdk2.pkg._enums")
    # pulumi resolves the annotations in the class's module: every name is there
    from pulumi import _types

    assert _types.input_type_types(inputs.PartArgs) == {"bolt": inputs.BoltArgs}
    assert _types.input_type_types(inputs.BoltArgs) == {"colour": sys.modules["fakesdk2.pkg._enums"].Colour}


def test_the_package_asks_one_name_at_a_time(fakesdk2):
    import fakesdk2.pkg as pkg

    assert pkg.NutArgs is sys.modules["fakesdk2.pkg._inputs"].NutArgs
    assert _made("fakesdk2.pkg._inputs") == {"NutArgs"}
    # _inputs' header star-imports _enums: an enum is bound there when a class that spells it is made
    assert _made("fakesdk2.pkg._enums") == set() and "Colour" not in vars(sys.modules["fakesdk2.pkg._inputs"])
    assert pkg.BoltArgs and vars(sys.modules["fakesdk2.pkg._inputs"])["Colour"] is pkg.Colour
    assert pkg.Size.BIG == "big" and _made("fakesdk2.pkg._enums") == {"Colour", "Size"}


def test_anyone_else_reading_all_or_dir_gets_the_eager_module(fakesdk2):
    import fakesdk2.pkg._inputs as inputs
    space: dict = {}
    exec("from fakesdk2.pkg._inputs import *", space)
    assert {"PartArgs", "BoltArgs", "NutArgs"} <= set(space) and lazy_classes.complete(inputs)
    assert {"Colour", "Size"} <= set(vars(inputs))  # its header's star-import of _enums, in full
    import fakesdk2.pkg.outputs as outputs

    assert not lazy_classes.complete(outputs)
    assert {"Part"} <= set(dir(outputs)) and lazy_classes.complete(outputs)


def test_a_module_binding_anything_else_runs_as_written(fakesdk2):
    path = fakesdk2 / "fakesdk2/pkg/outputs.py"
    path.write_text(path.read_text() + "EXTRA = 1\n")
    import fakesdk2.pkg as pkg

    outputs = pkg.outputs
    assert type(outputs) is type(sys) and outputs.EXTRA == 1 and outputs.Part.__name__ == "Part"


def test_a_made_class_is_what_the_module_makes():
    """The decorators and bases as the module's bytecode applies them: pulumi's markers, an enum's members."""
    from pulumi.type_token import get_type_token

    code = compile(_FILES["fakesdk2/pkg/_enums.py"], "x", "exec")
    eager: dict = {}
    exec(code, eager)
    lazy = type(sys)("lazy_enums")
    lazy.__dict__["__name__"] = "lazy_enums"
    assert lazy_classes.load(lazy, code, _FILES["fakesdk2/pkg/_enums.py"])
    try:
        colour = lazy.Colour
        assert [m.value for m in colour] == ["red"] and issubclass(colour, str)
        assert get_type_token(colour) == "fake:pkg/Colour:Colour"
        assert colour.__qualname__ == eager["Colour"].__qualname__ == "Colour"
    finally:
        lazy_classes._INDEXES.pop("lazy_enums", None)


# ---- the installed SDKs ----------------------------------------------------------------------------------------

_SHAPES = textwrap.dedent("""
    import importlib, json, sys, typing
    sys.path.insert(0, sys.argv[1])
    from rke_aws_offline.engine import lazy_classes, lazy_sdk
    from pulumi import _types
    lazy = sys.argv[2] == "lazy"
    if lazy:
        lazy_sdk.install()
    from rke_aws_offline.engine.resource_types import TYPES

    def place(token):
        pkg, mod, name = token.split(":")
        parts = mod.split("/")
        if parts[-1] == name[:1].lower() + name[1:]:
            parts = parts[:-1]
        return ".".join([f"pulumi_{pkg}", *[p.split(".")[0] for p in parts if p != "index"]]), name  # helm.sh -> helm

    # What pulumi does with a resource: its output types' and its Args' input types' annotations, resolved in their
    # modules, and so on down the types they name. Lazily, before anything else is made.
    seen, todo, errors = set(), [], []
    for token in sorted(TYPES):
        pkg = token.split(":")[0]
        first = token.split(":")[1].split("/")[0]
        if pkg not in ("aws", "kubernetes") or pkg == "kubernetes" and "." in first and first != "helm.sh":
            continue  # another provider, or a custom kind (pulumi_kubernetes.apiextensions.CustomResource)
        where, name = place(token)
        try:
            module = importlib.import_module(where)
            todo += [getattr(module, name), getattr(module, name + "Args", None)]
        except (ImportError, AttributeError):
            continue
    while todo:
        cls = todo.pop()
        if cls is None or cls in seen or not isinstance(cls, type):
            continue
        seen.add(cls)
        try:
            if _types.is_input_type(cls):
                hints = _types.input_type_types(cls)
            elif _types.is_output_type(cls):
                hints = _types.output_type_types(cls)
            else:
                hints = _types.resource_types(cls) if hasattr(cls, "_internal_init") else {}
        except Exception as e:
            errors.append(f"{cls.__module__}.{cls.__qualname__}: {type(e).__name__}: {e}")
            continue
        for t in hints.values():
            stack = [t]
            while stack:
                t = stack.pop()
                if isinstance(t, type):
                    todo.append(t)
                stack += list(typing.get_args(t))
    modules = sorted(n for n, m in sys.modules.items() if isinstance(m, lazy_classes.LazyClassModule)) if lazy else \
        json.loads(sys.argv[3])
    shapes = {}
    for name in modules:
        module = importlib.import_module(name)
        made = set(lazy_classes._INDEXES[name].made) if lazy else set()
        for cls_name in reversed(module.__all__ if not lazy else lazy_classes._INDEXES[name].exported):
            cls = getattr(module, cls_name)
            shapes[f"{name}.{cls_name}"] = [
                cls.__module__, cls.__qualname__, [b.__qualname__ for b in cls.__mro__], sorted(vars(cls)),
                _types.is_input_type(cls), _types.is_output_type(cls), getattr(cls, "_pulumi_type", None),
                sorted(getattr(cls, "__annotations__", {})),
                [m.value for m in cls] if hasattr(cls, "__members__") else None]
        dir(module)  # lazily: every class and every name its header's star-imports bind (make_all)
        shapes[f"{name} names"] = sorted(n for n in vars(module) if not n.startswith("__"))
        if lazy:
            shapes[f"{name} made before"] = len(made)
    print(json.dumps({"modules": modules, "shapes": shapes, "errors": errors, "types": len(seen)}))
""")


def test_every_types_module_a_plan_reaches_is_made_alike_and_resolves_lazily():
    """In a fresh interpreter with the lazy packages: pulumi's own type resolution (input_type_types,
    output_type_types, resource_types) walked from every resource the engine knows, down every type it names, with
    nothing made beforehand, raises nothing (every name a class spells is in its module when pulumi asks). Then every
    exported class of every types module that walk reached, made one by one in reverse file order, has the shape the
    eager module gives in another fresh interpreter: module, qualified name, MRO, attributes, pulumi's markers and
    type token, annotations, enum members; and once `dir()` made the rest, the module binds the names the eager one
    does."""
    lazy = json.loads(subprocess.run([sys.executable, "-c", _SHAPES, str(ROOT), "lazy"], capture_output=True,
                                     text=True, cwd=ROOT, check=True).stdout)
    assert not lazy["errors"]
    assert lazy["types"] > 100
    modules = lazy["modules"]
    assert {"pulumi_aws.ec2._inputs", "pulumi_aws.ec2.outputs", "pulumi_aws.ec2._enums", "pulumi_aws.s3._inputs"} \
        <= set(modules)
    eager = json.loads(subprocess.run([sys.executable, "-c", _SHAPES, str(ROOT), "eager", json.dumps(modules)],
                                      capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    assert not eager["errors"]
    made_before = {k: v for k, v in lazy["shapes"].items() if k.endswith(" made before")}
    shapes = {k: v for k, v in lazy["shapes"].items() if k not in made_before}
    assert shapes == eager["shapes"]
    # the walk itself made a part of each module, not all of it
    assert made_before["pulumi_aws.ec2._inputs made before"] < len([k for k in shapes
                                                                    if k.startswith("pulumi_aws.ec2._inputs.")]) / 2
