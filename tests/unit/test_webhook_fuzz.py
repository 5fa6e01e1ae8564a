"""Fuzz the webhook with random AdmissionReviews: every input gets an answer in the webhook's words.

Three layers: the body gate (:func:`parse_review`) on random bytes and JSON, the review pipeline
(``ClusterReader.handle``) on random reviews built around a real InferenceReplica with random parts
replaced, and the HTTPS server end to end on a smaller sample.

CI runs derandomized (the same examples every run). A longer, random run (README):

    WEBHOOK_FUZZ_EXAMPLES=20000 WEBHOOK_FUZZ_RANDOM=1 python3 -m pytest tests/unit/test_webhook_fuzz.py
"""

from __future__ import annotations

import copy
import json
import os
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omereconcile.cluster.kube import NotFound
from omereconcile.server.webhook import PATH, AdmissionServer, ClusterReader, ServerLimits, parse_review
from omereconcile.server.webhook_http import Refused
from testbed.pki import CertificateAuthority

EXAMPLES = int(os.environ.get("WEBHOOK_FUZZ_EXAMPLES", "400"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=not os.environ.get("WEBHOOK_FUZZ_RANDOM"),
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Words that would mean Python's own text (an exception, a repr) reached a client.
LEAKS = (
    "Traceback",
    "Error(",
    "object has no attribute",
    "NoneType",
    "not subscriptable",
    "pydantic",
    "{'",
    "['",
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

BASE: dict[str, Any] = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceReplica",
    "metadata": {"name": "pool-a", "namespace": "demo", "annotations": {}, "ownerReferences": []},
    "spec": {
        "component": "engine",
        "replicas": 2,
        "pacing": {"partition": 1},
        "autoscaler": {"class": "External"},
        "runners": [
            {
                "name": "default",
                "size": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "i", "volumeMounts": []}]}},
            }
        ],
    },
}
PATHS = [
    ("apiVersion",),
    ("kind",),
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "annotations"),
    ("metadata", "ownerReferences"),
    ("spec",),
    ("spec", "component"),
    ("spec", "replicas"),
    ("spec", "modelRef"),
    ("spec", "runtimeRef"),
    ("spec", "parentRef"),
    ("spec", "pacing"),
    ("spec", "autoscaler"),
    ("spec", "lifecycle"),
    ("spec", "runners"),
    ("spec", "placementReplicaLimit"),
]
INTERESTING = st.sampled_from(
    [
        {"ome.io/composed-fields": "svc:paused"},
        {"ome.io/controller-write": "true"},
        {"ome.io/migration-request-v1-a": "{}"},
        [
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "name": "s",
                "uid": "u",
                "controller": True,
            }
        ],
        {"name": "p"},
        {"class": "KEDA", "keda": {"triggers": [], "idleReplicaCount": 9}},
        {"class": "HPA", "hpa": {"metrics": [{"type": "Pods"}, {}, "x"]}},
        {"minReadySeconds": 3},
        "decoder",
        -1,
        10**30,
    ]
)


@st.composite
def replicas(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)  # not an object at all, sometimes
    obj = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(PATHS))
        value = copy.deepcopy(draw(INTERESTING | json_values))  # sampled values are shared objects
        parent: Any = obj
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            if draw(st.booleans()):
                parent[path[-1]] = value
            else:
                parent.pop(path[-1], None)
    return obj


@st.composite
def reviews(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": draw(st.text(min_size=1, max_size=36)),
        "operation": draw(st.sampled_from(["CREATE", "UPDATE"] * 8 + ["DELETE", "CONNECT", ""]))
        if draw(st.integers(0, 9))
        else draw(json_values),
        "userInfo": draw(
            st.fixed_dictionaries(
                {"username": st.sampled_from(["alice", "system:serviceaccount:ome:ctl"]) | json_values},
                optional={"groups": st.lists(st.text(max_size=8), max_size=3) | json_values},
            )
            | json_values
        ),
        "object": draw(replicas()),
    }
    for key in ("oldObject", "namespace", "name"):
        if draw(st.integers(0, 4)) > (0 if key == "oldObject" else 2):
            request[key] = draw(replicas() if key == "oldObject" else st.text(max_size=10) | json_values)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


