"""Differential test: the Python encoder against Go itself.

Every case goes through both ``omerender.revision`` / ``omerender.gojson`` and the Go reference
program ``tools/gotypes/cmd/canonical`` (the real k8s.io/api types, decoded as Kubernetes clients
decode and encoded with ``encoding/json``), in one batch through one Go process. They must agree
byte for byte and hash for hash, and refuse the same inputs.

Cases: the golden values of 01-contract.md §9.3, hand-written edge cases, and hypothesis-generated
pod templates (derandomized, no example database: CI sees the same ones every run).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender import gojson
from omerender.gojson import GoJSONError
from omerender.revision import revision_hash, revision_payload

pytestmark = pytest.mark.gobuild

ROOT = Path(__file__).resolve().parents[2]
MIN_TEMPLATES = 300
HYPOTHESIS_TEMPLATES = 320
HYPOTHESIS_QUANTITIES = 600

IMAGE = "registry.example.com/serving:v1"
GOLDEN_CONTAINER = {
    "name": "ome-container",
    "image": IMAGE,
    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
    "env": [{"name": "MODEL_PATH", "value": "/models/base"}],
    "resources": {"limits": {"cpu": "2", "memory": "4Gi"}},
}
GOLDEN_META = {"labels": {"app.kubernetes.io/name": "engine"}, "annotations": {"example.com/tier": "gold"}}
GOLDEN_WORKER = {"spec": {"containers": [{"name": "worker", "image": IMAGE}]}}


def _case(
    pod: Any,
    worker: Any = None,
    topology_key: str = "",
    pairing_protocol: str = "",
    collision_count: int = 0,
    scope_uid: str = "",
    excluded: tuple[str, ...] = (),
    expect_hash: str | None = None,
    expect_payload: str | None = None,
) -> dict[str, Any]:
    return {
        "podTemplate": pod,
        "workerTemplate": worker,
        "topologyKey": topology_key,
        "pairingProtocol": pairing_protocol,
        "collisionCount": collision_count,
        "scopeUID": scope_uid,
        "excludedAnnotationKeys": list(excluded),
        "_expect_hash": expect_hash,
        "_expect_payload": expect_payload,
    }


def golden_cases() -> list[dict[str, Any]]:
    pod = {"spec": {"containers": [GOLDEN_CONTAINER]}}
    pod_meta = {"metadata": GOLDEN_META, "spec": {"containers": [GOLDEN_CONTAINER]}}
    minimal = {"metadata": {}, "spec": {"containers": [{"name": "ome-container", "image": IMAGE}]}}
    golden_bytes = (
        '{"podSpec":{"containers":[{"name":"ome-container","image":"registry.example.com/serving:v1",'
        '"resources":{}}]},"podMeta":null}'
    )
    return [
        _case(pod, expect_hash="c6697510"),
        _case(pod_meta, expect_hash="82d844dd"),
        _case(pod, GOLDEN_WORKER, expect_hash="d7a8a72f"),
        _case(pod, GOLDEN_WORKER, topology_key="topology.kubernetes.io/zone", expect_hash="a1c83d4d"),
        _case(pod, collision_count=1, expect_hash="8df83ecd"),
        _case(pod, scope_uid="11111111-2222-3333-4444-555555555555", expect_hash="10b5fd04"),
        _case(minimal, expect_payload=golden_bytes),
        _case(
            minimal,
            pairing_protocol="nixl-v2",
            expect_payload=golden_bytes[:-1] + ',"pairingProtocol":"nixl-v2"}',
        ),
    ]


def _pod(**spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c", "image": IMAGE}])
    return {"spec": spec}


def _container(**fields: Any) -> dict[str, Any]:
    return _pod(containers=[{"name": "c", "image": IMAGE, **fields}])


def edge_cases() -> list[dict[str, Any]]:
    """Hand-written cases, one behaviour each."""
    c: list[dict[str, Any]] = []
    # Empty and null shapes.
    c += [
        _case({}),
        _case({"spec": None}),
        _case({"spec": {}}),
        _case({"spec": {"containers": []}}),
        _case({"spec": {"containers": None}}),
        _case({"spec": {"containers": [None]}}),
        _case({"spec": {"containers": [{}]}}),
        _case({"metadata": None, "spec": {"containers": [{"name": "x"}]}}),
        _case(_pod(volumes=[], initContainers=[], nodeSelector={}, tolerations=None)),
        _case(_pod(), {}),
        _case(_pod(), {"spec": None}),
        _case(_pod(), None, topology_key="zone"),  # no worker: topology key ignored
        _case(_pod(), _pod(), topology_key=""),
    ]
    # Unknown fields, wrong-case keys, extra top-level keys.
    c += [
        _case(
            {"spec": {"containers": [{"Name": "x", "name": "y", "IMAGE": "z", "bogus": {"a": 1}}], "zzz": 1}}
        ),
        _case({"kind": "Pod", "metadata": {"labels": {"a": "b"}, "bogus": 1}, "spec": {"containers": []}}),
        _case(_container(resources={"limits": {"cpu": "1"}, "unknown": "x"})),
    ]
    # Escaping: HTML characters, control characters, line separators, non-ASCII, surrogates.
    tricky = 'a<b>&"\\\n\t\r\x00\x01\x08\x0c\x1f\x7f é 😀 \u2028\u2029 \ufeff'
    c += [
        _case(_container(command=[tricky], args=["<script>", "&&", ""])),
        _case(
            {"metadata": {"labels": {tricky: tricky, "<": ">"}}, "spec": {"containers": [{"name": tricky}]}}
        ),
        _case(_pod(), pairing_protocol="<&>\u2028", topology_key="x"),
        _case(_pod(), _pod(), topology_key="<zone>&\u2029"),
        _case(_container(command=["\ud800", "\udfff x", "\ud83d\ude00"])),
        _case({"metadata": {"annotations": {"k\ud800": "v\udc00"}}, "spec": {}}),
    ]
    # Annotation filtering.
    annotations = {
        "ome.io/migration-request-v1-abc": "x",
        "ome.io/migration-request-v1-": "y",
        "ome.io/rollout-paused": "true",
        "ome.io/rollout-promote": "1",
        "ome.io/rollout-rollback": "1",
        "ome.io/rollout-other": "kept",
        "user.example/excluded": "gone",
        "user.example/kept": "kept",
    }
    c += [
        _case({"metadata": {"annotations": annotations}, "spec": {}}),
        _case({"metadata": {"annotations": annotations}, "spec": {}}, excluded=("user.example/excluded",)),
        _case(
            {"metadata": {"annotations": {"ome.io/rollout-paused": "true"}}, "spec": {}},
        ),
        _case({"metadata": {"labels": {}, "annotations": {"ome.io/rollout-paused": "true"}}, "spec": {}}),
        _case({"metadata": {"labels": {"a": None}, "annotations": {"b": None}}, "spec": {}}),
        _case({"metadata": {"labels": {"z": "1", "a": "2", "M": "3", "é": "4", "": "5"}}, "spec": {}}),
        _case({"metadata": GOLDEN_META, "spec": {}}, {"metadata": {"labels": {"w": "1"}}, "spec": {}}),
    ]
    # Integers, bools, pointers to zero values, omitempty on zero numbers.
    c += [
        _case(_container(ports=[{"containerPort": 0, "hostPort": 0, "protocol": ""}])),
        _case(_container(ports=[{"containerPort": 2147483647}, {"containerPort": -2147483648}])),
        _case(_container(ports=[{"containerPort": 2147483648}])),
        _case(_container(ports=[{"containerPort": 80.0}])),
        _case(_container(ports=[{"containerPort": True}])),
        _case(_container(ports=[{"containerPort": "80"}])),
        _case(_pod(terminationGracePeriodSeconds=0, activeDeadlineSeconds=9223372036854775807)),
        _case(_pod(activeDeadlineSeconds=9223372036854775808)),
        _case(
            _pod(
                hostNetwork=False, hostPID=True, enableServiceLinks=False, automountServiceAccountToken=False
            )
        ),
        _case(_pod(hostNetwork="true")),
        _case(_pod(priority=0, shareProcessNamespace=None, setHostnameAsFQDN=False)),
        _case(_container(securityContext={"runAsUser": 0, "privileged": False, "capabilities": {}})),
        _case(_container(stdin=False, tty=None, terminationMessagePath="")),
    ]
    # IntOrString ports.
    c += [
        _case(_container(livenessProbe={"httpGet": {"port": 8080, "path": "/h"}})),
        _case(_container(livenessProbe={"httpGet": {"port": "http"}})),
        _case(_container(livenessProbe={"httpGet": {"port": ""}})),
        _case(_container(livenessProbe={"httpGet": {"port": None}})),
        _case(_container(livenessProbe={"httpGet": {}})),
        _case(_container(readinessProbe={"tcpSocket": {"port": 2147483648}})),
        _case(_container(readinessProbe={"tcpSocket": {"port": 1.5}})),
        _case(_container(readinessProbe={"tcpSocket": {"port": True}})),
        _case(_container(startupProbe={"grpc": {"port": 0, "service": None}, "periodSeconds": 0})),
        _case(_container(livenessProbe={"exec": {"command": []}, "terminationGracePeriodSeconds": 0})),
        _case(
            _container(
                lifecycle={"preStop": {"sleep": {"seconds": 5}}, "postStart": {"httpGet": {"port": "x"}}}
            )
        ),
    ]
    # Env valueFrom, divisor always written.
    c += [
        _case(
            _container(
                env=[
                    {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                    {
                        "name": "B",
                        "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
                    },
                    {"name": "C", "valueFrom": {"resourceFieldRef": {"divisor": None}}},
                    {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {
                        "name": "E",
                        "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": False}},
                    },
                    {"name": "F", "valueFrom": {"secretKeyRef": {"key": "k"}}},
                    {"name": "G", "value": ""},
                    None,
                ],
                envFrom=[{"prefix": "P_", "configMapRef": {"name": "x"}}, {"secretRef": {}}],
            )
        ),
    ]
    # Quantities in resources, overhead, emptyDir.
    c += [
        _case(_container(resources={"limits": {"cpu": 2, "memory": 4.5, "x": None}, "requests": {}})),
        _case(_container(resources={"limits": {"cpu": "abc"}})),
        _case(_container(resources={"limits": {"cpu": True}})),
        _case(_container(resources={"limits": ["1"]})),
        _case(_container(resources={"claims": [{"name": "gpu", "request": ""}]})),
        _case(_pod(overhead={"cpu": "250m", "memory": "120Mi"}, resources={"limits": {"cpu": "4000m"}})),
        _case(_pod(volumes=[{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1024Mi"}}])),
        _case(
            _pod(volumes=[{"name": "shm", "emptyDir": {"sizeLimit": None}}, {"name": "e", "emptyDir": {}}])
        ),
    ]
    # Volumes of several kinds, including an ephemeral volume with ObjectMeta (omitzero time).
    c += [
        _case(
            _pod(
                volumes=[
                    {
                        "name": "cm",
                        "configMap": {"name": "c", "defaultMode": 420, "items": [{"key": "a", "path": "b"}]},
                    },
                    {"name": "s", "secret": {"secretName": "s", "optional": True}},
                    {"name": "h", "hostPath": {"path": "/mnt/models", "type": "DirectoryOrCreate"}},
                    {"name": "p", "persistentVolumeClaim": {"claimName": "pvc", "readOnly": False}},
                    {
                        "name": "proj",
                        "projected": {
                            "sources": [
                                {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}},
                                {"downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "x"}}]}},
                            ]
                        },
                    },
                    {"name": "nfs", "nfs": {"server": "s", "path": "/"}, "hostPath": {"path": "/x"}},
                    {"name": "img", "image": {"reference": IMAGE, "pullPolicy": "IfNotPresent"}},
                ]
            )
        ),
        _case(
            _pod(
                volumes=[
                    {
                        "name": "eph",
                        "ephemeral": {
                            "volumeClaimTemplate": {
                                "metadata": {
                                    "labels": {"a": "b"},
                                    "creationTimestamp": None,
                                    "generation": 3,
                                    "deletionTimestamp": "2024-05-06T07:08:09.123+02:00",
                                    "managedFields": [
                                        {
                                            "manager": "m",
                                            "time": "2024-01-01T00:00:00Z",
                                            "fieldsV1": {"f:a": {}},
                                        },
                                        {"fieldsV1": None},
                                        {"fieldsV1": [1, "<&>", 2.5, None, True]},
                                    ],
                                },
                                "spec": {
                                    "accessModes": ["ReadWriteOnce"],
                                    "resources": {"requests": {"storage": "10Gi"}},
                                },
                            }
                        },
                    }
                ]
            )
        ),
    ]
    for ts in (
        "2024-01-01T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "0001-01-01T00:00:00.5Z",
        "0001-01-01T00:30:00+01:00",
        "9999-12-31T23:00:00-02:00",
        "2024-02-29T1:02:03,999999999999+24:00",
        "2023-02-29T00:00:00Z",
        "2024-01-01 00:00:00Z",
        "2024-01-01T00:00:00z",
        "2024-01-01T00:00:00+2400",
        "",
    ):
        c.append(
            _case(
                _pod(
                    volumes=[
                        {
                            "name": "e",
                            "ephemeral": {
                                "volumeClaimTemplate": {"metadata": {"creationTimestamp": ts}, "spec": {}}
                            },
                        }
                    ]
                )
            )
        )
    # Affinity, tolerations, topology spread, security contexts, DNS, gates.
    selector = {
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "k", "operator": "In", "values": ["a"]}],
    }
    c += [
        _case(
            _pod(
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
                                {},
                            ]
                        },
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": {"matchFields": [{"key": "f", "operator": "In"}]}}
                        ],
                    },
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": selector, "topologyKey": "zone", "matchLabelKeys": ["x"]}
                        ]
                    },
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 100, "podAffinityTerm": {"topologyKey": "h", "namespaceSelector": {}}}
                        ]
                    },
                },
                tolerations=[
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"tolerationSeconds": 0},
                    {"tolerationSeconds": None},
                ],
                topologySpreadConstraints=[
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
                securityContext={
                    "runAsNonRoot": True,
                    "fsGroup": 1000,
                    "sysctls": [{"name": "a", "value": "1"}],
                },
                dnsConfig={"options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
                readinessGates=[{"conditionType": "ome.io/serving"}],
                schedulingGates=[{"name": "g"}],
                hostAliases=[{"ip": "1.2.3.4", "hostnames": ["a"]}],
                imagePullSecrets=[{"name": "regcred"}, {}],
                os={"name": "linux"},
            )
        ),
        _case(_pod(affinity={}), pairing_protocol="nixl-v2"),
        _case(_pod(affinity=None, securityContext={}, dnsConfig={"nameservers": []})),
    ]
    # Ephemeral and init containers.
    c += [
        _case(
            _pod(
                initContainers=[{"name": "i", "restartPolicy": "Always", "image": IMAGE}],
                ephemeralContainers=[
                    {"name": "dbg", "image": "busybox", "targetContainerName": "c", "stdin": True},
                    {"name": "dbg2", "targetContainerName": ""},
                ],
            )
        ),
    ]
    # Wrong shapes, each refused by both.
    c += [
        _case({"spec": {"containers": {"name": "x"}}}),
        _case({"spec": {"containers": ["x"]}}),
        _case({"spec": {"containers": "x"}}),
        _case({"spec": []}),
        _case({"spec": "x"}),
        _case({"metadata": {"labels": {"a": 1}}, "spec": {}}),
        _case({"metadata": {"labels": ["a"]}, "spec": {}}),
        _case({"metadata": {"generation": "x"}, "spec": {}}),
        _case({"metadata": {"annotations": {"ome.io/rollout-paused": 1}}, "spec": {}}),
        _case(_pod(nodeSelector={"a": {"b": "c"}})),
        _case(_pod(), {"spec": {"containers": 1}}),
        _case(_pod(), {"metadata": {"labels": {"a": 1}}, "spec": {}}),
        _case(_pod(), {"metadata": {"annotations": {"ome.io/rollout-paused": True}}, "spec": {}}),
        _case({"metadata": "x", "spec": {}}),
        _case({"metadata": {"annotations": "x"}, "spec": {}}),
        _case(
            {"metadata": {"annotations": {"user.example/excluded": 5}}, "spec": {}},
            excluded=("user.example/excluded",),
        ),
        _case({"metadata": {"annotations": {"ome.io/migration-request-v1-a": None}}, "spec": {}}),
    ]
    return c


# ----------------------------------------------------------------------------------------------
# Quantities: every suffix and exponent form, valid and not.
# ----------------------------------------------------------------------------------------------

SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


def _exponents() -> st.SearchStrategy[str]:
    return st.builds(
        lambda e, sign, n: e + sign + n,
        st.sampled_from("eE"),
        st.sampled_from(["", "+", "-"]),
        st.one_of(st.integers(0, 40).map(str), st.sampled_from(["00", "018", "19", "21", "27"])),
    )


def quantity_strings() -> st.SearchStrategy[str]:
    number = st.builds(
        lambda sign, lead, whole, frac: sign + lead + whole + frac,
        st.sampled_from(["", "", "", "+", "-"]),
        st.sampled_from(["", "", "0", "00"]),
        st.text("0123456789", max_size=21),
        st.one_of(st.just(""), st.text("0123456789", max_size=12).map(lambda s: "." + s)),
    )
    well_formed = st.builds(
        lambda n, s, pad: pad + n + s + pad,
        number,
        st.one_of(st.sampled_from(SUFFIXES), _exponents()),
        st.sampled_from(["", "", "", "", " ", "\u00a0"]),
    )
    junk = st.text("0123456789.+-eEinumkKMGTPx ", max_size=8)
    return st.one_of(well_formed, well_formed, well_formed, junk)


def quantity_values() -> st.SearchStrategy[Any]:
    return st.one_of(
        quantity_strings(),
        quantity_strings(),
        quantity_strings(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False, allow_infinity=False),
        st.none(),
    )


HANDWRITTEN_QUANTITIES: list[Any] = [
    *(
        f"{n}{s}"
        for n in ("0", "1", "7", "8", "1000", "1024", "1536", "0.5", "1.5", "-1", "+2")
        for s in SUFFIXES
    ),
    *(
        f"{n}{e}"
        for n in ("1", "12", "1.5", "1000")
        for e in ("e3", "E3", "e-3", "e+3", "e0", "e-9", "e-10", "e18", "e21")
    ),
    "2000m",
    "1024Mi",
    "0.5",
    "1e3",
    "1.",
    "+100m",
    "0100",
    "100000E",
    "1000E",
    "+1Ki",
    "01Ki",
    "1.5Gi",
    "16Ei",
    "8Ei",
    "1e2147483647",
    "1.5e-2147483648",
    " 1 ",
    "1E",
    "-0",
    ".",
    "+",
    "-",
    "e-20",
    "0e-20",
    "1.5e-20",
    "12345678901234567890000",
    "99999999999999999999Ki",
    "-1.5Ki",
    "1.2345678901n",
    "1.23456789015",
    "123456789012345678901234567890e-40",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "922337203685477580.7",
    "0.000000001",
    "0.0000000001",
    "-0.0000000001",
    "1ki",
    "1m5",
    "1.5.5",
    "1e",
    "1e+",
    "e3",
    "1Mi5",
    "1 Mi",
    "",
    " ",
    "\u00a01\u2003",
    "\t1",
    "1\u2028",
    "1e99999999999999999999",
    "0x10",
    "١",
    0,
    1,
    -1,
    2,
    10**19,
    0.1,
    1.0,
    1e22,
    1e-10,
    -2.5,
    123456.789,
    None,
    # Past Python's 4300-digit int/str conversion limit.
    "1" * 5000,
    "1e" + "0" * 5000 + "3",
    "0." + "0" * 5000 + "1",
    "1" * 5000 + "Ki",
    "9" * 4400 + ".5",
    "123" * 2000 + "e7",
    "1" * 5000 + "e-4990",
]


# ----------------------------------------------------------------------------------------------
# Hypothesis: pod templates over the real field names. Most are well-typed ("clean"), so that
# large templates encode; the rest ("dirty") put nulls and wrong types here and there.
# ----------------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(list('abcxyz-_./:0123456789 <>&"\\\n\té😀\u2028\x7f')), max_size=12)
NAMES = st.one_of(st.sampled_from(["c", "main", "sidecar", "ome-container", ""]), TEXT)
INT32 = st.one_of(st.integers(-5, 70000), st.sampled_from([0, 2**31 - 1, -(2**31)]))
INT64 = st.one_of(st.integers(-5, 10**6), st.sampled_from([0, 2**63 - 1]))
BOOL = st.booleans()
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.just(1.5), TEXT, st.just([]), st.just({}))


def mw(strategy: st.SearchStrategy[Any], bad: bool) -> st.SearchStrategy[Any]:
    """``strategy``; when ``bad``, now and then null or a value of the wrong type instead."""
    if not bad:
        return strategy
    return st.one_of(*([strategy] * 6), st.none(), JUNK)


def obj(required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]) -> Any:
    return st.fixed_dictionaries(required, optional=optional)


def lists(strategy: st.SearchStrategy[Any], max_size: int) -> st.SearchStrategy[Any]:
    return st.lists(strategy, max_size=max_size)


def quantities(bad: bool) -> st.SearchStrategy[Any]:
    return (
        quantity_values()
        if bad
        else st.one_of(
            quantity_strings(),
            st.integers(0, 10**6),
            st.sampled_from(["1", "4Gi", "500m", "0.5", "1e3", "2000m"]),
        )
    )


def int_or_string(bad: bool) -> st.SearchStrategy[Any]:
    good = st.one_of(INT32, st.sampled_from(["http", "8080", ""]))
    return st.one_of(good, st.sampled_from([2**31, 1.0, True, None])) if bad else good


def probe(bad: bool) -> st.SearchStrategy[Any]:
    return obj(
        {},
        {
            "httpGet": obj(
                {}, {"port": int_or_string(bad), "path": TEXT, "scheme": st.just("HTTP"), "host": TEXT}
            ),
            "tcpSocket": obj({}, {"port": int_or_string(bad)}),
            "exec": obj({}, {"command": lists(TEXT, 3)}),
            "grpc": obj({}, {"port": INT32, "service": st.one_of(st.none(), TEXT)}),
            "initialDelaySeconds": mw(INT32, bad),
            "periodSeconds": INT32,
            "failureThreshold": INT32,
            "terminationGracePeriodSeconds": st.one_of(st.none(), INT64),
            "unknownProbeField": JUNK,
        },
    )


def resources(bad: bool) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "<x>"])
    rlist = st.dictionaries(names, quantities(bad), max_size=4)
    return obj(
        {},
        {
            "limits": mw(rlist, bad),
            "requests": rlist,
            "claims": lists(obj({"name": NAMES}, {"request": TEXT}), 2),
        },
    )


def env_var(bad: bool) -> st.SearchStrategy[Any]:
    value_from = obj(
        {},
        {
            "fieldRef": obj({"fieldPath": TEXT}, {"apiVersion": st.just("v1")}),
            "resourceFieldRef": obj({"resource": TEXT}, {"divisor": quantities(bad), "containerName": NAMES}),
            "configMapKeyRef": obj({"key": TEXT}, {"name": NAMES, "optional": st.one_of(st.none(), BOOL)}),
            "secretKeyRef": obj({"key": TEXT}, {"name": NAMES, "optional": BOOL}),
            "fileKeyRef": obj({"key": TEXT, "path": TEXT, "volumeName": NAMES}, {}),
        },
    )
    var = obj({"name": NAMES}, {"value": mw(TEXT, bad), "valueFrom": value_from})
    return st.one_of(var, var, var, st.none())


def security_context(bad: bool) -> st.SearchStrategy[Any]:
    return obj(
        {},
        {
            "runAsUser": mw(INT64, bad),
            "runAsGroup": INT64,
            "runAsNonRoot": BOOL,
            "privileged": mw(BOOL, bad),
            "readOnlyRootFilesystem": BOOL,
            "allowPrivilegeEscalation": BOOL,
            "capabilities": obj({}, {"add": lists(TEXT, 2), "drop": st.just(["ALL"])}),
            "seccompProfile": obj(
                {"type": st.sampled_from(["RuntimeDefault", "Localhost"])}, {"localhostProfile": TEXT}
            ),
            "seLinuxOptions": obj({}, {"level": TEXT, "user": TEXT}),
            "procMount": st.just("Default"),
        },
    )


def container_fields(bad: bool) -> dict[str, st.SearchStrategy[Any]]:
    port = obj(
        {"containerPort": mw(INT32, bad)},
        {"name": NAMES, "protocol": st.sampled_from(["TCP", "UDP", ""]), "hostPort": INT32, "hostIP": TEXT},
    )
    mount = obj(
        {"name": NAMES, "mountPath": TEXT},
        {"readOnly": BOOL, "subPath": TEXT, "mountPropagation": st.just("None")},
    )
    env_from = obj(
        {},
        {"prefix": TEXT, "configMapRef": obj({}, {"name": NAMES}), "secretRef": obj({}, {"optional": BOOL})},
    )
    lifecycle = obj({}, {"preStop": obj({}, {"sleep": obj({"seconds": INT64}, {}), "exec": obj({}, {})})})
    return {
        "image": mw(st.sampled_from([IMAGE, "vllm/vllm-openai:v0.9.0", ""]), bad),
        "command": mw(lists(TEXT, 3), bad),
        "args": lists(TEXT, 4),
        "workingDir": TEXT,
        "ports": lists(port, 3),
        "env": mw(lists(env_var(bad), 4), bad),
        "envFrom": lists(env_from, 2),
        "resources": mw(resources(bad), bad),
        "resizePolicy": lists(obj({"resourceName": TEXT, "restartPolicy": TEXT}, {}), 1),
        "volumeMounts": lists(mount, 3),
        "livenessProbe": mw(probe(bad), bad),
        "readinessProbe": probe(bad),
        "startupProbe": probe(bad),
        "lifecycle": lifecycle,
        "terminationMessagePolicy": st.just("FallbackToLogsOnError"),
        "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", ""]),
        "securityContext": security_context(bad),
        "stdin": BOOL,
        "tty": mw(BOOL, bad),
        "restartPolicy": st.just("Always"),
        "unknownContainerField": JUNK,
    }


def container(bad: bool) -> st.SearchStrategy[Any]:
    return obj({"name": NAMES}, container_fields(bad))


def ephemeral_container(bad: bool) -> st.SearchStrategy[Any]:
    fields = container_fields(bad)
    fields["targetContainerName"] = NAMES
    return obj({"name": NAMES}, fields)


def volume(bad: bool) -> st.SearchStrategy[Any]:
    items = lists(obj({"key": TEXT, "path": TEXT}, {"mode": INT32}), 2)
    downward_items = lists(
        obj({"path": TEXT}, {"resourceFieldRef": obj({"resource": TEXT}, {"divisor": quantities(bad)})}), 2
    )
    token = obj({}, {"serviceAccountToken": obj({"path": TEXT}, {"expirationSeconds": INT64})})
    timestamps = ["2024-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2024-06-01T12:00:00.5+02:00", None]
    claim_meta = obj(
        {},
        {
            "labels": st.dictionaries(TEXT, TEXT, max_size=2),
            "creationTimestamp": st.sampled_from([*timestamps, "bad"] if bad else timestamps),
        },
    )
    claim_spec = obj(
        {},
        {
            "accessModes": st.just(["ReadWriteOnce"]),
            "resources": obj(
                {}, {"requests": st.dictionaries(st.just("storage"), quantities(bad), max_size=1)}
            ),
        },
    )
    sources = {
        "emptyDir": obj(
            {},
            {"medium": st.sampled_from(["", "Memory"]), "sizeLimit": st.one_of(st.none(), quantities(bad))},
        ),
        "configMap": obj({}, {"name": NAMES, "defaultMode": INT32, "items": items}),
        "secret": obj({}, {"secretName": NAMES, "optional": BOOL}),
        "hostPath": obj({"path": TEXT}, {"type": st.sampled_from(["", "Directory"])}),
        "persistentVolumeClaim": obj({"claimName": NAMES}, {"readOnly": BOOL}),
        "downwardAPI": obj({}, {"items": downward_items}),
        "projected": obj({}, {"sources": lists(token, 2)}),
        "csi": obj({"driver": TEXT}, {"volumeAttributes": st.dictionaries(TEXT, TEXT, max_size=2)}),
        "nfs": obj({"server": TEXT, "path": TEXT}, {}),
        "ephemeral": obj({}, {"volumeClaimTemplate": obj({"spec": claim_spec}, {"metadata": claim_meta})}),
    }
    return obj({"name": NAMES}, sources)


def label_selector() -> st.SearchStrategy[Any]:
    requirement = obj(
        {"key": TEXT, "operator": st.sampled_from(["In", "Exists"])}, {"values": lists(TEXT, 2)}
    )
    return obj(
        {},
        {"matchLabels": st.dictionaries(TEXT, TEXT, max_size=2), "matchExpressions": lists(requirement, 2)},
    )


def affinity() -> st.SearchStrategy[Any]:
    term = obj({"topologyKey": TEXT}, {"labelSelector": label_selector(), "namespaces": lists(TEXT, 1)})
    requirement = obj({"key": TEXT, "operator": st.just("In")}, {"values": lists(TEXT, 2)})
    node_term = obj({}, {"matchExpressions": lists(requirement, 2)})
    node = obj(
        {},
        {
            "requiredDuringSchedulingIgnoredDuringExecution": obj(
                {"nodeSelectorTerms": lists(node_term, 2)}, {}
            ),
            "preferredDuringSchedulingIgnoredDuringExecution": lists(
                obj({"weight": INT32, "preference": node_term}, {}), 1
            ),
        },
    )
    weighted = obj({"weight": INT32, "podAffinityTerm": term}, {})
    return obj(
        {},
        {
            "nodeAffinity": node,
            "podAffinity": obj({}, {"requiredDuringSchedulingIgnoredDuringExecution": lists(term, 2)}),
            "podAntiAffinity": obj(
                {}, {"preferredDuringSchedulingIgnoredDuringExecution": lists(weighted, 1)}
            ),
        },
    )


def pod_spec(bad: bool) -> st.SearchStrategy[Any]:
    containers = lists(st.one_of(container(bad), container(bad), container(bad), st.none()), 3)
    toleration = obj(
        {}, {"key": TEXT, "operator": st.just("Exists"), "tolerationSeconds": st.one_of(st.none(), INT64)}
    )
    pod_security = obj(
        {},
        {
            "runAsUser": INT64,
            "fsGroup": INT64,
            "supplementalGroups": lists(INT64, 2),
            "sysctls": lists(obj({"name": TEXT, "value": TEXT}, {}), 1),
        },
    )
    spread = obj(
        {"maxSkew": INT32, "topologyKey": TEXT, "whenUnsatisfiable": TEXT},
        {"labelSelector": label_selector(), "minDomains": INT32},
    )
    dns_options = lists(obj({"name": TEXT}, {"value": st.one_of(st.none(), TEXT)}), 2)
    return obj(
        {"containers": mw(containers, bad)},
        {
            "initContainers": lists(container(bad), 1),
            "ephemeralContainers": lists(ephemeral_container(bad), 1),
            "volumes": mw(lists(volume(bad), 3), bad),
            "affinity": mw(affinity(), bad),
            "tolerations": lists(toleration, 2),
            "nodeSelector": mw(st.dictionaries(TEXT, TEXT, max_size=3), bad),
            "securityContext": pod_security,
            "serviceAccountName": TEXT,
            "terminationGracePeriodSeconds": mw(INT64, bad),
            "activeDeadlineSeconds": st.one_of(st.none(), INT64),
            "hostNetwork": mw(BOOL, bad),
            "hostIPC": BOOL,
            "priority": st.one_of(st.none(), INT32),
            "priorityClassName": TEXT,
            "overhead": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities(bad), max_size=2),
            "resources": resources(bad),
            "dnsPolicy": st.sampled_from(["ClusterFirst", "Default"]),
            "dnsConfig": obj({}, {"options": dns_options}),
            "topologySpreadConstraints": lists(spread, 1),
            "readinessGates": lists(obj({"conditionType": TEXT}, {}), 1),
            "schedulingGates": lists(obj({"name": TEXT}, {}), 1),
            "imagePullSecrets": lists(obj({}, {"name": NAMES}), 2),
            "hostname": TEXT,
            "subdomain": TEXT,
            "restartPolicy": st.sampled_from(["Always", "Never"]),
            "enableServiceLinks": BOOL,
            "unknownSpecField": JUNK,
        },
    )


ANNOTATION_KEYS = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "ome.io/rollout-paused",
            "ome.io/rollout-promote",
            "ome.io/rollout-rollback",
            "ome.io/migration-request-v1-x",
            "ome.io/revision-excluded-annotation-keys",
            "example.com/tier",
        ]
    ),
)


def metadata(bad: bool) -> st.SearchStrategy[Any]:
    return obj(
        {},
        {
            "labels": mw(st.dictionaries(TEXT, st.one_of(TEXT, st.none()), max_size=3), bad),
            "annotations": st.dictionaries(ANNOTATION_KEYS, TEXT, max_size=4),
            "name": TEXT,
            "generation": mw(INT64, bad),
            "unknownMetaField": JUNK,
        },
    )


def template(bad: bool) -> st.SearchStrategy[Any]:
    return obj({}, {"metadata": mw(metadata(bad), bad), "spec": mw(pod_spec(bad), bad), "extra": JUNK})


def revision_inputs() -> st.SearchStrategy[dict[str, Any]]:
    def inputs(bad: bool) -> st.SearchStrategy[dict[str, Any]]:
        return st.builds(
            _case,
            template(bad),
            st.one_of(st.none(), st.none(), template(bad)),
            topology_key=st.one_of(st.just(""), st.just("topology.kubernetes.io/zone"), TEXT),
            pairing_protocol=st.one_of(st.just(""), st.just("nixl-v2"), TEXT),
            collision_count=st.integers(0, 3),
            scope_uid=st.sampled_from(["", "11111111-2222-3333-4444-555555555555"]),
            excluded=st.lists(ANNOTATION_KEYS, max_size=2).map(tuple),
        )

    return st.one_of(inputs(False), inputs(False), inputs(False), inputs(True))


def _collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    """``n`` examples of ``strategy``, the same ones on every run."""
    found: list[Any] = []

    @settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example: Any) -> None:
        found.append(example)

    collect()
    return found


# ----------------------------------------------------------------------------------------------
# Running both sides
# ----------------------------------------------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def go_json_line(obj_: Any) -> str:
    """JSON as Go's encoder (the API server's) would hand it to the controller.

    Non-ASCII stays raw (Quantity.UnmarshalJSON sees raw bytes), U+2028/U+2029 are escaped as
    Go escapes them, and a lone surrogate is written as its escape.
    """
    text = json.dumps(obj_, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def run_go(binary: Path, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stdin = "".join(go_json_line({"id": i, **line}) + "\n" for i, line in enumerate(lines))
    proc = subprocess.run([str(binary)], input=stdin.encode(), capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    out = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert [o["id"] for o in out] == list(range(len(lines)))
    return out


def python_revision(case: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(payload, hash, error) from the Python side."""
    try:
        payload = revision_payload(
            pod_template=case["podTemplate"],
            worker_template=case["workerTemplate"],
            topology_key=case["topologyKey"],
            pairing_protocol=case["pairingProtocol"],
            excluded_annotation_keys=case["excludedAnnotationKeys"],
        )
    except GoJSONError as e:
        return None, None, str(e)
    h = revision_hash(payload, collision_count=case["collisionCount"], scope_uid=case["scopeUID"])
    return payload.decode("utf-8"), h, None


