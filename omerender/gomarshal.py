"""What Go's ``json.Marshal`` writes of a typed struct, as JSON-like data, for the strategic merges.

Every OME merge marshals typed Go structs and hands the bytes to ``strategicpatch`` (see
:mod:`omerender.merge`), so what a side *says* is what Go's encoder writes of it, not the YAML it came
from. :func:`marshalled` gives that, field by field, from the Go field tables
(:mod:`omerender._gofields` for Kubernetes types, :mod:`omerender.runtime_gotypes` for OME's):

* an ``omitempty`` field at its zero value (``""``, ``0``, ``false``, ``[]``, ``{}``, null) is not
  written, so it cannot override anything; a non-nil pointer is always written (``disabled: false``);
* a field *without* ``omitempty`` is always written: a missing string is ``""``, a number ``0``, a
  Quantity ``"0"``, and (with ``nulls=True``) a missing list, map or pointer ``null``, which deletes the
  base's value in a strategic merge. A missing struct value is left out: its zero merges as a no-op.

Unlike :mod:`omerender.gojson` nothing is canonicalised (quantities keep their spelling) and keys Go
does not know are kept, treated like the opaque fields of :mod:`omerender.runtime_gotypes` (their
``""``/``[]``/null dropped): the merged result reads as the input did, and a value of the wrong type is
passed through unchanged for the validation that reports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from omerender._gofields import STRUCTS as K8S_STRUCTS
from omerender.jsonlike import clone
from omerender.runtime_gotypes import STRUCTS as OME_STRUCTS

__all__ = ["CONTAINER", "OME_POD_SPEC", "marshalled", "owned_marshalled", "strip_nulls"]

CONTAINER: Final = "core/v1.Container"
# OME's v1beta1.PodSpec: corev1.PodSpec with `containers` omitempty (ome-projects/ome podspec.go).
OME_POD_SPEC: Final = "ome/v1beta1.PodSpec"

_OPAQUE: Final = "opaque"
_INTS: Final = frozenset({"int32", "int64", "int", "uint32", "uint64", "float64"})
_SKIP: Final = object()  # a missing struct value: not filled in
_FIELDS: dict[str, Mapping[str, tuple[bool, str]] | None] = {}


def _table(struct: str) -> Mapping[str, tuple[bool, str]] | None:
    if struct not in _FIELDS:
        if struct == OME_POD_SPEC:
            fields = {n: (oe or n == "containers", t) for n, oe, _, t in K8S_STRUCTS["core/v1.PodSpec"]}
        elif struct in OME_STRUCTS:
            fields = {n: (oe, t) for n, oe, t in OME_STRUCTS[struct]}
        elif struct in K8S_STRUCTS:
            fields = {n: (oe, t) for n, oe, _, t in K8S_STRUCTS[struct]}
        else:
            fields = None
        _FIELDS[struct] = fields
    return _FIELDS[struct]


def _unset(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, list) and not value)


def _opaque(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _opaque(v) for k, v in value.items() if not _unset(v)}
    if isinstance(value, list):
        return [_opaque(v) for v in value]
    return value


def _zero(typ: str) -> Any:
    """What Go writes for a field without ``omitempty`` that the input leaves out (None: ``null``)."""
    if typ == "string":
        return ""
    if typ == "bool":
        return False
    if typ in _INTS or typ == "intorstring":
        return 0
    if typ == "quantity":
        return "0"
    if typ.startswith(("*", "[]", "map[")) or typ == "time":
        return None
    return _SKIP


def marshalled(value: Any, typ: str, *, nulls: bool = False) -> Any:
    """``value`` (Go type ``typ``) as ``json.Marshal`` of the decoded struct writes it.

    ``nulls``: write ``null`` for a missing list, map or pointer field without ``omitempty`` (the
    side that is the patch: such a null deletes); otherwise leave it out. Nulls the input holds for
    ``omitempty`` fields are dropped either way.
    """
    return _marshaller(typ, nulls, False)(value)


def owned_marshalled(value: Any, typ: str) -> Any:
    """:func:`marshalled` (``nulls=False``) sharing nothing with ``value``: what the encoder leaves as it
    is (a value of the wrong type, a special's non-scalar form) is a :func:`~omerender.jsonlike.clone`,
    so the result is plain dicts, lists and scalars that the caller may keep without copying."""
    return _marshaller(typ, False, True)(value)


# A marshaller per (Go type, nulls, owned), built once from the field tables and kept: the type's dispatch
# (pointer, slice, map, struct) and each field's omitempty test are settled when it is built, not at
# every node of every value (as omerender.gojson builds its encoders per struct).
_Marshal = Callable[[Any], Any]
_MARSHALLERS: dict[tuple[str, bool, bool], _Marshal] = {}


def _marshaller(typ: str, nulls: bool, own: bool) -> _Marshal:
    fn = _MARSHALLERS.get((typ, nulls, own))
    if fn is None:
        fn = _build(typ, nulls, own)
    return fn


def _scalar(value: Any) -> bool:
    # a scalar is written as it is, whatever its field's type says
    cls = type(value)
    return cls is str or cls is int or cls is bool or cls is float


def _as_is(value: Any) -> Any:
    return value


def _owned_leaf(value: Any) -> Any:
    return value if _scalar(value) else clone(value)


def _opaque_of(value: Any) -> Any:
    return value if _scalar(value) else _opaque(value)


def _owned_opaque(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _owned_opaque(v) for k, v in value.items() if not _unset(v)}
    if isinstance(value, list):
        return [_owned_opaque(v) for v in value]
    return _owned_leaf(value)


def _build(typ: str, nulls: bool, own: bool) -> _Marshal:
    """The marshaller of ``typ``; a struct's is registered before its fields' are built, so a
    recursive type finds itself. ``own``: what is left as it is is a copy (:func:`owned_marshalled`)."""
    fn: _Marshal
    leaf = _owned_leaf if own else _as_is
    if typ.startswith("*"):
        fn = _marshaller(typ[1:], nulls, own)
    elif typ.startswith("[]"):
        fn = _list_marshaller(_element_marshaller(typ[2:], nulls, own), leaf)
    elif typ.startswith("map[string]"):
        fn = _map_marshaller(_element_marshaller(typ[len("map[string]") :], nulls, own), leaf)
    elif typ == _OPAQUE:
        fn = _owned_opaque if own else _opaque_of
    else:
        fields = _table(typ)
        if fields is None:
            fn = leaf  # a scalar, a special with its own JSON form, or a value Go would refuse
        else:
            return _struct_marshaller(typ, fields, nulls, own)
    _MARSHALLERS[(typ, nulls, own)] = fn
    return fn


def _list_marshaller(element: _Marshal, leaf: _Marshal) -> _Marshal:
    def marshal(value: Any) -> Any:
        if type(value) is list:
            return [element(v) for v in value]
        if _scalar(value) or not isinstance(value, list):
            return leaf(value)
        return [element(v) for v in value]

    return marshal


def _map_marshaller(element: _Marshal, leaf: _Marshal) -> _Marshal:
    def marshal(value: Any) -> Any:
        if _scalar(value) or not isinstance(value, Mapping):
            return leaf(value)
        return {k: element(v) for k, v in value.items()}

    return marshal


def _element_marshaller(typ: str, nulls: bool, own: bool) -> _Marshal:
    """A list item or map value: a null decodes to the element type's zero (``""``, ``0``, an empty
    struct), which is what Go then writes; a null pointer, list or map stays null."""
    inner = _marshaller(typ, nulls, own)
    zero = _zero(typ)
    if zero is _SKIP:
        if _table(typ) is None:
            zero = None
        else:

            def struct_element(value: Any) -> Any:
                return inner({} if value is None else value)

            return struct_element

    def element(value: Any) -> Any:
        return zero if value is None else inner(value)

    return element


# How ``omitempty`` tests a field's value, by the field's Go type (see _omit_kind); tested inline in
# the struct marshaller, the commonest fields' tests without a call.
_KEEP, _BOOL, _INT, _STRING, _COLLECTION, _UNSET = range(6)
_SCALARS: Final = frozenset({str, int, bool, float})


def _omit_kind(typ: str) -> int:
    """What ``omitempty`` drops of a field of Go type ``typ`` (structs and set pointers never are)."""
    if typ == "bool":
        return _BOOL  # false
    if typ in _INTS:
        return _INT  # a number equal to 0, not a bool
    if typ == "string":
        return _STRING  # ""
    if typ.startswith(("[]", "map[")):
        return _COLLECTION  # an empty list or dict
    if typ == _OPAQUE:
        return _UNSET  # null, "" or []
    return _KEEP


def _omits(kind: int, value: Any) -> bool:
    """Whether ``omitempty`` of ``kind`` drops ``value`` (the struct marshaller inlines these tests)."""
    if kind == _STRING:
        return bool(value == "")
    if kind == _BOOL:
        return value is False
    if kind == _INT:
        return not isinstance(value, bool) and isinstance(value, int | float) and value == 0
    if kind == _COLLECTION:
        return isinstance(value, list | dict) and not value
    if kind == _UNSET:
        return _unset(value)
    return False


def _struct_marshaller(typ: str, fields: Mapping[str, tuple[bool, str]], nulls: bool, own: bool) -> _Marshal:
    # name -> (marshaller, omit kind, the marshaller without own): a field's entry is made when a value
    # first holds it (a type's whole graph, built at once, cost a one-off render more than it saved)
    known: dict[str, tuple[_Marshal, int, _Marshal]] = {}
    declared: dict[str, tuple[str, int]] = {}  # name -> (Go type, omit kind)
    # the fields without omitempty and what Go writes for each when the input leaves it out
    missing: list[tuple[str, Any]] = []
    scalars = _SCALARS
    leaf = _owned_leaf if own else _as_is
    opaque = _owned_opaque if own else _opaque_of

    def marshal(value: Any) -> Any:
        if type(value) is not dict and (type(value) in scalars or not isinstance(value, Mapping)):
            return leaf(value)
        out: dict[str, Any] = {}
        get = known.get
        for key, item in value.items():
            if item is None:
                continue  # nil: written below if the field has no omitempty
            spec = get(key)
            if spec is None:
                if key in declared:
                    spec = known[key] = field(key)
                else:  # a key Go does not know: opaque, omitempty (unset as its input is)
                    if not _unset(item):
                        out[key] = opaque(item)
                    continue
            cls = type(item)
            if cls in scalars:
                kept = item  # every marshaller writes a scalar as it is
            elif own and cls is not dict and cls is not list:
                # omitempty reads what the encoder writes, before the copy makes a tuple a list
                kept = spec[2](item)
                if not _omits(spec[1], kept):
                    out[key] = clone(kept)
                continue
            else:
                kept = spec[0](item)
            omit = spec[1]
            if omit:
                if omit == _STRING:
                    if kept == "":
                        continue
                elif omit == _BOOL:
                    if kept is False:
                        continue
                elif omit == _INT:
                    if not isinstance(kept, bool) and isinstance(kept, int | float) and kept == 0:
                        continue
                elif omit == _COLLECTION:
                    if isinstance(kept, list | dict) and not kept:
                        continue
                elif _unset(kept):
                    continue
            out[key] = kept
        for name, zero in missing:
            if name not in out:
                out[name] = zero
        return out

    def field(name: str) -> tuple[_Marshal, int, _Marshal]:
        ftype, omit = declared[name]
        return (_marshaller(ftype, nulls, own), omit, _marshaller(ftype, nulls, False))

    _MARSHALLERS[(typ, nulls, own)] = marshal
    for name, (omitempty, ftype) in fields.items():
        declared[name] = (ftype, _omit_kind(ftype) if omitempty else _KEEP)
        if not omitempty:
            zero = _zero(ftype)
            if zero is not _SKIP and (zero is not None or nulls):
                missing.append((name, zero))
    return marshal


def strip_nulls(value: Any) -> Any:
    """Every null-valued object key removed, at any depth; null list items stay
    (``runtimeinheritance.StripJSONNulls``)."""
    if isinstance(value, Mapping):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
