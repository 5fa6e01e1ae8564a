"""Operator settings from the ``inferenceservice-config`` ConfigMap (01 §10, DECISIONS §3.11).

Two keys are read, both JSON: ``lifecycle`` (durations and limits) and ``inferenceReplica``
(``controllerIdentity``). As in OME, a key whose JSON does not parse is ignored as a whole, while a
duration that is not a Go duration string (a bare number such as ``60``) is a startup error: OME's
manager refuses to start on it, and silently ignoring it would leave a cluster without the deadline
its operator asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from omerender.accelerators import ACCELERATOR_RESOURCES_KEY, parse_accelerator_resources
from omerender.catalog import ControllerIdentity
from omerender.jsonlike import loads_bounded

__all__ = [
    "ForceDeletePolicy",
    "OperatorSettings",
    "RetryPolicy",
    "SettingsError",
    "parse_go_duration",
    "settings_from_configmap",
]

# Neither grace period has a built-in default, as in OME's manager (``lifecycle.stuckPodGracePeriod``
# and ``lifecycle.unschedulableGracePeriod`` zero when unset): no stuck-pod grace means no stuck-pod
# escalation (workload/escalation.go escalateFromEvidence: "A zero or negative grace disables this
# path"), and no unschedulable grace means an unschedulable pod keeps its clock parked until it
# schedules. Only the operation deadline (``instanceReadyTimeout``) then ends a wait.
OFF = timedelta(0)


class SettingsError(ValueError):
    """A setting is present but unusable (the manager must not start on it)."""


_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
# time.Duration is int64 nanoseconds: time.ParseDuration refuses a longer one (about 2,562,047 hours).
_MAX_DURATION_SECONDS = (2**63 - 1) / 1e9


def _go_quote(text: str) -> str:
    """Go ``time``'s ``quote``: the text in double quotes, a quote or backslash escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def parse_go_duration(text: str) -> timedelta:
    """Parse a Go ``time.ParseDuration`` string (``30m``, ``1h30m``, ``1.5s``, ``0``).

    Raises SettingsError for anything else, in Go's words (``time.ParseDuration``): a number without a
    unit (``30``) is ``time: missing unit in duration "30"``, an unknown unit ``time: unknown unit "d"
    in duration "1d"``, anything else ``time: invalid duration "..."``.
    """
    s = text.strip()
    invalid = SettingsError(f"time: invalid duration {_go_quote(text)}")
    if s[:1] in ("+", "-"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    else:
        sign = 1.0
    if s == "0":
        return timedelta(0)
    if not s:
        raise invalid
    pos = 0
    total = 0.0
    while pos < len(s):
        if not (s[pos] == "." or _digit(s[pos])):
            raise invalid
        start = pos
        while pos < len(s) and _digit(s[pos]):
            pos += 1
        whole = s[start:pos]
        fraction = ""
        if pos < len(s) and s[pos] == ".":
            pos += 1
            frac_start = pos
            while pos < len(s) and _digit(s[pos]):
                pos += 1
            fraction = s[frac_start:pos]
        if not whole and not fraction:
            raise invalid
        unit_start = pos
        while pos < len(s) and not (s[pos] == "." or _digit(s[pos])):
            pos += 1
        unit = s[unit_start:pos]
        if not unit:
            raise SettingsError(f"time: missing unit in duration {_go_quote(text)}")
        if unit not in _UNIT_SECONDS:
            raise SettingsError(f"time: unknown unit {_go_quote(unit)} in duration {_go_quote(text)}")
        total += float(f"{whole or '0'}.{fraction or '0'}") * _UNIT_SECONDS[unit]
    if total > _MAX_DURATION_SECONDS:  # Go's int64 nanoseconds overflow: the same error
        raise invalid
    return timedelta(seconds=sign * total)


def format_go_duration(value: timedelta) -> str:
    """Render a duration as Go prints it for whole seconds (``30m0s``, ``1h30m0s``, ``45s``)."""
    total = int(value.total_seconds())
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{s}s"
    if m:
        return f"{m}m{s}s"
    return f"{s}s"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``lifecycle.updateRetry``: the same-target retry ladder (OME ``apis/.../configmap types``
    ``UpdateRetryConfig`` and ``workload/types/retryblock.go`` ``RetryPolicy``).

    A revision gets ``max_attempts`` attempts; the wait after attempt *n* is
    ``initial_delay * multiplier^(n-1)``, capped at ``max_delay``.
    """

    max_attempts: int
    initial_delay: timedelta
    max_delay: timedelta
    multiplier: float

    def next_delay(self, attempts_started: int) -> timedelta:
        """Go ``RetryPolicy.NextRetryDelay``: the backoff before attempt ``attempts_started + 1``."""
        try:
            seconds = self.initial_delay.total_seconds() * self.multiplier ** (attempts_started - 1)
        except OverflowError:
            return self.max_delay
        if seconds <= 0 or seconds > self.max_delay.total_seconds():
            return self.max_delay
        return timedelta(seconds=seconds)

    def exhausted(self, attempts_started: int) -> bool:
        """Go ``RetryPolicy.Exhausted`` (the nil policy, always exhausted, is ``None`` here)."""
        return attempts_started >= self.max_attempts


@dataclass(frozen=True, slots=True)
class ForceDeletePolicy:
    """``lifecycle.forceDelete`` (01 §8.1, OME ``types.ForceDeletePolicy``): both fields required, the
    escalation off without the block. ``overdue_slack`` is waited past a pod's own
    ``deletionTimestamp``; ``node_unreachable_threshold`` is how long the node's death evidence must
    stand (``planner/nodedeath.py``)."""

    overdue_slack: timedelta
    node_unreachable_threshold: timedelta


@dataclass(frozen=True, slots=True)
class OperatorSettings:
    """What the operator configured. ``None`` means "not configured" (OME's behaviour differs for it)."""

    instance_ready_timeout: timedelta | None = None
    stuck_pod_grace_period: timedelta = OFF  # zero: no stuck-pod escalation
    unschedulable_grace_period: timedelta = OFF  # zero: an unschedulable pod stays parked
    # lifecycle.abandonedReplacementGrace: the termination grace a never-served abandoned surge
    # replacement is deleted with (zero: the pod's own grace; Go abandonedReplacementDeleteOptions).
    abandoned_replacement_grace: timedelta = OFF
    revision_history_limit: int | None = None
    # lifecycle.updateRetry. None (absent or invalid) fails safe: the first workload-caused failure
    # holds the revision (01 §4.7), as OME's nil RetryPolicy does.
    update_retry: RetryPolicy | None = None
    # Why a present updateRetry block was not usable (logged by the manager; the ladder is off).
    update_retry_invalid: str | None = None
    teardown_deadline: timedelta | None = None
    # The raw teardown deadline when it was present but unusable: TeardownBlocked then says why.
    teardown_deadline_invalid: str | None = None
    controller_identity: ControllerIdentity | None = None
    # ``acceleratorResources``: the resource names PARALLELISM_SIZE counts (empty: NVIDIA only).
    accelerator_resources: tuple[str, ...] = ()
    # lifecycle.forceDelete; None: no pod is ever force-deleted.
    force_delete: ForceDeletePolicy | None = None
    # lifecycle.autoMigrate.maxAttempts: relocation directives per Instance (planner/relocation.py);
    # zero (unset) turns relocation off, as OME's manager without an autoMigrate budget.
    auto_migrate_max_attempts: int = 0
    # lifecycle.retryBlockHistoryLimit: how many RetryBlocks of revisions other than the update
    # revision status keeps (Go inferencereplica/reconciler.go lifecycleSettings.RetryBlockHistoryLimit,
    # ome-projects/ome 4dfb96b1: "Nil keeps every historical block"). None: no cap.
    retry_block_history_limit: int | None = None
    # Why a present retryBlockHistoryLimit was not usable (Go treats it as unconfigured).
    retry_block_history_limit_invalid: str | None = None


def _load_json(data: Mapping[str, str], key: str) -> Mapping[str, Any] | None:
    raw = data.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):  # the API server holds strings only; a caller's dict may not
        raise SettingsError(f"{key}: a ConfigMap's data values are strings, got {type(raw).__name__}")
    try:
        value = loads_bounded(raw)
    except ValueError:  # JsonLimitError included: past the depth or digit limits
        return None  # OME ignores a key whose JSON does not parse
    return value if isinstance(value, Mapping) else None


def _duration(block: Mapping[str, Any], key: str) -> timedelta | None:
    value = block.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SettingsError(f"lifecycle.{key}: {value!r} is not a duration string such as '60s'")
    return parse_go_duration(value)


def _identity(block: Mapping[str, Any] | None) -> ControllerIdentity | None:
    if block is None:
        return None
    ident = block.get("controllerIdentity")
    if not isinstance(ident, Mapping):
        return None
    users = ident.get("usernames") or []
    groups = ident.get("groups") or []
    if not isinstance(users, list) or not isinstance(groups, list):
        raise SettingsError("inferenceReplica.controllerIdentity: usernames and groups must be lists")
    if not users and not groups:
        return None
    return ControllerIdentity(
        usernames=frozenset(str(u) for u in users), groups=frozenset(str(g) for g in groups)
    )


def _history_limit(raw: Any) -> tuple[int | None, str | None]:
    """``lifecycle.retryBlockHistoryLimit`` (Go ``LifecycleConfig.ToRetryBlockHistoryLimit``, read
    through its test at ome-projects/ome: absent yields no cap; a non-positive value is an error the
    caller treats as unconfigured, so it does not stop the manager)."""
    if raw is None:
        return None, None
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        return None, (
            f"lifecycle.retryBlockHistoryLimit: {raw!r} is not a positive integer; every RetryBlock "
            "is kept (set a positive count, or remove the key)"
        )
    return raw, None


def settings_from_configmap(data: Mapping[str, str] | None) -> OperatorSettings:
    """Build settings from a ConfigMap's ``data``. ``None`` (no ConfigMap) gives the defaults."""
    data = data or {}
    lifecycle = _load_json(data, "lifecycle") or {}
    stuck = _duration(lifecycle, "stuckPodGracePeriod")
    unsched = _duration(lifecycle, "unschedulableGracePeriod")
    abandoned = _duration(lifecycle, "abandonedReplacementGrace")
    timeout = _duration(lifecycle, "instanceReadyTimeout")
    limit = lifecycle.get("revisionHistoryLimit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise SettingsError(f"lifecycle.revisionHistoryLimit: {limit!r} is not a positive integer")
    teardown_deadline: timedelta | None = None
    teardown_invalid: str | None = None
    retry_policy, retry_invalid = _retry_policy(lifecycle.get("updateRetry"))
    history, history_invalid = _history_limit(lifecycle.get("retryBlockHistoryLimit"))
    teardown = lifecycle.get("teardown")
    if isinstance(teardown, Mapping) and teardown.get("deadline") not in (None, ""):
        raw = teardown["deadline"]
        # An unusable teardown deadline does not stop the manager: OME reports it in TeardownBlocked.
        try:
            if not isinstance(raw, str):
                raise SettingsError(f"{raw!r} is not a duration string")
            teardown_deadline = parse_go_duration(raw)
            if teardown_deadline <= timedelta(0):
                raise SettingsError(f"{raw!r} is not positive")
        except SettingsError as exc:
            teardown_deadline, teardown_invalid = None, str(exc)
    return OperatorSettings(
        instance_ready_timeout=timeout if timeout else None,  # zero means unset, as on the replica
        stuck_pod_grace_period=stuck if stuck is not None and stuck > OFF else OFF,
        unschedulable_grace_period=unsched if unsched is not None and unsched > OFF else OFF,
        abandoned_replacement_grace=abandoned if abandoned is not None and abandoned > OFF else OFF,
        revision_history_limit=limit,
        update_retry=retry_policy,
        update_retry_invalid=retry_invalid,
        teardown_deadline=teardown_deadline,
        teardown_deadline_invalid=teardown_invalid,
        controller_identity=_identity(_load_json(data, "inferenceReplica")),
        accelerator_resources=_accelerators(data),
        force_delete=_force_delete(lifecycle.get("forceDelete")),
        auto_migrate_max_attempts=_auto_migrate(lifecycle.get("autoMigrate")),
        retry_block_history_limit=history,
        retry_block_history_limit_invalid=history_invalid,
    )


def _auto_migrate(block: Any) -> int:
    """``lifecycle.autoMigrate.maxAttempts``: a non-negative integer (the chart sets 3); absent is 0,
    relocation off. Anything else stops the manager with the field named."""
    if block is None:
        return 0
    if not isinstance(block, Mapping):
        raise SettingsError(f"lifecycle.autoMigrate: {block!r} is not an object")
    value = block.get("maxAttempts")
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SettingsError(
            f"lifecycle.autoMigrate.maxAttempts: {value!r} is not a non-negative integer (e.g. 3; 0 turns relocation off)"
        )
    return value


def _force_delete(block: Any) -> ForceDeletePolicy | None:
    """``lifecycle.forceDelete``: absent is off; present, both durations are required (a Go duration
    string, zero or more). A half-written block stops the manager, as a bad duration does: acting on a
    default the operator did not write is what the escalation must never do."""
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise SettingsError(f"lifecycle.forceDelete: {block!r} is not an object")
    values: list[timedelta] = []
    for key in ("overdueSlack", "nodeUnreachableThreshold"):
        raw = block.get(key)
        if raw in (None, ""):
            raise SettingsError(
                f"lifecycle.forceDelete.{key} is required when lifecycle.forceDelete is set "
                "(set both overdueSlack and nodeUnreachableThreshold, e.g. '5m', or remove the block)"
            )
        if not isinstance(raw, str):
            raise SettingsError(f"lifecycle.forceDelete.{key}: {raw!r} is not a duration string such as '5m'")
        value = parse_go_duration(raw)
        if value < timedelta(0):
            raise SettingsError(f"lifecycle.forceDelete.{key}: {raw!r} is negative")
        values.append(value)
    return ForceDeletePolicy(values[0], values[1])


def _retry_policy(block: Any) -> tuple[RetryPolicy | None, str | None]:
    """OME ``UpdateRetryConfig.ToPolicy``: every field is required and checked; an invalid block is
    treated as unconfigured (fail-safe Held), never patched up with fallback numbers, and does not
    stop the manager. Returns the policy, or None and why."""
    if block is None:
        return None, None
    if not isinstance(block, Mapping):
        return None, f"invalid lifecycle.updateRetry: {block!r} is not an object"
    attempts = block.get("maxAttempts", 0)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts <= 0:
        return None, f"invalid lifecycle.updateRetry: maxAttempts must be > 0, got {attempts!r}"
    multiplier = block.get("multiplier", 0)
    if not isinstance(multiplier, int | float) or isinstance(multiplier, bool) or multiplier < 1:
        return None, f"invalid lifecycle.updateRetry: multiplier must be >= 1, got {multiplier!r}"
    delays: list[timedelta] = []
    for key in ("initialDelay", "maxDelay"):
        raw = block.get(key, "")
        try:
            if not isinstance(raw, str):
                raise SettingsError(f"{raw!r} is not a duration string")
            value = parse_go_duration(raw)
        except SettingsError as exc:
            return None, f"invalid lifecycle.updateRetry: {key} {raw!r}: {exc}"
        if value <= timedelta(0):
            return None, f"invalid lifecycle.updateRetry: {key} must be > 0, got {raw}"
        delays.append(value)
    initial, most = delays
    if most < initial:
        return None, (
            f"invalid lifecycle.updateRetry: maxDelay {format_go_duration(most)} must be >= "
            f"initialDelay {format_go_duration(initial)}"
        )
    return RetryPolicy(attempts, initial, most, float(multiplier)), None


def _accelerators(data: Mapping[str, str]) -> tuple[str, ...]:
    try:
        return parse_accelerator_resources(data.get(ACCELERATOR_RESOURCES_KEY))
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