def python_value(type_name: str, value: Any) -> tuple[str | None, str | None]:
    try:
        return gojson.encode(type_name, value).decode("utf-8"), None
    except GoJSONError as e:
        return None, str(e)


def _mismatch(what: str, inp: Any, py: Any, go: Any) -> str:
    return f"{what}\n  input: {inp!r}\n  python: {py!r}\n  go:     {go!r}"


def test_templates_match_go(gotypes_bin: Path) -> None:
    cases = golden_cases() + edge_cases() + _collect(revision_inputs(), HYPOTHESIS_TEMPLATES)
    go_cases = [{k: v for k, v in c.items() if not k.startswith("_")} for c in cases]
    results = run_go(gotypes_bin / "canonical", go_cases)
    failures: list[str] = []
    compared = refused = 0
    for case, go in zip(cases, results, strict=True):
        payload, h, err = python_revision(case)
        if "error" in go:
            refused += 1
            if err is None:
                failures.append(_mismatch("Go refuses, Python accepts", case, payload, go["error"]))
            continue
        if err is not None:
            failures.append(_mismatch("Python refuses, Go accepts", case, err, go["payload"]))
            continue
        compared += 1
        if payload != go["payload"] or h != go["hash"]:
            failures.append(
                _mismatch("bytes or hash differ", case, (payload, h), (go["payload"], go["hash"]))
            )
        if case["_expect_hash"] is not None:
            assert go["hash"] == case["_expect_hash"], "Go itself no longer reproduces a golden hash"
        if case["_expect_payload"] is not None:
            assert go["payload"] == case["_expect_payload"], "Go itself no longer reproduces the golden bytes"
    print(f"differential: {len(cases)} templates, {compared} encoded identically, {refused} refused by both")
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:20])
    assert len(cases) >= MIN_TEMPLATES
    assert compared >= MIN_TEMPLATES // 2, "too few templates were valid: the generator is off"


