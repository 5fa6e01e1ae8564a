"""Model format and framework versions, compared exactly as OME's ``pkg/modelver`` does (02 §2.4).

A version is ``[v]major[.minor[.patch]]``; only the patch may carry tails: ``+build``, ``-pre`` and
``.dev`` (``4.45.0.dev0`` is patch 0 with dev ``["dev0"]``). How many parts were written is the
*precision*. Versions with a tail, or the ``Equal`` operator (the default), compare for equality and
ignore precision and prefix (``1`` == ``1.0.0`` == ``v1``). ``GreaterThan`` and ``GreaterThanOrEqual``
need both sides written alike (same precision, same prefix) and compare *runtime* against *model*.
A version that does not parse never matches.
"""

from __future__ import annotations

import functools

from omerender._records import record

__all__ = ["Version", "VersionError", "compare_versions", "parse_version", "version_matches"]

_MAJOR_PREFIXES = ("v",)  # OME accepts only a lowercase "v"
_UINT64_MAX = 2**64 - 1


class VersionError(ValueError):
    """A version string OME's ``modelver.Parse`` rejects."""


@record
class Version:
    """A parsed version. ``precision`` counts the dot parts written (1 to 3)."""

    major: int
    minor: int
    patch: int
    precision: int
    major_prefix: str = ""
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    dev: tuple[str, ...] = ()

    @property
    def unofficial(self) -> bool:
        """True with any pre-release, build or dev tail: such versions only ever compare equal."""
        return bool(self.pre or self.build or self.dev)


def _numeric(text: str, part: str, whole: str) -> int:
    # Go's parseNumeric: ASCII digits only, no leading zero, fits in uint64; "" fails ParseUint.
    if not text or not text.isascii() or not text.isdigit():
        raise VersionError(f"invalid character(s) in {part} number {text!r} of version {whole!r}")
    if len(text) > 1 and text[0] == "0":
        raise VersionError(f"{part} must not have leading zeroes: {text!r} in version {whole!r}")
    value = int(text)
    if value > _UINT64_MAX:
        raise VersionError(f"{part} number {text!r} of version {whole!r} is out of range")
    return value


def _tail(text: str, what: str, whole: str) -> tuple[str, ...]:
    items = tuple(text.split("."))
    if any(not item for item in items):
        raise VersionError(f"{what} meta data is empty in version {whole!r}")
    return items


def parse_version(text: str) -> Version:
    """Parse ``text`` as OME's ``modelver.Parse`` does; raise VersionError where it errors."""
    if not text:
        raise VersionError("version string is empty")
    parts = text.split(".", 2)
    major_text = parts[0]
    prefix = ""
    for candidate in _MAJOR_PREFIXES:
        if major_text.startswith(candidate):
            prefix = candidate
            major_text = major_text[len(candidate) :]
            break
    major = _numeric(major_text, "major", text)
    minor = _numeric(parts[1] if len(parts) > 1 else "0", "minor", text)

    # The tails are cut from the patch in OME's order: +build first, then -pre, then .dev.
    patch_text = parts[2] if len(parts) > 2 else "0"
    build: tuple[str, ...] = ()
    pre: tuple[str, ...] = ()
    dev: tuple[str, ...] = ()
    head, plus, rest = patch_text.partition("+")
    if plus:
        build, patch_text = _tail(rest, "Build", text), head
    head, dash, rest = patch_text.partition("-")
    if dash:
        pre, patch_text = _tail(rest, "Prerelease", text), head
    head, dot, rest = patch_text.partition(".")
    if dot:
        dev, patch_text = _tail(rest, "Dev", text), head
    patch = _numeric(patch_text, "patch", text)
    return Version(major, minor, patch, len(parts), prefix, pre, build, dev)


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Version | None:
    # Pure and hot (every model x runtime pair in a lint), so memoised.
    try:
        return parse_version(text)
    except VersionError:
        return None


def _key(v: Version) -> tuple[int, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return (v.major, v.minor, v.patch, v.pre, v.build, v.dev)


def compare_versions(a: Version, b: Version) -> int:
    """-1, 0 or 1 as ``a`` is below, equal to or above ``b``: numbers, then pre, build, dev.

    Tails compare elementwise as strings, a shorter list being smaller (Go's ``compareStringSlices``,
    which is exactly Python's tuple order). Precision and prefix play no part: ``1`` equals ``1.0.0``.
    """
    ka, kb = _key(a), _key(b)
    return (ka > kb) - (ka < kb)


@functools.lru_cache(maxsize=8192)
def version_matches(runtime_version: str, model_version: str, operator: str | None) -> bool:
    """Whether a runtime format's version accepts a model's version under the runtime's ``operator``.

    ``operator`` None means ``Equal`` (the CRD default). An unknown operator behaves as OME's
    ``default`` branch: equality, but only between versions of the same precision and prefix.
    """
    runtime = _parsed(runtime_version)
    model = _parsed(model_version)
    if runtime is None or model is None:
        return False
    op = "Equal" if operator is None else operator
    if op == "Equal" or runtime.unofficial or model.unofficial:
        return compare_versions(runtime, model) == 0
    if runtime.precision != model.precision or runtime.major_prefix != model.major_prefix:
        return False
    order = compare_versions(runtime, model)
    if op == "GreaterThan":
        return order > 0
    if op == "GreaterThanOrEqual":
        return order >= 0
    return order == 0
