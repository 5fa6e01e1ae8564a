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
from omerender.runtime_gotypes import STRUCTS as OME_STRUCTS

__all__ = ["CONTAINER", "OME_POD_SPEC", "marshalled", "strip_nulls"]

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
    return _marshaller(typ, nulls)(value)


# A marshaller per (Go type, nulls), built once from the field tables and kept: the type's dispatch
# (pointer, slice, map, struct) and each field's omitempty test are settled when it is built, not at
# every node of every value (as omerender.gojson builds its encoders per struct).
_Marshal = Callable[[Any], Any]
_MARSHALLERS: dict[tuple[str, bool], _Marshal] = {}


def _marshaller(typ: str, nulls: bool) -> _Marshal:
    fn = _MARSHALLERS.get((typ, nulls))
    if fn is None:
        fn = _build(typ, nulls)
    return fn


def _scalar(value: Any) -> bool:
    # a scalar is written as it is, whatever its field's type says
    cls = type(value)
    return cls is str or cls is int or cls is bool or cls is float


def _as_is(value: Any) -> Any:
    return value


def _opaque_of(value: Any) -> Any:
    return value if _scalar(value) else _opaque(value)


def _build(typ: str, nulls: bool) -> _Marshal:
    """The marshaller of ``typ``; a struct's is registered before its fields' are built, so a
    recursive type finds itself."""
    fn: _Marshal
    if typ.startswith("*"):
        fn = _marshaller(typ[1:], nulls)
    elif typ.startswith("[]"):
        fn = _list_marshaller(_element_marshaller(typ[2:], nulls))
    elif typ.startswith("map[string]"):
        fn = _map_marshaller(_element_marshaller(typ[len("map[string]") :], nulls))
    elif typ == _OPAQUE:
        fn = _opaque_of
    else:
        fields = _table(typ)
        if fields is None:
            fn = _as_is  # a scalar, a special with its own JSON form, or a value Go would refuse
        else:
            return _struct_marshaller(typ, fields, nulls)
    _MARSHALLERS[(typ, nulls)] = fn
    return fn


def _list_marshaller(element: _Marshal) -> _Marshal:
    def marshal(value: Any) -> Any:
        if type(value) is list:
            return [element(v) for v in value]
        if _scalar(value) or not isinstance(value, list):
            return value
        return [element(v) for v in value]

    return marshal


def _map_marshaller(element: _Marshal) -> _Marshal:
    def marshal(value: Any) -> Any:
        if _scalar(value) or not isinstance(value, Mapping):
            return value
        return {k: element(v) for k, v in value.items()}

    return marshal


def _element_marshaller(typ: str, nulls: bool) -> _Marshal:
    """A list item or map value: a null decodes to the element type's zero (``""``, ``0``, an empty
    struct), which is what Go then writes; a null pointer, list or map stays null."""
    inner = _marshaller(typ, nulls)
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


def _struct_marshaller(typ: str, fields: Mapping[str, tuple[bool, str]], nulls: bool) -> _Marshal:
    # name -> (marshaller, omit kind); filled once this marshaller is registered
    known: dict[str, tuple[_Marshal, int]] = {}
    # the fields without omitempty and what Go writes for each when the input leaves it out
    missing: list[tuple[str, Any]] = []
    scalars = _SCALARS

    def marshal(value: Any) -> Any:
        if type(value) is not dict and (type(value) in scalars or not isinstance(value, Mapping)):
            return value
        out: dict[str, Any] = {}
        get = known.get
        for key, item in value.items():
            if item is None:
                continue  # nil: written below if the field has no omitempty
            spec = get(key)
            if spec is None:  # a key Go does not know: opaque, omitempty
                kept = _opaque_of(item)
                if _unset(kept):
                    continue
                out[key] = kept
                continue
            # every marshaller writes a scalar as it is
            kept = item if type(item) in scalars else spec[0](item)
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

    _MARSHALLERS[(typ, nulls)] = marshal
    for name, (omitempty, ftype) in fields.items():
        known[name] = (_marshaller(ftype, nulls), _omit_kind(ftype) if omitempty else _KEEP)
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
