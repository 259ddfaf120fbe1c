"""Offline only: provider SDK sub-packages load class by class (issue 33.7, the plan's CPU).

Why. Every generated sub-package of a Pulumi provider SDK (pulumi-aws 7.51.1 as installed: e.g.
`pulumi_aws/ec2/__init__.py`, written by pulumi-language-python) is, line by line,

    import builtins as _builtins
    from .. import _utilities
    import typing
    from ._enums import *
    from .ami import *            # one star-import per resource or function module (ec2: ~180)
    ...
    from ._inputs import *
    from . import outputs

`pulumi_aws/__init__.py` already defers each sub-package through `_utilities.lazy_import`
(pulumi_aws/_utilities.py, which uses `pulumi._utils.lazy_import`: an `importlib.util.LazyLoader`-style module),
but that only delays the whole body to the first attribute access: the first `aws.ec2.Instance` still imports
every module of `ec2`. A plan uses a handful of classes per sub-package.

What. `install()` puts a meta-path finder ahead of the path finder for the SDK roots in `ROOTS`. For a package under
a root whose `__init__.py` has exactly the layout above (nothing else: anything else runs as usual), the module is
a `LazyPackage`: it runs the three header statements, and resolves an attribute on first access by importing only
the submodule that defines it, by the code generator's naming convention (`Instance`, `InstanceArgs`,
`InstanceInitArgs` -> `instance`; `get_ami`, `get_ami_output`, `GetAmiResult`, `AwaitableGetAmiResult` -> `get_ami`;
pulumi-kubernetes names its modules after the class: `Release` -> `Release`; other `...Args`/`...ArgsDict` ->
`_inputs`; other class names -> `_enums`; `outputs` and every submodule name -> that submodule), then binds that
submodule's public names into the package exactly as its `from .X import *` line would (a later star-import wins
over an earlier one, as in the real file). A name the convention cannot place, `dir()`, and `from pkg import *`
(which asks for `__all__`) execute the package's real `__init__.py` into the module, which then is the eager
module: an unknown name raises AttributeError. So a lookup is never wrong, at worst as slow as before, given
that no two star-imported modules of one package export the same name (only the eager package would know the later
one wins): tests/tooling/test_lazy_sdk.py holds the installed SDKs to that and to the convention.

Who installs it: the offline harness (rke_aws_offline.engine.harness), before it evaluates a program; sub-packages
a process imported before (a test worker that imported pulumi_aws earlier) stay eager. The program itself
(`__main__.py`, components/) never does: `pulumi up` imports the SDK as it ships."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import re
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

from rke_aws_offline.engine import lazy_classes

# The SDKs whose sub-packages load lazily. pulumi_tls and pulumi_random are single packages whose top-level
# __init__ also registers resource modules (not this layout); they cost ~0.01 s each (python -X importtime).
ROOTS = ("pulumi_aws", "pulumi_kubernetes")

_HEADER = re.compile(r"import builtins as _builtins|import typing|from \.+ import _utilities")
_STAR = re.compile(r"from \.(\w+) import \*")
_PLAIN = re.compile(r"from \. import (\w+)")
_SUFFIXES = ("InitArgs", "ArgsDict", "Args", "Result")
_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass
class Layout:
    """A generated sub-package's __init__.py: its header statements, its star-imported submodules in order, and the
    submodules it imports as names (`from . import outputs`)."""
    header: str
    star: tuple[str, ...]
    plain: tuple[str, ...]


def parse_layout(source: str) -> Layout | None:
    """The layout of a generated `__init__.py`, or None if it holds anything else (then it runs as written)."""
    header: list[str] = []
    star: list[str] = []
    plain: list[str] = []
    for raw in source.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _HEADER.fullmatch(line):
            header.append(line)
        elif m := _STAR.fullmatch(line):
            star.append(m.group(1))
        elif m := _PLAIN.fullmatch(line):
            plain.append(m.group(1))
        else:
            return None
    if not star:
        return None
    return Layout("\n".join(header), tuple(star), tuple(plain))


def snake(name: str) -> str:
    """The code generator's module name for a class name: `VpcIpv4CidrBlockAssociation` ->
    `vpc_ipv4_cidr_block_association`."""
    return _WORD.sub("_", name).lower()


def candidates(name: str, layout: Layout) -> list[str]:
    """The submodules that may define `name`, most likely first (none: only the real __init__ can tell)."""
    modules = set(layout.star) | set(layout.plain)
    if name in modules:
        return [name]
    if name.startswith("_"):
        return []
    found: list[str] = []
    if name.endswith("_output") and name[: -len("_output")] in modules:
        found.append(name[: -len("_output")])  # get_ami_output -> get_ami
    base = name.removeprefix("Awaitable")
    for suffix in _SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    for module in (snake(base), base):
        if module in modules and module not in found:
            found.append(module)
    if name.endswith(("Args", "ArgsDict")) and "_inputs" in modules:
        found.append("_inputs")
    if name[:1].isupper() and "_enums" in modules:
        found.append("_enums")
    return found


@dataclass
class _State:
    loader: Any  # the path finder's loader of the package's __init__.py
    layout: Layout
    bound: set[str] = field(default_factory=set)  # star-imported submodules whose names are bound
    owner: dict[str, int] = field(default_factory=dict)  # bound name -> position of the star-import that bound it
    complete: bool = False  # the real __init__ ran: the module is the eager one


_STATES: dict[str, _State] = {}
# The packages whose real __init__ this thread is running. No lock: every step is idempotent (the import system
# locks each submodule; binding a name twice binds the same object), and a lock held across imports could deadlock
# with a submodule's own `from . import` on another thread.
_RUNNING = threading.local()
# Names the real __init__ had to resolve (the convention could not): read by tests and by curiosity.
FALLBACKS: list[str] = []


def _public(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:  # as `from m import *` does without __all__
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


def _bind(package: types.ModuleType, state: _State, sub: str) -> None:
    """Import `package.sub` and, if the real __init__ star-imports it, bind its names as that line would."""
    if sub in state.bound:
        return
    space = package.__dict__
    order = state.layout.star.index(sub) if sub in state.layout.star else len(state.layout.star)
    had, before = sub in space, space.get(sub)
    module = importlib.import_module(f"{package.__name__}.{sub}")  # also sets package.<sub>, as the real import does
    if _initializing(module):
        return  # this thread is running that module (outputs.py runs `from . import outputs`): bind nothing yet
    state.bound.add(sub)
    if state.owner.get(sub, -1) > order:  # a later star-import's name beats the submodule's attribute
        if had:
            space[sub] = before
        else:  # pragma: no cover - an owner implies the name was bound
            space.pop(sub, None)
    if sub not in state.layout.star:
        return
    for name in _public(module):
        if state.owner.get(name, -1) <= order:
            space[name] = getattr(module, name)
            state.owner[name] = order


def _initializing(module: types.ModuleType | None) -> bool:
    """Whether the import system is still running `module` (importlib sets __spec__._initializing meanwhile)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _load_all(package: types.ModuleType, state: _State) -> None:
    """The fallback: run the package's real __init__.py in the module (it then is the eagerly imported module)."""
    running = _running()
    if state.complete or package.__name__ in running:
        return
    running.add(package.__name__)
    try:
        exec(state.loader.get_code(package.__name__), package.__dict__)
    finally:
        running.discard(package.__name__)
    state.complete = True


