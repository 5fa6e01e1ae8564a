"""Every OME strategic merge site against k8s.io/apimachinery itself (``tools/strategicmerge``).

Hypothesis generates pairs of containers, pod specs, runtime pieces and runtime specs from small
vocabularies, so that keys meet: env, args, command, ports, volumes, volumeMounts, tolerations,
resources, nested maps and structs, duplicates, empty lists, nulls, missing required fields. For each
site every pair is merged by omerender and, in ONE Go process per site (JSON lines), by the Go program
that calls ``strategicpatch`` the way OME's function does; omerender's result is decoded into the Go
type and re-encoded by the same program, and the two JSON values must be equal, list order included.
Where Go refuses a merge, omerender must refuse it too.

Sites: ``runtimeinheritance.Merge`` (child onto parent), ``resolveContainer`` +
``MergeRuntimeContainers`` (runner base, container override), ``MergeEngineSpec`` /
``MergeDecoderSpec`` (with the leader/worker fold) and ``MergeRouterSpec``. (OME's overlays append
volumes, mounts and env with append-if-absent helpers, not with ``strategicpatch``: no site here.)

``OMERENDER_MERGE_PAIRS`` sets the pairs per site (default 2000). The Go oracle is built by
``tools/strategicmerge/build.sh`` (cached by its sources); without Go the test fails, never skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from omerender.errors import RenderBlocked
from omerender.merge import merge_component_spec, merge_inherited, merge_runner_into_pod
from omerender.runtime_gotypes import RUNTIME_SPEC
from omerender.runtime_gotypes import STRUCTS as OME_STRUCTS

ROOT = Path(__file__).resolve().parents[2]
PAIRS = int(os.environ.get("OMERENDER_MERGE_PAIRS", "2000"))

pytestmark = pytest.mark.gobuild


@dataclass(frozen=True)
class Oracle:
    binary: Path

    def ask(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """All requests in one process; answers in request order."""
        lines = "".join(json.dumps(r) + "\n" for r in requests)
        proc = subprocess.run(
            [str(self.binary)], input=lines, capture_output=True, text=True, timeout=600, check=False
        )
        if proc.returncode != 0:
            pytest.fail(f"strategicmerge exited {proc.returncode}: {proc.stderr}")
        answers = [json.loads(line) for line in proc.stdout.splitlines()]
        assert len(answers) == len(requests), proc.stderr
        return answers


@pytest.fixture(scope="module")
def merge_oracle() -> Oracle:
    """The oracle binary: $STRATEGICMERGE_BIN when CI built it, else built (or reused) here."""
    given_bin = os.environ.get("STRATEGICMERGE_BIN")
    if given_bin and Path(given_bin).is_file():
        return Oracle(Path(given_bin))
    proc = subprocess.run(
        ["bash", str(ROOT / "tools" / "strategicmerge" / "build.sh")],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"tools/strategicmerge/build.sh failed:\n{proc.stderr}")
    last = proc.stdout.strip().splitlines()[-1]
    return Oracle(Path(last.split("=", 1)[1]))


# -- generators: small vocabularies so that keys meet ---------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "ome-container", ""])
WORDS = st.sampled_from(["x", "y", "--port=8080", "--tp=2", "", "python3 -m srv \\\n--host=0.0.0.0"])
QTY = st.sampled_from(["1", "2", "500m", "1Gi", "1024Mi", "0"])
PATHS = st.sampled_from(["/a", "/b", "/dev/shm", "/mnt/models"])


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Absent is handled by the optional keys; this adds nulls."""
    return st.one_of(strategy, strategy, strategy, st.none())


def obj(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {k: maybe(v) for k, v in required.items()}, optional={k: maybe(v) for k, v in optional.items()}
    )


def lists(strategy: st.SearchStrategy[Any], size: int = 3) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, max_size=size)


