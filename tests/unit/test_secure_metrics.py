"""/metrics over HTTPS with TokenReview + SubjectAccessReview (the API server's answers stand in for a
fake client here; tests/cluster/test_secure_metrics_scrape.py scrapes the real process against a real one)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from omereconcile.metrics import Metrics
from omereconcile.server.secure_metrics import MetricsServer, ReviewAuthorizer, self_signed


class FakeKube:
    """Answers TokenReviews for token "good" (user alice) and "other" (user bob); only alice may read."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, Any]]] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.posts.append((path, body))
        if path.endswith("/tokenreviews"):
            user = {"good": "alice", "other": "bob"}.get(body["spec"]["token"])
            if user is None:
                return {"status": {"authenticated": False}}
            return {
                "status": {"authenticated": True, "user": {"username": user, "groups": ["g"], "uid": "u"}}
            }
        spec = body["spec"]
        assert spec["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}
        return {"status": {"allowed": spec["user"] == "alice"}}


def test_the_authorizer_asks_the_api_server_and_caches_its_answers() -> None:
    kube = FakeKube()
    now = [0.0]
    auth = ReviewAuthorizer(kube, clock=lambda: now[0])  # type: ignore[arg-type]
    assert auth.check(None, "get") == (401, "no bearer token")
    assert auth.check("Basic abc", "get")[0] == 401
    assert auth.check("Bearer nope", "get") == (401, "token not authenticated")
    assert auth.check("Bearer good", "get") == (200, "allowed")
    assert auth.check("Bearer other", "get") == (403, "bob may not get /metrics")
    posts = len(kube.posts)
    assert auth.check("Bearer good", "get")[0] == 200  # cached
    assert auth.check("Bearer other", "get")[0] == 403
    assert len(kube.posts) == posts
    now[0] = 31.0  # a denial is kept 30 s, an allowance 5 minutes
    auth.check("Bearer other", "get")
    auth.check("Bearer good", "get")
    assert len(kube.posts) == posts + 2
    sar = next(body for path, body in kube.posts if path.endswith("subjectaccessreviews"))
    assert (sar["spec"]["user"], sar["spec"]["groups"], sar["spec"]["uid"]) == ("alice", ["g"], "u")


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_https_metrics_need_an_allowed_token(tmp_path: Path) -> None:
    crt, key = self_signed(tmp_path)
    auth = ReviewAuthorizer(FakeKube())  # type: ignore[arg-type]
    srv = MetricsServer(Metrics(), "127.0.0.1", 0, authorizer=auth, cert_file=crt, key_file=key).start()
    try:
        base = f"https://127.0.0.1:{srv.port}"
        assert _get(base + "/metrics")[0] == 401
        assert _get(base + "/metrics", "other")[0] == 403
        code, text = _get(base + "/metrics", "good")
        assert code == 200
        assert "controller_runtime_reconcile_total" in text
        assert _get(base + "/healthz", "good")[0] == 404
        # No plain HTTP on the secure port: the server answers a TLS alert and closes.
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=5)
    finally:
        srv.stop()


def test_plain_http_is_served_only_without_an_authorizer() -> None:
    srv = MetricsServer(Metrics(), "127.0.0.1", 0, authorizer=None).start()
    try:
        assert not srv.secure
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=5) as resp:
            assert resp.status == 200
    finally:
        srv.stop()
