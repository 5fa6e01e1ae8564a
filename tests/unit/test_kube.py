"""The kube adapter's typed errors and write accounting (no server needed)."""

from __future__ import annotations

import pytest

from omereconcile.cluster.kube import (
    AlreadyExists,
    Conflict,
    Gone,
    NotFound,
    _by_status,
    _event,
    _resource_of,
)


@pytest.mark.parametrize(
    ("status", "reason", "cls"),
    [
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (410, "Expired", Gone),
    ],
)
def test_status_codes_map_to_typed_errors(status: int, reason: str, cls: type) -> None:
    err = _by_status(status, reason, "m", {})
    assert type(err) is cls
    assert err.status == status


def test_already_exists_is_a_conflict() -> None:
    assert isinstance(_by_status(409, "AlreadyExists", "m", {}), Conflict)


def test_a_410_watch_event_raises_gone() -> None:
    with pytest.raises(Gone):
        _event(
            {
                "type": "ERROR",
                "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
            }
        )
    assert _event({"type": "ADDED", "object": {"a": 1}}).object == {"a": 1}


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/api/v1/namespaces/ns/pods", "pods"),
        ("/api/v1/namespaces/ns/pods/p/status", "pods/status"),
        ("/apis/ome.io/v1beta1/namespaces/ns/inferencereplicas/x/status", "inferencereplicas/status"),
        ("/apis/apps/v1/namespaces/ns/controllerrevisions", "controllerrevisions"),
        ("/apis/ome.io/v1beta1/clusterbasemodels", "clusterbasemodels"),
    ],
)
def test_requests_are_accounted_by_resource(path: str, resource: str) -> None:
    assert _resource_of(path) == resource
