"""OME's ``workload/corrective_recovery_test.go``: a corrective edit after a Held rollout converges alone.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/corrective_recovery_test.go`` @ ae683e3f (the one
stored version, all 27,863 characters read). Go's harness runs ``workload.Reconcile`` in a closed loop
(fake client, a kubelet that parks the bad image in ``ImagePullBackOff``, a fake clock, a retry policy
of two attempts) until the bad revision's retry block is ``Held`` — or until the dirty mid-wreckage
state — then publishes a corrective revision (forward) or the previous one (back) and requires
convergence: one Ready Instance on the corrective revision, no operation, no bad pod left. Ours is the
same loop in the simulated world (its kubelet parks an ``imagepull`` image the same way; the retry
ladder is the chart's three attempts), through the pure planner, with Go's per-step invariants as
driver checks. Go's harness-only pin in ``SinglePod_RollBack`` (``EvaluateUpdateTrigger`` declining
on a zero revision distance, a Go function of its own) is not asserted; its recovery is.

The mid-wreckage timing is ours in substance: Go judges a gang surge on its SOURCE row
(``Failed`` with the operation kept, beside a ``GangSurgeTarget`` marker); ours judges it on the
replacement row. The dirty state here is the same moment — the replacement gang's bad pods live and
its attempt not yet given up — reached before the first abandon.
"""

from __future__ import annotations

from collections.abc import Callable

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/corrective_recovery_test.go @ ae683e3f"
GOOD, BAD, FIXED = "vllm:v1", "vllm:broken", "vllm:v2"


def _image(sim: Sim, name: str) -> str:
    return str(sim.pods[name].obj["spec"]["containers"][0]["image"])


def _live(sim: Sim) -> list[str]:
    return list(sim.live_pods())


def _bad_pods(sim: Sim) -> list[str]:
    return [n for n in _live(sim) if _image(sim, n) == BAD]


def _serving_pods(sim: Sim) -> list[str]:
    return [n for n in _live(sim) if sim.gate_of(n) == "True"]


def _converged_on(rev: str) -> Callable[[Sim], bool]:
    """Go's ``converged(rev)``: one Instance, Ready on ``rev``, no operation, no bad pod anywhere."""

    def done(sim: Sim) -> bool:
        rows = sim.rows()
        if len(rows) != 1 or not converged(sim):
            return False
        row = rows[0]
        return (
            row["phase"] == "Ready"
            and row.get("runningRevision") == rev
            and not row.get("operation")
            and not _bad_pods(sim)
        )

    return done


def _target(sim: Sim, image: str) -> str:
    """Go's ``setTarget``: the spec edit that renders (and publishes) the revision of ``image``."""
    sim.image = image
    return sim.render().name  # type: ignore[union-attr]


def _ready_on_v1(workers: int = 0) -> tuple[Sim, Driver, str]:
    """Go's ``driveToReadyOnV1``."""
    sim = Sim(workers=workers)
    sim.behaviour[BAD] = "imagepull"
    sim.apply_replica(base_replica(replicas=1))
    v1 = _target(sim, GOOD)
    driver = Driver(sim)
    driver.run(_converged_on(v1))
    return sim, driver, v1


def _held(sim: Sim, driver: Driver) -> str:
    """Go's ``driveToHeld`` then ``settle(5)``: the bad revision's block reaches Held, with exactly one
    RetryHeld warning naming it."""
    bad = _target(sim, BAD)
    driver.run(
        lambda s: any(
            b["targetRevision"] == bad and b["state"] == "Held" for b in s.status.get("retryBlocks", [])
        ),
        limit=3600,
    )
    held = [e.message for e in sim.events if e.event_reason == "RetryHeld"]
    assert len(held) == 1, held
    assert bad in held[0]
    for _ in range(5):
        driver.one_pass()
        sim.advance(30.0)
    return bad


def _mid_wreckage(sim: Sim, driver: Driver) -> None:
    """The dirty timing: the bad replacement gang's pods live, its attempt not yet given up."""
    _target(sim, BAD)
    driver.run(lambda s: len(_bad_pods(s)) >= 2 and "GangSurgeAbandoned" not in s.event_reasons(), limit=600)


