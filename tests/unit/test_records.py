"""``omerender._records.record`` behaves as ``@dataclass(frozen=True, slots=True)`` on the same class body.

Each class body is made twice, once by the standard library and once by ``record``, and every behaviour a
caller can see is compared: fields, signature (before and after the first instance compiles the real
``__init__``), repr, equality, hashing, frozenness, pickling and copying, ``replace``/``asdict``,
``__post_init__``, defaults and factories, methods the body defines, subclassing.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from omerender._records import GENERIC_CALLS, record


def _stdlib(frozen: bool = True, eq: bool = True) -> Callable[[type], type]:
    return dataclass(frozen=frozen, slots=True, eq=eq)  # type: ignore[no-any-return]


def _ours(frozen: bool = True, eq: bool = True) -> Callable[[type], type]:
    return record(frozen=frozen, eq=eq)


MAKERS = [pytest.param(_stdlib, id="dataclasses"), pytest.param(_ours, id="record")]


def _point(make: Callable[..., Callable[[type], type]], name: str = "Point", **flags: Any) -> type:
    @make(**flags)
    class Point:
        """A point."""

        __qualname__ = name  # module-level names below, so that pickle finds them

        x: int
        y: str = "y"
        tags: tuple[str, ...] = ()
        extra: dict[str, Any] = field(default_factory=dict, compare=False)
        hidden: int = field(default=0, repr=False)

        def norm(self) -> int:
            return self.x * 2

    return Point


def _derived(make: Callable[..., Callable[[type], type]], name: str = "Derived") -> type:
    @make()
    class Derived:
        """Fields set by ``__post_init__``, as ``Catalog`` does."""

        __qualname__ = name

        items: tuple[int, ...]
        total: int = field(init=False, repr=False, compare=False)
        seen: list[int] = field(init=False, default_factory=list, compare=False)
        marker: str = field(init=False, default="m")

        def __post_init__(self) -> None:
            object.__setattr__(self, "total", sum(self.items))

    return Derived


def _both(builder: Callable[..., type], **flags: Any) -> tuple[type, type]:
    return builder(_stdlib, **flags), builder(_ours, **flags)


# Picklable: module-level names that match the classes' qualified names.
StdPoint, OurPoint = _point(_stdlib, "StdPoint"), _point(_ours, "OurPoint")
OurDerived = _derived(_ours, "OurDerived")
OurMutablePoint = _point(_ours, "OurMutablePoint", frozen=False)


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a == b


def test_fields_signature_and_match_args_are_the_standard_librarys() -> None:
    std, ours = _both(_point)
    assert [(f.name, f.type, f.default, f.init, f.repr, f.compare) for f in dataclasses.fields(ours)] == [
        (f.name, f.type, f.default, f.init, f.repr, f.compare) for f in dataclasses.fields(std)
    ]
    assert str(inspect.signature(ours)) == str(inspect.signature(std))
    assert ours.__match_args__ == std.__match_args__
    assert ours.__slots__ == std.__slots__
    assert dataclasses.is_dataclass(ours)
    assert ours.__doc__ == "A point."
    ours(1)  # the first instance compiles the real __init__: the signature stays the same
    assert str(inspect.signature(ours)) == str(inspect.signature(std))
    assert inspect.signature(ours.__init__).return_annotation is None
    std_params = ours.__dataclass_params__
    assert (std_params.init, std_params.repr, std_params.eq, std_params.frozen) == (True, True, True, True)


@pytest.mark.parametrize("first", ["positional", "keywords"])
def test_values_repr_eq_hash_as_the_standard_library(first: str) -> None:
    std, ours = _both(_point)
    args: tuple[Any, ...] = (3, "b", ("t",)) if first == "positional" else ()
    kwargs: dict[str, Any] = {} if args else {"x": 3, "y": "b", "tags": ("t",)}
    a, b = std(*args, **kwargs), ours(*args, **kwargs)
    assert repr(b) == repr(a) == "Point(x=3, y='b', tags=('t',), extra={})"
    assert hash(b) == hash(a)
    assert b == ours(3, "b", ("t",), {"ignored": 1})  # compare=False
    assert b != ours(4, "b", ("t",))
    assert b != a  # another class: NotImplemented both ways, then identity
    assert (b == a) is False
    assert b.__eq__(a) is NotImplemented
    assert b.norm() == 6
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'x'"):
        ours()
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'z'"):
        ours(1, z=2)


def test_factories_give_each_instance_its_own_value() -> None:
    _, ours = _both(_point)
    a, b = ours(1), ours(1)
    assert a.extra == {}
    assert a.extra is not b.extra


def test_frozen_refuses_assignment_and_deletion_with_the_standard_librarys_words() -> None:
    std, ours = _both(_point)
    for cls in (std, ours):
        p = cls(1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=r"cannot assign to field 'x'") as set_std:
            p.x = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match=r"cannot delete field 'x'"):
            del p.x
        assert set_std.type is dataclasses.FrozenInstanceError
        assert p.x == 1
    # A name that is not a field: the standard library's slotted frozen class checks against the class
    # it made before adding slots, so Python 3.11 fails there with a TypeError from super(); ours says
    # what the frozen check means to say.
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"cannot assign to field 'other'"):
        ours(1).other = 1


def test_pickle_copy_replace_asdict_and_match() -> None:
    ours = OurPoint
    p = ours(5, "q", ("a", "b"), {"k": [1]}, 9)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(p, protocol))
        _same(back, p)
        assert back.extra == {"k": [1]}
        assert back.hidden == 9
    _same(copy.copy(p), p)
    deep = copy.deepcopy(p)
    _same(deep, p)
    assert deep.extra is not p.extra
    changed = dataclasses.replace(p, x=6)
    assert (changed.x, changed.y, changed.hidden) == (6, "q", 9)
    assert dataclasses.asdict(p) == {"x": 5, "y": "q", "tags": ("a", "b"), "extra": {"k": [1]}, "hidden": 9}
    assert dataclasses.astuple(p) == (5, "q", ("a", "b"), {"k": [1]}, 9)
    match p:
        case ours(5, y):  # type: ignore[misc]
            assert y == "q"
        case _:
            pytest.fail("positional match failed")


def test_post_init_and_fields_not_in_init() -> None:
    std, ours = _derived(_stdlib), OurDerived
    a, b = std((1, 2, 3)), ours((1, 2, 3))
    assert (
        (b.items, b.total, b.seen, b.marker)
        == (a.items, a.total, a.seen, a.marker)
        == ((1, 2, 3), 6, [], "m")
    )
    assert repr(b).endswith("Derived(items=(1, 2, 3), seen=[], marker='m')")
    assert str(inspect.signature(ours)) == str(inspect.signature(std)) == "(items: 'tuple[int, ...]') -> None"
    assert hash(b) == hash(a)
    _same(pickle.loads(pickle.dumps(b)), b)
    assert dataclasses.replace(b, items=(4,)).total == 4


def test_methods_the_body_defines_are_kept() -> None:
    for make in (_stdlib, _ours):

        @make()
        class Own:
            """Defines its own repr and eq; ``__hash__ = None`` beside an ``__eq__`` is Python's implicit None."""

            a: int

            def __repr__(self) -> str:
                return "own"

            def __eq__(self, other: object) -> bool:
                return True

            __hash__ = None  # type: ignore[assignment]

        assert repr(Own(1)) == "own"
        assert Own(1) == Own(2)
        assert hash(Own(1)) == hash((1,))  # frozen and eq: the fields' hash, as dataclasses adds it

        @make()
        class Unhashable:
            """Says it is unhashable without an ``__eq__`` of its own: an explicit choice, kept."""

            a: int
            __hash__ = None  # type: ignore[assignment]

        with pytest.raises(TypeError, match="unhashable"):
            hash(Unhashable(1))

        @make()
        class OwnHash:
            """Defines ``__hash__``."""

            a: int

            def __hash__(self) -> int:
                return 7

        assert hash(OwnHash(1)) == 7


