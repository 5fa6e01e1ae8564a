"""Lint: a multi-pod runtime that reads LeaderWorkerSet's ``LWS_*`` variables, which OMENative pods lack.

OME's Go controller gives every container of an Instance's pods the ``OME_*`` set of
``buildOMENativeEnv`` (ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render.go`` @ 4dfb96b1
and 7307c238, the same body) and nothing else: no ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` or
``LWS_WORKER_INDEX`` (DECISIONS §3.6). Runtimes written for LeaderWorkerSet read them — OME's public
catalog has such runtimes (``--dist-init-addr=$(LWS_LEADER_ADDRESS):5000``). On an OMENative pod
Kubernetes leaves an unknown ``$(NAME)`` as literal text and a shell expands ``$NAME`` to nothing, so
the leader is never found. :func:`lws_problems` names each such variable and the ``OME_*`` variable
that carries the same value:

=======================  ============================  =================================================
LeaderWorkerSet          OMENative                     value
=======================  ============================  =================================================
``LWS_LEADER_ADDRESS``   ``OME_LEADER_ADDRESS``        the leader pod's DNS name (OME's short form
                                                       ``<leader-pod>.<headless-service>`` resolves the
                                                       same through the pod's DNS search path)
``LWS_GROUP_SIZE``       ``OME_INSTANCE_POD_COUNT``    pods in the group (Instance), leader included
``LWS_WORKER_INDEX``     ``OME_INSTANCE_POD_RANK``     0 for the leader, k+1 for worker ordinal k
=======================  ============================  =================================================

Only the regular containers of a runtime whose piece renders a leader are checked (Go injects the
``OME_*`` set into regular containers only, and only multi-pod Instances get the leader variables); a
container that sets the ``LWS_*`` variable itself carries it and is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from omerender import constants as c
from omerender.render.result import RenderedRunner

__all__ = ["LWS_VARIABLE", "OME_EQUIVALENT", "lws_problems", "lws_references"]

# The finding's code (omerender.lint.CODES).
LWS_VARIABLE: Final = "LwsVariableUnset"

OME_EQUIVALENT: Final[Mapping[str, str]] = {
    c.ENV_LWS_LEADER_ADDRESS: c.ENV_LEADER_ADDRESS,
    c.ENV_LWS_GROUP_SIZE: c.ENV_INSTANCE_POD_COUNT,
    c.ENV_LWS_WORKER_INDEX: c.ENV_INSTANCE_POD_RANK,
}

# $(LWS_X) (Kubernetes expansion), ${LWS_X} and $LWS_X (a shell's).
_REFERENCE = re.compile(r"\$(?:\((LWS_\w+)\)|\{(LWS_\w+)\}|(LWS_\w+))")


def _strings(container: Mapping[str, Any]) -> Iterator[str]:
    for key in ("command", "args"):
        for item in container.get(key) or ():
            if isinstance(item, str):
                yield item
    for var in container.get("env") or ():
        if isinstance(var, Mapping) and isinstance(var.get("value"), str):
            yield var["value"]


def lws_references(containers: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``LWS_*`` name → the containers that read it without setting it, in first-seen order."""
    found: dict[str, list[str]] = {}
    for container in containers:
        if not isinstance(container, Mapping):
            continue
        own = {var.get("name") for var in container.get("env") or () if isinstance(var, Mapping)}
        name = str(container.get("name") or c.MAIN_CONTAINER)
        for text in _strings(container):
            if "LWS_" not in text:
                continue
            for match in _REFERENCE.finditer(text):
                variable = next(g for g in match.groups() if g)
                if variable in own:
                    continue
                where = found.setdefault(variable, [])
                if name not in where:
                    where.append(name)
    return found


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def lws_problems(runners: Iterable[RenderedRunner]) -> list[str]:
    """One problem text per rendered piece whose pods read ``LWS_*`` variables OME does not set; none
    for a single-pod piece (no leader runner)."""
    runners = tuple(runners)
    if not any(r.name == c.RUNNER_LEADER for r in runners):
        return []
    found: dict[str, list[str]] = {}
    for runner in runners:
        spec = runner.template.get("spec") or {}
        for variable, containers in lws_references(spec.get("containers") or ()).items():
            where = found.setdefault(variable, [])
            where += [f"{runner.name} {name}" for name in containers if f"{runner.name} {name}" not in where]
    if not found:
        return []
    names = list(found)
    mapped = [n for n in names if n in OME_EQUIVALENT]
    unmapped = [n for n in names if n not in OME_EQUIVALENT]
    plural = len(names) > 1
    text = (
        f"reads {_and(names)}, which OMENative pods do not carry (OME sets no LWS_* variable): "
        f"{'they stay' if plural else 'it stays'} unset"
    )
    fixes = []
    if mapped:
        fixes.append(
            "use "
            + _and([f"{OME_EQUIVALENT[n]} for {n}" for n in mapped])
            + (", the same values" if len(mapped) > 1 else ", the same value")
        )
    if unmapped:
        fixes.append(f"no OME_* variable carries {_and(unmapped)}")
    containers = sorted({w for where in found.values() for w in where})
    return [f"{text}; {'; '.join(fixes)} (in {_and(containers)})"]
