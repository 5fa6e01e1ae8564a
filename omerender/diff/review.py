"""The pull-request review: the replicas' diffs grouped by cause, each group with its change shown once,
the catalog objects it reads that changed, why a runtime switch or a block happened, and its cost.

:func:`build_review` makes a typed :class:`Review` (what a tool reads); :func:`to_markdown` in
:mod:`.comment` writes the comment from it. Grouping (docs/decisions.md, "The review: grouped by cause"):

- a rolling replica's key is its template change lines with its own names (replica, namespace, model)
  and revision names set aside as placeholders, so 176 replicas whose runtimes got the same router
  image are one group;
- a runtime switch's key is ``from -> to`` (the field changes follow from the switch), with why the
  selection moved in the selector's words (:func:`switch_reason`);
- a block's key is its reason and message (placeholders again) and the runtime that served before;
- new, unblocked, removed replicas group by the runtime they render from (or their block reason).

Groups that fail the check come first, then by size. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from omerender._records import record
from omerender.catalog import Catalog, CatalogKey
from omerender.diff.catalog_changes import CatalogChange, catalog_changes, changed_keys, key_text, whole_name
from omerender.diff.outcome import Outcome
from omerender.diff.replicas import ReplicaDiff
from omerender.diff.reports import counts, uid_note
from omerender.diff.runs import entry_base
from omerender.diff.templates import Change
from omerender.diff.verdicts import DEFAULT_FAIL_ON, ReplicaKey, Status
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import InferenceReplica, ModelResource

__all__ = [
    "Cost",
    "Group",
    "Review",
    "block_explanation",
    "build_review",
    "switch_reason",
]

_RUNTIME_KINDS = frozenset({"ClusterServingRuntime", "ServingRuntime"})
_MODEL_KINDS = frozenset({"ClusterBaseModel", "BaseModel"})
# The causes a group names one by one before it counts the rest.
_SHOWN = 3


@record
class Cost:
    """Pods and accelerators (GPUs, as OME counts them: :mod:`omerender.accelerators`) running before
    and after the change, every Instance counted; ``new_gpus``: those of new and unblocked replicas.

    A blocked replica keeps its running pods (OME leaves them), so it costs nothing lasting."""

    pods_before: int = 0
    pods_after: int = 0
    gpus_before: int = 0
    gpus_after: int = 0
    new_gpus: int = 0

    @property
    def pods(self) -> int:
        """The lasting change in pods: after minus before."""
        return self.pods_after - self.pods_before

    @property
    def gpus(self) -> int:
        """The lasting change in GPUs: after minus before."""
        return self.gpus_after - self.gpus_before

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.pods_before + other.pods_before,
            self.pods_after + other.pods_after,
            self.gpus_before + other.gpus_before,
            self.gpus_after + other.gpus_after,
            self.new_gpus + other.new_gpus,
        )

    def text(self) -> str:
        """``+2 pods, +16 GPUs (new and unblocked replicas: 8 GPUs)``; the part in brackets only when some
        GPUs are new replicas', and said without its figure when they are the whole change."""
        out = f"{self.pods:+d} pod{'s' if abs(self.pods) != 1 else ''}, {self.gpus:+d} GPU{'s' if abs(self.gpus) != 1 else ''}"
        if not self.new_gpus:
            return out
        if self.new_gpus == self.gpus:
            return f"{out} (new and unblocked replicas)"
        return f"{out} (new and unblocked replicas: {self.new_gpus} GPU{'s' if self.new_gpus != 1 else ''})"


def _running(side: Outcome | None) -> tuple[int, int]:
    if side is None or not side.rendered:
        return 0, 0
    return side.instances * side.pods, side.instances * side.gpus


def replica_cost(d: ReplicaDiff) -> Cost:
    """One replica's :class:`Cost` (a block or an unknown runtime keeps what ran before)."""
    pods_before, gpus_before = _running(d.before)
    kept = d.after is not None and not d.after.rendered and d.status in (Status.BLOCKS, Status.UNKNOWN)
    pods_after, gpus_after = (pods_before, gpus_before) if kept else _running(d.after)
    new = gpus_after if d.status in (Status.NEW, Status.UNBLOCKS) else 0
    return Cost(pods_before, pods_after, gpus_before, gpus_after, new)


