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

from collections.abc import Mapping
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


def _omitted(value: Any, typ: str) -> bool:
    """Whether ``omitempty`` drops ``value`` of Go type ``typ`` (structs and set pointers never are)."""
    if typ == "bool":
        return value is False
    if typ in _INTS:
        return not isinstance(value, bool) and isinstance(value, int | float) and value == 0
    if typ == "string":
        return bool(value == "")
    if typ.startswith(("[]", "map[")):
        return isinstance(value, list | dict) and not value
    if typ == _OPAQUE:
        return _unset(value)
    return False


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
    cls = type(value)
    if cls is str or cls is int or cls is bool or cls is float:
        return value  # a scalar is written as it is, whatever its field's type says
    if typ.startswith("*"):
        return marshalled(value, typ[1:], nulls=nulls)
    if typ.startswith("[]"):
        elem = typ[2:]
        return [_element(v, elem, nulls) for v in value] if isinstance(value, list) else value
    if typ.startswith("map[string]"):
        elem = typ[len("map[string]") :]
        if not isinstance(value, Mapping):
            return value
        return {k: _element(v, elem, nulls) for k, v in value.items()}
    if typ == _OPAQUE:
        return _opaque(value)
    fields = _table(typ)
    if fields is None or not isinstance(value, Mapping):
        return value  # a scalar, a special with its own JSON form, or a value Go would refuse
    out: dict[str, Any] = {}
    for key, item in value.items():
        omitempty, ftype = fields.get(key, (True, _OPAQUE))
        if item is None:
            continue  # nil: written below if the field has no omitempty
        kept = marshalled(item, ftype, nulls=nulls)
        if omitempty and _omitted(kept, ftype):
            continue
        out[key] = kept
    for name, (omitempty, ftype) in fields.items():
        if omitempty or name in out:
            continue
        zero = _zero(ftype)
        if zero is _SKIP or (zero is None and not nulls):
            continue
        out[name] = zero
    return out


def _element(value: Any, typ: str, nulls: bool) -> Any:
    """A list item or map value: a null decodes to the element type's zero (``""``, ``0``, an empty
    struct), which is what Go then writes; a null pointer, list or map stays null."""
    if value is not None:
        return marshalled(value, typ, nulls=nulls)
    zero = _zero(typ)
    if zero is _SKIP:
        return marshalled({}, typ, nulls=nulls) if _table(typ) is not None else None
    return zero


def strip_nulls(value: Any) -> Any:
    """Every null-valued object key removed, at any depth; null list items stay
    (``runtimeinheritance.StripJSONNulls``)."""
    if isinstance(value, Mapping):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