def test_gang_initial_create_retarget() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_Gang_InitialCreateRetarget: a
    gang's initial Create on the bad revision loses its worker, the spec is corrected, and the replica
    converges on the corrective revision without an Instance ever holding pods of two revisions."""
    sim = Sim(workers=1)
    sim.behaviour[BAD] = "imagepull"
    sim.apply_replica(base_replica(replicas=1))
    _target(sim, BAD)
    driver = Driver(sim)
    driver.run(lambda s: len(s.live_pods()) == 2, limit=120)
    initial = _live(sim)
    assert len(initial) == 2, initial
    worker = next(n for n in initial if "-worker-" in n)
    sim.pods.pop(worker)

    def one_revision_per_instance(s: Sim) -> None:
        by_index: dict[str, set[str]] = {}
        for n in s.live_pods():
            labels = s.pods[n].obj["metadata"]["labels"]
            by_index.setdefault(labels["ome.io/instance-index"], set()).add(labels["ome.io/revision-hash"])
        mixed = {i: revs for i, revs in by_index.items() if len(revs) > 1}
        if mixed:
            raise InvariantError(f"an Instance holds pods of several revisions: {mixed}")

    driver.extra_checks.append(one_revision_per_instance)
    fixed = _target(sim, FIXED)
    driver.run(_converged_on(fixed), limit=3600)


def test_single_pod_roll_forward() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_SinglePod_RollForward: from
    Held, a corrective new revision converges with no manual step, and some pod serves at every step."""
    sim, driver, _ = _ready_on_v1()
    driver.floor = lambda s: 1
    _held(sim, driver)
    fixed = _target(sim, FIXED)
    driver.run(_converged_on(fixed), limit=3600)


def test_gang_roll_forward() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_Gang_RollForward: from the
    settled Held state of a gang, a corrective revision converges."""
    sim, driver, _ = _ready_on_v1(workers=1)
    _held(sim, driver)
    fixed = _target(sim, FIXED)
    driver.run(_converged_on(fixed), limit=3600)


def test_gang_roll_forward_mid_wreckage() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_Gang_RollForward_MidWreckage:
    the corrective revision lands while the bad replacement gang is live; the stale surge is given up
    and the gang re-surges onto the corrective revision."""
    sim, driver, _ = _ready_on_v1(workers=1)
    _mid_wreckage(sim, driver)
    fixed = _target(sim, FIXED)
    driver.run(_converged_on(fixed), limit=3600)


def test_single_pod_roll_back() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_SinglePod_RollBack: from Held,
    the spec reverts to the running revision; the wreckage goes and the original v1 pod is the only
    pod that serves, at every step and after."""
    sim, driver, v1 = _ready_on_v1()
    _held(sim, driver)
    serving = _serving_pods(sim)
    assert len(serving) == 1, serving
    assert _image(sim, serving[0]) == GOOD
    original = serving[0]

    def only_the_original_serves(s: Sim) -> None:
        now = _serving_pods(s)
        if now != [original]:
            raise InvariantError(f"serving during the undo: {now}, want only {original}")

    driver.extra_checks.append(only_the_original_serves)
    assert _target(sim, GOOD) == v1
    driver.run(_converged_on(v1), limit=3600)
    assert _serving_pods(sim) == [original]


def test_gang_roll_back_mid_wreckage() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_Gang_RollBack_MidWreckage: the
    roll-back lands while the bad replacement gang is live, and the replica converges on v1."""
    sim, driver, v1 = _ready_on_v1(workers=1)
    _mid_wreckage(sim, driver)
    assert _target(sim, GOOD) == v1
    driver.run(_converged_on(v1), limit=3600)


def test_gang_roll_back_post_held() -> None:
    """Go: corrective_recovery_test.go @ ae683e3f, TestCorrectiveRecovery_Gang_RollBack_PostHeld: from
    the settled Held state the gang already runs v1 with no wreckage; reverting converges at once."""
    sim, driver, v1 = _ready_on_v1(workers=1)
    _held(sim, driver)
    assert _target(sim, GOOD) == v1
    driver.run(_converged_on(v1), limit=900)
