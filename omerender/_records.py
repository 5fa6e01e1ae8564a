"""``@record``: ``@dataclass(frozen=True, slots=True)`` without compiling five methods per class.

Python 3.11's :func:`dataclasses.dataclass` writes each method of a frozen class (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) as source and compiles it
with ``exec`` when the class is made: about 4 M instructions (0.8 ms) per class, and omerender makes
some fifty at import, so a render's start-up spent about an eighth of its time there
(``docs/decisions.md``, "Start-up and completion"). Python 3.13 compiles them in one go; 3.11 cannot.

Here the standard library still makes the class (its fields, ``__slots__``, ``__match_args__``), so
``dataclasses.fields``, ``replace``, ``asdict``, ``astuple`` and ``is_dataclass`` work as before, but it
is asked for no method. Only ``__init__`` is compiled, from the source ``dataclasses`` writes, and only
for a class instantiated more than a few times (one ``exec`` where there were up to six, and none for
the many classes a command makes rarely or never: a generic binder sets their fields); the others are
closures over the field names, made without compiling anything, that compare, hash and print the same
tuples ``dataclasses`` does:

- ``__eq__``: same class, then the tuple of the fields with ``compare=True``;
- ``__hash__`` (frozen and ``eq`` only, and only when the class does not set one): the hash of that tuple
  (fields with ``hash=True``, or ``hash=None`` and ``compare=True``);
- ``__repr__``: ``Name(field=value!r, ...)`` over the ``repr=True`` fields, guarded against recursion;
- frozen: ``__setattr__``/``__delattr__`` raise :class:`dataclasses.FrozenInstanceError` with the
  standard library's words, and ``__getstate__``/``__setstate__`` pickle the fields' values;
- ``__dataclass_params__`` says what the class is (``frozen``, ``eq``), so a frozen dataclass may
  subclass it and a non-frozen one may not, as with the standard library's.

A method the class body defines is kept, as ``dataclasses`` keeps it. ``tests/unit/test_records.py``
compares every behaviour above with ``@dataclass(frozen=True, slots=True)`` on the same class bodies.
"""

from __future__ import annotations

import dataclasses
import inspect
import reprlib
import sys
import types
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["record"]

_C = TypeVar("_C", bound=type)


