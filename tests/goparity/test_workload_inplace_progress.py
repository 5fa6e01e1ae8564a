"""OME's ``workload/inplace_progress_test.go``: a metadata-only in-place roll keeps to ``maxUnavailable``.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/inplace_progress_test.go`` @ bb4fa1ee (one stored
version, 9,025 characters, read whole; its one test is also in two ome-projects ``workload_test`` files
whose paths the index does not name), over ``workload.Reconcile`` and ``ops/update_inplace.go``
``inPlaceUpdate``. Go runs four reconciles over two Ready Instances whose running and target revisions
share the image and differ in a pod annotation (``release: one`` → ``two``), the runtime reporting a
repository alias (``mirror.example.com/...``) of the unchanged image; ours rolls the same replica in the
simulated world (``InPlaceIfPossible``, ``markNotReadyDuringLifecycle: false``, ``maxUnavailable: 1``)
with every observation reporting that alias, pass by pass half a second apart.

Not mapped from Go's test: its pod cache that stays stale for two reconciles while the live reader
sees the patch (ours reads one observation per pass and pins every write to the version it read), and
its requeue interval (``UpdateRequeueInterval``; ours wakes on the world's next event).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import World
from omerender import constants as c

GO = "sgl-project/ome pkg/controller/v1beta1/workload/inplace_progress_test.go @ bb4fa1ee"
IMAGE = "example.com/test:v1"
ALIAS = "mirror.example.com/test:v1"
MARKER = c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION


@dataclass
class _AliasingRuntime(Sim):
    """The kubelet reports the running image under another repository name (a mirror's)."""

    def observe(self) -> World:
        world = super().observe()
        pods = tuple(
            replace(p, containers=tuple(replace(cv, image=ALIAS) for cv in p.containers)) for p in world.pods
        )
        return replace(world, pods=pods)


def _runners(release: str) -> list[dict[str, Any]]:
    template = {
        "metadata": {"annotations": {"release": release}},
        "spec": {"containers": [{"name": "ome-container", "image": IMAGE}]},
    }
    return [{"name": "default", "size": 1, "template": template}]


def test_in_place_metadata_update_progresses_within_max_unavailable() -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/inplace_progress_test.go @ bb4fa1ee,
    TestReconcile_InPlaceMetadataUpdateProgressesWithinMaxUnavailable: the annotation-only roll patches
    one Instance at a time (the other stays Ready on the running revision with its pod untouched until
    the first is promoted), the runtime's alias of the unchanged image holds nothing back, and both end
    Ready on the target with their pods kept, relabelled to the target's hash and carrying
    ``release: two``; no image is patched, so no transition marker is written."""
    sim = _AliasingRuntime()
    lifecycle = {
        "updateStrategy": {
            "type": "InPlaceIfPossible",
            "rollingUpdate": {"maxUnavailable": 1},
            "inPlaceUpdateStrategy": {"markNotReadyDuringLifecycle": False},
        }
    }
    sim.apply_replica(base_replica(replicas=2, lifecycle=lifecycle, runners=_runners("one")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    running = sim.status["currentRevision"]
    for p in sim.pods.values():  # as the render stamps the revision's pod annotations (the sim's does not)
        p.obj["metadata"].setdefault("annotations", {})["release"] = "one"
    uids = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.update_spec(runners=_runners("two"))
    target = sim.render().name  # type: ignore[union-attr]
    hash_ = target.rsplit("-", 1)[-1]

    order: list[tuple[int, str]] = []  # (index, phase) as each row changes
    for _ in range(400):
        driver.one_pass()
        rows = sorted(sim.rows(), key=lambda r: r["index"])
        updating = [r["index"] for r in rows if r["phase"] == "Updating"]
        assert len(updating) <= 1, (GO, "two Instances out at once under maxUnavailable 1", rows)
        for r in rows:
            seen = (r["index"], r["phase"])
            if r["phase"] == "Updating" and seen not in order:
                order.append(seen)
            if r["phase"] == "Ready" and r.get("runningRevision") == target and seen not in order:
                order.append(seen)
        for r in rows:
            if r["phase"] == "Ready" and r.get("runningRevision") == running:
                pod = sim.pods[f"llama-pool-engine-{r['index']}-default-0"].obj
                if not any(i == r["index"] for i, _ in order):
                    assert pod["metadata"]["annotations"]["release"] == "one", (GO, "patched before its turn")
        if converged(sim) and sim.status.get("currentRevision") == target:
            break
        sim.advance(0.5)
    else:
        raise AssertionError(f"the metadata roll never finished: {sim.rows()}")
    first = order[0][0]
    assert order == [(first, "Updating"), (first, "Ready"), (1 - first, "Updating"), (1 - first, "Ready")], (
        GO,
        order,
    )
    assert {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()} == uids, GO
    for p in sim.pods.values():
        meta = p.obj["metadata"]
        assert meta["annotations"]["release"] == "two", GO
        assert meta["labels"][c.LABEL_REVISION_HASH] == hash_, GO
        assert MARKER not in meta["annotations"], GO
        assert p.obj["spec"]["containers"][0]["image"] == IMAGE, GO
    assert [r["incarnation"] for r in sim.rows()] == [1, 1], GO
