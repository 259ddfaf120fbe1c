"""Offline only: a generated sub-package's `_inputs` and `outputs` modules define each class on first use (33.7).

Why. After lazy_sdk, rke2-dev's plan imports a handful of resource modules per sub-package, but each of them runs
`from ._enums import *`, `from ._inputs import *` and `from . import outputs`, and those files define every enum,
input and output type of the sub-package: pulumi_aws/ec2/outputs.py (pulumi-aws 7.51.1) holds 525 classes,
ec2/_inputs.py 706, s3's 552 more, ec2/_enums.py the InstanceType enum of ~1,400 members. Running their class bodies
and pulumi's decorators (unmarshalling their bytecode is ~0.01 s a module), for the few dozen classes a plan uses,
was 7.6% of rke2-dev's plan in instructions (callgrind, one run each with this on and off: 6.81 -> 6.29 G) and
2.14 -> 1.76 s of its CPU in the bench (bench/RESULTS.md, "The plan's CPU": medians of 5 interleaved runs).

What. Such a file is a header (imports, `__all__`), then one class per exported name, each maybe decorated. The
module's bytecode (its cached .pyc, as an import reads it) holds each class body as a code object. `load` runs the
header (the source up to the first class) and keeps the rest; a class is made the first time it is asked for, as the
module's own bytecode makes it: `builtins.__build_class__` over a function of its body's code object in the module's
globals, with the bases and decorators its `class`/`@` lines name, after every class whose name its code spells (its
names and string constants: pulumi resolves a class's string annotations in its module's globals, pulumi/_types.py
`_globals_for_cls` and `get_type_hints`, so what a class spells must be there). `load` declines (the module then runs
as usual) unless every exported name is such a class and the module binds nothing else (its bytecode's names).

Who reads them. A resource module of the package (`ec2/instance.py`) star-imports `_enums` and `_inputs`, and the
types modules' headers star-import `_enums`: `__all__`, asked from a sibling module's top level, is the module's names
that sibling's code spells (a types module's: its whole bytecode's, not only its header's), all it can refer to. The lazy package
(lazy_sdk) asks one name at a time. Anyone else reading `__all__`, and `dir()`, makes every class not made yet, in
file order: the module is then the eager one."""

from __future__ import annotations

import builtins
import re
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

# The generated modules that define types only (pulumi-language-python names them so in every sub-package).
CLASS_MODULES = ("_enums", "_inputs", "outputs")

_DECORATOR = re.compile(r"@([\w.]+(?:\([^()]*\))?)\s*")
_CLASS_LINE = re.compile(r"class (\w+)(?:\(([^()]*)\))?\s*:\s*")
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass
class _Class:
    body: types.CodeType
    decorators: tuple[str, ...]  # expressions, outermost first
    bases: str  # the text between the class line's parentheses


@dataclass
class Index:
    classes: dict[str, _Class]  # in file order
    exported: tuple[str, ...] = ()
    # The lazy types modules the header star-imports (`from ._enums import *`): their names are bound as the
    # classes that spell them are made (all of them by make_all), not by the header.
    star_from: list[str] = field(default_factory=list)
    made: set[str] = field(default_factory=set)
    lock: threading.RLock = field(default_factory=threading.RLock)
    complete: bool = False


_INDEXES: dict[str, Index] = {}
_LOADING: dict[str, Index] = {}  # the types modules whose header is running
_WORDS: dict[int, tuple[types.CodeType, set[str]]] = {}  # _words by code object (kept alive with it)
_EXPRESSIONS: dict[str, types.CodeType] = {}  # decorator and base texts, compiled once per process


def _classes(code: types.CodeType, lines: list[str]) -> dict[str, _Class] | None:
    """The module's classes by name, from their body code objects and their `@`/`class` lines; None if a code object
    is not a class made the plain way (one-line header, no keyword to reach for)."""
    found: dict[str, _Class] = {}
    for const in code.co_consts:
        if not isinstance(const, types.CodeType):
            continue
        at = const.co_firstlineno - 1
        decorators = []
        while at < len(lines) and (m := _DECORATOR.fullmatch(lines[at])):
            decorators.append(m.group(1))
            at += 1
        m = _CLASS_LINE.fullmatch(lines[at]) if at < len(lines) else None
        if m is None or m.group(1) != const.co_name or const.co_name in found:
            return None
        found[const.co_name] = _Class(const, tuple(decorators), m.group(2) or "")
    return found


def _words(code: types.CodeType) -> set[str]:
    """The names a code object (and the code inside it) can refer to: its names and the words of its strings."""
    known = _WORDS.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    words = _scan(code)
    _WORDS[id(code)] = (code, words)
    return words


def _scan(code: types.CodeType) -> set[str]:
    words = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, str):
            words.update(_WORD.findall(const))
        elif isinstance(const, tuple):
            words.update(w for c in const if isinstance(c, str) for w in _WORD.findall(c))
        elif isinstance(const, types.CodeType):
            words |= _scan(const)
    return words