def _running() -> set[str]:
    if not hasattr(_RUNNING, "names"):
        _RUNNING.names = set()
    return _RUNNING.names


class LazyPackage(types.ModuleType):
    """A generated SDK sub-package whose attributes are resolved submodule by submodule (see the module doc)."""

    def __getattr__(self, name: str) -> Any:
        state = _STATES.get(self.__name__)
        if state is None or state.complete or self.__name__ in _running():
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        space = self.__dict__
        for sub in candidates(name, state.layout):
            if sub in lazy_classes.CLASS_MODULES and sub in state.layout.star:
                module = importlib.import_module(f"{self.__name__}.{sub}")
                if isinstance(module, lazy_classes.LazyClassModule) and not lazy_classes.complete(module):
                    # one name at a time: binding its every name (as _bind does) would define every class
                    if lazy_classes.defines(module, name):
                        order = state.layout.star.index(sub)
                        value = getattr(module, name)
                        if state.owner.get(name, -1) <= order:
                            space[name], state.owner[name] = value, order
                        return space[name]
                    continue
            _bind(self, state, sub)
            if name in space:
                return space[name]
            if sub == name and _initializing(sys.modules.get(f"{self.__name__}.{name}")):
                # A submodule this thread is running asks for itself (`from . import outputs` in outputs.py): the
                # import system binds it to the package when it is done; until then the eager package lacks it
                # too, and `from . import` falls back to sys.modules.
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        FALLBACKS.append(f"{self.__name__}.{name}")
        _load_all(self, state)
        try:
            return space[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None

    def __dir__(self) -> list[str]:
        state = _STATES.get(self.__name__)
        if state is not None:
            _load_all(self, state)
        return sorted(self.__dict__)


class _Loader(importlib.abc.Loader):
    """Wraps the path finder's loader of a package's __init__.py."""

    def __init__(self, delegate: Any):
        self.delegate = delegate

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.delegate.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        source = self.delegate.get_source(module.__name__)
        layout = parse_layout(source) if source is not None else None
        if layout is None:
            self.delegate.exec_module(module)
            return
        _STATES[module.__name__] = _State(self.delegate, layout)
        origin = module.__spec__.origin if module.__spec__ is not None else None
        exec(compile(layout.header, origin or module.__name__, "exec"), module.__dict__)
        module.__class__ = LazyPackage

    def __getattr__(self, name: str) -> Any:  # get_code, get_source, is_package, get_resource_reader, ...
        return getattr(self.delegate, name)


class _ClassLoader(_Loader):
    """Wraps the path finder's loader of a lazy package's `_inputs`/`outputs` module (lazy_classes)."""

    def exec_module(self, module: types.ModuleType) -> None:
        source = self.delegate.get_source(module.__name__)
        if source is None or not lazy_classes.load(module, self.delegate.get_code(module.__name__), source):
            self.delegate.exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds what the path finder finds; wraps the loader of a package under one of ROOTS (not the root itself)."""

    def find_spec(self, fullname: str, path: Any = None, target: types.ModuleType | None = None) -> Any:
        root, dot, _ = fullname.partition(".")
        if not dot or root not in ROOTS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        if spec.submodule_search_locations is not None:
            spec.loader = _Loader(spec.loader)
        else:
            package, _, last = fullname.rpartition(".")
            if last in lazy_classes.CLASS_MODULES and package in _STATES:
                spec.loader = _ClassLoader(spec.loader)
        return spec


_FINDER = _Finder()


def install() -> None:
    """Make the SDK sub-packages not imported yet load lazily in this process (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def installed() -> bool:
    return _FINDER in sys.meta_path
