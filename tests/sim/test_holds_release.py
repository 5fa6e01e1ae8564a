"""``ome.io/release-held-revision``: OME ``consumeReleaseHeldRequest``."""

from __future__ import annotations

from datetime import timedelta

from sim_rolling import rolling_into

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, applied, converged
from omerender import constants as c

KEY = c.ANNOTATION_RELEASE_HELD_REVISION
HEAD = "InferenceReplica llama-demo/llama-pool component=engine"


def _held() -> tuple[Sim, Driver, str]:
    """v2's image pull fails; with no updateRetry the first failure holds v2 (fail-safe)."""
    sim, driver = rolling_into("imagepull", OperatorSettings(stuck_pod_grace_period=timedelta(seconds=60)))
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.status.get("rolloutHold", {}).get("gate") == "Held", limit=1200)
    return sim, driver, v2


def _events(sim: Sim, reason: str) -> list[tuple[str, str]]:
    return [(e.type, e.message) for e in sim.events if e.event_reason == reason]


def _surges(driver: Driver) -> int:
    return len([a for _, a in applied(driver, "CreatePod") if a.name.endswith("-1")])  # type: ignore[attr-defined]


def test_release_by_bare_hash_removes_the_held_block_and_the_revision_is_tried_again() -> None:
    sim, driver, v2 = _held()
    tried = _surges(driver)
    for _ in range(10):  # held: nothing is tried
        driver.one_pass()
        sim.advance(30)
    assert _surges(driver) == tried
    sim.behaviour["vllm:v2"] = "ok"  # the missing image has since been pushed
    sim.annotate(KEY, v2.rsplit("-", 1)[-1])
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2, limit=600)
    assert KEY not in (sim.replica or {}).get("metadata", {}).get("annotations", {})
    assert _events(sim, "RetryBlockReleased") == [
        (
            "Normal",
            f"{HEAD}: Held retryBlock for revision {v2} removed at operator request ({KEY} annotation)",
        )
    ]
    assert _surges(driver) == tried + 1


def test_release_of_an_unknown_revision_is_answered_as_a_no_op() -> None:
    sim, driver, v2 = _held()
    sim.annotate(KEY, "pool-engine-00000000")
    driver.run(lambda s: KEY not in (s.replica or {}).get("metadata", {}).get("annotations", {}), limit=30)
    assert _events(sim, "RetryBlockReleaseSkipped") == [
        (
            "Normal",
            f'{HEAD}: release requested for revision "pool-engine-00000000" but no retryBlock exists for it; '
            "nothing to release",
        )
    ]
    (block,) = sim.status["retryBlocks"]
    assert (block["targetRevision"], block["state"]) == (v2, "Held")


def test_release_of_a_block_that_is_not_held_changes_nothing() -> None:
    """A crash loop under the chart policy leaves a Backoff block: it is not releasable."""
    sim, driver = rolling_into("crash")
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: (s.status.get("retryBlocks") or [{}])[0].get("state") == "Backoff", limit=600)
    sim.annotate(KEY, v2)
    driver.run(lambda s: KEY not in (s.replica or {}).get("metadata", {}).get("annotations", {}), limit=30)
    (skipped,) = _events(sim, "RetryBlockReleaseSkipped")
    assert skipped[1].startswith(f"{HEAD}: retryBlock for revision {v2} is ")
    assert skipped[1].endswith(", not Held; nothing to release")
    assert _events(sim, "RetryBlockReleased") == []