ENV = obj(
    {},
    {
        "name": st.sampled_from(["A", "B", "C", "D"]),
        "value": WORDS,
        "valueFrom": obj({}, {"fieldRef": obj({"fieldPath": st.sampled_from(["status.podIP", ""])}, {})}),
    },
)
PORT = obj({}, {"containerPort": st.sampled_from([8080, 9000, 0]), "name": NAMES, "protocol": st.just("TCP")})
MOUNT = obj({}, {"name": NAMES, "mountPath": PATHS, "readOnly": st.booleans(), "subPath": WORDS})
RESOURCES = obj(
    {},
    {
        "limits": st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), QTY, max_size=2),
        "requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), QTY, max_size=2),
    },
)
PROBE = obj(
    {},
    {
        "httpGet": obj({"path": PATHS}, {"port": st.sampled_from([8080, "http"])}),
        "initialDelaySeconds": st.integers(0, 2),
        "periodSeconds": st.integers(0, 2),
    },
)
CONTAINER_FIELDS: dict[str, Any] = {
    "name": NAMES,
    "image": st.sampled_from(["img:1", "img:2", ""]),
    "command": lists(WORDS),
    "args": lists(WORDS),
    "workingDir": WORDS,
    "env": lists(ENV),
    "envFrom": lists(obj({}, {"configMapRef": obj({"name": NAMES}, {})}), 2),
    "ports": lists(PORT),
    "volumeMounts": lists(MOUNT),
    "resources": RESOURCES,
    "readinessProbe": PROBE,
    "securityContext": obj({}, {"privileged": st.booleans(), "runAsUser": st.integers(0, 2)}),
    "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", ""]),
    "stdin": st.booleans(),
    "tty": st.booleans(),
}
CONTAINER = obj({}, CONTAINER_FIELDS)
VOLUME = obj(
    {},
    {
        "name": NAMES,
        "emptyDir": st.one_of(
            st.just({}), obj({}, {"medium": st.sampled_from(["Memory", ""]), "sizeLimit": QTY})
        ),
        "hostPath": obj({"path": PATHS}, {"type": st.sampled_from(["Directory", ""])}),
        "configMap": obj({}, {"name": NAMES, "optional": st.booleans()}),
    },
)
TOLERATION = obj(
    {},
    {
        "key": st.sampled_from(["gpu", "spot", ""]),
        "operator": st.sampled_from(["Exists", "Equal"]),
        "value": WORDS,
        "effect": st.sampled_from(["NoSchedule", ""]),
    },
)
LABELS = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "2", ""]), max_size=3)
AFFINITY = obj(
    {},
    {
        "nodeAffinity": obj(
            {},
            {
                "requiredDuringSchedulingIgnoredDuringExecution": obj(
                    {},
                    {
                        "nodeSelectorTerms": lists(
                            obj(
                                {},
                                {
                                    "matchExpressions": lists(
                                        obj(
                                            {"key": NAMES, "operator": st.just("In")},
                                            {"values": lists(WORDS, 2)},
                                        ),
                                        2,
                                    )
                                },
                            ),
                            2,
                        )
                    },
                )
            },
        )
    },
)
POD_FIELDS: dict[str, Any] = {
    "containers": lists(CONTAINER, 2),
    "initContainers": lists(obj({}, {"name": NAMES, "image": st.just("init:1"), "args": lists(WORDS)}), 2),
    "volumes": lists(VOLUME),
    "nodeSelector": LABELS,
    "tolerations": lists(TOLERATION, 2),
    "affinity": AFFINITY,
    "imagePullSecrets": lists(obj({}, {"name": NAMES}), 2),
    "schedulerName": st.sampled_from(["sched", ""]),
    "hostNetwork": st.booleans(),
    "hostIPC": st.booleans(),
    "dnsPolicy": st.sampled_from(["ClusterFirstWithHostNet", ""]),
    "serviceAccountName": st.sampled_from(["sa", ""]),
    "terminationGracePeriodSeconds": st.integers(0, 30),
    "hostAliases": lists(
        obj({}, {"ip": st.sampled_from(["10.0.0.1", "10.0.0.2"]), "hostnames": lists(WORDS, 2)}), 2
    ),
    "enableServiceLinks": st.booleans(),
}
RUNNER = obj({}, CONTAINER_FIELDS)
EXTENSION_FIELDS: dict[str, Any] = {
    "minReplicas": st.integers(0, 3),
    "maxReplicas": st.integers(0, 3),
    "labels": LABELS,
    "annotations": LABELS,
}


