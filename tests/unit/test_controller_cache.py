"""What a pass reads from the watch caches: the reflector's label index and ``CachedOwned``."""

from __future__ import annotations

import threading
from typing import Any

from omereconcile.cluster.kube import Kube
from omereconcile.cluster.reflector import Reflector
from omereconcile.controller import CachedOwned
from omereconcile.controller.stores import owner_index, service_name_index
from omerender import constants as c


def _obj(ns: str, name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "labels": labels}}


def _reflector(name: str, index: Any) -> Reflector:
    kube = Kube.__new__(Kube)  # never started: nothing is sent
    return Reflector(kube, "/unused", name, lambda *_: None, stop=threading.Event(), index=index)


def _pod(ns: str, name: str, prefix: str, component: str = "engine") -> dict[str, Any]:
    return _obj(ns, name, **{c.LABEL_INFERENCESERVICE: prefix, c.LABEL_COMPONENT: component})


def test_the_index_follows_adds_label_changes_and_deletes() -> None:
    r = _reflector("pods", owner_index)
    with r.lock:
        r._put_locked(("a", "p1"), _pod("a", "p1", "pool"))
        r._put_locked(("a", "p2"), _pod("a", "p2", "pool"))
        r._put_locked(("b", "p1"), _pod("b", "p1", "pool"))  # same labels, other namespace
        r._put_locked(("a", "d1"), _pod("a", "d1", "pool", "decoder"))
        r._put_locked(("a", "x"), _obj("a", "x"))  # not ours: left out of the index
    names = lambda v: sorted(o["metadata"]["name"] for o in r.by_index(v))  # noqa: E731
    assert names(("a", "pool", "engine")) == ["p1", "p2"]
    assert names(("b", "pool", "engine")) == ["p1"]
    assert names(("a", "pool", "decoder")) == ["d1"]
    with r.lock:
        r._put_locked(("a", "p2"), _pod("a", "p2", "other"))  # relabelled: moves bucket
        r._drop_locked(("a", "p1"))
    assert names(("a", "pool", "engine")) == []
    assert names(("a", "other", "engine")) == ["p2"]
    assert ("a", "pool", "engine") not in r._index  # empty buckets do not pile up


def test_cached_owned_reads_a_replicas_objects_across_reflectors_without_requests() -> None:
    pods = [_reflector("pods", owner_index), _reflector("pods", owner_index)]  # one per watched namespace
    revs = _reflector("controllerrevisions", owner_index)
    svcs = _reflector("services", None)
    slices = _reflector("endpointslices", service_name_index)
    with pods[0].lock:
        pods[0]._put_locked(("a", "pool-engine-1-default-0"), _pod("a", "pool-engine-1-default-0", "pool"))
    with pods[1].lock:
        pods[1]._put_locked(("a", "pool-engine-0-default-0"), _pod("a", "pool-engine-0-default-0", "pool"))
    with revs.lock:
        revs._put_locked(("a", "pool-engine-abc"), _pod("a", "pool-engine-abc", "pool"))
    with svcs.lock:
        svcs._put_locked(("a", "pool-engine-headless"), _obj("a", "pool-engine-headless"))
    with slices.lock:
        slices._put_locked(
            ("a", "s1"), _obj("a", "s1", **{"kubernetes.io/service-name": "pool-engine-headless"})
        )
        slices._put_locked(("a", "s2"), _obj("a", "s2", **{"kubernetes.io/service-name": "other"}))
    by = {"pods": pods, "controllerrevisions": [revs], "services": [svcs], "endpointslices": [slices]}
    owned = CachedOwned(lambda res: by.get(res, []))
    assert [p["metadata"]["name"] for p in owned.pods("a", "pool", "engine")] == [
        "pool-engine-0-default-0",
        "pool-engine-1-default-0",
    ]
    assert [r["metadata"]["name"] for r in owned.revisions("a", "pool", "engine")] == ["pool-engine-abc"]
    assert owned.service("a", "pool-engine-headless") is not None
    assert owned.service("b", "pool-engine-headless") is None
    assert [s["metadata"]["name"] for s in owned.slices("a", "pool-engine-headless")] == ["s1"]
    assert owned.pods("a", "pool", "decoder") == []
