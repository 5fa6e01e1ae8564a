"""Which replicas a watch event re-enqueues (no API server: the stores are filled by hand)."""

from __future__ import annotations

import threading
from typing import Any

from omereconcile.cluster.reflector import Reflector
from omereconcile.controller import Controller
from omereconcile.controller.stores import replica_index
from omerender import DeployDefaults


class NoKube:
    on_request: Any = None


def _controller(replicas: dict[str, dict[str, Any]]) -> Controller:
    ctrl = Controller(NoKube(), namespaces=["ns"])  # type: ignore[arg-type]
    r = Reflector(
        NoKube(), "/x", "inferencereplicas", lambda t, o: None, stop=threading.Event(), index=replica_index
    )  # type: ignore[arg-type]
    for name, spec in replicas.items():
        with r.lock:
            r._put_locked(("ns", name), {"metadata": {"name": name, "namespace": "ns"}, "spec": spec})
    ctrl.reflectors["inferencereplicas"] = [r]
    return ctrl


def _queued(ctrl: Controller) -> set[str]:
    out = set()
    while (key := ctrl.queue.get(timeout=0)) is not None:
        out.add(key[1])
        ctrl.queue.done(key)
    return out


def test_catalog_events_enqueue_only_the_replicas_that_use_the_object() -> None:
    ctrl = _controller(
        {"a": {"component": "engine"}, "b": {"component": "engine"}, "c": {"component": "engine"}}
    )
    ctrl._deps = {
        ("ns", "a"): frozenset({("model", "m1"), ("runtime", "child"), ("runtime", "base")}),
        ("ns", "b"): frozenset({("model", "m2"), ("runtime", "*")}),
        ("ns", "c"): frozenset(),  # a runners replica reads no catalog
    }
    ctrl._catalog_event("ClusterBaseModel")("MODIFIED", {"metadata": {"name": "m1"}})
    assert _queued(ctrl) == {"a"}
    # An ancestor runtime: a; any runtime: b (auto-selected).
    ctrl._catalog_event("ServingRuntime")("MODIFIED", {"metadata": {"name": "base", "namespace": "ns"}})
    assert _queued(ctrl) == {"a", "b"}
    ctrl._catalog_event("ClusterServingRuntime")("ADDED", {"metadata": {"name": "other"}})
    assert _queued(ctrl) == {"b"}


def test_a_replica_not_yet_reconciled_is_enqueued_by_any_catalog_change() -> None:
    ctrl = _controller({"new": {"component": "engine"}})
    ctrl._catalog_event("FineTunedWeight")("ADDED", {"metadata": {"name": "w"}})
    assert _queued(ctrl) == {"new"}


def test_owned_object_events_enqueue_the_replica_their_labels_name() -> None:
    ctrl = _controller({"llama-pool": {"component": "engine"}, "other": {"component": "engine"}})
    pod = {
        "metadata": {
            "namespace": "ns",
            "labels": {"ome.io/inferenceservice": "llama-pool", "component": "engine"},
        }
    }
    ctrl._on_owned("MODIFIED", pod)
    assert _queued(ctrl) == {"llama-pool"}
    pod["metadata"]["labels"]["component"] = "decoder"
    ctrl._on_owned("MODIFIED", pod)
    assert _queued(ctrl) == set()


def test_the_operator_configmap_reaches_every_render_through_the_catalog() -> None:
    """The live inferenceservice-config's `deploy` defaults are in the Catalog the passes render with;
    a change rebuilds it and re-enqueues every replica, and a bad `deploy` key blocks renders with Go's
    text while the other settings keep their last good values."""
    ctrl = _controller({"a": {"component": "engine"}})
    good = '{"defaultDeploymentMode": "RawDeployment", "terminationGracePeriodSeconds": 90}'
    ctrl._on_config("ADDED", {"metadata": {"name": "inferenceservice-config"}, "data": {"deploy": good}})
    assert _queued(ctrl) == {"a"}
    catalog, _, _ = ctrl.catalog()
    assert catalog.deploy is not None
    assert catalog.deploy.termination_grace_period_seconds == 90
    ctrl._on_config("MODIFIED", {"metadata": {}, "data": {"deploy": '{"defaultDeploymentMode": "x"}'}})
    catalog, _, _ = ctrl.catalog()
    assert catalog.deploy is None
    assert catalog.deploy_error == "invalid deployment mode. Supported default mode is RawDeployment"
    ctrl._on_config("DELETED", {"metadata": {}})
    catalog, _, _ = ctrl.catalog()
    assert (catalog.deploy, catalog.deploy_error) == (DeployDefaults(), None)  # nothing configured


def test_an_invalid_retry_block_history_limit_is_logged(caplog: Any) -> None:
    """OME treats an invalid ``lifecycle.retryBlockHistoryLimit`` as unconfigured (every RetryBlock is
    kept); the controller says so in its log instead of dropping the value silently."""
    ctrl = _controller({})
    with caplog.at_level("WARNING", logger="omereconcile.controller"):
        ctrl._on_config("ADDED", {"metadata": {}, "data": {"lifecycle": '{"retryBlockHistoryLimit": 0}'}})
    hits = [r for r in caplog.records if r.getMessage() == "lifecycle.retryBlockHistoryLimit ignored"]
    assert len(hits) == 1
    assert "is not a positive integer" in hits[0].error