def load(module: types.ModuleType, code: types.CodeType, source: str) -> bool:
    """Run a generated types module's header into `module` and make it lazy; False (nothing run) if it is not one
    (the caller then runs the module as usual)."""
    lines = source.splitlines(keepends=True)
    classes = _classes(code, lines)
    if not classes:
        return False
    first = min(c.body.co_firstlineno for c in classes.values()) - 1
    origin = module.__spec__.origin if module.__spec__ is not None else module.__name__
    header = compile("".join(lines[:first]), origin, "exec", dont_inherit=True)
    spelled = {w for c in classes.values() for t in (*c.decorators, c.bases) for w in _WORD.findall(t)}
    if not set(code.co_names) <= _words(header) | set(classes) | spelled:
        return False  # the module binds something else between its classes
    ix = _LOADING[module.__name__] = Index(classes)
    try:
        exec(header, module.__dict__)
    finally:
        _LOADING.pop(module.__name__, None)
    ix.exported = tuple(module.__dict__.get("__all__", ()))
    if set(ix.exported) != set(classes):
        return False  # the header's imports ran; the caller runs the whole module over them
    _INDEXES[module.__name__] = ix
    module.__class__ = LazyClassModule
    return True


class LazyClassModule(types.ModuleType):
    """A generated `_enums`, `_inputs` or `outputs` module whose classes are made on first use (see the module doc)."""

    def __getattr__(self, name: str) -> Any:
        ix = _INDEXES.get(self.__name__)
        if ix is not None and name in ix.classes:
            _make(self, ix, name)
            return self.__dict__[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    @property  # a data descriptor: looked up before the module's dict, where the header bound the real list
    def __all__(self) -> list[str]:  # type: ignore[override]
        names = list(self.__dict__.get("__all__", ()))
        ix = _INDEXES.get(self.__name__)
        if ix is None or ix.complete:
            return names
        frame = sys._getframe(1)
        caller = _caller_name(frame)
        loading = _LOADING.get(caller)
        if loading is not None and frame.f_code.co_name == "<module>" and _siblings(self.__name__, caller):
            loading.star_from.append(self.__name__)
            return []  # bound as its classes spell them (_make), or all at once (make_all)
        spelled = _spelled_by_sibling(self.__name__, frame)
        if spelled is None:
            make_all(self)
            return names
        return [n for n in names if n in spelled]

    def __dir__(self) -> list[str]:
        make_all(self)
        return sorted(self.__dict__)


def _spelled_by_sibling(module: str, frame: types.FrameType) -> set[str] | None:
    """The words of the module whose top level is running `from <module> import *`, if it is a module of the same
    package (not the package itself); None otherwise."""
    caller = _caller_name(frame)
    if frame.f_code.co_name != "<module>" or not _siblings(module, caller):
        return None
    return _words(frame.f_code)


def _caller_name(frame: types.FrameType) -> str:
    """The module whose code `frame` runs."""
    return str(frame.f_globals.get("__name__", ""))


def _siblings(module: str, other: str) -> bool:
    """Two modules of the same package (a package is no sibling of its modules)."""
    return other != module and other.rpartition(".")[0] == module.rpartition(".")[0]


def _make(module: types.ModuleType, ix: Index, name: str) -> None:
    """Make class `name` and, first, every class its code spells, each once, in file order."""
    with ix.lock:
        if name in ix.made:
            return
        todo: set[str] = set()
        stack = [name]
        while stack:
            n = stack.pop()
            if n in todo or n in ix.made:
                continue
            todo.add(n)
            stack.extend(w for w in _words(ix.classes[n].body) if w in ix.classes)
        space = module.__dict__
        for source in ix.star_from:  # what the header's star-imports would have bound, as far as these spell
            other = sys.modules[source]
            for w in {w for n in todo for w in _words(ix.classes[n].body)}:
                if w not in space and defines(other, w):
                    space[w] = getattr(other, w)
        for n in [n for n in ix.classes if n in todo]:
            _build(module, ix, n)


def _build(module: types.ModuleType, ix: Index, name: str) -> None:
    """What the module's bytecode does for one class: its body run by __build_class__, then its decorators."""
    spec = ix.classes[name]
    space = module.__dict__
    ix.made.add(name)
    bases, keywords = _eval(f"(lambda *a, **k: (a, k))({spec.bases})", space)
    cls = builtins.__build_class__(types.FunctionType(spec.body, space, name), name, *bases, **keywords)  # type: ignore[attr-defined]
    for decorator in reversed(spec.decorators):
        cls = _eval(decorator, space)(cls)
    space[name] = cls


def _eval(text: str, space: dict[str, Any]) -> Any:
    code = _EXPRESSIONS.get(text)
    if code is None:
        code = _EXPRESSIONS[text] = compile(text, "<lazy_classes>", "eval", dont_inherit=True)
    return eval(code, space)


def make_all(module: types.ModuleType) -> None:
    """Every class not made yet, in file order: the module is then the eager one."""
    ix = _INDEXES.get(module.__name__)
    if ix is None:
        return
    with ix.lock:
        if ix.complete:
            return
        for source in ix.star_from:  # the header's star-imports, in full
            other = sys.modules[source]
            for w in other.__all__:  # from here (no sibling): the other module is made whole too
                module.__dict__.setdefault(w, getattr(other, w))
        for name in ix.classes:
            if name not in ix.made:
                _build(module, ix, name)
        ix.complete = True


def complete(module: types.ModuleType) -> bool:
    """Whether every class of a lazy types module is made (it is then the eager module)."""
    ix = _INDEXES.get(module.__name__)
    return ix is None or ix.complete


def defines(module: types.ModuleType, name: str) -> bool:
    """Whether `module` is a lazy types module exporting `name`."""
    ix = _INDEXES.get(module.__name__)
    return ix is not None and name in ix.classes and name in ix.exported
