"""Accelerator names, GPU counts and PARALLELISM_SIZE, as OME's accelerator.go and controllerconfig read them."""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.settings import SettingsError, settings_from_configmap
from omerender.accelerators import (
    accelerator_count,
    accelerator_resource_names,
    parse_accelerator_resources,
    quantity_value,
    set_parallelism,
)
from omerender.catalog import Catalog
from omerender.errors import InvalidObjectError, RenderBlocked


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4", 4),
        ("1500m", 2),
        ("1m", 1),
        ("2000m", 2),
        ("1Ki", 1024),
        ("1e3", 1000),
        ("0", 0),
        ("-1500m", -2),
        (8, 8),
    ],
)
def test_quantity_value_rounds_up_away_from_zero(text: Any, value: int) -> None:
    assert quantity_value(text, "f") == value


def test_a_malformed_quantity_names_the_field() -> None:
    with pytest.raises(RenderBlocked) as info:
        quantity_value("lots", "runner resources.limits[nvidia.com/gpu]")
    assert info.value.message.startswith(
        "runner resources.limits[nvidia.com/gpu]: 'lots' is not a Kubernetes"
    )


@pytest.mark.parametrize(
    ("text", "names"), [(None, ()), ("", ()), ("  ", ()), ("null", ()), ('["a/b"]', ("a/b",))]
)
def test_parse_accelerator_resources(text: str | None, names: tuple[str, ...]) -> None:
    assert parse_accelerator_resources(text) == names


@pytest.mark.parametrize("text", ["[1]", '{"a": 1}', "not json", '"nvidia.com/gpu"'])
def test_parse_accelerator_resources_refuses_anything_but_a_list_of_names(text: str) -> None:
    with pytest.raises(ValueError, match="acceleratorResources"):
        parse_accelerator_resources(text)


def test_no_configured_names_means_nvidia_only() -> None:
    assert accelerator_resource_names(()) == ("nvidia.com/gpu",)
    assert accelerator_resource_names(("amd.com/gpu",)) == ("amd.com/gpu",)


def test_count_walks_names_in_order_and_limits_before_requests_for_each() -> None:
    container = {"resources": {"limits": {"b": "8"}, "requests": {"a": "2", "b": "1"}}}
    assert accelerator_count(container, ("a", "b")) == 2
    assert accelerator_count(container, ("b", "a")) == 8
    assert accelerator_count(container, ("c",)) == 0


def test_set_parallelism_updates_the_value_in_place_and_keeps_other_fields() -> None:
    container: dict[str, Any] = {
        "resources": {"limits": {"nvidia.com/gpu": "2"}},
        "env": [{"name": "PARALLELISM_SIZE", "value": "1"}, {"name": "B", "value": "2"}],
    }
    set_parallelism(container, ("nvidia.com/gpu",), 1, 3)
    assert container["env"] == [{"name": "PARALLELISM_SIZE", "value": "8"}, {"name": "B", "value": "2"}]


@pytest.mark.parametrize(("leaders", "workers"), [(0, 0), (1, 0), (0, 2)])
def test_set_parallelism_needs_gpus_and_some_pod(leaders: int, workers: int) -> None:
    container: dict[str, Any] = {"resources": {"limits": {"nvidia.com/gpu": "4"}}}
    set_parallelism(container, ("nvidia.com/gpu",), leaders, workers)
    expected = None if leaders + workers == 0 else str(4 * (leaders + workers))
    assert {v["name"]: v["value"] for v in container.get("env", [])}.get("PARALLELISM_SIZE") == expected


def _config_map(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": {"acceleratorResources": value},
    }


def test_catalog_reads_accelerator_names_from_the_config_map_and_an_argument_wins() -> None:
    assert Catalog.from_objects([_config_map('["amd.com/gpu"]')]).accelerator_resources == ("amd.com/gpu",)
    given = Catalog.from_objects([_config_map('["amd.com/gpu"]')], accelerator_resources=["x/y"])
    assert given.accelerator_resources == ("x/y",)
    assert Catalog.from_objects([]).accelerator_resources == ()


def test_catalog_refuses_a_malformed_accelerator_list_naming_the_field() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects([_config_map("[1]")])
    assert "data.acceleratorResources" in str(info.value)
    assert "ConfigMap ome/inferenceservice-config" in str(info.value)


def test_reconciler_settings_carry_the_live_accelerator_names() -> None:
    assert settings_from_configmap({"acceleratorResources": '["amd.com/gpu"]'}).accelerator_resources == (
        "amd.com/gpu",
    )
    with pytest.raises(SettingsError, match="acceleratorResources"):
        settings_from_configmap({"acceleratorResources": "nope"})
