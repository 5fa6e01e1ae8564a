"""Go ``encoding/json`` for Kubernetes types, byte for byte.

OME's Go controller hashes ``json.Marshal`` of Kubernetes structs. This module produces the
same bytes from plain Python values (the dicts a YAML or JSON document decodes to), by
replaying what Go does to such a document: decode it into the typed structs the way a
Kubernetes client does (``sigs.k8s.io/json``: case-sensitive field names, unknown fields
dropped, ``null`` leaves the zero value), then encode the structs with ``encoding/json``.
The field order and ``omitempty`` rules come from :mod:`omerender._gofields`, generated
from k8s.io/api by ``tools/gotypes``.

What that means, field by field:

- struct fields in declared Go order, embedded structs flattened; unknown keys dropped;
- ``omitempty`` drops ``""``, ``0``, ``false``, ``null``, ``[]`` and ``{}`` — but never a
  struct (``"resources":{}`` is always written) and never a non-nil pointer (``*int32`` set
  to ``0`` is written); ``omitzero`` drops zero values (since apimachinery v0.35 that is how
  ``ObjectMeta.creationTimestamp`` disappears when unset);
- a missing or ``null`` non-``omitempty`` field is written as its zero value: ``""``,
  ``0``, ``false``, ``null`` for lists, maps and pointers, ``{…}`` for structs;
- map keys sorted (byte order), strings escaped as Go does, including the HTML-safe
  escapes ``\\u003c \\u003e \\u0026 \\u2028 \\u2029``; lone surrogates become U+FFFD;
- ``resource.Quantity`` in Kubernetes' canonical form (see :func:`canonical_quantity`);
- ``IntOrString`` as a JSON number or string, ``metav1.Time`` as RFC 3339 in UTC or
  ``null``, ``FieldsV1`` as its raw JSON, compacted.

Values Go would refuse to decode raise a :class:`GoJSONError` subclass carrying the path:
a string where a number belongs, a number outside ``int32``/``int64``, a non-integral
number for an integer field (**including integral floats such as ``1.0``**: Go's decoder
rejects the JSON number ``1.0`` for an ``int32`` field, so we do too, rather than hash
something OME would never hash), or an invalid quantity or time.

The module is pure: no I/O, no clock, no environment; encoders are compiled once per type
on first use and memoised.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from json.encoder import encode_basestring as _ebs  # the C encoder: escapes " \\ and < 0x20
from types import FunctionType
from typing import Any, Final, cast

from omerender._gofields import K8S_API_VERSION, KUBERNETES_VERSION, STRUCTS
from omerender.errors import OmeRenderError

__all__ = [
    "K8S_API_VERSION",
    "KUBERNETES_VERSION",
    "GoJSONError",
    "GoTypeError",
    "InvalidQuantityError",
    "InvalidTimeError",
    "canonical_quantity",
    "encode",
    "encode_pod_spec",
    "encode_string",
    "fragment_encoder",
    "to_bytes",
]

PathItem = str | int
Encoder = Callable[[Any], str]

# --------------------------------------------------------------------------------------
# Errors: part of the project-wide hierarchy (omerender.errors), so callers catch OmeRenderError
# --------------------------------------------------------------------------------------


class GoJSONError(OmeRenderError, ValueError):
    """A value Go's decoder would refuse for the Kubernetes type at ``path``."""

    def __init__(self, message: str, *, value: Any = None, path: Sequence[PathItem] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.value = value
        self._path: list[PathItem] = list(path)

    @property
    def path(self) -> tuple[PathItem, ...]:
        """Where the value sits, from the encoded root: keys and list indexes."""
        return tuple(self._path)

    @property
    def path_str(self) -> str:
        """The path as ``spec.containers[0].resources.limits.cpu``."""
        out = ""
        for item in self._path:
            if isinstance(item, int):
                out += f"[{item}]"
            else:
                out += ("." if out else "") + item
        return out

    def prepend(self, *items: PathItem) -> GoJSONError:
        """Add outer path items (used while the error unwinds); returns self."""
        self._path[0:0] = items
        return self

    def __str__(self) -> str:
        where = self.path_str
        return f"{where}: {self.message}" if where else self.message


class GoTypeError(GoJSONError):
    """Wrong JSON type for the Go field, or a number out of the field's range."""


class InvalidQuantityError(GoJSONError):
    """Not a ``resource.Quantity`` (Kubernetes' ParseQuantity rejects it)."""


class InvalidTimeError(GoJSONError):
    """Not an RFC 3339 time as ``metav1.Time`` accepts it."""


def _type_error(value: Any, go_type: str) -> GoTypeError:
    return GoTypeError(f"cannot decode {_json_kind(value)} into Go value of type {go_type}", value=value)


def _number_repr(value: float) -> str:
    if isinstance(value, int):
        return _int_str(int(value))
    return repr(value)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {_number_repr(value)}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return f"Python {type(value).__name__}"


# --------------------------------------------------------------------------------------
# resource.Quantity (k8s.io/apimachinery/pkg/api/resource, quantity.go / amount.go)
# --------------------------------------------------------------------------------------

_DIGITS: Final = frozenset("0123456789")
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DEC_SI: Final[dict[str, int]] = {
    "": 0,
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BIN_SI: Final[dict[str, int]] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_SUFFIX: Final[dict[int, str]] = {e: s for s, e in _DEC_SI.items()}
_BIN_SUFFIX: Final[dict[int, str]] = {e // 10: s for s, e in _BIN_SI.items()}
_MAX_INT64: Final = (1 << 63) - 1
_MIN_INT64: Final = -(1 << 63)
_DECIMAL_SI, _BINARY_SI, _DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
# Go's strings.TrimSpace (unicode.IsSpace), less the characters a JSON encoder must escape
# (control characters; and U+2028/U+2029, which Go's encoder escapes): Quantity.UnmarshalJSON
# trims the raw, still-escaped bytes, so an escaped character is never trimmed.
_QUANTITY_TRIM: Final = (
    " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)

_ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_ERR_NUMERIC = "unable to parse numeric part of quantity"
_ERR_SUFFIX = "unable to parse quantity's suffix"


# Python refuses int <-> decimal string conversions beyond 4300 digits; Go's quantities do not.
_DIGIT_CHUNK: Final = 4000


def _int_from_digits(digits: str) -> int:
    """int(digits) for any length (ASCII digits only)."""
    if len(digits) <= _DIGIT_CHUNK:
        return int(digits)
    low = len(digits) // 2
    scale: int = 10**low
    return _int_from_digits(digits[:-low]) * scale + _int_from_digits(digits[-low:])


def _int_str(n: int) -> str:
    """str(n) for any size."""
    if n < 0:
        return "-" + _int_str(-n)
    if n.bit_length() <= 3 * _DIGIT_CHUNK:
        return int.__repr__(n)
    low = n.bit_length() * 3 // 20  # about half the decimal digits
    scale: int = 10**low
    high, rest = divmod(n, scale)
    return _int_str(high) + _int_str(rest).rjust(low, "0")


def _wrap32(x: int) -> int:
    """Go int32 arithmetic wraps around."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _gomod(a: int, b: int) -> int:
    """Go's ``%``: the remainder takes the sign of the dividend."""
    r = abs(a) % b
    return -r if a < 0 else r


def _strip10(m: int) -> tuple[int, int]:
    """(m without trailing decimal zeros, how many were removed); m > 0."""
    times = 0
    while m >= 10 and m % 10 == 0:
        # Strip in big steps first: numbers with many zeros come from large exponents.
        if m % 10**8 == 0:
            m //= 10**8
            times += 8
        else:
            m //= 10
            times += 1
    return m, times


def _scan_quantity(s: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix), or raise."""
    positive = True
    pos = 0
    end = len(s)
    if end and s[0] == "-":
        positive = False
        pos = 1
    elif end and s[0] == "+":
        pos = 1
    while True:  # leading zeros
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, s, s[pos:], "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    pos = i
    if s[pos] in "+-":
        pos += 1
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    raise InvalidQuantityError(_ERR_FORMAT, value=s)


_INT64_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _interpret_suffix(suffix: str, s: str) -> tuple[int, int, str]:
    """(base, exponent, format) for a suffix, as quantitySuffixer.interpret."""
    if suffix in _DEC_SI:
        return 10, _DEC_SI[suffix], _DECIMAL_SI
    if suffix in _BIN_SI:
        return 2, _BIN_SI[suffix], _BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _INT64_TEXT.fullmatch(suffix, 1):
        sign, digits = (suffix[1], suffix[2:]) if suffix[1] in "+-" else ("", suffix[1:])
        parsed = _int_from_digits(digits) * (-1 if sign == "-" else 1)
        if _MIN_INT64 <= parsed <= _MAX_INT64:
            return 10, _wrap32(parsed), _DECIMAL_EXPONENT
    raise InvalidQuantityError(_ERR_SUFFIX, value=s)


def _canonical_decimal(sign: int, amount: int, exponent: int, fmt: str, *, int_path: bool) -> str:
    """AsCanonicalBytes + the suffix: mantissa without trailing zeros, exponent a multiple of 3."""
    amount, times = _strip10(amount)
    exponent = _wrap32(exponent + times)
    if int_path:
        r = _gomod(exponent, 3)
        step = 1 if r in (1, -2) else 2 if r in (2, -1) else 0
        if step and sign * amount * 10**step <= _MAX_INT64 and sign * amount * 10**step >= _MIN_INT64:
            amount *= 10**step
            exponent = _wrap32(exponent - step)
            step = 0
        int_path = step == 0
    if not int_path:  # infDecAmount.AsCanonicalBytes
        while _gomod(exponent, 3) != 0:
            amount *= 10
            exponent = _wrap32(exponent - 1)
    digits = _int_str(sign * amount)
    if fmt == _DECIMAL_SI:
        return digits + _DEC_SUFFIX.get(exponent, "")
    return digits if exponent == 0 else f"{digits}e{exponent}"


def _canonical_binary(n: int) -> str:
    """AsCanonicalBase1024Bytes of an integer with |n| >= 1024."""
    sign = -1 if n < 0 else 1
    n = abs(n)
    times = 0
    while n >= 1024 and n % 1024 == 0:
        n //= 1024
        times += 1
    return _int_str(sign * n) + _BIN_SUFFIX.get(times, "")


def _parse_and_format(s: str) -> str:
    """ParseQuantity followed by Quantity.MarshalJSON (without the quotes)."""
    if not s:
        raise InvalidQuantityError(_ERR_FORMAT, value=s)
    if s == "0":
        return "0"
    positive, value, num, denom, suffix = _scan_quantity(s)
    base, exponent, fmt = _interpret_suffix(suffix, s)
    mantissa = 1
    if fmt != _BINARY_SI:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        scale = 0
        mantissa = 1 << exponent
        precision = 15 - len(num) - (exponent * 3 // 10) - 1
    else:
        scale = 0
        precision = -1

    if precision >= 0:
        scale = _wrap32(scale - len(denom))
        if scale >= -9:
            shifted = num + denom
            parsed = int(shifted)
            if parsed > _MAX_INT64:
                raise InvalidQuantityError(_ERR_NUMERIC, value=s)
            result = parsed * mantissa
            if result <= _MAX_INT64:
                # int64Amount{result, scale}; the input is kept verbatim when already canonical.
                if fmt == _BINARY_SI:
                    if exponent % 10 == 0 and parsed & 7:
                        return s
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    return s
                if result == 0:
                    return "0"
                sign = 1 if positive else -1
                if fmt == _BINARY_SI:
                    if result < 1024:
                        return _canonical_decimal(sign, result, 0, _DECIMAL_SI, int_path=True)
                    return _canonical_binary(sign * result)
                return _canonical_decimal(sign, result, scale, fmt, int_path=True)

    # The inf.Dec path: arbitrary precision, rounded up to nano units.
    if not any(c in _DIGITS for c in value):
        raise InvalidQuantityError(_ERR_NUMERIC, value=s)
    unsigned = value.lstrip("+-")
    whole, _, frac = unsigned.partition(".")
    m = _int_from_digits((whole + frac) or "0")
    dscale = len(frac) if "." in unsigned else 0  # value = ±m × 10^-dscale
    negative = value.startswith("-")
    if base == 10:
        dscale = _wrap32(dscale + _wrap32(-exponent))
    else:
        m <<= exponent
    if m == 0:
        return "0"
    if dscale > 9:  # round up (away from zero) to nano units
        k = dscale - 9
        # m < 10**k rounds up to one nano; the bit length settles that without a huge power.
        small = k > m.bit_length() * 0.302 + 1 or m < 10**k
        m = 1 if small else -(-m // 10**k)
        dscale = 9
    if fmt == _BINARY_SI:
        if m > _MAX_INT64 * 10**dscale if dscale > 0 else (-dscale >= 19 or m * 10**-dscale > _MAX_INT64):
            m, dscale = _MAX_INT64, 0  # BinarySI is capped at the int64 maximum
        if dscale > 0 and m < 10**dscale:
            fmt = _DECIMAL_SI  # 0 < value < 1
    sign = -1 if negative else 1
    if fmt == _BINARY_SI:
        # value >= 1 here; below 1024 or fractional prints as DecimalSI.
        if dscale > 0:
            whole_part, rem = divmod(m, 10**dscale)
        else:
            whole_part, rem = m * 10**-dscale, 0
        if whole_part < 1024 or rem:
            fmt = _DECIMAL_SI
        else:
            return _canonical_binary(sign * whole_part)
    # Round() left the scale at 9; the canonical exponent is computed from there.
    if dscale < 9:
        _, tz = _strip10(m)
        times = tz + (9 - dscale)
        stripped = m // 10**tz
        return _canonical_decimal(sign, stripped, _wrap32(-9 + times), fmt, int_path=False)
    return _canonical_decimal(sign, m, -dscale, fmt, int_path=False)


@lru_cache(maxsize=4096)
def _quantity_text(s: str) -> str:
    return _parse_and_format(s.strip(_QUANTITY_TRIM))


def canonical_quantity(value: str | int | float) -> str:
    """The string ``resource.Quantity`` marshals to, for a quantity written as ``value``.

    Exactly Kubernetes' rules (ParseQuantity + MarshalJSON of apimachinery v0.36), including
    their surprises: an input already in canonical form is kept verbatim (``"1e3"`` stays
    ``"1e3"``, ``"+1Ki"`` stays ``"+1Ki"``, ``"0100"`` stays ``"0100"``); otherwise the value is
    rewritten with the largest exponent that loses nothing (``"2000m"`` → ``"2"``, ``"1024Mi"`` →
    ``"1Gi"``, ``"0.5"`` → ``"500m"``, ``"1.5Gi"`` → ``"1536Mi"``), rounded up to nano units, and a
    ``DecimalSI`` exponent with no suffix above ``E`` prints without one (``"100000E"`` → ``"100"``).
    Numbers are read as the JSON text Python writes for them (``repr`` for floats).
    """
    try:
        return _quantity_text(_number_text(value))
    except InvalidQuantityError as e:
        e.value = value
        raise


def _number_text(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bool) or value is None:
        raise InvalidQuantityError(f"cannot decode {_json_kind(value)} as a quantity", value=value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return _int_str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidQuantityError("not a finite number", value=value)
        return float.__repr__(value)
    raise InvalidQuantityError(f"cannot decode {_json_kind(value)} as a quantity", value=value)


def _enc_quantity(v: Any) -> str:
    if type(v) is str:
        text = v
    elif v is None:
        return '"0"'  # Quantity.UnmarshalJSON(null) leaves the zero quantity
    else:
        text = _number_text(v)
    try:
        return '"' + _quantity_text(text) + '"'
    except InvalidQuantityError as e:
        e.value = v
        raise


# --------------------------------------------------------------------------------------
# metav1.Time (RFC 3339 in, RFC 3339 seconds in UTC or null out)
# --------------------------------------------------------------------------------------

# time.Parse(time.RFC3339, s): the fast path plus what the general parser also accepts
# (a one-digit hour, a comma before the fraction, zone offsets up to 24:60).
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)
_ZERO_TIME_SECONDS: Final = -62135596800  # 0001-01-01T00:00:00Z relative to the Unix epoch


def _is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if _is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def _format_year(y: int) -> str:
    # Go's appendInt(b, year, 4): sign, then at least four digits.
    return ("-" if y < 0 else "") + str(abs(y)).rjust(4, "0")


def _format_utc(seconds: int) -> str:
    days, rem = divmod(seconds, 86400)
    y, mo, d = _civil_from_days(days)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    return f"{_format_year(y)}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}Z"


@lru_cache(maxsize=1024)
def _time_text(s: str) -> str:
    m = _RFC3339.fullmatch(s)
    if m is None:
        raise InvalidTimeError(f"parsing time {s!r} as RFC 3339 failed", value=s)
    year, month, day, hour, minute, sec = (int(m.group(i)) for i in range(1, 7))
    frac, zsign, zh, zm = m.group(7), m.group(8), m.group(9), m.group(10)
    if not (1 <= month <= 12 and hour < 24 and minute < 60 and sec < 60):
        raise InvalidTimeError(f"parsing time {s!r}: value out of range", value=s)
    if not 1 <= day <= _days_in(month, year):
        raise InvalidTimeError(f"parsing time {s!r}: day out of range", value=s)
    offset = 0
    if zsign is not None:
        oh, om = int(zh), int(zm)
        if oh > 24 or om > 60:
            raise InvalidTimeError(f"parsing time {s!r}: time zone offset out of range", value=s)
        offset = (oh * 60 + om) * 60 * (-1 if zsign == "-" else 1)
    nanos = int(frac[:9].ljust(9, "0")) if frac else 0
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec - offset
    if seconds == _ZERO_TIME_SECONDS and nanos == 0:
        return "null"  # Time.IsZero: marshals as null
    return '"' + _format_utc(seconds) + '"'


def _enc_time(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return _time_text(str.__str__(v))
    if isinstance(v, datetime):
        # A YAML loader turns an unquoted timestamp into a datetime; the JSON it stands for is
        # the RFC 3339 string. Naive datetimes are UTC (the YAML rule).
        aware = v if v.tzinfo is not None else v.replace(tzinfo=UTC)
        utc = aware.astimezone(UTC)
        seconds = _days_from_civil(utc.year, utc.month, utc.day) * 86400 + (
            utc.hour * 3600 + utc.minute * 60 + utc.second
        )
        if seconds == _ZERO_TIME_SECONDS and utc.microsecond == 0:
            return "null"
        return '"' + _format_utc(seconds) + '"'
    raise InvalidTimeError(f"cannot decode {_json_kind(v)} into a metav1.Time", value=v)


# --------------------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------------------


def _enc_string(v: Any) -> str:
    if type(v) is str:
        return _ebs(v)
    if v is None:
        return '""'
    if isinstance(v, str):
        return _ebs(v)
    raise _type_error(v, "string")


def _enc_bool(v: Any) -> str:
    if v is True:
        return "true"
    if v is False or v is None:
        return "false"
    raise _type_error(v, "bool")


def _int_encoder(bits: int, signed: bool) -> Encoder:
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    go_type = f"{'int' if signed else 'uint'}{bits}"

    def enc(v: Any) -> str:
        if type(v) is int and lo <= v <= hi:
            return int.__repr__(v)
        if v is None:
            return "0"
        if isinstance(v, int) and not isinstance(v, bool):
            if lo <= v <= hi:
                return int.__repr__(int(v))
            raise GoTypeError(f"number {_int_str(int(v))} overflows Go value of type {go_type}", value=v)
        raise _type_error(v, go_type)

    return enc


def _enc_int_or_string(v: Any) -> str:
    if type(v) is int:
        if -(1 << 31) <= v < (1 << 31):
            return int.__repr__(v)
        raise GoTypeError(f"number {_int_str(v)} overflows Go value of type int32", value=v)
    if isinstance(v, str):
        return _ebs(v)
    if v is None:
        return "0"  # IntOrString.UnmarshalJSON(null): an Int with value 0
    if isinstance(v, int) and not isinstance(v, bool):
        return _enc_int_or_string(int(v))
    raise _type_error(v, "intstr.IntOrString")


def _enc_fields_v1(v: Any) -> str:
    # FieldsV1 keeps the raw JSON it was given; encoding/json compacts it.
    try:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise GoTypeError(f"not JSON: {e}", value=v) from None


def _enc_bytes(v: Any) -> str:  # pragma: no cover - no []byte field is reachable from PodSpec today
    raise GoTypeError("[]byte fields are not supported", value=v)


_SCALARS: Final[dict[str, Encoder]] = {
    "string": _enc_string,
    "bool": _enc_bool,
    "quantity": _enc_quantity,
    "intorstring": _enc_int_or_string,
    "time": _enc_time,
    "fieldsv1": _enc_fields_v1,
    "bytes": _enc_bytes,
}
# Zero values: what Go writes for a missing (or null) field that is not omitempty.
_SCALAR_ZERO: Final[dict[str, str]] = {
    "string": '""',
    "bool": "false",
    "quantity": '"0"',
    "intorstring": "0",
    "time": "null",
    "fieldsv1": "null",
    "bytes": "null",
}
# What omitempty drops, by kind of encoded value.
_EMPTY_STRING: Final = frozenset({'""'})
_EMPTY_NUMBER: Final = frozenset({"0"})
_EMPTY_BOOL: Final = frozenset({"false"})
_EMPTY_LIST: Final = frozenset({"null", "[]"})
_EMPTY_MAP: Final = frozenset({"null", "{}"})
_EMPTY_PTR: Final = frozenset({"null"})


# --------------------------------------------------------------------------------------
# Composite encoders
# --------------------------------------------------------------------------------------


def _ptr_encoder(elem: Encoder) -> Encoder:
    def enc(v: Any) -> str:
        return "null" if v is None else elem(v)

    return enc


def _locate(exc: GoJSONError, elem: Encoder, items: Sequence[Any]) -> GoJSONError:
    for i, x in enumerate(items):
        try:
            elem(x)
        except GoJSONError as inner:
            return inner.prepend(i)
    return exc  # pragma: no cover - the failing element always fails again


def _slice_encoder(elem: Encoder, elem_type: str) -> Encoder:
    go_type = "[]" + elem_type

    def enc(v: Any) -> str:
        if type(v) is not list:
            if v is None:
                return "null"
            if isinstance(v, str | bytes | Mapping) or not isinstance(v, Sequence):
                raise _type_error(v, go_type)
        try:
            return "[" + ",".join(map(elem, v)) + "]"
        except GoJSONError as e:
            raise _locate(e, elem, v) from None

    return enc


def _string_slice(v: Any) -> str:
    if type(v) is not list:
        if v is None:
            return "null"
        if isinstance(v, str | bytes | Mapping) or not isinstance(v, Sequence):
            raise _type_error(v, "[]string")
    try:
        return "[" + ",".join(map(_ebs, v)) + "]"
    except TypeError:
        pass
    try:
        return "[" + ",".join(map(_enc_string, v)) + "]"
    except GoJSONError as e:
        raise _locate(e, _enc_string, v) from None


def _string_map(v: Any) -> str:
    """map[string]string, with a fast path for the all-strings case."""
    if type(v) is dict and v:
        try:
            return "{" + ",".join([_ebs(k) + ":" + _ebs(v[k]) for k in sorted(v)]) + "}"
        except TypeError:
            pass  # a null value, a non-string key or value: the general path decides
    return _GENERIC_STRING_MAP(v)


def _map_encoder(elem: Encoder, elem_type: str) -> Encoder:
    go_type = "map[string]" + elem_type

    def enc(v: Any) -> str:
        if type(v) is not dict:
            if v is None:
                return "null"
            if not isinstance(v, Mapping):
                raise _type_error(v, go_type)
        if not v:
            return "{}"
        try:
            keys = sorted(v)
        except TypeError:
            keys = []
        parts = []
        for k in keys or v:
            if not isinstance(k, str):
                raise GoTypeError(f"map key {k!r} is not a string", value=k)
            try:
                parts.append(_ebs(k) + ":" + elem(v[k]))
            except GoJSONError as e:
                raise e.prepend(k) from None
        return "{" + ",".join(parts) + "}"

    return enc


# Field kinds the struct loop encodes inline (no call), for the common well-typed case.
_GENERIC, _STRING_KIND, _INT32_KIND, _INT64_KIND, _BOOL_KIND = range(5)
# One compiled field: slot index, '"name":', encoder, what omitempty/omitzero drop (None: never
# dropped), inline kind, and the slot's content when the value is JSON null.
_Field = tuple[int, str, Encoder, frozenset[str] | None, int, str | None]


_GENERIC_STRING_MAP: Final = _map_encoder(_enc_string, "string")


class _StructPlan:
    """A compiled struct encoder.

    Slots hold each field's encoded ``"name":value`` in Go order; a template pre-fills the
    fields Go always writes with their zero values. Encoding walks the keys present (so a
    sparse struct such as a Volume costs what it holds, not its 30 fields) and joins the slots.
    """

    __slots__ = ("by_name", "encoder", "name", "template", "zero")

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_name: dict[str, _Field] = {}
        self.template: list[str | None] = []
        self.zero = ""
        self.encoder: Encoder = self._make_encoder()

    def _make_encoder(self) -> Encoder:
        plan = self
        name = self.name
        template = self.template
        get = self.by_name.get
        ebs = _ebs
        int_repr = int.__repr__

        def encode(v: Any) -> str:
            if type(v) is not dict:
                if v is None:
                    return plan.zero  # null into a struct: the zero value
                if not isinstance(v, Mapping):
                    raise _type_error(v, name)
            slots = template.copy()
            for k, x in v.items():
                f = get(k)
                if f is None:
                    continue  # unknown field: dropped
                idx, prefix, enc, empties, kind, null_slot = f
                if x is None:
                    slots[idx] = null_slot
                    continue
                if kind:
                    if kind == 1:
                        if type(x) is str:
                            if x or empties is None:
                                slots[idx] = prefix + ebs(x)
                            continue
                    elif kind == 2:
                        if type(x) is int and -2147483648 <= x <= 2147483647:
                            if x or empties is None:
                                slots[idx] = prefix + int_repr(x)
                            continue
                    elif kind == 3:
                        if type(x) is int and -9223372036854775808 <= x <= 9223372036854775807:
                            if x or empties is None:
                                slots[idx] = prefix + int_repr(x)
                            continue
                    elif x is True:
                        slots[idx] = prefix + "true"
                        continue
                    elif x is False:
                        if empties is None:
                            slots[idx] = prefix + "false"
                        continue
                try:
                    piece = enc(x)
                except GoJSONError as e:
                    raise e.prepend(k) from None
                if empties is None or piece not in empties:
                    slots[idx] = prefix + piece
            return "{" + ",".join(filter(None, slots)) + "}"

        return encode


_INT_TYPES: Final = re.compile(r"(u?)int(\d+)")


class _Compiler:
    def __init__(self, structs: Mapping[str, tuple[tuple[str, bool, bool, str], ...]]) -> None:
        self._structs = structs
        self._encoders: dict[str, Encoder] = {}
        self._zeros: dict[str, str] = {}
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.RLock()  # reentrant: building []T builds T

    def field_encoder(self, typ: str) -> Encoder:
        """The encoder of a struct field's type: built already, or a stand-in that builds it.

        A struct's encoder is compiled when it is first asked for, its fields' encoders when a
        value first holds them, so a process builds only the types it encodes (a Volume names
        one source of thirty; importing the library builds none).
        """
        enc = self._encoders.get(typ)
        if enc is not None:
            return enc
        pending = self._pending.get(typ)
        if pending is None:
            pending = self._pending[typ] = _Pending(self, typ)
        return pending

    def encoder(self, typ: str) -> Encoder:
        enc = self._encoders.get(typ)
        if enc is None:
            # One thread builds; an encoder is registered only once it is whole.
            with self._lock:
                enc = self._encoders.get(typ)
                if enc is None:
                    enc = self._build(typ)
                    self._encoders[typ] = enc
        return enc

    def zero(self, typ: str) -> str:
        if typ.startswith(("*", "[]", "map[")):
            return "null"
        if typ in _SCALAR_ZERO:
            return _SCALAR_ZERO[typ]
        if _INT_TYPES.fullmatch(typ):
            return "0"
        z = self._zeros.get(typ)
        if z is None:
            z = self._struct_zero(typ) if typ in self._structs else self.encoder(typ)({})
            self._zeros[typ] = z
        return z

    def _struct_zero(self, typ: str) -> str:
        """What the struct's encoder writes for ``{}``, from the field table, compiling nothing."""
        pieces = []
        for jname, omitempty, omitzero, ftype in self._structs[typ]:
            empties = self.empties(ftype) if omitempty else None
            if omitzero:
                empties = (empties or frozenset()) | self.zero_pieces(ftype)
            piece = self.zero(ftype)
            if empties is None or piece not in empties:
                pieces.append(_ebs(jname) + ":" + piece)
        return "{" + ",".join(pieces) + "}"

    @staticmethod
    def zero_pieces(typ: str) -> frozenset[str]:
        """Encodings of the values ``omitzero`` drops (reflect.Value.IsZero or an IsZero method)."""
        if typ.startswith(("*", "[]", "map[")):
            return _EMPTY_PTR  # nil only: an empty, non-nil slice or map is not zero
        if typ == "string":
            return _EMPTY_STRING
        if typ == "bool":
            return _EMPTY_BOOL
        if _INT_TYPES.fullmatch(typ) or typ == "intorstring":
            return _EMPTY_NUMBER
        if typ == "time":
            return _EMPTY_PTR  # Time.IsZero() exactly when it marshals as null
        if typ == "quantity":
            return frozenset({'"0"'})  # Quantity.IsZero(): numerically zero, which prints "0"
        raise NotImplementedError(f"omitzero on {typ} is not supported")

    @staticmethod
    def empties(typ: str) -> frozenset[str] | None:
        if typ.startswith("*"):
            return _EMPTY_PTR
        if typ.startswith("[]"):
            return _EMPTY_LIST
        if typ.startswith("map["):
            return _EMPTY_MAP
        if typ == "string":
            return _EMPTY_STRING
        if typ == "bool":
            return _EMPTY_BOOL
        if _INT_TYPES.fullmatch(typ):
            return _EMPTY_NUMBER
        return None  # structs (and Quantity, IntOrString, Time) are never empty to Go

    def _build(self, typ: str) -> Encoder:
        if typ in _SCALARS:
            return _SCALARS[typ]
        m = _INT_TYPES.fullmatch(typ)
        if m:
            return _int_encoder(int(m.group(2)), signed=not m.group(1))
        if typ.startswith("*"):
            return _ptr_encoder(self.encoder(typ[1:]))
        if typ == "[]string":
            return _string_slice
        if typ.startswith("[]"):
            return _slice_encoder(self.encoder(typ[2:]), typ[2:])
        if typ == "map[string]string":
            return _string_map
        if typ.startswith("map[string]"):
            return _map_encoder(self.encoder(typ[11:]), typ[11:])
        if typ not in self._structs:
            raise KeyError(f"unknown Go type {typ!r}")
        # Its fields' encoders are stand-ins until first used, so building a struct never
        # builds another, and a recursive type needs no placeholder for itself.
        plan = _StructPlan(typ)
        for idx, (jname, omitempty, omitzero, ftype) in enumerate(self._structs[typ]):
            prefix = _ebs(jname) + ":"
            empties = self.empties(ftype) if omitempty else None
            if omitzero:
                empties = (empties or frozenset()) | self.zero_pieces(ftype)
            # JSON null leaves a pointer nil and anything else at its zero value.
            null_piece = self.zero(ftype)
            null_slot = None if empties is not None and null_piece in empties else prefix + null_piece
            # Null is handled by the loop, so a pointer field encodes with its element's encoder.
            enc = self.field_encoder(ftype[1:] if ftype.startswith("*") else ftype)
            kind = _INLINE_KINDS.get(ftype, _GENERIC)
            plan.by_name[jname] = (idx, prefix, enc, empties, kind, null_slot)
            # A field Go never finds empty (a struct, Quantity, IntOrString, Time without
            # omitzero) is always written: its zero value stands in when the key is missing.
            plan.template.append(None if empties is not None else prefix + self.zero(ftype))
        plan.zero = "{" + ",".join(filter(None, plan.template)) + "}"
        for jname, field in plan.by_name.items():
            if isinstance(field[2], _Pending | _Tiered):  # the loop reads it from the plan: patch it there
                field[2].sites.append((plan, jname, None, None))
        return _Tiered(self, typ, plan)

    def compile_dense(self, typ: str, plan: _StructPlan) -> Encoder:
        """Generate ``typ``'s dense encoder; the stand-ins and tiered encoders it holds patch it later."""
        dense = _dense_encoder(plan, [(jname, *plan.by_name[jname][1:]) for jname, *_ in self._structs[typ]])
        namespace = cast(FunctionType, dense).__globals__
        for i, (jname, *_) in enumerate(self._structs[typ]):
            enc = plan.by_name[jname][2]
            if isinstance(enc, _Pending | _Tiered):
                enc.sites.append((plan, jname, namespace, f"E{i}"))
        return dense


class _Pending:
    """A field type's encoder not built yet: built on the first call, then put in its place.

    Every struct plan and generated encoder that holds this stand-in is patched to the built
    encoder, so later calls pay no indirection.
    """

    __slots__ = ("compiler", "sites", "typ")

    def __init__(self, compiler: _Compiler, typ: str) -> None:
        self.compiler = compiler
        self.typ = typ
        self.sites: list[_Site] = []

    def __call__(self, v: Any) -> str:
        enc = self.compiler.encoder(self.typ)
        with self.compiler._lock:
            _patch(self.sites, enc)
            if isinstance(enc, _Tiered) and enc.dense is None:
                enc.sites.extend(self.sites)  # patched again when it compiles
            self.sites.clear()
            self.compiler._pending.pop(self.typ, None)
        return enc(v)


# Where an encoder is held: a struct plan's field, and the generated code's global for it once that
# code exists.
_Site = tuple[_StructPlan, str, dict[str, Any] | None, str | None]


def _patch(sites: list[_Site], enc: Encoder) -> None:
    for plan, jname, namespace, key in sites:
        idx, prefix, _, empties, kind, null_slot = plan.by_name[jname]
        plan.by_name[jname] = (idx, prefix, enc, empties, kind, null_slot)
        if namespace is not None and key is not None:
            namespace[key] = enc


# A struct's first encodings take the sparse loop (``_StructPlan.encoder``), which needs no code
# generated; after this many, its dense encoder is generated (compiling it costs about as much as a
# few hundred encodings save) and takes the loop's place. A render of one replica encodes each struct
# a few times and compiles none (about 10 ms of a command's start-up); lint and diff, which render
# hundreds, compile the structs they use.
_COMPILE_AFTER: Final = 32


class _Tiered:
    """A struct's encoder: the sparse loop for its first :data:`_COMPILE_AFTER` calls, then the
    generated dense encoder, patched in wherever this one is held (plans, generated code, the
    compiler's table).

    Both write the same bytes. An encoding the loop refuses is done again by the dense encoder, so
    that the error names the first bad field in Go's field order, as the dense encoder reports it.
    """

    __slots__ = ("calls", "compiler", "dense", "plan", "sites", "typ")

    def __init__(self, compiler: _Compiler, typ: str, plan: _StructPlan) -> None:
        self.compiler = compiler
        self.typ = typ
        self.plan = plan
        self.calls = 0
        self.dense: Encoder | None = None
        self.sites: list[_Site] = []

    def __call__(self, v: Any) -> str:
        dense = self.dense
        if dense is not None:
            return dense(v)
        self.calls += 1
        if self.calls > _COMPILE_AFTER:
            return self._compile()(v)
        try:
            return self.plan.encoder(v)
        except GoJSONError:
            return self._compile()(v)

    def _compile(self) -> Encoder:
        with self.compiler._lock:
            if self.dense is None:
                dense = self.compiler.compile_dense(self.typ, self.plan)
                _patch(self.sites, dense)
                self.sites.clear()
                self.compiler._encoders[self.typ] = dense
                self.dense = dense
            return self.dense


_NamedField = tuple[str, str, Encoder, frozenset[str] | None, int, str | None]
# A struct with more fields than this also gets the sparse loop, taken when the value holds
# fewer than a quarter of them (a Volume names one source of thirty).
_DENSE_ONLY_FIELDS: Final = 8


def _dense_encoder(plan: _StructPlan, fields: list[_NamedField]) -> Encoder:
    """Generate the struct encoder that visits the fields in Go order, constants inlined.

    Equivalent to ``plan.encoder`` (the sparse loop) and faster when most fields are present.
    A missing key and a JSON null mean the same to Go (the zero value), so one ``get`` per
    field decides. The source is built from the generated field table only (names written
    with ``repr``) and compiled once per struct type.
    """
    ns: dict[str, Any] = {
        "Mapping": Mapping,
        "GoJSONError": GoJSONError,
        "type_error": _type_error,
        "ebs": _ebs,
        "int_repr": int.__repr__,
        "plan": plan,
        "sparse": plan.encoder,
    }
    lines = [
        "def encode(v):",
        "    if type(v) is not dict:",
        "        if v is None:",
        "            return plan.zero",
        "        if not isinstance(v, Mapping):",
        f"            raise type_error(v, {plan.name!r})",
    ]
    if len(fields) > _DENSE_ONLY_FIELDS:
        lines += [f"    if len(v) * 4 < {len(fields)}:", "        return sparse(v)"]
    lines += ["    get = v.get", "    parts = []", "    append = parts.append"]
    for i, (jname, prefix, enc, empties, kind, null_slot) in enumerate(fields):
        ns[f"E{i}"] = enc
        ns[f"M{i}"] = empties
        lines.append(f"    x = get({jname!r})")
        # Null (or missing): the zero value, unless omitempty/omitzero drops it.
        if null_slot is not None:
            lines += ["    if x is None:", f"        append({null_slot!r})", "    else:"]
        else:
            lines.append("    if x is not None:")
        # The well-typed common case, inline.
        if kind == _STRING_KIND:
            fast: tuple[str, str] | None = ("type(x) is str", "ebs(x)")
        elif kind == _INT32_KIND:
            fast = (f"type(x) is int and {-(1 << 31)} <= x <= {(1 << 31) - 1}", "int_repr(x)")
        elif kind == _INT64_KIND:
            fast = (f"type(x) is int and {-(1 << 63)} <= x <= {(1 << 63) - 1}", "int_repr(x)")
        else:
            fast = None
        if kind == _BOOL_KIND:
            lines += ["        if x is True:", f"            append({(prefix + 'true')!r})"]
            lines += ["        elif x is False:"]
            lines += [
                "            pass" if empties is not None else f"            append({(prefix + 'false')!r})"
            ]
            lines += ["        else:"]
        elif fast is not None:
            test, piece = fast
            lines += [f"        if {test}:"]
            if empties is not None:
                lines += ["            if x:", f"                append({prefix!r} + {piece})"]
            else:
                lines += [f"            append({prefix!r} + {piece})"]
            lines += ["        else:"]
        else:
            lines += ["        if True:"]
        # Everything else goes through the field type's encoder.
        lines += [
            "            try:",
            f"                p = E{i}(x)",
            "            except GoJSONError as e:",
            f"                raise e.prepend({jname!r}) from None",
        ]
        if empties is None:
            lines.append(f"            append({prefix!r} + p)")
        else:
            lines += [f"            if p not in M{i}:", f"                append({prefix!r} + p)"]
    lines.append('    return "{" + ",".join(parts) + "}"')
    exec(compile("\n".join(lines), f"<gojson {plan.name}>", "exec"), ns)
    encoder: Encoder = ns["encode"]
    return encoder


_INLINE_KINDS: Final[dict[str, int]] = {
    "string": _STRING_KIND,
    "int32": _INT32_KIND,
    "int64": _INT64_KIND,
    "bool": _BOOL_KIND,
}
_COMPILER: Final = _Compiler(STRUCTS)


def fragment_encoder(type_name: str) -> Callable[[Any], str]:
    """The compiled encoder for a Go type, returning a ``str`` fragment.

    Fragments are not yet HTML-escaped; pass the assembled text through :func:`to_bytes`.
    ``type_name`` is a struct name from :mod:`omerender._gofields` (``core/v1.PodSpec``) or a
    type expression in its syntax (``[]core/v1.Container``, ``map[string]quantity``).
    """
    return _COMPILER.encoder(type_name)


def to_bytes(fragment: str) -> bytes:
    """Finish encoded text as Go does: HTML-safe escapes, UTF-8, lone surrogates → U+FFFD."""
    if "<" in fragment or ">" in fragment or "&" in fragment:
        fragment = fragment.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if fragment.isascii():
        return fragment.encode("ascii")
    if "\u2028" in fragment or "\u2029" in fragment:
        fragment = fragment.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    try:
        return fragment.encode("utf-8")
    except UnicodeEncodeError:
        # Go's decoder turns an unpaired surrogate escape into U+FFFD and joins a pair.
        return fragment.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def encode(type_name: str, value: Any) -> bytes:
    """``json.Marshal`` of ``value`` decoded into the Go type ``type_name``."""
    return to_bytes(_COMPILER.encoder(type_name)(value))


def encode_pod_spec(spec: Mapping[str, Any] | None) -> bytes:
    """``json.Marshal`` of a ``corev1.PodSpec`` given as a dict (``None`` is the zero spec)."""
    return to_bytes(_COMPILER.encoder("core/v1.PodSpec")(spec))


def encode_string(s: str) -> str:
    """A Go string as ``encoding/json`` writes it (quoted, escaped; HTML-safe)."""
    return to_bytes(_enc_string(s)).decode("utf-8")
