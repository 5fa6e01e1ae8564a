"""OME's ``workload/holds/table_test.go``: which hold token may take a row another reports.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/table_test.go`` @ 58a57f25 (the listed
version of three stored), over ``holds/table.go`` ``takesRowFrom``. Ours is
:func:`omereconcile.planner.quota.takes_row`, the rule every ``operation.waiting`` writer of the
planner consults. Which tests of the file have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from omereconcile.planner.quota import PAUSED, takes_row

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25"
FACTS = [
    "QuotaExceeded",
    "AdmissionUnavailable",
    "Unschedulable",
    "PodGroupTerminating",
    "NodeUnknown",
    "SourceUnrouted",
    "CapacityProvisioning",
]


def test_table_one_ordered_pair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25,
    TestTable_OneOrderedPair: first writer wins, with one exception: a token reporting a fact about
    the Instance takes a row reporting the pause. A fact takes an unheld row and keeps its own; the
    pause never takes a fact's row; no fact takes another's."""
    for token in FACTS:
        assert takes_row(token, PAUSED), token
        assert takes_row(token, ""), token
        assert takes_row(token, token), token
        assert not takes_row(PAUSED, token), token
        for other in FACTS:
            if other != token:
                assert not takes_row(token, other), (token, other)
