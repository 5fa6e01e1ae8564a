"""The fleet-sized watch caches hold objects without ``metadata.managedFields``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, cast

import pytest

from omereconcile.cluster.kube import Kube, WatchEvent
from omereconcile.cluster.reflector import Reflector, strip_managed_fields
from omereconcile.controller.stores import owner_index
from omerender import constants as c

MANAGED = [{"manager": "omereconcile", "operation": "Update", "fieldsV1": {"f:spec": {}}}]


def _pod(name: str, rv: str) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": "ns",
            "name": name,
            "resourceVersion": rv,
            "labels": {c.LABEL_INFERENCESERVICE: "pool", c.LABEL_COMPONENT: "engine"},
            "managedFields": [dict(m) for m in MANAGED],
        },
        "spec": {"nodeName": "n1"},
    }


class _OneWatch:
    """Lists one pod, then watches one change of it and one new pod, then stops the reflector."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def list(self, path: str, **query: Any) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": "1"}, "items": [_pod("p0", "1")]}

    def watch(self, path: str, **kw: Any) -> Iterator[WatchEvent]:
        yield WatchEvent("MODIFIED", _pod("p0", "2"))
        yield WatchEvent("ADDED", _pod("p1", "3"))
        self.stop.set()


def _run(trim: bool) -> tuple[Reflector, list[dict[str, Any]]]:
    stop = threading.Event()
    seen: list[dict[str, Any]] = []
    r = Reflector(
        cast(Kube, _OneWatch(stop)),
        "/api/v1/namespaces/ns/pods",
        "pods",
        lambda _t, obj: seen.append(obj),
        stop=stop,
        index=owner_index,
        trim=trim,
    )
    r.start()
    r._thread.join(timeout=10)
    assert not r._thread.is_alive()
    return r, seen


def test_a_trimmed_store_and_its_events_carry_no_managed_fields() -> None:
    r, seen = _run(trim=True)
    stored = r.by_index(("ns", "pool", "engine"))
    assert sorted(o["metadata"]["name"] for o in stored) == ["p0", "p1"]
    assert [o["metadata"]["resourceVersion"] for o in seen] == ["1", "2", "3"]
    for obj in [*stored, *seen]:
        assert "managedFields" not in obj["metadata"]
        assert obj["metadata"]["labels"][c.LABEL_INFERENCESERVICE] == "pool"  # the rest is intact
        assert obj["spec"] == {"nodeName": "n1"}


def test_an_untrimmed_store_keeps_them() -> None:
    r, seen = _run(trim=False)
    assert all(o["metadata"]["managedFields"] == MANAGED for o in [*r.items(), *seen])


@pytest.mark.parametrize("obj", [{}, {"metadata": None}, {"metadata": {"name": "x"}}])
def test_stripping_tolerates_objects_without_them(obj: dict[str, Any]) -> None:
    assert strip_managed_fields(dict(obj)) == obj
