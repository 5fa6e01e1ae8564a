"""The in-place strategies, ``InPlaceIfPossible`` and ``InPlaceOnly`` (01 §5.1).

Followed: ome-projects/ome ``pkg/controller/v1beta1/workload/ops`` at ae683e3f: ``update.go``
(``UpdateWithPods``, ``chooseUpdateModeForInstance``, ``chooseUpdateMode``, ``inPlaceEligible``,
``podSpecWithoutImages``), ``update_inplace.go`` (``inPlaceUpdate``), the in-place transition helpers
(``imagePatchTargets``, ``ensureInPlaceImageTransition``, ``inPlaceImageTransitionFromPod``,
``inPlaceImageTransitionMatchesTarget``, ``inPlaceImageTransitionRuntimeMatches``), the status
writer ``patchInstanceStatusUpdating`` and ``workload/evidence`` (``CanonicalImage``,
``PodRuntimeImageChangesMatch``, ``PodImagesMatch``, ``AnnotationsDiff``). Where the newest stored
version decides a case the ae683e3f one leaves open, the newest is followed and named.

The mode is chosen when the update starts, against the revision the Instance runs (its stored
payload, never the live pod, which carries API defaults and render overlays):

- a single-pod Instance whose running and target pod specs differ only in regular-container images
  is patched in place; init-container images and everything else count as a change;
- otherwise ``InPlaceIfPossible`` recreates (``RecreatePod``'s steps), and ``InPlaceOnly`` refuses:
  the Instance stays on its revision, nothing is started, Warning ``InPlaceUpdateNotPossible``
  (``OMENative <key> rejected update: InPlaceOnly strategy but diff exceeds container images``);
- a multi-pod Instance always recreates (Go compares the leader's spec only, so a worker-only image
  change would split the gang), ``InPlaceOnly`` included.

The in-place operation is ``Update`` at step ``InPlace`` (phase ``Updating``, incarnation unchanged,
Normal ``InPlaceUpdateStarted``). Each pass takes the next of: take the pod out of rotation
(``Update-in-place`` hold, key ``<index>-<incarnation>``) and wait for the EndpointSlices (skipped
with ``markNotReadyDuringLifecycle: false``) and for ``gracePeriodSeconds`` since the gate went False
(the API comment's wait; neither stored ``inPlaceUpdate`` has it); record the
``internal.ome.io/in-place-image-transition`` marker (the images the patch moves to and each
container's restart count then); patch the images, the target revision's annotations
(``AnnotationsDiff``) and the revision-hash label in one write; wait until the pod is ContainersReady
and each changed container is confirmed: the runtime reports its new image, or the kubelet has
restarted it since the patch (any reference then: a mirror's name counts); return the pod to
rotation; once it is PodReady (and past ``minReadySeconds``) promote the row (``Ready`` on the
target, Normal ``InPlaceUpdateCompleted``) and clear the marker in the same pass, after the status
write (the newest Go's order).
The pod keeps its name, UID, node and volumes. A pod that ends under the patch is recycled (the newest
``inPlaceUpdate``'s ``recycleTerminalTargets``), a Terminating one waited out; once none is left the roll
re-resolves to a recreate within the same attempt (``StampRecreateFromInPlace``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from omereconcile.actions import PatchPodInPlace
from omereconcile.planner import rows as R
from omereconcile.planner.context import (
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    IN_PLACE_STRATEGIES,
    RECREATE,
    SURGE,
    Ctx,
    hash_of,
)
from omereconcile.planner.gate import IN_PLACE
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import drained, fully_serving, ladder, readiness_dark_at
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import by_name, check_failure, complete, new_operation, recycle_terminal
from omereconcile.world import ContainerView, DesiredRevision, PodView
from omerender import constants as c

__all__ = [
    "IN_PLACE_REFUSED",
    "MODE_IN_PLACE",
    "MODE_RECREATE",
    "MODE_SURGE",
    "STEP_IN_PLACE",
    "annotations_diff",
    "cannot_restore_message",
    "canonical_image",
    "choose_mode",
    "in_place_cannot_restore",
    "in_place_eligible",
    "refusal_message",
    "revision_payload",
    "start_in_place",
    "step_in_place",
]

STEP_IN_PLACE = "InPlace"  # ops updateStepInPlace
MODE_SURGE = "surge"
MODE_RECREATE = "recreate"
MODE_IN_PLACE = "in-place"
IN_PLACE_REFUSED = "InPlaceUpdateNotPossible"
_MARKER = c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION


# -- revision payloads -----------------------------------------------------------------------------


def revision_payload(ctx: Ctx, name: str) -> Mapping[str, Any] | None:
    """The stored payload of revision ``name`` (the spec's render for the spec revision); None when
    it cannot be read (Go ``loadRunningRevisionPayload``: a missing CR is no baseline)."""
    if not name:
        return None
    render = ctx.world.render
    raw: bytes | None = None
    if isinstance(render, DesiredRevision) and render.name == name:
        raw = render.payload
    else:
        raw = next((r.data for r in ctx.world.revisions if r.name == name), None)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _pod_spec(payload: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    spec = payload.get("podSpec") if payload is not None else None
    return spec if isinstance(spec, dict) else None


def _pod_meta_annotations(payload: Mapping[str, Any] | None) -> Mapping[str, str]:
    meta = payload.get("podMeta") if payload is not None else None
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {}


def _containers(spec: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    raw = spec.get("containers") if spec is not None else None
    return [ct for ct in raw if isinstance(ct, dict)] if isinstance(raw, list) else []


def _images(spec: Mapping[str, Any] | None) -> dict[str, str]:
    return {str(ct.get("name", "")): str(ct.get("image", "") or "") for ct in _containers(spec)}


def _without_images(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Go ``podSpecWithoutImages``: regular-container images blanked (``omitempty`` drops them);
    init-container images stay, so an init-image change is not an in-place change."""
    out = dict(spec)
    out["containers"] = [{k: v for k, v in ct.items() if k != "image"} for ct in _containers(spec)]
    return out


def in_place_eligible(running: Mapping[str, Any] | None, target: Mapping[str, Any] | None) -> bool:
    """Go ``inPlaceEligible``: the two pod specs differ in regular-container images only. Either side
    unknown is not eligible (no proof the change is image-only)."""
    if running is None or target is None:
        return False
    return _without_images(running) == _without_images(target)


# -- the mode --------------------------------------------------------------------------------------


def refusal_message(ctx: Ctx, index: int) -> str:
    """``UpdateWithPods``'s Warning when ``chooseUpdateMode`` refuses (``InPlaceOnly``)."""
    return (
        f"OMENative {ctx.instance_key(index)} rejected update: "
        "InPlaceOnly strategy but diff exceeds container images"
    )


def choose_mode(ctx: Ctx, row: Row, target: str) -> str | None:
    """Go ``chooseUpdateModeForInstance``: the mode of this Instance's update to ``target``, or None
    when ``InPlaceOnly`` refuses it. Eligibility compares the recorded running revision's pod spec
    with the target's (``loadRunningRevisionPodSpec``), never the live pod."""
    if ctx.strategy == SURGE:
        return MODE_SURGE
    if ctx.strategy not in IN_PLACE_STRATEGIES:
        return MODE_RECREATE
    if ctx.gang:
        # Multi-pod: the in-place modes recreate, InPlaceOnly's refusal included.
        return MODE_RECREATE
    eligible = in_place_eligible(
        _pod_spec(revision_payload(ctx, row.running_revision)), _pod_spec(revision_payload(ctx, target))
    )
    if eligible:
        return MODE_IN_PLACE
    return None if ctx.strategy == IN_PLACE_ONLY else MODE_RECREATE


def in_place_cannot_restore(ctx: Ctx, row: Row, target: str, pods: Sequence[PodView]) -> bool:
    """Go ``ops.InPlaceCannotRestore`` as the newest ``planUpdateSelection`` calls it for a fresh
    ``InPlaceIfPossible`` start ("A step that replaces no container cannot restore a pod set dark on
    readiness, so such an in-place start runs as a recreate"; its body is not in the index, the rule
    is read from that comment and ``TestReconcile_MetadataPushOverADarkInstance_InPlaceStepRecreatesIt``):
    the running and target revisions name the same container images, so the patch restarts nothing,
    and the live pod set serves nothing, every pod dark on readiness past the stuck-pod grace
    (``podstate.readiness_dark_at``)."""
    if ctx.strategy != IN_PLACE_IF_POSSIBLE:
        return False
    running = _pod_spec(revision_payload(ctx, row.running_revision))
    desired = _pod_spec(revision_payload(ctx, target))
    if running is None or desired is None or _images(running) != _images(desired):
        return False
    live = [p for p in pods if not p.terminating]
    if not live or any(fully_serving([p], 1) for p in live):
        return False
    dark_at = readiness_dark_at(live, ctx.world.settings.stuck_pod_grace_period)
    return dark_at is not None and dark_at <= ctx.now


def cannot_restore_message(ctx: Ctx, index: int, target: str) -> str:
    """The Warning a start announces when ``in_place_cannot_restore`` turns it into a recreate (Go's
    test asserts the reason ``InPlaceUpdateNotPossible``; its words are not in the index)."""
    return (
        f"OMENative {ctx.instance_key(index)} in-place update to revision {target} cannot restore a "
        "pod set dark on readiness; recreating instead"
    )


def start_in_place(ctx: Ctx, row: Row, target: str, out: Out) -> Row:
    """``patchInstanceStatusUpdating``: phase ``Updating``, operation ``Update``/``InPlace`` at the
    target (id ``update-<index>-<unix>``, a full deadline), incarnation unchanged; Normal
    ``InPlaceUpdateStarted`` on the first pass. The strategy is recorded as the newest Go's
    ``status.StampUpdatingInPlace`` does."""
    op = new_operation(ctx, row.index, R.OP_UPDATE, STEP_IN_PLACE, target, ctx.strategy)
    out.event(
        "Normal",
        "InPlaceUpdateStarted",
        f"OMENative {ctx.instance_key(row.index)} in-place update to revision {target}",
    )
    return replace(row, phase=R.UPDATING, operation=op, target_revision=target)


def _to_recreate(ctx: Ctx, row: Row, target: str, *, same_attempt: bool = False) -> Row:
    """The in-place roll re-resolved to a recreate (incarnation +1, ``Drain`` then ``CreatePods``), as
    ``recreateUpdate``'s stamp opens it. ``same_attempt``: the pod the patch was aimed at is gone, and
    the re-resolution continues the attempt rather than opening one: Go ``status``
    ``StampRecreateFromInPlace`` (ome-projects/ome, the newest stored ``workload/status``) edits the
    operation, not replaces it: the step moves to Drain, the target and the strategy pin to the
    recreate, ``lastProgressAt`` to now, and everything else (id, start, deadline, retry count,
    reason) is kept (``update_inplace_test.go`` @ 58a57f25
    ``TestUpdateWithPods_InPlaceRollLosingItsOnlyPodReResolvesToRecreate``)."""
    current = row.operation
    incarnation = row.incarnation + 1
    if same_attempt and current is not None:
        op = replace(
            current, step=R.STEP_DRAIN, target_revision=target, strategy=RECREATE, last_progress_at=ctx.now
        )
        incarnation = max(row.incarnation, 1) + 1  # Go: an unset incarnation counts as 1
    else:
        cause = f"revision {row.running_revision} -> {target}"
        op = replace(new_operation(ctx, row.index, R.OP_UPDATE, R.STEP_DRAIN, target, RECREATE), reason=cause)
    return replace(row, phase=R.UPDATING, operation=op, target_revision=target, incarnation=incarnation)


# -- evidence --------------------------------------------------------------------------------------


def canonical_image(image: str) -> str:
    """Go ``evidence.CanonicalImage``: a runtime may report ``docker.io/[library/]x`` for ``x``."""
    if not image.startswith("docker.io/"):
        return image
    return image.removeprefix("docker.io/").removeprefix("library/")


def _patch_targets(pod: PodView, target: Mapping[str, str]) -> dict[str, str]:
    """Go ``imagePatchTargets``: the pod's containers whose image differs from the target's."""
    current = dict(pod.images)
    return {n: img for n, img in target.items() if n in current and current[n] != img}


@dataclass(frozen=True, slots=True)
class _Transition:
    """Go ``inPlaceImageTransition``: the write-ahead record of an image patch: the image each
    container moves to, and the restart count each had when its patch was issued (how the roll tells a
    container the kubelet has since replaced from one it has not)."""

    images: Mapping[str, str]
    counts: Mapping[str, int]

    def replaced_since_patch(self, pod: PodView, name: str) -> bool:
        """Go ``replacedSincePatch``: the kubelet restarted the container since its patch (its count
        rose past the recorded one); unknown without a recorded count."""
        recorded = self.counts.get(name)
        return recorded is not None and _restart_count(pod, name) > recorded


_INT32 = range(-(2**31), 2**31)


def _transition(pod: PodView) -> tuple[_Transition | None, bool]:
    """Go ``inPlaceImageTransitionFromPod``: (the transition, present); None when absent or invalid
    (what ``json.Unmarshal`` refuses into the struct, or no images, or an empty name or image)."""
    raw = pod.annotations.get(_MARKER)
    if raw is None:
        return None, False
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None, True
    if not isinstance(data, dict):
        return None, True
    images = data.get("targetImages")
    counts = data.get("restartCounts")
    if not isinstance(images, dict) or not images:
        return None, True
    if any(not n or not isinstance(i, str) or not i for n, i in images.items()):
        return None, True
    if counts is None:
        counts = {}
    if not isinstance(counts, dict) or any(
        isinstance(v, bool) or not isinstance(v, int) or v not in _INT32 for v in counts.values()
    ):
        return None, True
    return _Transition(dict(images), {str(n): int(v) for n, v in counts.items()}), True


def _marker_value(transition: _Transition) -> str:
    """The marker as Go's ``json.Marshal`` writes it: map keys sorted, ``restartCounts`` omitted when
    empty (``omitempty``)."""
    body: dict[str, Any] = {"targetImages": dict(sorted(transition.images.items()))}
    if transition.counts:
        body["restartCounts"] = dict(sorted(transition.counts.items()))
    return json.dumps(body, separators=(",", ":"))


def _status(pod: PodView, name: str) -> ContainerView | None:
    return next((cv for cv in pod.containers if cv.name == name), None)


def _restart_count(pod: PodView, name: str) -> int:
    """Go ``containerRestartCount``: the kubelet's count for the container, 0 before it reports one."""
    cv = _status(pod, name)
    return cv.restart_count if cv is not None else 0


def _desired_marker(
    pod: PodView, target: Mapping[str, str], patches: Mapping[str, str]
) -> _Transition | None:
    """Go ``ensureInPlaceImageTransition`` (ome-projects/ome @ 58a57f25 and the newest stored
    ``update_inplace.go``): the marker the pod must carry before any image patch, or None when it
    already carries it (or needs none). Names already pending keep their place with the target's image
    and their recorded count; an invalid marker is replaced by every target image, with no count. Each
    name to patch records the container's live restart count unless the same target already carries
    one; a recorded count is refreshed only for a Ready container whose count moved (its readiness
    could promote the row), so a crash loop between passes never defers the patch."""
    current, present = _transition(pod)
    if not present and not patches:
        return None
    images: dict[str, str] = {}
    counts: dict[str, int] = {}
    valid = current is not None
    if current is not None:
        for name in current.images:
            if name not in target:
                valid = False
                break
            images[name] = target[name]
            if name in current.counts:
                counts[name] = current.counts[name]
    if present and not valid:
        images, counts = dict(target), {}
    for name, image in patches.items():
        live = _restart_count(pod, name)
        recorded = counts.get(name)
        same_target = recorded is not None and images.get(name) == image
        cv = _status(pod, name)
        if not same_target or (recorded != live and cv is not None and cv.ready):
            counts[name] = live
        images[name] = image
    if present and valid and current is not None and (current.images, current.counts) == (images, counts):
        return None
    return _Transition(images, counts)


def _runtime_images(pod: PodView) -> dict[str, str]:
    return {ct.name: canonical_image(ct.image) for ct in pod.containers}


def _changed_images(running: Mapping[str, str] | None, target: Mapping[str, str]) -> dict[str, str]:
    """Go ``evidence.ChangedContainerImages``: the target images that differ from the running
    revision's; every target container when the running spec is unknown."""
    return {n: i for n, i in target.items() if running is None or running.get(n) != i}


def _runtime_changes_match(
    pod: PodView, running: Mapping[str, str] | None, target: Mapping[str, str]
) -> bool:
    """Go ``PodRuntimeImageChangesMatch``: the runtime reports the target image for every container
    whose image the roll changes (every target container when the running spec is unknown)."""
    return all(_image_confirmed(pod, n, i, None) for n, i in _changed_images(running, target).items())


def _image_confirmed(pod: PodView, name: str, image: str, transition: _Transition | None) -> bool:
    """Go ``containerImageConfirmed``: the kubelet reports ``image`` for the container (canonical
    form, ``evidence.ContainerRuntimeImageIs``), or has replaced it since the patch the transition
    records: a node reports an image under whichever reference put it there, so once the kubelet has
    acted on the patch the name alone is not required."""
    if _runtime_images(pod).get(name) == canonical_image(image):
        return True
    return transition is not None and transition.replaced_since_patch(pod, name)


def _roll_confirmed(
    pod: PodView, running: Mapping[str, str] | None, target: Mapping[str, str], transition: _Transition | None
) -> bool:
    """Go ``inPlaceImageRollConfirmed``: every container whose image the roll changes
    (``evidence.ChangedContainerImages``: every target container when the running spec is unknown)
    and every container the transition is still rolling is confirmed at runtime."""
    if not all(_image_confirmed(pod, n, i, transition) for n, i in _changed_images(running, target).items()):
        return False
    return transition is None or all(
        _image_confirmed(pod, n, i, transition) for n, i in transition.images.items()
    )


def annotations_diff(
    pod: Mapping[str, str], previous: Mapping[str, str], target: Mapping[str, str]
) -> dict[str, str | None]:
    """Go ``evidence.AnnotationsDiff``: set the target's keys the pod lacks or differs on; remove the
    keys the previous revision authored that the target dropped (only when on the pod); leave every
    other key alone. The transition marker is never part of it."""
    out: dict[str, str | None] = {}
    for k, want in target.items():
        if k != _MARKER and pod.get(k) != want:
            out[k] = want
    for k in previous:
        if k != _MARKER and k not in target and k in pod:
            out[k] = None
    return out


# -- the step --------------------------------------------------------------------------------------


def _patch(pod: PodView, why: str, **parts: Mapping[str, Any]) -> PatchPodInPlace:
    return PatchPodInPlace(pod.name, pod.uid, pod.resource_version, why, index=pod.index, **parts)


def step_in_place(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    """One pass of Go ``inPlaceUpdate`` for a single-pod Instance (see the module docstring)."""
    op = row.operation
    assert op is not None
    if op.target_revision != row_target:
        # The roll target moved mid-update: Go's next pass re-runs the mode choice against the
        # running revision and restamps the operation at the new target (no Started event).
        mode = choose_mode(ctx, row, row_target)
        if mode is None:
            out.event("Warning", IN_PLACE_REFUSED, refusal_message(ctx, row.index))
            return row
        if mode != MODE_IN_PLACE:
            return _to_recreate(ctx, row, row_target)
        row = replace(
            row,
            operation=new_operation(ctx, row.index, R.OP_UPDATE, STEP_IN_PLACE, row_target, op.strategy),
            target_revision=row_target,
        )
        op = row.operation
        assert op is not None
    target = op.target_revision
    name = ctx.pod_name(row.index, row.active_ordinal)
    pod = by_name(pods, name)
    if pod is not None and pod.terminating:
        # A pod on its way out decides nothing: the roll waits for it to be gone (then re-resolves,
        # below), bounded by its deadline. ome-projects/ome @ 58a57f25 ``update_inplace_test.go``
        # ``TestUpdateInPlace_PodObservationsThatDecideNothing`` "the pod wedged Terminating from
        # outside": step InPlace, incarnation 1. (Go's patches would still land on the dying pod;
        # ours writes nothing to it.)
        return _evidence(ctx, row, pod, name, out, retry)
    if pod is not None and pod.ended:
        # Newest stored ``inPlaceUpdate`` (30,306 characters, after 58a57f25's 29,692):
        # ``recycleTerminalTargets`` frees a pod in a terminal phase (it can never report the new
        # image) rather than patch and poll it to the deadline: the recycle is recorded (retry
        # count, lastFailure), the pod deleted, the step stays InPlace at the same incarnation; the
        # empty set then re-resolves the roll to a recreate on a later pass, below.
        recycled = recycle_terminal(ctx, row, pod, out)
        return recycled if recycled is not row else _evidence(ctx, row, pod, name, out, retry)
    if pod is None:
        # Newest ``inPlaceUpdate``: an in-place step patches a pod it does not create, so with no live
        # pod the roll is re-resolved to a recreate, which renders one (``StampRecreateFromInPlace``).
        out.event(
            "Warning",
            IN_PLACE_REFUSED,
            f"OMENative {ctx.instance_key(row.index)} lost the pod its in-place update to revision "
            f"{target} was patching; recreating instead",
        )
        return _to_recreate(ctx, row, target, same_attempt=True)
    target_payload = revision_payload(ctx, target)
    target_images = _images(_pod_spec(target_payload))
    running_payload = revision_payload(ctx, row.running_revision)
    running_spec = _pod_spec(running_payload)
    running_images = _images(running_spec) if running_spec is not None else None
    on_target = pod.revision_hash == hash_of(target)
    patches = _patch_targets(pod, target_images)

    if ctx.mark_not_ready and not on_target:
        if pod.gate != "False":
            out.gate(
                pod,
                False,
                "in-place update: leave rotation before the images are patched",
                IN_PLACE,
                row.index,
            )
            return _evidence(ctx, row, pod, name, out, retry)
        if not drained(pod, ctx.world.service, ctx.world.endpoints):
            return _evidence(ctx, row, pod, name, out, retry)
        out_since = _gate_false_since(pod)
        if (
            ctx.in_place_grace > timedelta(0)
            and out_since is not None
            and ctx.now < out_since + ctx.in_place_grace
        ):
            # inPlaceUpdateStrategy.gracePeriodSeconds: the wait between marking the pod not-ready and
            # the in-place mutation (the API's definition), on top of the EndpointSlice proof.
            out.wake(out_since + ctx.in_place_grace)
            return _evidence(ctx, row, pod, name, out, retry)
    elif ctx.mark_not_ready and patches and pod.gate == "True":
        out.gate(
            pod,
            False,
            "in-place update: re-mark the pod out of rotation before its patch",
            IN_PLACE,
            row.index,
        )
        return row

    marker = _desired_marker(pod, target_images, patches)
    if marker is not None:
        # The write-ahead record of the images the patch moves to; its own write, the patch waits
        # for the next pass (``ensureInPlaceImageTransition`` returns not-ready after writing).
        out.actions.append(
            _patch(
                pod,
                f"in-place update to {target}: record the image transition",
                annotations={_MARKER: _marker_value(marker)},
            )
        )
        return row
    diff = annotations_diff(
        pod.annotations, _pod_meta_annotations(running_payload), _pod_meta_annotations(target_payload)
    )
    labels: dict[str, str] = {}
    if not on_target:
        labels[c.LABEL_REVISION_HASH] = hash_of(target)
    protocol = target_payload.get("pairingProtocol") if target_payload is not None else None
    if isinstance(protocol, str) and protocol and pod.labels.get(c.LABEL_PAIRING_PROTOCOL) != protocol:
        labels[c.LABEL_PAIRING_PROTOCOL] = protocol
    if patches or diff or labels:
        out.actions.append(
            _patch(
                pod,
                f"in-place update to {target}: patch images {sorted(patches)}"
                if patches
                else f"in-place update to {target}: metadata",
                images=patches,
                annotations=diff,
                labels=labels,
            )
        )
        return row

    # Convergence: ContainersReady on the target images as the runtime reports them (ContainersReady
    # may still be the old container's in a stale read).
    transition, present = _transition(pod)
    if (
        not pod.containers_ready
        or any(dict(pod.images).get(n) != i for n, i in target_images.items())
        or (
            present
            and (transition is None or any(target_images.get(n) != i for n, i in transition.images.items()))
        )
        or not _roll_confirmed(pod, running_images, target_images, transition)
    ):
        return _evidence(ctx, row, pod, name, out, retry)
    out.gate(pod, True, "in-place update: the new containers are ready: back into rotation")
    lad = ladder(pod, ctx.world.endpoints, ctx.min_ready, ctx.now)
    out.wake(lad.available_at)
    # The promote bar of the newest ``inPlaceUpdate`` (``query.PodSetPromotable``): PodReady, held for
    # ``minReadySeconds``; the gate written this pass lands before the status that would claim it.
    if not (pod.gate == "True" and pod.ready and lad.available):
        return _evidence(ctx, row, pod, name, out, retry)
    out.event(
        "Normal",
        "InPlaceUpdateCompleted",
        f"OMENative {ctx.instance_key(row.index)} in-place update to revision {target} complete",
    )
    if present:
        # Newest Go: the marker outlives the stamp and is cleared after it (a marker a failed clear
        # leaves is re-recorded by the next roll's patch).
        out.actions.append(
            _patch(
                pod,
                f"in-place update to {target} complete: clear the image transition",
                annotations={_MARKER: None},
            )
        )
    return complete(ctx, row, target, row.active_ordinal)


def _gate_false_since(pod: PodView) -> datetime | None:
    cond = pod.condition(c.SERVING_GATE)
    return cond.last_transition_time if cond is not None and cond.status == "False" else None


def _evidence(ctx: Ctx, row: Row, pod: PodView, name: str, out: Out, retry: RetryBook) -> Row:
    """The step's failure evidence (a stuck container, the deadline), as every update step reads it.
    An admission wait (``planner/admission_hold.py``) is over once the patch landed: the pod carries
    the target's revision label (``releaseAdmissionWait`` after every patch went through)."""
    op = row.operation
    assert op is not None
    landed = pod.revision_hash == hash_of(op.target_revision)
    row, failed = check_failure(ctx, row, pod, name, out, retry, created=landed)
    return failed if failed is not None else row
