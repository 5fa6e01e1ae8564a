"""Operator settings from the inferenceservice-config ConfigMap (DECISIONS §3.11, 01 §10)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from omereconcile.settings import (
    OperatorSettings,
    RetryPolicy,
    SettingsError,
    format_go_duration,
    parse_go_duration,
    settings_from_configmap,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30m", 1800),
        ("60s", 60),
        ("1h30m", 5400),
        ("1.5s", 1.5),
        ("500ms", 0.5),
        ("0", 0),
        ("2h", 7200),
        ("1m30s", 90),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["60", "", "m", "1x", "1h 30m", "-", "1.2.3s"])
def test_invalid_go_durations(text: str) -> None:
    with pytest.raises(SettingsError):
        parse_go_duration(text)


def test_format_go_duration() -> None:
    assert format_go_duration(timedelta(minutes=30)) == "30m0s"
    assert format_go_duration(timedelta(hours=1, minutes=30)) == "1h30m0s"
    assert format_go_duration(timedelta(seconds=45)) == "45s"


def test_no_configmap_gives_defaults() -> None:
    s = settings_from_configmap(None)
    assert s == OperatorSettings()
    assert s.instance_ready_timeout is None
    # No built-in grace, as in OME: zero turns stuck-pod escalation off and parks unschedulable pods.
    assert s.stuck_pod_grace_period == timedelta(0)
    assert s.unschedulable_grace_period == timedelta(0)


def test_zero_grace_periods_mean_off() -> None:
    s = settings_from_configmap(
        {"lifecycle": json.dumps({"stuckPodGracePeriod": "0s", "unschedulableGracePeriod": "0"})}
    )
    assert s.stuck_pod_grace_period == timedelta(0)
    assert s.unschedulable_grace_period == timedelta(0)


def test_full_lifecycle_and_identity() -> None:
    data = {
        "lifecycle": json.dumps(
            {
                "instanceReadyTimeout": "30m",
                "stuckPodGracePeriod": "90s",
                "unschedulableGracePeriod": "10m",
                "revisionHistoryLimit": 5,
                "teardown": {"deadline": "1h"},
            }
        ),
        "inferenceReplica": json.dumps(
            {"controllerIdentity": {"usernames": ["system:sa:ome"], "groups": ["ome"]}}
        ),
    }
    s = settings_from_configmap(data)
    assert s.instance_ready_timeout == timedelta(minutes=30)
    assert s.stuck_pod_grace_period == timedelta(seconds=90)
    assert s.unschedulable_grace_period == timedelta(minutes=10)
    assert s.revision_history_limit == 5
    assert s.teardown_deadline == timedelta(hours=1)
    assert s.controller_identity is not None
    assert s.controller_identity.matches("system:sa:ome", [])
    assert s.controller_identity.matches("someone", ["ome"])


def test_invalid_json_ignores_the_whole_key() -> None:
    s = settings_from_configmap({"lifecycle": "{not json", "inferenceReplica": "[]"})
    assert s == OperatorSettings()


def test_bare_number_duration_is_a_startup_error() -> None:
    with pytest.raises(SettingsError):
        settings_from_configmap({"lifecycle": json.dumps({"instanceReadyTimeout": 60})})
    with pytest.raises(SettingsError):
        settings_from_configmap({"lifecycle": json.dumps({"stuckPodGracePeriod": "60"})})


def test_zero_ready_timeout_means_unset() -> None:
    assert (
        settings_from_configmap(
            {"lifecycle": json.dumps({"instanceReadyTimeout": "0s"})}
        ).instance_ready_timeout
        is None
    )


def test_invalid_teardown_deadline_is_reported_not_fatal() -> None:
    s = settings_from_configmap({"lifecycle": json.dumps({"teardown": {"deadline": "soon"}})})
    assert s.teardown_deadline is None
    assert s.teardown_deadline_invalid is not None


@pytest.mark.parametrize("limit", [0, -1, "3", True])
def test_bad_revision_history_limit(limit: object) -> None:
    with pytest.raises(SettingsError):
        settings_from_configmap({"lifecycle": json.dumps({"revisionHistoryLimit": limit})})


def test_empty_identity_is_unconfigured() -> None:
    s = settings_from_configmap(
        {"inferenceReplica": json.dumps({"controllerIdentity": {"usernames": [], "groups": []}})}
    )
    assert s.controller_identity is None


def test_update_retry_fields_are_read() -> None:
    """OME UpdateRetryConfig: maxAttempts, initialDelay, maxDelay, multiplier."""
    assert settings_from_configmap(None).update_retry is None
    block = {"maxAttempts": 4, "initialDelay": "30s", "maxDelay": "5m", "multiplier": 3}
    s = settings_from_configmap({"lifecycle": json.dumps({"updateRetry": block})})
    assert s.update_retry == RetryPolicy(4, timedelta(seconds=30), timedelta(minutes=5), 3.0)
    assert s.update_retry_invalid is None
    policy = s.update_retry
    # initialDelay * multiplier^(n-1), capped at maxDelay
    assert [policy.next_delay(n).total_seconds() for n in (1, 2, 3, 4)] == [30, 90, 270, 300]
    assert not policy.exhausted(3)
    assert policy.exhausted(4)


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ({}, "maxAttempts must be > 0"),
        (
            {"maxAttempts": 0, "initialDelay": "1m", "maxDelay": "30m", "multiplier": 2},
            "maxAttempts must be > 0",
        ),
        (
            {"maxAttempts": 3, "initialDelay": "1m", "maxDelay": "30m", "multiplier": 0.5},
            "multiplier must be >= 1",
        ),
        ({"maxAttempts": 3, "initialDelay": "60", "maxDelay": "30m", "multiplier": 2}, "initialDelay '60'"),
        ({"maxAttempts": 3, "initialDelay": "1m", "maxDelay": "0s", "multiplier": 2}, "maxDelay must be > 0"),
        (
            {"maxAttempts": 3, "initialDelay": "10m", "maxDelay": "1m", "multiplier": 2},
            "maxDelay 1m0s must be >= initialDelay 10m0s",
        ),
    ],
)
def test_an_invalid_update_retry_is_unconfigured_and_says_why(block: dict[str, object], why: str) -> None:
    """OME ToPolicy: an invalid block fails safe (the first workload-caused failure holds); the
    manager still starts."""
    s = settings_from_configmap({"lifecycle": json.dumps({"updateRetry": block})})
    assert s.update_retry is None
    assert s.update_retry_invalid is not None
    assert why in s.update_retry_invalid
    assert s.update_retry_invalid.startswith("invalid lifecycle.updateRetry: ")
