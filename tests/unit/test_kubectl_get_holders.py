"""``kubectl ome get ir -o wide`` shows which process acts on each replica of a sharded reconciler (issue
31): the holder of its namespace's range Lease, read with one list of the reconciler's Leases, no write."""

from __future__ import annotations

import io
from typing import Any

import pytest

from omereconcile.cluster.kube import Forbidden
from omereconcile.kubectl import main
from omereconcile.sharding import CUTS_ANNOTATION, balanced_ranges, cuts_text, range_holders

NAMESPACES = ["team-a", "team-b", "team-c", "team-d"]
RANGES = balanced_ranges(NAMESPACES, 2)


def _lease(name: str, holder: str | None = None, **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {} if holder is None else {"holderIdentity": holder},
    }


LEASES = [
    _lease("omereconcile-leader", "old_1"),
    _lease("omereconcile-shard-2-cuts", **{CUTS_ANNOTATION: cuts_text(RANGES)}),
    _lease("omereconcile-shard-2-0", "omereconcile-7d9f-abcde_1b2c"),
    _lease("omereconcile-shard-2-1", ""),  # released: nobody acts on it now
    _lease("omereconcile-shard-2-m-0", "omereconcile-7d9f-abcde_1b2c"),
]


def _replica(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": ns, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"component": "engine", "replicas": 1},
    }


class FakeKube:
    def __init__(self, leases: list[dict[str, Any]] | Exception) -> None:
        self.leases = leases
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.calls.append((method, path))
        if path.endswith("/leases"):
            if isinstance(self.leases, Exception):
                raise self.leases
            return {"items": self.leases, "metadata": {}}
        return {"items": [_replica(ns) for ns in NAMESPACES], "metadata": {}}

    def close(self) -> None:
        pass


def _get(kube: FakeKube, *args: str) -> list[list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["get", "ir", "-A", *args], out=out, err=err, connect=lambda _a: kube)  # type: ignore[arg-type,return-value]
    assert (code, err.getvalue()) == (0, "")
    return [line.split() for line in out.getvalue().splitlines()]


def test_range_holders_reads_the_cuts_and_the_range_leases() -> None:
    found = range_holders(LEASES)
    assert found is not None
    ranges, holders = found
    assert ranges == RANGES
    assert holders == {0: "omereconcile-7d9f-abcde_1b2c", 1: ""}
    assert range_holders([_lease("omereconcile-leader", "x_1")]) is None  # not sharded


def test_wide_shows_the_pod_holding_each_replicas_range_from_one_list_and_no_write() -> None:
    kube = FakeKube(LEASES)
    rows = _get(kube, "-o", "wide")
    assert rows[0][-1] == "SHARD-HOLDER"
    got = {row[0]: row[-1] for row in rows[1:]}
    want = {ns: ("omereconcile-7d9f-abcde" if RANGES[0].contains(ns) else "<none>") for ns in NAMESPACES}
    assert got == want
    assert set(want.values()) == {"omereconcile-7d9f-abcde", "<none>"}  # both cases shown
    assert [m for m, _ in kube.calls] == ["GET", "GET"]
    assert kube.calls[1][1] == "/apis/coordination.k8s.io/v1/namespaces/ome/leases"


def test_no_column_when_not_sharded_or_the_leases_cannot_be_read_and_none_without_wide() -> None:
    for leases in (
        [_lease("omereconcile-leader", "x_1")],
        Forbidden(403, "Forbidden", "leases is forbidden"),
    ):
        rows = _get(FakeKube(leases), "-o", "wide")
        assert "SHARD-HOLDER" not in rows[0]
    kube = FakeKube(LEASES)
    assert "SHARD-HOLDER" not in _get(kube)[0]
    assert len(kube.calls) == 1  # the plain table reads no Lease


def test_leases_of_another_shape_read_as_unset_never_a_traceback() -> None:
    odd: list[Any] = [
        None,
        "omereconcile-shard-2-0",
        {"metadata": "omereconcile-shard-2-cuts"},
        {"metadata": {"name": "omereconcile-shard-2-cuts", "annotations": ["x"]}},
        {"metadata": {"name": "omereconcile-shard-2-0"}, "spec": "holder"},
    ]
    assert range_holders(odd) is None  # no cuts stored in a shape that reads: not sharded
    ranges, holders = range_holders([*odd[:3], *LEASES[1:2], odd[4]]) or ((), {})
    assert ranges == RANGES
    assert holders == {0: "", 1: ""}  # the range Lease whose spec is not a mapping has no holder
    assert range_holders([_lease("omereconcile-shard-2-cuts", **{CUTS_ANNOTATION: "0x12"})]) is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            "../kube-system",
            "error: --ome-namespace: invalid namespace \"../kube-system\": [may not contain '/'] "
            "(the reconciler's namespace, e.g. ome)\n",
        ),
        ("", "error: --ome-namespace is empty: name the reconciler's namespace, e.g. ome\n"),
    ],
)
def test_a_bad_ome_namespace_is_a_usage_error_before_any_request(value: str, says: str) -> None:
    kube = FakeKube(LEASES)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["get", "ir", "-A", "-o", "wide", "--ome-namespace", value],
        out=out,
        err=err,
        connect=lambda _a: kube,
    )  # type: ignore[arg-type,return-value]
    assert (code, err.getvalue()) == (2, says)
    assert kube.calls == []