def test_eq_false_keeps_identity_and_frozen_false_is_mutable_and_unhashable() -> None:
    std, ours = _both(_point, eq=False)
    for cls in (std, ours):
        p = cls(1)
        assert p != cls(1)
        assert p == p
        assert hash(p) == object.__hash__(p)
    for cls in (_point(_stdlib, frozen=False), OurMutablePoint):
        p = cls(1)
        p.x = 2
        assert p == cls(2)
        assert cls.__hash__ is None
        if cls is OurMutablePoint:
            _same(pickle.loads(pickle.dumps(p)), p)
    assert OurMutablePoint.__dataclass_params__.frozen is False


def test_subclassing_as_with_the_standard_library() -> None:
    for make in (_stdlib, _ours):
        base = _point(make)

        @dataclass(frozen=True, slots=True)
        class Child(base):  # type: ignore[valid-type, misc]
            """A frozen dataclass may subclass a frozen one."""

            z: int = 0

        c = Child(1, z=3)
        assert (c.x, c.z) == (1, 3)
        assert c.norm() == 2
        with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

            @dataclass
            class Thawed(base):  # type: ignore[valid-type, misc]
                """Refused by the standard library's own check."""

                w: int = 0

        class Plain(base):  # type: ignore[valid-type, misc]
            """A plain subclass, instantiated before its base ever was."""

            __slots__ = ()

        plain = Plain(4)
        assert plain.x == 4
        assert base(4).x == 4