class _FactorySentinel:
    """The default an ``__init__`` parameter shows for a ``default_factory`` field."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"  # the standard library's words, so signatures read the same


_HAS_FACTORY = _FactorySentinel()


@overload
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: _C, /) -> _C: ...
@overload
def record(*, frozen: bool = True, eq: bool = True) -> Callable[[_C], _C]: ...
def record(cls: Any = None, /, *, frozen: bool = True, eq: bool = True) -> Any:
    """Make ``cls`` a slotted dataclass, frozen unless ``frozen=False``, compared by value unless ``eq=False``."""

    def wrap(c: _C) -> _C:
        return _make(c, frozen=frozen, eq=eq)

    return wrap if cls is None else wrap(cls)


def _make(cls: _C, *, frozen: bool, eq: bool) -> _C:
    body = cls.__dict__
    # The hash the class sets for itself, as ``dataclasses._process_class`` reads it: ``__hash__ = None``
    # beside an ``__eq__`` of its own is Python's implicit None, not a choice.
    explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    own = {name for name in ("__init__", "__repr__", "__eq__") if name in body}
    # A class without a docstring gets ``Name(signature)`` from dataclasses, which reads the signature
    # while ``__init__`` is still object's (parsed from its text signature, about 1 ms); ours is written
    # below from the stand-in's signature, the same text.
    undocumented = not cls.__doc__
    if undocumented:
        cls.__doc__ = cls.__name__
    # Over a dataclass base, the standard library is told the truth about frozenness, so that its own
    # check (a frozen and a non-frozen dataclass do not inherit from each other) applies; it then writes
    # __setattr__/__delattr__, replaced below. Without such a base it is asked for no method at all.
    over_dataclass = any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])
    made: Any = dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, slots=True, frozen=frozen and over_dataclass
    )
    fields = dataclasses.fields(made)
    for field in fields:
        if field.kw_only is True:
            raise TypeError(
                f"@record: {cls.__qualname__}.{field.name} is keyword-only, which it does not make"
            )
    params = made.__dataclass_params__
    params.init, params.repr, params.eq, params.frozen = True, True, eq, frozen

    if "__init__" not in own:
        made.__init__ = _init(made, fields, frozen)
    if undocumented:
        made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
    if "__repr__" not in own:
        made.__repr__ = _repr(made, fields)
    if eq and "__eq__" not in own:
        made.__eq__ = _eq(made, fields)
    if eq and not explicit_hash:
        made.__hash__ = _hash(made, fields) if frozen else None
    if frozen:
        names = frozenset(f.name for f in fields)
        made.__setattr__ = _frozen_setattr(made, names)
        made.__delattr__ = _frozen_delattr(made, names)
        if "__getstate__" not in body:
            made.__getstate__ = _getstate
        if "__setstate__" not in body:
            made.__setstate__ = _setstate
    return made  # type: ignore[no-any-return]


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """A stand-in ``__init__`` with the real one's signature, which compiles the real one only for a
    class instantiated often (:func:`_stand_in`).

    Most classes an import makes are never instantiated by one command, or a few times, so their
    ``__init__`` is never compiled. The stand-in carries the signature ``dataclasses`` gives (``inspect``,
    pdoc and help read ``__signature__``) and refuses a non-default field after a default one when the
    class is made, as ``dataclasses`` does.
    """
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [inspect.Parameter("self", positional)]
    annotations: dict[str, Any] = {}
    seen_default = False
    for f in fields:
        if not f.init:
            continue
        default: Any = inspect.Parameter.empty
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = _HAS_FACTORY
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or default is not inspect.Parameter.empty
        parameters.append(inspect.Parameter(f.name, positional, default=default, annotation=f.type))
        annotations[f.name] = f.type
    annotations["return"] = None

    stub = _stand_in(cls, fields, frozen)
    stub.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    stub.__annotations__ = annotations
    return stub


# A class's first instances are made by a generic binder (no compiling); past this many, its __init__ is
# compiled. One command makes most classes a handful of times, where compiling costs more than it saves.
GENERIC_CALLS = 16


def _stand_in(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """The stand-in, as a function of the class's module (``typing.get_type_hints`` resolves the
    fields' annotations in a function's ``__globals__``, which is the module's for ``dataclasses``' too).

    Its first :data:`GENERIC_CALLS` calls bind the arguments with :func:`_binder`; a call the binder
    cannot take as given (too many, unknown or missing arguments) goes to the compiled ``__init__``,
    which raises Python's own ``TypeError``. Past that, the compiled one replaces the stand-in.
    """
    compile_init, make_binder, limit = _compile_init, _binder, GENERIC_CALLS
    calls = [0]
    binder: list[Callable[[Any, tuple[Any, ...], dict[str, Any]], bool]] = []  # made on the first call

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        calls[0] += 1
        if calls[0] <= limit:
            if not binder:
                binder.append(make_binder(cls, fields, frozen))
            if binder[0](self, args, kwargs):
                return
        real = compile_init(cls, fields, frozen)
        if calls[0] > limit and getattr(cls.__dict__.get("__init__"), "__record_stand_in__", False):
            cls.__init__ = real  # type: ignore[misc]  # later instances call it directly
        real(self, *args, **kwargs)

    stub = types.FunctionType(__init__.__code__, _module_globals(cls), "__init__", None, __init__.__closure__)
    stub.__record_stand_in__ = True  # type: ignore[attr-defined]
    stub.__qualname__ = f"{cls.__qualname__}.__init__"
    stub.__module__ = cls.__module__
    return stub


def _binder(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool
) -> Callable[[Any, tuple[Any, ...], dict[str, Any]], bool]:
    """Sets the fields as the compiled ``__init__`` would (same order, defaults, factories, then
    ``__post_init__``) and answers True; answers False, having set nothing, for arguments it would refuse."""
    missing = dataclasses.MISSING
    plan: list[
        tuple[str, int, Any, Any]
    ] = []  # (name, position among the parameters or -1, default, factory)
    position: dict[str, int] = {}
    required: list[tuple[int, str]] = []
    for f in fields:
        if f.init:
            position[f.name] = len(position)
            if f.default is missing and f.default_factory is missing:
                required.append((position[f.name], f.name))
            plan.append((f.name, position[f.name], f.default, f.default_factory))
        elif f.default is not missing or f.default_factory is not missing:
            plan.append((f.name, -1, f.default, f.default_factory))
    count = len(position)
    post_init = hasattr(cls, "__post_init__")
    setter: Callable[[Any, str, Any], None] = object.__setattr__ if frozen else setattr

    def bind(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        given = len(args)
        if given > count:
            return False
        for name in kwargs:
            at = position.get(name)
            if at is None or at < given:
                return False
        for at, name in required:
            if at >= given and name not in kwargs:
                return False
        for name, at, default, factory in plan:
            if 0 <= at < given:
                value = args[at]
            elif at >= 0 and name in kwargs:
                value = kwargs[name]
            elif default is not missing:
                value = default
            else:
                value = factory()
            setter(self, name, value)
        if post_init:
            self.__post_init__()
        return True

    return bind


def _module_globals(cls: type) -> dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    return module.__dict__ if module is not None else {}


def _compile_init(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """``__init__`` as ``dataclasses._init_fn`` writes it: the same parameters, defaults and body, made
    in the class's module with its helpers as closure variables (``dataclasses._create_fn``'s way)."""
    names: dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY, "_object_setattr": object.__setattr__}
    params: list[str] = ["self"]
    lines: list[str] = []
    for f in fields:
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if f.init:
            names[f"_type_{f.name}"] = f.type
            if has_default:
                names[f"_dflt_{f.name}"] = f.default
                params.append(f"{f.name}: _type_{f.name} = _dflt_{f.name}")
            elif has_factory:
                params.append(f"{f.name}: _type_{f.name} = _HAS_FACTORY")
            else:
                params.append(f"{f.name}: _type_{f.name}")
        if has_factory:
            names[f"_dflt_{f.name}"] = f.default_factory
            value = (
                f"_dflt_{f.name}() if {f.name} is _HAS_FACTORY else {f.name}"
                if f.init
                else f"_dflt_{f.name}()"
            )
        elif f.init:
            value = f.name
        elif has_default:  # a slotted class has no class attribute to fall back on
            names[f"_dflt_{f.name}"] = f.default
            value = f"_dflt_{f.name}"
        else:
            continue
        lines.append(f"_object_setattr(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    body = "\n        ".join(lines or ["pass"])
    source = (
        f"def __create_fn__({', '.join(names)}):\n"
        f"    def __init__({', '.join(params)}) -> None:\n        {body}\n"
        "    return __init__"
    )
    # dont_inherit: not this module's ``from __future__ import annotations``, so the annotations are the
    # field types, as the standard library's are.
    code = compile(source, "<string>", "exec", dont_inherit=True)
    made: dict[str, Any] = {}
    exec(code, _module_globals(cls), made)  # compiled once per class: a generic __init__ is slower per call
    init: Callable[..., None] = made["__create_fn__"](**names)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _values(fields: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of ``fields``' values (``attrgetter`` of one name returns the value, not a tuple)."""
    if len(fields) == 1:
        (name,) = fields
        return lambda obj: (getattr(obj, name),)
    if not fields:
        return lambda obj: ()
    return attrgetter(*fields)


def _repr(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any], str]:
    shown = [f.name for f in fields if f.repr]

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return __repr__


def _eq(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any, Any], Any]:
    values = _values([f.name for f in fields if f.compare])

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    return __eq__


def _hash(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any], int]:
    values = _values([f.name for f in fields if (f.compare if f.hash is None else f.hash)])

    def __hash__(self: Any) -> int:
        return hash(values(self))

    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


def _frozen_setattr(owner: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    __setattr__.__qualname__ = f"{owner.__qualname__}.__setattr__"
    return __setattr__


def _frozen_delattr(owner: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    __delattr__.__qualname__ = f"{owner.__qualname__}.__delattr__"
    return __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)  # the fields are frozen: bypass __setattr__