@record
class Group:
    """Replicas that change for one cause.

    ``label``: a short name (``rolls: containers[router].image``); ``replicas``: (namespace, name)
    pairs; ``changes``: the change lines once, each replica's own names as ``<replica>``,
    ``<namespace>``, ``<model>``, ``<revision>``; ``causes``: the changed catalog objects its replicas
    read, in words (``ClusterServingRuntime vllm-base via vllm-base <- vllm-llama-small``); ``why``:
    a runtime switch's or a block's explanation; ``fails``: whether its verdict fails the check."""

    status: Status
    label: str
    replicas: tuple[ReplicaKey, ...]
    changes: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()
    why: tuple[str, ...] = ()
    cost: Cost = field(default_factory=Cost)
    fails: bool = False
    runtime_switch: tuple[str, str] | None = None
    # The objects behind ``causes``, by key (for a tool: which runtimes, models, weights).
    cause_keys: tuple[CatalogKey, ...] = ()


@record
class Review:
    """What the review comment shows, typed: the verdict counts, the catalog's changes, the groups,
    the total cost, defects (a replica rolling though nothing it reads changed) and the notes."""

    groups: tuple[Group, ...]
    catalog_changes: tuple[CatalogChange, ...]
    counts: Mapping[Status, int]
    cost: Cost
    fail_on: frozenset[Status]
    defects: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # Replicas counted but not grouped (their verdict did not change).
    unlisted: int = 0
    # :func:`omerender.diff.uid_note`: for outputs that print revision names (the comment does not).
    uid_note: str | None = None

    @property
    def fails(self) -> bool:
        """Whether some replica's verdict fails the check (``fail_on``)."""
        return any(g.fails for g in self.groups)

    @property
    def total(self) -> int:
        """How many replicas the review counts, every verdict included."""
        return sum(self.counts.values())


# -- placeholders ---------------------------------------------------------------------------------


def _model_name(replica: InferenceReplica | None) -> str | None:
    ref = replica.spec.model_ref if replica is not None else None
    return ref.name if ref is not None else None


def _placeholders(d: ReplicaDiff, replica: InferenceReplica | None) -> list[tuple[str, str]]:
    pairs = [(d.name, "<replica>"), (d.namespace, "<namespace>")]
    model = _model_name(replica)
    if model:
        pairs.append((model, "<model>"))
    for side in (d.before, d.after):
        if side is not None and side.revision:
            pairs.append((side.revision, "<revision>"))
    # Longest first: a name inside another (a model named like its replica) is replaced last.
    return sorted({p for p in pairs if p[0]}, key=lambda p: -len(p[0]))