def piece(*, multi: bool, router: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    fields: dict[str, Any] = {**POD_FIELDS, **EXTENSION_FIELDS, "runner": RUNNER}
    if router:
        fields["config"] = LABELS
    if multi:
        fields["leader"] = obj({}, {**POD_FIELDS, "runner": RUNNER})
        fields["worker"] = obj({}, {**POD_FIELDS, "size": st.integers(0, 3), "runner": RUNNER})
    return obj({}, fields)


# ServingRuntimePodSpec's fields, as the Go table lists them.
RUNTIME_POD_FIELDS = [f[0] for f in OME_STRUCTS[RUNTIME_SPEC] if f[0] in POD_FIELDS]
RUNTIME = obj(
    {},
    {
        **{k: POD_FIELDS[k] for k in RUNTIME_POD_FIELDS},
        "labels": LABELS,
        "annotations": LABELS,
        "disabled": st.booleans(),
        "protocolVersions": lists(st.sampled_from(["openAI", "openInference-v2"]), 2),
        "engineConfig": piece(multi=True),
        "decoderConfig": piece(multi=True),
        "routerConfig": piece(multi=False, router=True),
    },
)


_DRAWN: dict[tuple[int, int], list[Any]] = {}


@st.composite
def variant(draw: st.DrawFn, value: Any) -> Any:
    """A value shaped like ``value``: keys dropped, kept, varied or nulled, list items dropped,
    varied and reordered, booleans redrawn. Keys and merge keys stay, so an override made from a base
    names the base's items (the case where a merged list's order is decided)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            choice = draw(st.integers(0, 5))
            if choice == 0:
                continue
            out[key] = None if choice == 1 else item if choice == 2 else draw(variant(item))
        return out
    if isinstance(value, list):
        items = [draw(variant(v)) for v in value if draw(st.integers(0, 3))]
        return draw(st.permutations(items)) if draw(st.booleans()) else items
    if isinstance(value, bool):
        return draw(st.booleans())
    return value


def pairs_of(strategy: st.SearchStrategy[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Independent pairs, and pairs of a value and its variant in either order."""
    related = strategy.flatmap(lambda v: st.tuples(st.just(v), variant(v)))
    return st.one_of(
        st.tuples(strategy, other),
        related,
        related.map(lambda p: (p[1], p[0])),
    )


def collect(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` values drawn by Hypothesis (deterministically), gathered so that the Go side runs once.

    Drawn once per strategy: the engine and decoder sites share their pairs."""
    if (id(strategy), count) in _DRAWN:
        return _DRAWN[(id(strategy), count)]
    drawn: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(value: Any) -> None:
        drawn.append(value)

    draw()
    _DRAWN[(id(strategy), count)] = drawn
    return drawn


# -- the comparison -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    op: str  # the oracle's op for the Go merge
    canon: str  # the Go type omerender's result is re-encoded as
    ours: Callable[[Any, Any], Any]
    pairs: st.SearchStrategy[tuple[Any, Any]]


def _ours(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> tuple[Any, str | None]:
    try:
        return fn(a, b), None
    except RenderBlocked as exc:
        return None, exc.message


ENGINE_OR_DECODER_PAIRS = pairs_of(piece(multi=True), st.one_of(st.just({}), piece(multi=True)))


def _with_container(container: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "containers": [container, *(pod.get("containers") or [])]}


SITES = {
    "inheritance": Site("inherit", "canon:runtime", merge_inherited, pairs_of(RUNTIME, RUNTIME)),
    "runner-container": Site(
        "runner",
        "canon:podspec",
        merge_runner_into_pod,
        st.one_of(
            st.tuples(obj({}, POD_FIELDS), st.one_of(RUNNER, RUNNER, RUNNER, st.none())),
            # the runner and a variant of it as the pod's container: the names meet
            RUNNER.flatmap(
                lambda r: st.tuples(
                    st.builds(_with_container, variant(r), obj({}, POD_FIELDS)),
                    st.just(r),
                )
            ),
        ),
    ),
    "engine": Site(
        "engine",
        "canon:engine",
        lambda a, b: merge_component_spec(a, b, "engine"),
        ENGINE_OR_DECODER_PAIRS,
    ),
    "decoder": Site(
        "decoder",
        "canon:decoder",
        lambda a, b: merge_component_spec(a, b, "decoder"),
        ENGINE_OR_DECODER_PAIRS,
    ),
    "router": Site(
        "router",
        "canon:router",
        lambda a, b: merge_component_spec(a, b, "router"),
        pairs_of(piece(multi=False, router=True), st.one_of(st.just({}), piece(multi=False, router=True))),
    ),
}


@pytest.mark.parametrize("name", list(SITES))
def test_merge_site_matches_apimachinery(name: str, merge_oracle: Oracle) -> None:
    site = SITES[name]
    pairs = collect(site.pairs, PAIRS)
    assert len(pairs) >= min(PAIRS, 1000), f"Hypothesis drew only {len(pairs)} pairs"
    ours = [_ours(site.ours, a, b) for a, b in pairs]
    requests: list[dict[str, Any]] = []
    for n, ((a, b), (result, _)) in enumerate(zip(pairs, ours, strict=True)):
        requests.append({"id": [n, "go"], "op": site.op, "a": a, "b": b})
        if result is not None:
            requests.append({"id": [n, "ours"], "op": site.canon, "a": result})
    answers = {tuple(ans["id"]): ans for ans in merge_oracle.ask(requests)}
    failures = []
    errors_agreed = 0
    for n, ((a, b), (result, refused)) in enumerate(zip(pairs, ours, strict=True)):
        go = answers[(n, "go")]
        if "error" in go or refused is not None:
            if "error" in go and refused is not None:
                errors_agreed += 1
                continue
            failures.append((n, a, b, go.get("error") or go.get("result"), refused or result))
            continue
        mine = answers[(n, "ours")]
        assert "error" not in mine, f"Go cannot decode omerender's result: {mine['error']}\n{result}"
        if mine["result"] != go["result"]:
            failures.append((n, a, b, go["result"], mine["result"]))
    if failures:
        smallest = min(failures, key=lambda f: len(json.dumps(f[1:3])))
        n, a, b, go_says, we_say = smallest
        pytest.fail(
            f"{len(failures)} of {len(pairs)} {name} merges differ from apimachinery; the smallest:\n"
            f"base     = {json.dumps(a)}\noverride = {json.dumps(b)}\n"
            f"go       = {json.dumps(go_says)}\nomerender= {json.dumps(we_say)}"
        )
    print(f"{name}: {len(pairs)} pairs agree with apimachinery ({errors_agreed} refused by both)")
