"""OME's pkg/modelver semantics: parsing, ordering, and the operators runtime selection applies."""

from __future__ import annotations

import pytest

from omerender.versions import Version, VersionError, compare_versions, parse_version, version_matches

# -- parse -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", Version(1, 0, 0, precision=1)),
        ("v1", Version(1, 0, 0, precision=1, major_prefix="v")),
        ("1.12", Version(1, 12, 0, precision=2)),
        ("v0.8.0", Version(0, 8, 0, precision=3, major_prefix="v")),
        ("0.6.0", Version(0, 6, 0, precision=3)),
        ("4.45.0.dev0", Version(4, 45, 0, precision=3, dev=("dev0",))),
        ("4.51.3-SAM-HQ-preview", Version(4, 51, 3, precision=3, pre=("SAM-HQ-preview",))),
        ("4.43.0+build", Version(4, 43, 0, precision=3, build=("build",))),
        ("1.2.3-rc.1+b.2", Version(1, 2, 3, precision=3, pre=("rc", "1"), build=("b", "2"))),
        # Tails are cut +build, then -pre, then .dev: a dev part may precede a pre part.
        ("1.2.3.dev0-rc1", Version(1, 2, 3, precision=3, pre=("rc1",), dev=("dev0",))),
        ("1.2.3+b-1", Version(1, 2, 3, precision=3, build=("b-1",))),
        ("18446744073709551615", Version(2**64 - 1, 0, 0, precision=1)),
    ],
)
def test_parse(text: str, expected: Version) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "v",
        "V1",  # only a lowercase v prefix
        "01",  # leading zero in major
        "1.02",  # leading zero in minor
        "1.2.03",  # leading zero in patch
        "1.x",
        "1..2",
        "1.2.",
        "1-rc",  # tails only on the patch
        "1.2-rc",
        "1.2.3-",
        "1.2.3+",
        "1.2.3-rc..1",
        "1.2.3.dev0.",
        "1.2.٣",  # a Unicode digit is not a digit to Go
        " 1.2.3",
        "18446744073709551616",  # beyond uint64
    ],
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(VersionError):
        parse_version(text)


def test_unofficial_means_any_tail() -> None:
    assert not parse_version("1.2.3").unofficial
    assert parse_version("1.2.3-rc").unofficial
    assert parse_version("1.2.3+b").unofficial
    assert parse_version("1.2.3.dev0").unofficial


# -- compare (OME's util_test.go table, plus tail ordering) ------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "equal", "greater"),
    [
        ("1.8.0", "1.8.0", True, False),
        ("2.0.0", "1.9.0", False, True),
        ("1.9.0", "1.8.0", False, True),
        ("1.8.5", "1.8.0", False, True),
        ("1.0.0", "2.0.0", False, False),
        ("1.8.0-alpha", "1.8.0-alpha", True, False),
        ("1.8.0-beta", "1.8.0-alpha", False, True),
        ("1.8.0+20240707", "1.8.0+20240707", True, False),
        ("1.8.0+20240708", "1.8.0+20240707", False, True),
        ("v0.8.0", "v0.8.0", True, False),
        ("v1", "v1", True, False),
        ("1", "1", True, False),
        ("1.12", "1.12", True, False),
        ("1", "2", False, False),
        ("v1.9.0", "v2.9.0", False, False),
        ("v0.9.0", "v0.8.0", False, True),
    ],
)
def test_compare_ome_table(a: str, b: str, equal: bool, greater: bool) -> None:
    result = compare_versions(parse_version(a), parse_version(b))
    assert (result == 0) is equal
    assert (result == 1) is greater


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.0-rc", "1.0.0-rc.1"),  # shorter tail list is smaller
        ("1.0.0-rc.10", "1.0.0-rc.9"),  # tails compare as strings, not numbers
        ("1.0.0", "1.0.0-rc"),  # no pre-release is *smaller* in OME (unlike semver)
        ("1.0.0-rc", "1.0.0-rc+b"),  # pre, then build
        ("1.0.0+b", "1.0.0+b.dev0"),
        ("1.0.0.dev0", "1.0.0.dev1"),
        ("1.9.0", "1.10.0"),  # numbers compare as numbers
    ],
)
def test_compare_order(lower: str, higher: str) -> None:
    assert compare_versions(parse_version(lower), parse_version(higher)) == -1
    assert compare_versions(parse_version(higher), parse_version(lower)) == 1


def test_compare_ignores_precision_and_prefix() -> None:
    assert compare_versions(parse_version("1"), parse_version("1.0.0")) == 0
    assert compare_versions(parse_version("v1"), parse_version("1.0")) == 0


# -- version_matches: runtime version, model version, runtime operator --------------------------


@pytest.mark.parametrize(
    ("runtime", "model", "operator", "matches"),
    [
        # OME matcher_test.go
        ("1.8.0", "1.7.0", "GreaterThan", True),
        ("1.7.0", "1.7.0", "GreaterThan", False),
        ("1.0", "1.0.0", "GreaterThan", False),
        ("1.8.0", "1.8.0", "Equal", True),
        ("1.9.0", "1.8.0", "Equal", False),
        ("1.8.0-dev", "1.8.0-dev", "GreaterThan", True),
        ("1.8.0-alpha", "1.8.0-dev", "GreaterThan", False),
        # the operator reads runtime OP model, not the other way round
        ("1.7.0", "1.8.0", "GreaterThan", False),
        ("1.7.0", "1.8.0", "GreaterThanOrEqual", False),
        ("1.8.0", "1.8.0", "GreaterThanOrEqual", True),
        ("1.9.0", "1.8.0", "GreaterThanOrEqual", True),
        ("2", "1", "GreaterThan", True),
        ("v2", "v1", "GreaterThan", True),
        # ordered mode needs equal precision and prefix
        ("1.1", "1.0.0", "GreaterThanOrEqual", False),
        ("v1.8.0", "1.7.0", "GreaterThan", False),
        ("1.8.0", "v1.7.0", "GreaterThanOrEqual", False),
        # equality mode (Equal, unset, or any tail) ignores precision and prefix
        ("1", "1.0.0", "Equal", True),
        ("v1", "1.0.0", None, True),
        ("1.0", "v1", None, True),
        ("1.0.1", "1.0.0", None, False),
        ("4.45.0.dev0", "4.45.0.dev0", None, True),
        ("4.45.0.dev0", "4.45.0", None, False),
        ("4.46.0", "4.45.0.dev0", "GreaterThan", False),  # a tail forces equality
        ("4.45.0.dev0", "4.45.0.dev0", "GreaterThanOrEqual", True),
        # a version that does not parse never matches
        ("1.0.0", "01.0.0", None, False),
        ("garbage", "garbage", "Equal", False),
        ("", "", None, False),
        # an unknown operator is OME's default branch: equality, after the precision/prefix check
        ("1.0.0", "1.0.0", "Whatever", True),
        ("1", "1.0.0", "Whatever", False),
        ("1.0.0", "1.0.0", "", True),
        ("1", "1.0.0", "", False),
    ],
)
def test_version_matches(runtime: str, model: str, operator: str | None, matches: bool) -> None:
    assert version_matches(runtime, model, operator) is matches
