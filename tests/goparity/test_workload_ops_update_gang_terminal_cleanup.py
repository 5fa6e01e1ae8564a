"""OME's ``workload/ops/update_gang_terminal_cleanup_test.go``: the RetryBlock a failed gang surge's
abandon writes.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go`` @
ae683e3f (28,842 characters, the one stored version, read whole), over ``ops/update_gang.go``
``abandonFailedGangSurge``. ``TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause`` pins which
abandon waves climb the retry ladder, and ``TestGangSurge_CleanupMarkerRemainsTerminalWhenDesiredRevision-
Returns`` that a marker at cleanup ends the pair even when the roll target is its revision again (one
planner pass in the simulated world, last below). Ours records a wave with
``planner/retry.py`` ``RetryBook.failure`` (the gang abandon calls it with the surge's failure
reason), called here directly; between waves the next attempt's start flips the block
(``RetryBook.started``) once the gate admits it at ``nextRetryAt``. The file's other tests inject
status-write failures into Go's atomic batch writer, or feed it a stale cache: see
``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from omereconcile.actions import WriteStatus
from omereconcile.planner import plan
from omereconcile.planner import rows as R
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @ ae683e3f"
T0 = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
TARGET = "gang-abandon-cause-engine-badrev"
POLICY = RetryPolicy(
    max_attempts=3, initial_delay=timedelta(minutes=1), max_delay=timedelta(minutes=30), multiplier=2
)


def _held(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "RetryHeld"]


def test_workload_caused_waves_hold_at_max_attempts() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @
    ae683e3f, TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause "workload-caused waves hold
    at MaxAttempts": each abandoned wave with ImagePullBackOff evidence counts one attempt: Backoff
    with no warning below the limit, then Held with one RetryHeld Warning naming three attempts."""
    book = RetryBook({}, "test-ns/gang-abandon-cause", "engine", POLICY)
    for wave in range(1, POLICY.max_attempts + 1):
        out = Out(T0)
        book.failure(TARGET, "ImagePullBackOff", T0, out)
        block = book.blocks[TARGET]
        assert block.attempts_started == wave, GO
        if wave < POLICY.max_attempts:
            assert (block.state, _held(out)) == ("Backoff", []), GO
            assert block.next_retry_at is not None
            assert book.gate(TARGET, block.next_retry_at) == (None, None)
            book.started(TARGET)
            continue
        assert block.state == "Held", GO
        warnings = _held(out)
        assert len(warnings) == 1
        assert f"held after {POLICY.max_attempts} failed attempt(s)" in warnings[0]


def test_environment_caused_wave_without_a_policy_leaves_no_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @
    ae683e3f, TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause "environment-caused wave
    without a policy leaves no block": an elapsed deadline with no retry policy configured records no
    block and warns nothing."""
    book, out = RetryBook({}, "test-ns/gang-abandon-cause", "engine", None), Out(T0)
    book.failure(TARGET, "DeadlineExceeded", T0, out)
    assert book.blocks == {}, GO
    assert _held(out) == []


def test_cleanup_marker_remains_terminal_when_desired_revision_returns() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @
    ae683e3f, TestGangSurge_CleanupMarkerRemainsTerminalWhenDesiredRevisionReturns: a gang surge's
    source at ``Surge`` (``surgeIndex`` 1) and its marker at ``GangSurgeTargetCleanup``, no replacement
    pod standing, while the roll target is again the marker's revision. The cleanup is terminal: the
    marker's row is removed, not recreated as a fresh replacement; the source is reset ``Ready`` with no
    operation; no replacement PodGroup is ensured and no pod created.

    Ours: a one-Instance leader+worker gang in the simulated world, its image changed and one pass run
    (the pair journaled), then the replacement's pods and PodGroup removed and the marker's step set to
    ``GangSurgeTargetCleanup``; one pure planner pass (``planner/gang_ops.py`` ``_step_pair`` →
    ``_abandon``)."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    driver.one_pass()
    rows = sim.status["instanceStatuses"]
    assert [(r["index"], (r.get("operation") or {}).get("step")) for r in rows] == [
        (0, R.STEP_SURGE),
        (1, R.STEP_GANG_SURGE_TARGET),
    ]
    revision = rows[0]["operation"]["targetRevision"]
    rows[1]["operation"]["step"] = R.STEP_GANG_SURGE_TARGET_CLEANUP
    for name in [n for n in sim.pods if n.startswith("llama-pool-engine-1-")]:
        del sim.pods[name]
    sim.pod_groups.pop("llama-pool-engine-1", None)
    world = sim.observe()
    assert isinstance(world.render, DesiredRevision)
    assert world.render.name == revision  # the desired revision is the marker's
    out = plan(world)
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    assert written, GO
    after = {r["index"]: r for r in written[-1].status["instanceStatuses"]}
    assert 1 not in after, GO  # the terminal marker is removed, not recreated
    assert (after[0]["phase"], after[0].get("operation")) == ("Ready", None), GO
    kinds = [type(a).__name__ for a in out.actions]
    assert "CreatePod" not in kinds, GO
    assert "CreatePodGroup" not in kinds, GO