def _generic(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    """``text`` with each name replaced where it stands as a whole name (not inside a longer word: a
    model called ``m`` leaves ``image`` alone)."""
    for value, placeholder in pairs:
        text = whole_name(value).sub(placeholder, text)
    return text


# -- why a runtime switched, why a replica blocks -----------------------------------------------------


def _report(model: ModelResource | None, catalog: Catalog, replica: InferenceReplica) -> Any:
    from omerender.selection import evaluate_runtimes, required_accelerator_classes

    if model is None:
        return None
    classes = required_accelerator_classes(replica.metadata.annotations)
    try:
        return evaluate_runtimes(model, catalog, replica.namespace, replica.spec.component, classes)
    except RenderBlocked:
        return None


def switch_reason(
    replica_before: InferenceReplica,
    replica_after: InferenceReplica,
    old: Outcome,
    new: Outcome,
    before_catalog: Catalog,
    after_catalog: Catalog,
) -> tuple[str, ...]:
    """Why the runtime moved from ``old``'s to ``new``'s, in the selector's words
    (:func:`omerender.selection.evaluate_runtimes`: ``selector.go``'s evaluateRuntime and its ranking
    by score, then size fit, then name): the replica's ``runtimeRef`` changed; the old runtime was
    removed or no longer qualifies (its first exclusion reason); the new one is new, qualifies now, or
    ranks higher (scores, then size distance)."""
    ref_before, ref_after = replica_before.spec.runtime_ref, replica_after.spec.runtime_ref
    if ref_before is not None or ref_after is not None:
        if ref_before != ref_after:
            return (f"the replica's runtimeRef changed: {_ref(ref_before)} -> {_ref(ref_after)}",)
        return ("the replica names its runtime (runtimeRef); the runtime's own object changed kind",)
    out: list[str] = []
    after_report = _report(after_catalog.model_for(replica_after), after_catalog, replica_after)
    before_report = _report(before_catalog.model_for(replica_before), before_catalog, replica_before)
    old_name, new_name = old.runtime_name, new.runtime_name
    if after_report is None:
        return ("selection moved (the selector could not be asked again: the model has no format name)",)
    excluded = {
        rt.metadata.name: ex
        for rt, ex in zip((rt for rt, _ in after_report.excluded), after_report.exclusions, strict=True)
    }
    candidates = {c.runtime.metadata.name: c for c in after_report.candidates}
    if old_name is not None and old_name not in excluded and old_name not in candidates:
        out.append(f"{old.runtime} was removed")
    elif old_name in excluded:
        ex = excluded[old_name]
        out.append(f"{old.runtime} no longer qualifies: {ex.cause.value} ({ex.reason})")
    new_before = None
    if before_report is not None:
        new_before = next((c for c in before_report.candidates if c.runtime.metadata.name == new_name), None)
        before_excluded = {
            rt.metadata.name: ex
            for rt, ex in zip((rt for rt, _ in before_report.excluded), before_report.exclusions, strict=True)
        }
        known_before = new_before is not None or new_name in before_excluded
        if not known_before:
            out.append(f"{new.runtime} is new")
        elif new_name in before_excluded:
            ex = before_excluded[new_name]
            out.append(f"{new.runtime} qualifies now (before: {ex.cause.value}, {ex.reason})")
    if old_name in candidates and new_name in candidates:
        a, b = candidates[old_name], candidates[new_name]
        if b.score > a.score:
            out.append(f"{new.runtime} scores higher: {b.score} against {a.score}")
        elif b.size_distance < a.size_distance:
            out.append(
                f"same score ({b.score}); {new.runtime}'s size range fits the model closer "
                f"(distance {b.size_distance:g} against {a.size_distance:g})"
            )
        else:
            out.append(f"same score and size fit ({b.score}); the selector takes the first by name")
    return tuple(out) or ("the selector ranks it first now",)


def _ref(ref: Any) -> str:
    if ref is None:
        return "none (automatic selection)"
    return f"{ref.kind or 'ClusterServingRuntime'} {ref.name}"


def block_explanation(
    replica: InferenceReplica, old: Outcome | None, new: Outcome, after_catalog: Catalog
) -> tuple[str, ...]:
    """A block in our words: the runtime that served it before, the reason and message (Go's words),
    the model's own name beside them, and the closest runtimes in the selector's order
    (:func:`omerender.lint.closest_runtimes`)."""
    assert new.blocked is not None
    out: list[str] = []
    if old is not None and old.rendered:
        served = old.runtime or "its own spec.runners"
        out.append(f"served before by {served}; OME keeps its running pods")
    model = after_catalog.model_for(replica)
    who = f" (model {model.kind} {model.metadata.name})" if model is not None else ""
    message = new.blocked.message
    head = (
        message.split(". Checked ")[0]
        if new.blocked.reason == BlockReason.RUNTIME_SELECTION_FAILED
        else new.message
    )
    out.append(f"{new.blocked.reason}{who}: {head}")
    if model is not None and new.blocked.reason == BlockReason.RUNTIME_SELECTION_FAILED:
        from omerender.lint import closest_runtimes

        report = _report(model, after_catalog, replica)
        if report is not None and report.selected is None:
            closest = closest_runtimes(report.exclusions, model)
            if closest:
                out.append("closest runtimes: " + "; ".join(map(str, closest)))
    return tuple(out)


# -- causes ---------------------------------------------------------------------------------------


def _reads(d: ReplicaDiff) -> list[tuple[CatalogKey, tuple[str, ...]]]:
    """(key, the chain from it down to the runtime rendered, names) for each object either side read."""
    out: list[tuple[CatalogKey, tuple[str, ...]]] = []
    for side in (d.before, d.after):
        if side is None:
            continue
        chain = [k for k in side.reads if k[0] in _RUNTIME_KINDS]
        for key in side.reads:
            if key[0] in _RUNTIME_KINDS:
                position = chain.index(key)
                out.append((key, tuple(k[2] for k in chain[position:])))
            else:
                out.append((key, ()))
    return out


def _causes(
    diffs: Iterable[ReplicaDiff],
    changed: Mapping[CatalogKey, CatalogChange],
    replica_changed: Collection[ReplicaKey],
    config_changed: str | None,
) -> tuple[tuple[str, ...], tuple[CatalogKey, ...], list[ReplicaDiff]]:
    """The group's causes in words, their keys, and the replicas with no cause (defects)."""
    direct: dict[tuple[str, str], list[CatalogKey]] = {}
    inherited: dict[CatalogKey, list[tuple[str, ...]]] = {}
    own: list[str] = []
    uncaused: list[ReplicaDiff] = []
    keys: dict[CatalogKey, None] = {}
    for d in diffs:
        found = False
        for key, chain in _reads(d):
            if key not in changed:
                continue
            found = True
            keys[key] = None
            if len(chain) > 1:
                paths = inherited.setdefault(key, [])
                if chain not in paths:
                    paths.append(chain)
            else:
                kinds = direct.setdefault((key[0], changed[key].change), [])
                if key not in kinds:
                    kinds.append(key)
        if (d.namespace, d.name) in replica_changed:
            found = True
            own.append(d.key)
        if not found and config_changed is None:
            uncaused.append(d)
    out: list[str] = []
    for kind, how in sorted(direct):
        names = [k[2] if not k[1] else f"{k[1]}/{k[2]}" for k in direct[kind, how]]
        if len(names) == 1:
            out.append(f"{kind} {names[0]} {how}")
        else:
            more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
            out.append(f"{len(names)} {kind}s {how}: {', '.join(names[:_SHOWN])}{more}")
    for key, paths in inherited.items():
        shown = ", ".join(" <- ".join(p) for p in paths[:_SHOWN])
        more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
        children = len({p[-1] for p in paths})
        out.append(
            f"{key_text(key)} {changed[key].change}, inherited by {children} runtime{'s' if children != 1 else ''}: "
            f"via {shown}{more}"
        )
    if own:
        more = f" and {len(own) - _SHOWN} more" if len(own) > _SHOWN else ""
        out.append(f"the replica's own object changed: {', '.join(own[:_SHOWN])}{more}")
    if config_changed is not None:
        out.append(config_changed)
    return tuple(out), tuple(keys), uncaused


def _config_change(before: Catalog, after: Catalog) -> str | None:
    """The operator's ``inferenceservice-config`` (deploy defaults, accelerator names) changed."""
    parts = []
    if before.deploy != after.deploy or before.deploy_error != after.deploy_error:
        parts.append("deploy defaults")
    if before.accelerator_resources != after.accelerator_resources:
        parts.append("acceleratorResources")
    return f"ConfigMap inferenceservice-config changed ({', '.join(parts)})" if parts else None


def _replica_document(replica: InferenceReplica) -> dict[str, Any]:
    data: dict[str, Any] = replica.model_dump(by_alias=True, exclude_none=True, mode="json")
    meta = data.get("metadata") or {}
    return {"labels": meta.get("labels"), "annotations": meta.get("annotations"), "spec": data.get("spec")}


# -- grouping -------------------------------------------------------------------------------------


def _key(d: ReplicaDiff, replica: InferenceReplica | None) -> tuple[Any, ...]:
    pairs = _placeholders(d, replica)
    if d.status is Status.ROLLS and d.runtime_change is not None:
        return (d.status, "switch", *d.runtime_change)
    if d.status in (Status.ROLLS, Status.UNCHANGED):
        return (d.status, tuple(_generic(c.line(), pairs) for c in d.changes))
    if d.status in (Status.BLOCKS, Status.STILL_BLOCKS) and d.after is not None and d.after.blocked:
        served = d.before.runtime if d.before is not None else None
        return (d.status, d.after.blocked.reason, _generic(d.after.message, pairs), served)
    side = d.after if d.status is not Status.REMOVED else d.before
    where = None
    if side is not None:
        where = side.runtime or (side.blocked.reason if side.blocked else None)
    return (d.status, where)


def _label(d: ReplicaDiff, changes: Sequence[str], lead: tuple[str, str] | None = None) -> str:
    """The group's heading; ``lead`` (a field's name, and the text said for it instead) comes first."""
    if d.runtime_change is not None and d.status is Status.ROLLS:
        return f"rolls: runtime {d.runtime_change[0]} -> {d.runtime_change[1]}"
    if d.status in (Status.ROLLS, Status.UNCHANGED):
        # Every field changed alike in the same runners (a gang's leader and worker): the runners are
        # said once, ``rolls (leader, worker): env (30 added), image``, not before each field.
        shared = _shared_runners(d.changes)
        status = f"{d.status.label} ({', '.join(shared)})" if shared else d.status.label
        # Entries of one list added (or removed) alike are one field: ``env (30 added)``.
        runs: dict[tuple[str, str], int] = {}
        named: list[tuple[str, tuple[str, str] | None]] = []
        for c in d.changes:
            if shared and c.runner != shared[0]:
                continue  # the same field in the other runners
            name = f"{c.where}: {c.path}" if c.path else c.where
            name = c.path if shared and c.path else name.removeprefix("runner default: ")
            base = entry_base(name) if c.kind in ("added", "removed") else None
            run: tuple[str, str] | None = (base, str(c.kind)) if base is not None else None
            if run is not None:
                runs[run] = runs.get(run, 0) + 1
            if (name, run) not in named:
                named.append((name, run))
        fields: list[str] = [lead[1]] if lead is not None else []
        for name, run in named:
            if lead is not None and name == lead[0]:
                continue
            if run is not None and runs[run] > 1:
                name = f"{run[0]} ({runs[run]} {run[1]})"
            if name not in fields:
                fields.append(name)
        more = f" (+{len(fields) - 2} more)" if len(fields) > 2 else ""
        return f"{status}: {', '.join(fields[:2])}{more}" if fields else status
    return d.result


def _shared_runners(changes: Sequence[Change]) -> tuple[str, ...]:
    """The runners (two or more) when each of them changed exactly the same fields the same way, else
    ``()``: a gang's image bump reads ``(leader, worker)`` once."""
    by_runner: dict[str, list[tuple[str, str, str, str]]] = {}
    for c in changes:
        if c.runner is None or not c.path:
            return ()
        by_runner.setdefault(c.runner, []).append((c.path, str(c.kind), repr(c.before), repr(c.after)))
    if len(by_runner) < 2:
        return ()
    first, *rest = by_runner.values()
    return tuple(by_runner) if all(r == first for r in rest) else ()


def _short_values(before: str, after: str) -> str:
    """``before -> after`` without the part they share up to a ``/`` (then a ``:``):
    ``sglang:v0.4.6 -> v1.0.0`` for two tags of ``docker.io/lmsysorg/sglang``."""
    cut = 0
    for i, (a, b) in enumerate(zip(before, after, strict=False)):
        if a != b:
            break
        if a == "/":
            cut = i + 1
    before, after = before[cut:], after[cut:]
    repo, sep, _ = before.partition(":")
    if sep and after.startswith(repo + ":"):
        after = after[len(repo) + 1 :]
    return f"{before} -> {after}"


def _told_apart(groups: list[Group], firsts: Sequence[ReplicaDiff]) -> list[Group]:
    """Groups whose labels are the same (the same fields changed, to different values: three
    runtimes' images bumped from three tags to one) lead their label with the value change that tells
    them apart, ``rolls: image sglang:v0.4.6 -> v1.0.0, containers[ome-container].env (30 added)``, so
    each heading, and the forecast's row cut from it, names its group."""
    by_label: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_label.setdefault(g.label, []).append(i)
    out = list(groups)
    for indices in by_label.values():
        if len(indices) < 2:
            continue
        scalars = {
            i: [
                (c.where, c.path, c.before, c.after)
                for c in firsts[i].changes
                if c.kind == "changed" and isinstance(c.before, str) and isinstance(c.after, str)
            ]
            for i in indices
        }
        for i in indices:
            others = [set(scalars[j]) for j in indices if j != i]
            apart = next((s for s in scalars[i] if all(s not in o for o in others)), None)
            if apart is None:
                continue
            where, path, before, after = apart
            field_name = (f"{where}: {path}" if path else where).removeprefix("runner default: ")
            if path and _shared_runners(firsts[i].changes):
                field_name = path  # as _label names it when the runners are said once
            said = f"{path.rsplit('.', 1)[-1] if path else where} {_short_values(before, after)}"
            out[i] = replace(groups[i], label=_label(firsts[i], groups[i].changes, (field_name, said)))
    return out


def build_review(
    diffs: Iterable[ReplicaDiff],
    before_catalog: Catalog,
    after_catalog: Catalog,
    before: Mapping[ReplicaKey, InferenceReplica],
    after: Mapping[ReplicaKey, InferenceReplica],
    *,
    fail_on: Collection[Status] = DEFAULT_FAIL_ON,
    notes: Sequence[str] = (),
) -> Review:
    """The :class:`Review` of ``diffs`` (from :func:`omerender.diff.diff_replicas` over the same
    catalogs and replicas)."""
    items = list(diffs)
    fail = frozenset(fail_on)
    changes = catalog_changes(before_catalog, after_catalog)
    changed = changed_keys(changes)
    config = _config_change(before_catalog, after_catalog)
    replica_changed = {
        key
        for key in before.keys() & after.keys()
        if before[key] is not after[key] and _replica_document(before[key]) != _replica_document(after[key])
    }
    buckets: dict[tuple[Any, ...], list[ReplicaDiff]] = {}
    for d in items:
        if d.listed:
            key = (d.namespace, d.name)
            buckets.setdefault(_key(d, after.get(key) or before.get(key)), []).append(d)
    groups: list[Group] = []
    firsts: list[ReplicaDiff] = []
    defects: list[str] = []
    for members in buckets.values():
        first = members[0]
        key = (first.namespace, first.name)
        replica = after.get(key) or before.get(key)
        pairs = _placeholders(first, replica)
        lines = tuple(_generic(c.line(), pairs) for c in first.changes)
        causes, cause_keys, uncaused = _causes(members, changed, replica_changed, config)
        if first.status is Status.ROLLS and uncaused:
            defects.extend(
                f"{d.key} rolls ({_label(d, lines)}) although none of the objects it reads changed: "
                "report this as a bug of omerender"
                for d in uncaused
            )
            members = [d for d in members if d not in uncaused]
            if not members:
                continue
            first = members[0]
        why: tuple[str, ...] = ()
        rb, ra = before.get(key), after.get(key)
        if first.runtime_change is not None and first.before and first.after and rb and ra:
            why = switch_reason(rb, ra, first.before, first.after, before_catalog, after_catalog)
        elif first.after is not None and first.after.blocked is not None and ra is not None:
            why = block_explanation(ra, first.before, first.after, after_catalog)
        cost = Cost()
        for d in members:
            cost = cost + replica_cost(d)
        groups.append(
            Group(
                first.status,
                _label(first, lines),
                tuple((d.namespace, d.name) for d in members),
                lines if first.runtime_change is None else (),
                causes,
                why,
                cost,
                first.status in fail,
                first.runtime_change,
                cause_keys,
            )
        )
        firsts.append(first)
    groups = _told_apart(groups, firsts)
    order = {s: i for i, s in enumerate(Status)}
    groups.sort(key=lambda g: (not g.fails, -len(g.replicas), order[g.status], g.label))
    total = Cost()
    for d in items:
        total = total + replica_cost(d)
    return Review(
        tuple(groups),
        changes,
        counts(items),
        total,
        fail,
        tuple(defects),
        tuple(notes),
        sum(1 for d in items if not d.listed),
        uid_note(items),
    )


def runtime_keys(outcome: Outcome) -> tuple[CatalogKey, ...]:
    """The runtime keys an outcome read (its inheritance chain, root first)."""
    return tuple(k for k in outcome.reads if k[0] in _RUNTIME_KINDS)