def _value_cases(type_name: str, values: list[Any]) -> list[dict[str, Any]]:
    return [{"type": type_name, "value": v} for v in values]


@pytest.mark.parametrize(
    ("type_name", "values"),
    [
        pytest.param("quantity", HANDWRITTEN_QUANTITIES, id="quantity-handwritten"),
        pytest.param("quantity", None, id="quantity-hypothesis"),
        pytest.param(
            "intorstring",
            [0, 1, -1, 2**31 - 1, -(2**31), 2**31, "", "http", "<x>", None, True, 1.0, 1.5, [], {}],
            id="intorstring",
        ),
        pytest.param(
            "time",
            [
                None,
                "2024-01-01T00:00:00Z",
                "2024-01-01T00:00:00.999999999999-05:30",
                "0001-01-01T00:00:00Z",
                "0000-01-01T00:00:00+00:01",
                "0000-01-01T00:00:00-24:00",
                "9999-12-31T23:59:59-23:59",
                "9999-12-31T23:59:59-24:60",
                "2024-13-01T00:00:00Z",
                "2024-04-31T00:00:00Z",
                "2000-02-29T00:00:00Z",
                "1900-02-29T00:00:00Z",
                "2024-01-01T24:00:00Z",
                "2024-01-01T00:60:00Z",
                "2024-01-01T00:00:60Z",
                "2024-01-01T00:00:00.Z",
                "2024-01-01T00:00:00+01:61",
                "2024-01-01T00:00:00+25:00",
                "2024-01-01T00:00:00",
                "2024-1-01T00:00:00Z",
                "２024-01-01T00:00:00Z",
                1,
                True,
                [],
            ],
            id="time",
        ),
    ],
)
def test_values_match_go(gotypes_bin: Path, type_name: str, values: list[Any] | None) -> None:
    if values is None:
        values = _collect(quantity_values(), HYPOTHESIS_QUANTITIES)
    results = run_go(gotypes_bin / "canonical", _value_cases(type_name, values))
    failures = []
    for value, go in zip(values, results, strict=True):
        py, err = python_value(type_name, value)
        if "error" in go:
            if err is None:
                failures.append(_mismatch("Go refuses, Python accepts", value, py, go["error"]))
        elif py != go["payload"]:
            failures.append(_mismatch("differ", value, py or err, go["payload"]))
    assert not failures, f"{len(failures)} of {len(values)} differ:\n" + "\n".join(failures[:30])


def test_field_table_is_current(gotypes_bin: Path) -> None:
    """The committed schemas/k8s-go-fields.json is what cmd/fieldtable prints today."""
    proc = subprocess.run(
        [str(gotypes_bin / "fieldtable")], capture_output=True, timeout=120, check=False, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr.decode()
    committed = (ROOT / "schemas" / "k8s-go-fields.json").read_bytes()
    assert proc.stdout == committed, "schemas/k8s-go-fields.json is stale: run tools/gotypes/regen.sh"