def test_a_field_without_default_after_one_with_is_refused_when_the_class_is_made() -> None:
    for make in (_stdlib, _ours):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

            @make()
            class Bad:
                """Refused."""

                a: int = 1
                b: int  # type: ignore[misc]


def test_init_type_hints_resolve_in_the_class_module_before_and_after_the_first_instance() -> None:
    # This module writes annotations as strings (``from __future__ import annotations``): they resolve
    # in the class's module, as the standard library's ``__init__`` resolves them.
    std = _point(_stdlib, "StdPoint")
    expected = typing.get_type_hints(std.__init__)
    ours = _point(_ours, "OurPointHints")
    assert typing.get_type_hints(ours.__init__) == expected
    for _ in range(GENERIC_CALLS + 1):  # past the generic binder's calls: the compiled __init__
        ours(1)
    assert not getattr(ours.__init__, "__record_stand_in__", False)
    assert typing.get_type_hints(ours.__init__) == expected


def test_a_class_without_a_docstring_gets_the_standard_librarys() -> None:
    for make in (_stdlib, _ours):

        @make()
        class Bare:
            a: int
            b: tuple[str, ...] = ()

        assert Bare.__doc__ == "Bare(a: 'int', b: 'tuple[str, ...]' = ())"


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1,), {}),
    ((1, "b"), {}),
    ((1, "b", ("t",), {"e": 1}, 5), {}),
    ((), {"x": 1, "hidden": 3}),
    ((1,), {"tags": ("u",), "y": "q"}),
    ((), {}),  # missing x
    ((1, "b", (), {}, 0, "extra"), {}),  # too many
    ((1,), {"x": 2}),  # x twice
    ((1,), {"nope": 2}),  # unknown
    ((), {"y": "b"}),  # missing x, with a keyword
]


def _outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        made = cls(*args, **kwargs)
    except TypeError as exc:
        return ("error", str(exc))
    return ("made", tuple(getattr(made, f.name) for f in dataclasses.fields(made)))


@pytest.mark.parametrize("frozen", [True, False])
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_the_generic_binder_and_the_compiled_init_agree_with_the_standard_library(
    args: tuple[Any, ...], kwargs: dict[str, Any], frozen: bool
) -> None:
    std = _point(_stdlib, frozen=frozen)
    expected = _outcome(std, args, kwargs)
    ours = _point(_ours, frozen=frozen)
    generic = _outcome(ours, args, kwargs)  # the first call: the binder (or, refused, the compiled one)
    for _ in range(GENERIC_CALLS):
        ours(1)
    assert not getattr(ours.__init__, "__record_stand_in__", False)
    compiled = _outcome(ours, args, kwargs)
    assert generic == compiled == expected


def test_the_binder_sets_factories_and_post_init_fields_as_the_compiled_init() -> None:
    std, ours = _derived(_stdlib), _derived(_ours)
    a, b = std((1, 2)), ours((1, 2))  # b: the binder
    assert (b.items, b.total, b.seen, b.marker) == (a.items, a.total, a.seen, a.marker)
    assert b.seen is not ours((3,)).seen
    assert getattr(ours.__init__, "__record_stand_in__", False)  # still the stand-in: few instances


def test_a_record_over_a_record_or_dataclass_inherits_as_with_the_standard_library() -> None:
    for make in (_stdlib, _ours):
        base = _point(make)

        @make()
        class Child(base):  # type: ignore[valid-type, misc]
            """A frozen class over a frozen base."""

            z: int = 0

        c = Child(1, z=3)
        assert (c.x, c.z) == (1, 3)
        assert repr(c).endswith("Child(x=1, y='y', tags=(), extra={}, z=3)")
        with pytest.raises(dataclasses.FrozenInstanceError):
            c.z = 4
        with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

            @make(frozen=False)
            class Thawed(base):  # type: ignore[valid-type, misc]
                """Refused."""

                w: int = 0

        thawed_base = _point(make, frozen=False)
        with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):

            @make()
            class Frozen(thawed_base):  # type: ignore[valid-type, misc]
                """Refused."""

                w: int = 0
