"""The compiled check (omerender.crdcheck) only ever short-cuts a verdict jsonschema gives too: an object
it calls valid has no problems by jsonschema's reading either, and one it refuses has some."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from omerender.cli.crds import crd_for
from omerender.crdschema import _compiled, validate_against_crd
from tests.unit.test_properties import PROPERTY, models, replicas, runtimes


def _slow(obj: Any, kind: str) -> list[Any]:
    compiled = _compiled(crd_for(kind))
    version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    return list(compiled.validators[version].iter_errors(obj)) if version in compiled.validators else ["?"]


def test_the_fast_check_is_compiled_for_every_served_version() -> None:
    for kind in ("InferenceReplica", "ClusterServingRuntime", "ClusterBaseModel", "FineTunedWeight"):
        compiled = _compiled(crd_for(kind))
        assert set(compiled.fast) == set(compiled.validators)


@PROPERTY
@given(replicas)
def test_fast_and_slow_agree_on_replicas(obj: Any) -> None:
    assert (validate_against_crd(obj, crd_for("InferenceReplica")) == ()) == (
        _slow(obj, "InferenceReplica") == []
    )


@PROPERTY
@given(runtimes)
def test_fast_and_slow_agree_on_runtimes(obj: Any) -> None:
    kind = obj["kind"]
    assert (validate_against_crd(obj, crd_for(kind)) == ()) == (_slow(obj, kind) == [])


@PROPERTY
@given(models)
def test_fast_and_slow_agree_on_models(obj: Any) -> None:
    kind = obj["kind"]
    assert (validate_against_crd(obj, crd_for(kind)) == ()) == (_slow(obj, kind) == [])
