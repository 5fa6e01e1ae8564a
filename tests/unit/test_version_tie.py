"""One version names a release everywhere (docs/releasing.md): the package, the chart's appVersion and
the image tag of deploy/base; the chart's own version is the package's or a later one (a chart change
between releases takes the next version, for helm upgrade). And the package metadata says where the
source, changelog, reference and issues are (Project-URLs)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from omerender import __version__

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "omereconcile" / "Chart.yaml"


def _parts(version: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    assert match, f"{version!r} is not MAJOR.MINOR.PATCH"
    return int(match[1]), int(match[2]), int(match[3])


def test_the_chart_app_version_is_the_package_version() -> None:
    chart = yaml.safe_load(CHART.read_text())
    assert chart["appVersion"] == __version__, (
        f"{CHART.relative_to(ROOT)}: appVersion {chart['appVersion']!r} is not the package's {__version__}; "
        "scripts/release.sh sets both"
    )


def test_the_chart_version_is_the_package_version_or_the_next() -> None:
    chart = yaml.safe_load(CHART.read_text())
    assert _parts(str(chart["version"])) >= _parts(__version__), (
        f"{CHART.relative_to(ROOT)}: version {chart['version']} is older than the package's {__version__}"
    )


def test_the_kustomize_base_runs_the_package_version() -> None:
    deployment = (ROOT / "deploy" / "base" / "deployment.yaml").read_text()
    assert re.findall(r"image: ghcr\.io/ome/omereconcile:(\S+)", deployment) == [__version__]


def test_the_chart_default_image_tag_is_the_app_version() -> None:
    values = yaml.safe_load((ROOT / "charts" / "omereconcile" / "values.yaml").read_text())
    assert values["image"]["tag"] == ""  # empty: the chart's appVersion, the package's version


def test_the_metadata_names_the_source_changelog_reference_and_issues() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    urls = project["urls"]
    assert {"Source", "Changelog", "Documentation", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    assert urls["Changelog"].endswith("/CHANGELOG.md")
    assert urls["Changelog"].startswith(urls["Source"])
    assert urls["Issues"].startswith(urls["Source"])
