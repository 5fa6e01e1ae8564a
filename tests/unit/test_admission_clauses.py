"""The wording of the update admission's Budget holds, as OME's newest Go builds it
(``workload/reconcile.go`` ``rolledNotServingClause``, ``instanceNoun``, ``extraPodClause``)."""

from __future__ import annotations

from omereconcile.planner.admission import ExtraPodSurge, extra_pod_clause, rolled_not_serving_clause


def test_rolled_not_serving_clause_names_one_or_several_instances() -> None:
    assert rolled_not_serving_clause([], "rev") == ""
    assert rolled_not_serving_clause([3], "rev") == "; Instance 3 on revision rev not serving"
    assert rolled_not_serving_clause([1, 3], "rev") == "; Instances 1, 3 on revision rev not serving"


def test_extra_pod_clause_names_terminating_then_live_pods_in_singular_and_plural() -> None:
    assert extra_pod_clause(ExtraPodSurge()) == ""
    one = ExtraPodSurge(slots=2, terminating=("a",), live=("b",))
    assert extra_pod_clause(one) == (
        "; Terminating pod a still counts against the surge budget until its deletion grace elapses"
        "; extra pod b holds a surge slot until a start on its Instance replaces it"
    )
    many = ExtraPodSurge(slots=4, terminating=("a", "b"), live=("c", "d"))
    assert extra_pod_clause(many) == (
        "; Terminating pods a, b still count against the surge budget until their deletion grace elapses"
        "; extra pods c, d hold surge slots until a start on their Instance replaces them"
    )