class FakeKube:
    """The reader's only cluster: one ConfigMap (identity configured or not), no runtimes or services."""

    def __init__(self, data: dict[str, str] | None) -> None:
        self.data = data

    def get(self, path: str, **q: Any) -> dict[str, Any]:
        if self.data is None:
            raise NotFound(404, "NotFound", "not found")
        return {"data": self.data}

    def list(self, path: str, **q: Any) -> dict[str, Any]:
        return {"items": []}


READERS = [
    ClusterReader(FakeKube(data), ome_namespace="ome", cache_ttl=3600)  # type: ignore[arg-type]
    for data in (
        {},
        {
            "inferenceReplica": json.dumps(
                {"controllerIdentity": {"usernames": ["system:serviceaccount:ome:ctl"]}}
            )
        },
        {"inferenceReplica": "{"},
        None,
    )
]


def check_answer(review: dict[str, Any], out: dict[str, Any]) -> None:
    assert out["kind"] == "AdmissionReview"
    resp = out["response"]
    assert resp["uid"] == review["request"]["uid"]
    assert isinstance(resp["allowed"], bool)
    status = resp["status"]
    assert status["code"] in (200, 400, 403, 500)
    if not resp["allowed"]:
        assert isinstance(status["message"], str)
        assert status["message"]
        assert not any(leak in status["message"] for leak in LEAKS), status["message"]
    json.dumps(out)  # the server can always encode it


@FUZZ
@given(review=reviews(), reader=st.sampled_from(READERS))
def test_every_review_gets_an_answer_echoing_its_uid(review: dict[str, Any], reader: ClusterReader) -> None:
    check_answer(review, reader.handle(parse_review(json.dumps(review).encode())))


@FUZZ
@given(body=st.binary(max_size=64) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_body_is_a_review_or_a_400_in_the_webhooks_words(body: bytes) -> None:
    try:
        doc = parse_review(body)
    except Refused as refused:
        refusal: Refused | None = refused
    else:
        refusal = None
        assert isinstance(doc["request"]["uid"], str)
    if refusal is not None:
        assert refusal.code == 400
        assert refusal.message.startswith(("the request body", "the AdmissionReview"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdmissionServer, ssl.SSLContext]]:
    ca = CertificateAuthority("fuzz-ca")
    crt, key = ca.issue("localhost", dns_names=("localhost",), server=True).write(
        tmp_path_factory.mktemp("tls"), "tls"
    )
    srv = AdmissionServer(
        READERS[1].handle,
        cert_file=crt,
        key_file=key,
        host="127.0.0.1",
        port=0,
        limits=ServerLimits(workers=4),
    ).start()
    try:
        yield srv, ssl.create_default_context(cadata=ca.cert_pem.decode())
    finally:
        srv.stop()


def _post(port: int, ctx: ssl.SSLContext, body: bytes) -> tuple[int, dict[str, Any]]:
    head = f"POST {PATH} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        tls.sendall(head.encode() + body)
        buf = b""
        while chunk := tls.recv(65536):
            buf += chunk
    status, _, rest = buf.partition(b"\r\n\r\n")
    return int(status.split(b" ", 2)[1]), json.loads(rest)


@settings(FUZZ, max_examples=max(EXAMPLES // 8, 20))
@given(review=reviews())
def test_over_https_every_review_is_answered(
    server: tuple[AdmissionServer, ssl.SSLContext], review: dict[str, Any]
) -> None:
    srv, ctx = server
    code, out = _post(srv.port, ctx, json.dumps(review).encode())
    assert code == 200
    check_answer(review, out)
