"""``kubectl ome get inferencereplicas`` rows and columns (contract §1.5), from raw dicts and a fixed now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from omereconcile.replica_table import (
    COLUMNS,
    WIDE_COLUMNS,
    format_table,
    human_duration,
    lifecycle_condition,
    replica_row,
    replica_table,
    resolve_resource,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def irep(
    name: str = "llama-pool",
    *,
    ns: str = "llama-demo",
    age: timedelta = timedelta(minutes=8),
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    generation: int = 1,
) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {
            "name": name,
            "namespace": ns,
            "generation": generation,
            "creationTimestamp": (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "spec": {"component": "engine", "modelRef": {"name": "llama-3-2-1b-instruct"}, "replicas": 1}
        | (spec or {}),
        "status": status or {},
    }


def cond(ctype: str, status: str, reason: str = "R", observed: int | None = 1) -> dict[str, Any]:
    c: dict[str, Any] = {"type": ctype, "status": status, "reason": reason, "message": "m"}
    if observed is not None:
        c["observedGeneration"] = observed
    return c


READY_STATUS = {
    "observedGeneration": 1,
    "replicas": 1,
    "readyReplicas": 1,
    "servingReplicas": 1,
    "availableReplicas": 1,
    "updatedReplicas": 1,
    "currentRevision": "llama-pool-engine-5d8f7c9b6",
    "updateRevision": "llama-pool-engine-5d8f7c9b6",
    "conditions": [
        cond("Ready", "True", "AllInstancesReady"),
        cond("RolloutStalled", "False", "Progressing"),
    ],
}


# -- resource names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inferencereplicas", "inferencereplica", "ir", "IR"])
def test_accepted_resource_names(name: str) -> None:
    assert resolve_resource(name) == "inferencereplicas"


@pytest.mark.parametrize("name", ["irep", "ireps", "pods", "inferenceservices"])
def test_other_names_are_rejected_with_the_plugins_message(name: str) -> None:
    with pytest.raises(ValueError, match=r"^unknown resource") as exc:
        resolve_resource(name)
    assert str(exc.value) == (
        f'unknown resource "{name}" (valid resources: inferencereplicas, inferencereplica, ir)'
    )


# -- AGE ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (8 * 60, "8m"),
        (9 * 60 + 59, "9m59s"),
        (12 * 60 + 40, "12m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 25 * 60, "3h25m"),
        (7 * 3600 + 59 * 60 + 59, "7h59m"),
        (8 * 3600 + 30 * 60, "8h"),
        (47 * 3600, "47h"),
        (2 * 86400, "2d"),
        (2 * 86400 + 5 * 3600, "2d5h"),
        (8 * 86400 + 5 * 3600, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        (3 * 365 * 86400 + 10 * 86400, "3y10d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_matches_kubectl(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_age_without_a_creation_timestamp_is_unknown() -> None:
    obj = irep()
    del obj["metadata"]["creationTimestamp"]
    assert replica_row(obj, NOW)[-1] == "<unknown>"


# -- rows ---------------------------------------------------------------------------------------------


def test_the_seed_replica_row() -> None:
    rows = replica_table([irep(status=READY_STATUS)], NOW)
    assert rows == [
        ["NAME", "COMPONENT", "PARENT", "DESIRED", "CURRENT", "READY", "LIFECYCLE", "AGE"],
        ["llama-pool", "engine", "-", "1", "1", "1", "Ready=True", "8m"],
    ]


def test_the_contract_example_row_with_a_parent() -> None:
    obj = irep(
        "chat-engine",
        spec={"replicas": 4, "parentRef": {"name": "chat"}},
        status={"replicas": 3, "readyReplicas": 2, "conditions": [cond("Ready", "True")]},
    )
    row = replica_row(obj, NOW)
    assert row[:7] == ["chat-engine", "engine", "chat", "4", "3", "2", "Ready=True"]


def test_a_fresh_replica_without_status() -> None:
    obj = irep(age=timedelta(seconds=3), status={})
    assert replica_row(obj, NOW) == ["llama-pool", "engine", "-", "1", "0", "0", "Unavailable", "3s"]
    wide = replica_row(obj, NOW, wide=True)
    assert wide[8:] == ["0", "-", "0", "0", "DenseV1", "-", "-", "0", "false", "-", "Unavailable"]


def test_unset_spec_cells_print_a_dash() -> None:
    obj = irep(status={})
    del obj["spec"]["component"]
    del obj["spec"]["replicas"]
    row = replica_row(obj, NOW)
    assert row[1:4] == ["-", "-", "-"]


# -- LIFECYCLE ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conditions", "lifecycle", "reason"),
    [
        ([cond("Ready", "True", "AllInstancesReady")], "Ready=True", "AllInstancesReady"),
        (
            [
                cond("Ready", "Unknown", "RolloutInProgress"),
                cond("RolloutStalled", "True", "InstancesFailing"),
            ],
            "RolloutStalled=True",
            "InstancesFailing",
        ),
        (
            [cond("RolloutStalled", "False", "Progressing"), cond("Ready", "False", "InstanceFailed")],
            "Ready=False",
            "InstanceFailed",
        ),
        ([cond("RolloutStalled", "False", "Progressing")], "RolloutStalled=False", "Progressing"),
        ([cond("DrainOverdue", "True", "DrainsOverdue")], "Unavailable", "-"),
        ([], "Unavailable", "-"),
    ],
)
def test_lifecycle_picks_the_main_condition(
    conditions: list[dict[str, Any]], lifecycle: str, reason: str
) -> None:
    obj = irep(status={"conditions": conditions})
    row = replica_row(obj, NOW, wide=True)
    assert row[COLUMNS.index("LIFECYCLE")] == lifecycle
    assert row[len(COLUMNS) + WIDE_COLUMNS.index("REASON")] == reason


@pytest.mark.parametrize(
    ("observed", "generation", "freshness"),
    [(3, 3, "Current"), (2, 3, "Stale"), (None, 3, "Unobserved"), (0, 3, "Unobserved")],
)
def test_lifecycle_freshness(observed: int | None, generation: int, freshness: str) -> None:
    obj = irep(status={"conditions": [cond("Ready", "True", observed=observed)]}, generation=generation)
    assert replica_row(obj, NOW, wide=True)[-1] == freshness
    assert lifecycle_condition(obj) == obj["status"]["conditions"][0]


# -- wide and all namespaces --------------------------------------------------------------------------


def test_wide_columns() -> None:
    status = dict(READY_STATUS)
    status |= {
        "instanceStatusEncoding": "ColumnarV2",
        "updateRevision": "llama-pool-engine-7f6d",
        "updatedReplicas": 0,
        "migrations": [{"requestUUID": "a"}],
    }
    obj = irep(spec={"paused": True}, status=status)
    rows = replica_table([obj], NOW, wide=True)
    assert rows[0] == [*COLUMNS, *WIDE_COLUMNS]
    assert dict(zip(rows[0], rows[1], strict=True)) == {
        "NAME": "llama-pool",
        "COMPONENT": "engine",
        "PARENT": "-",
        "DESIRED": "1",
        "CURRENT": "1",
        "READY": "1",
        "LIFECYCLE": "Ready=True",
        "AGE": "8m",
        "AVAILABLE": "1",
        "REASON": "AllInstancesReady",
        "SERVING": "1",
        "UPDATED": "0",
        "ENCODING": "ColumnarV2",
        "CURRENT-REVISION": "llama-pool-engine-5d8f7c9b6",
        "UPDATE-REVISION": "llama-pool-engine-7f6d",
        "MIGRATIONS": "1",
        "PAUSED": "true",
        "COORDINATION": "-",
        "LIFECYCLE-FRESHNESS": "Current",
    }


def test_all_namespaces_adds_a_namespace_column_and_sorts() -> None:
    items = [irep("b", ns="x"), irep("a", ns="y"), irep("c", ns="x")]
    rows = replica_table(items, NOW, namespace=True)
    assert rows[0][:2] == ["NAMESPACE", "NAME"]
    assert [r[:2] for r in rows[1:]] == [["x", "b"], ["x", "c"], ["y", "a"]]


# -- formatting ---------------------------------------------------------------------------------------


def test_format_table_aligns_like_kubectl() -> None:
    rows = replica_table([irep(status=READY_STATUS)], NOW)
    assert format_table(rows) == (
        "NAME         COMPONENT   PARENT   DESIRED   CURRENT   READY   LIFECYCLE    AGE\n"
        "llama-pool   engine      -        1         1         1       Ready=True   8m\n"
    )
    assert format_table([]) == ""
