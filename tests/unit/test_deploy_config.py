"""Operator defaults from the ``deploy`` key of ``inferenceservice-config`` (Go: parseDeployConfig,
specdefaults via render.PrepareRole)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omerender import Catalog, DeployConfigError, DeployDefaults, parse_deploy_config, preview
from omerender.deploy import apply_deploy_defaults
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import InferenceReplica, parse_object

RAW = '"defaultDeploymentMode": "RawDeployment"'


def config_map(
    deploy: str | None, *, namespace: str = "ome", name: str = "inferenceservice-config"
) -> dict[str, Any]:
    data = {} if deploy is None else {"deploy": deploy}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def replica() -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "r", "namespace": "demo", "uid": "uid-r"},
            "spec": {"component": "engine", "runtimeRef": {"name": "rt"}},
        },
    )


def runtime(engine: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {"engineConfig": engine},
    }


RUNNER = {"name": "ome-container", "image": "img:1"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{}", "invalid deploy config, defaultDeploymentMode is required"),
        (
            '{"defaultDeploymentMode": "Serverless"}',
            "invalid deployment mode. Supported default mode is RawDeployment",
        ),
        (
            f'{{{RAW}, "terminationGracePeriodSeconds": 0}}',
            "terminationGracePeriodSeconds must be > 0, got 0",
        ),
        (f'{{{RAW}, "minReadySeconds": -1}}', "invalid deploy config, minReadySeconds must be >= 0, got -1"),
        (
            f'{{{RAW}, "replicas": {{"defaultMinReplicas": 0}}}}',
            "replicas.defaultMinReplicas must be > 0, got 0",
        ),
        (
            f'{{{RAW}, "replicas": {{"defaultMaxReplicas": {{"router": -2}}}}}}',
            "invalid deploy config, replicas.defaultMaxReplicas.router must be > 0, got -2",
        ),
        (
            f'{{{RAW}, "updateStrategy": {{"engine": {{"type": "Rolling"}}}}}}',
            'invalid deploy config, updateStrategy.engine.type "Rolling" is not a supported update strategy',
        ),
        (
            f'{{{RAW}, "updateStrategy": {{"decoder": {{"maxUnavailable": "0%"}}}}}}',
            'updateStrategy.decoder.maxUnavailable must be > 0, got "0%": a zero budget denies every Instance',
        ),
        (
            f'{{{RAW}, "updateStrategy": {{"router": {{"maxSurge": "two"}}}}}}',
            "updateStrategy.router.maxSurge is not an integer or percentage: invalid value for IntOrString",
        ),
        (
            f'{{{RAW}, "terminationGracePeriodSeconds": "60"}}',
            "unable to parse deploy config json: json: cannot unmarshal string into Go struct field "
            "DeployConfig.terminationGracePeriodSeconds of type int64",
        ),
        (
            f'{{{RAW}, "minReadySeconds": 1.5}}',
            "cannot unmarshal number 1.5 into Go struct field DeployConfig.minReadySeconds of type int32",
        ),
        # A type error is reported before the missing mode, as json.Unmarshal runs first.
        ('{"terminationGracePeriodSeconds": true}', "cannot unmarshal bool into Go struct field"),
        ("{not json", "unable to parse deploy config json: "),
    ],
)
def test_bad_deploy_config_is_refused_with_gos_text(text: str, message: str) -> None:
    with pytest.raises(DeployConfigError) as err:
        parse_deploy_config(text)
    assert message in str(err.value)


def test_deploy_keys_match_case_insensitively_like_encoding_json() -> None:
    parsed = parse_deploy_config(
        '{"DefaultDeploymentMode": "RawDeployment", "TERMINATIONGRACEPERIODSECONDS": 90}'
    )
    assert parsed.termination_grace_period_seconds == 90


def test_defaults_fill_unset_pod_specs_only() -> None:
    deploy = DeployDefaults(termination_grace_period_seconds=120)
    piece = {"leader": {"terminationGracePeriodSeconds": 0, "runner": RUNNER}, "worker": {"runner": RUNNER}}
    filled = apply_deploy_defaults(piece, "engine", deploy)
    assert filled["terminationGracePeriodSeconds"] == 120
    assert filled["leader"]["terminationGracePeriodSeconds"] == 0  # set, even to 0: kept (a non-nil pointer)
    assert filled["worker"]["terminationGracePeriodSeconds"] == 120
    assert filled["worker"]["size"] == 1  # workerSize: a leader+worker pair without a size gets one worker
    assert "terminationGracePeriodSeconds" not in piece  # the runtime is not changed


def test_router_defaults_touch_its_pod_spec_only_and_nothing_without_config() -> None:
    piece = {"runner": RUNNER, "worker": {"runner": RUNNER}}
    filled = apply_deploy_defaults(piece, "router", DeployDefaults(termination_grace_period_seconds=5))
    assert filled["terminationGracePeriodSeconds"] == 5
    assert filled["worker"] == {"runner": RUNNER}
    assert apply_deploy_defaults({"runner": RUNNER}, "engine", None) == {"runner": RUNNER}


def test_catalog_reads_the_configmap_in_namespace_ome_only() -> None:
    deploy = f'{{{RAW}, "terminationGracePeriodSeconds": 77}}'
    assert Catalog.from_objects([config_map(deploy)]).deploy == parse_deploy_config(deploy)
    assert Catalog.from_objects([config_map(deploy, namespace="default")]).deploy is None
    assert Catalog.from_objects([config_map(deploy, name="other")]).deploy is None
    assert Catalog.from_objects([config_map(None)]).deploy == DeployDefaults()


def test_defaults_change_the_pods_and_the_revision_hash() -> None:
    objects = [runtime({"runner": RUNNER})]
    plain = preview(replica(), Catalog.from_objects(objects))
    deploy = f'{{{RAW}, "terminationGracePeriodSeconds": 300}}'
    with_defaults = preview(replica(), Catalog.from_objects([*objects, config_map(deploy)]))
    assert "terminationGracePeriodSeconds" not in plain.render.runners[0].template["spec"]
    assert with_defaults.render.runners[0].template["spec"]["terminationGracePeriodSeconds"] == 300
    assert plain.revision.name != with_defaults.revision.name
    # Only the keys that reach pods matter: minReadySeconds changes no pod and no hash.
    lifecycle_only = f'{{{RAW}, "minReadySeconds": 30}}'
    same = preview(replica(), Catalog.from_objects([*objects, config_map(lifecycle_only)]))
    assert same.revision.name == plain.revision.name


def test_an_unusable_deploy_config_blocks_refs_renders_before_any_lookup() -> None:
    bad = json.dumps({"defaultDeploymentMode": "RawDeployment", "minReadySeconds": -5})
    with pytest.raises(RenderBlocked) as blocked:
        preview(replica(), Catalog.from_objects([config_map(bad)]))  # the runtime is missing too
    assert blocked.value.reason == BlockReason.RENDER_FAILED
    assert (
        blocked.value.message
        == "load deploy config: invalid deploy config, minReadySeconds must be >= 0, got -5"
    )
