"""Values a tool author can keep: a Catalog pickles and copies (its memo rebuilt), models are frozen
and hashable, and results carry typed views of the very dicts they hold."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from omerender import Catalog, InferenceReplica, load, parse_object, preview
from omerender.kubetypes import Pod, Service

ROOT = Path(__file__).resolve().parents[2]


def _seed() -> tuple[InferenceReplica, Catalog]:
    loaded = load(ROOT / "examples" / "catalog", ROOT / "examples" / "llama-pool.yaml")
    (replica,) = loaded.replicas()
    return replica, loaded.catalog()


def _renamed(replica: InferenceReplica, name: str) -> InferenceReplica:
    raw = replica.model_dump(by_alias=True, exclude_none=True, mode="json")
    raw["metadata"]["name"] = name
    raw["metadata"]["uid"] = f"uid-{name}"
    return parse_object(InferenceReplica, raw)


def test_a_catalog_pickles_and_copies_to_an_equal_catalog_with_its_memo_rebuilt() -> None:
    replica, catalog = _seed()
    expected = preview(replica, catalog).revision.name
    assert catalog._memo  # the render above is remembered
    for again in (pickle.loads(pickle.dumps(catalog)), copy.deepcopy(catalog), copy.copy(catalog)):
        assert isinstance(again, Catalog)
        assert again == catalog
        assert not again._memo
        assert again.cluster_runtimes() == catalog.cluster_runtimes()
        assert preview(replica, again).revision.name == expected


def test_a_deep_copy_shares_no_mutable_state() -> None:
    _, catalog = _seed()
    again = copy.deepcopy(catalog)
    (runtime,) = again.runtimes.values()
    runtime.spec.engine_config["runner"]["image"] = "changed"  # type: ignore[index]
    (original,) = catalog.runtimes.values()
    assert original.spec.engine_config["runner"]["image"] != "changed"  # type: ignore[index]


def test_models_are_frozen_and_hashable() -> None:
    replica, catalog = _seed()
    twin = parse_object(InferenceReplica, replica.model_dump(by_alias=True, exclude_none=True, mode="json"))
    assert twin == replica
    assert hash(twin) == hash(replica)
    assert len({replica, twin, _renamed(replica, "other")}) == 2
    assert len({*catalog.models.values(), *catalog.runtimes.values()}) == 2
    with pytest.raises(ValidationError):
        replica.metadata.name = "x"  # type: ignore[misc]


def test_typed_views_are_the_dicts_the_result_holds() -> None:
    replica, catalog = _seed()
    result = preview(replica, catalog, instances=1)
    typed = result.typed
    service: Service = typed.service
    assert service is result.service
    assert service["spec"].get("clusterIP") == "None"
    pod: Pod = typed.pods[0]
    assert pod is result.pods[0]
    assert pod["metadata"].get("name") == "llama-pool-engine-0-default-0"
    assert typed.controller_revision["metadata"].get("name") == result.revision.name
    template = typed.templates["default"]
    assert template is result.render.runners[0].template
    containers = template.get("spec", {}).get("containers", [])
    assert containers[0].get("image", "").startswith("docker.io/vllm/")


def _revision(job: tuple[Catalog, InferenceReplica]) -> str:
    catalog, replica = job
    return preview(replica, catalog).revision.name


def test_renders_in_a_process_pool_from_a_pickled_catalog() -> None:
    replica, catalog = _seed()
    replicas = [_renamed(replica, f"pool-{i}") for i in range(8)]
    serial = [_revision((catalog, r)) for r in replicas]
    # spawn: the children import nothing of this process, so the catalog reaches them pickled.
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pooled = pool.map(_revision, [(catalog, r) for r in replicas])
    assert pooled == serial
    assert len(set(pooled)) == len(replicas)


def test_typed_views_required_keys_follow_not_required() -> None:
    """``NotRequired`` keys are optional at run time too, as mypy reads them."""
    from omerender import kubetypes

    assert kubetypes.VolumeMount.__required_keys__ == {"name", "mountPath"}
    assert kubetypes.VolumeMount.__optional_keys__ == {"readOnly", "subPath"}
    assert kubetypes.OwnerReference.__optional_keys__ == {"controller", "blockOwnerDeletion"}
    for name in kubetypes.__all__:
        view = getattr(kubetypes, name)
        hints = typing.get_type_hints(view, include_extras=True)
        if view.__total__:
            optional = {key for key, hint in hints.items() if typing.get_origin(hint) is typing.NotRequired}
            assert view.__optional_keys__ == optional, name
        else:
            assert view.__required_keys__ == set(), name
