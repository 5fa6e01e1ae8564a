"""Operation ids as OME writes them, and an upgrade over rows journaled with the earlier form.

Go: ``fmt.Sprintf("create-%d-%d", idx, now.Unix())`` (ops ``StampCreating``), ``"update-%d-%d"``
(``patchInstanceStatusUpdating``), ``"restart-%d-%d"`` (``restart.go``): ``<type>-<index>-<unix>``.
An earlier release wrote ``<index>-<type>-<unix>``. The id is an opaque label, so a row journaled in the
old form must keep its operation through the upgrade: the same actions, nothing rolled, nothing lost.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from sim_rolling import rolling_into

from omereconcile.actions import WriteStatus
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import parse_time

GO_FORM = re.compile(r"^(create|update|restart)-\d+-\d+$")


def _old_form(op_id: str) -> str:
    kind, index, unix = op_id.split("-")
    return f"{index}-{kind}-{unix}"


def _trail(driver: Driver, since: int) -> list[tuple[str, str]]:
    # What the executor did, less the status bodies (which carry the ids under comparison).
    return [
        (type(a).__name__, str(getattr(a, "name", "")))
        for _, a in driver.log[since:]
        if not isinstance(a, WriteStatus)
    ]


def _ids(sim: Sim) -> set[str]:
    return {row["operation"]["id"] for row in sim.rows() if row.get("operation")}


def test_new_operations_carry_omes_id() -> None:
    sim = Sim()
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(lambda s: bool(_ids(s)), limit=60)
    (op_id,) = _ids(sim)
    started = parse_time(sim.rows()[0]["operation"]["startedAt"])
    assert started is not None
    assert op_id == f"create-0-{int(started.timestamp())}"
    sim, driver = rolling_into("ok")
    driver.run(lambda s: bool(_ids(s)), limit=600)
    (op_id,) = _ids(sim)
    assert GO_FORM.match(op_id)
    assert op_id.startswith("update-0-")


def test_a_row_journaled_with_the_old_id_keeps_its_operation_through_the_upgrade() -> None:
    sim, driver = rolling_into("ok")
    driver.run(lambda s: any(r.get("operation", {}).get("type") == "Update" for r in s.rows()), limit=600)
    twin = copy.deepcopy(sim)
    old_driver = Driver(twin)
    old_driver.floor = driver.floor
    rows: list[dict[str, Any]] = twin.status["instanceStatuses"]
    for row in rows:
        if row.get("operation"):
            row["operation"]["id"] = _old_form(row["operation"]["id"])
    journaled = _ids(twin)
    assert journaled
    assert not any(GO_FORM.match(i) for i in journaled)
    mark, old_mark = len(driver.log), len(old_driver.log)
    # One pass: the operation goes on under its journaled id, not restarted under a new one.
    old_driver.one_pass()
    assert _ids(twin) == journaled
    driver.run(converged)
    old_driver.run(converged)
    assert _trail(old_driver, old_mark) == _trail(driver, mark)
    assert [r["runningRevision"] for r in twin.rows()] == [r["runningRevision"] for r in sim.rows()]
