"""The Go values a placeholder template sees: ``metav1.ObjectMeta`` and what its fields hold.

Each value keeps its Go type name, because Go's execution errors print it (``can't evaluate field X in
type v1.ObjectMeta``) and ``fmt.Sprint`` formats by type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omerender._records import record

__all__ = ["INVALID", "NIL", "GoValue", "object_meta", "sprint", "sprint_args"]


@record
class GoValue:
    typ: str  # Go's reflect.Type.String(), "" for an untyped nil, "invalid" for a missing value
    val: Any

    @property
    def kind(self) -> str:
        """reflect.Kind, as far as the types here need it."""
        t = self.typ
        if t in ("string", "types.UID"):
            return "string"
        if t.startswith("map["):
            return "map"
        if t.startswith("[]"):
            return "slice"
        if t.startswith("*"):
            return "ptr"
        if t in ("v1.ObjectMeta", "v1.Time"):
            return "struct"
        if t in ("", "invalid"):
            return t
        return t  # int, int64, uint8, float64, bool


NIL = GoValue("", None)
INVALID = GoValue("invalid", None)

# metav1.ObjectMeta's fields in declaration order, with the Go type of each.
OBJECT_META_FIELDS: tuple[tuple[str, str], ...] = (
    ("Name", "string"),
    ("GenerateName", "string"),
    ("Namespace", "string"),
    ("SelfLink", "string"),
    ("UID", "types.UID"),
    ("ResourceVersion", "string"),
    ("Generation", "int64"),
    ("CreationTimestamp", "v1.Time"),
    ("DeletionTimestamp", "*v1.Time"),
    ("DeletionGracePeriodSeconds", "*int64"),
    ("Labels", "map[string]string"),
    ("Annotations", "map[string]string"),
    ("OwnerReferences", "[]v1.OwnerReference"),
    ("Finalizers", "[]string"),
    ("ManagedFields", "[]v1.ManagedFieldsEntry"),
)


def object_meta(
    *,
    name: str,
    namespace: str,
    uid: str,
    generation: int,
    labels: Mapping[str, str] | None,
    annotations: Mapping[str, str] | None,
) -> GoValue:
    """The ObjectMeta OME's replica controller hands the render (``serviceShell``): the other fields
    are Go zero values. ``None`` maps are nil maps (``maps.Clone`` of a nil map)."""
    given: dict[str, Any] = {
        "Name": name,
        "Namespace": namespace,
        "UID": uid,
        "Generation": generation,
        "Labels": None if labels is None else dict(labels),
        "Annotations": None if annotations is None else dict(annotations),
    }
    zero = {"string": "", "types.UID": "", "int64": 0, "v1.Time": "zero"}
    fields = {f: GoValue(t, given.get(f, zero.get(t))) for f, t in OBJECT_META_FIELDS}
    return GoValue("v1.ObjectMeta", fields)


def _format(v: GoValue) -> str:
    """``fmt.Sprint`` of one value (``%v``)."""
    k = v.kind
    if k == "string":
        return str(v.val)
    if v.typ == "bool":
        return "true" if v.val else "false"
    if v.typ in ("int", "int64", "uint8", "int32"):
        return str(int(v.val))
    if v.typ == "float64":
        return _format_float(float(v.val))
    if v.typ == "v1.Time":
        return "0001-01-01 00:00:00 +0000 UTC"  # time.Time.String of the zero time
    if k == "ptr":
        return "<nil>"  # every pointer field here is nil
    if k == "map":
        items = v.val or {}
        return "map[" + " ".join(f"{key}:{items[key]}" for key in sorted(items)) + "]"
    if k == "slice":
        return "[" + " ".join(str(x) for x in (v.val or [])) + "]"
    if v.typ == "v1.ObjectMeta":
        return "{" + " ".join(_format(f) for f in v.val.values()) + "}"
    return "<nil>" if v.typ == "" else "<invalid reflect.Value>"


def _format_float(f: float) -> str:
    """``%v`` of a float64: ``strconv.FormatFloat(f, 'g', -1, 64)`` with Go's exponent form."""
    if f == int(f) and abs(f) < 1e21:
        text = repr(f)
        if "e" not in text:
            return text[:-2] if text.endswith(".0") else text
    text = repr(f)
    if "e" in text:
        mant, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mant}e{sign}{digits}"
    return text


def sprint(values: list[GoValue]) -> str:
    """``fmt.Sprint``: a space between operands when neither is a string."""
    out: list[str] = []
    prev_string = True
    for i, v in enumerate(values):
        is_string = v.kind == "string"
        if i > 0 and not is_string and not prev_string:
            out.append(" ")
        out.append(_format(v))
        prev_string = is_string
    return "".join(out)


def sprint_args(values: list[GoValue]) -> str:
    """``html/template``'s ``stringify``: untyped nils (a missing value) are skipped (Go issue 25875)."""
    if len(values) == 1 and values[0].typ == "string":
        return str(values[0].val)
    return sprint([v for v in values if v.typ not in ("", "invalid")])
