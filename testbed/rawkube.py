"""Raw-JSON requests and watches over a `kubernetes` ApiClient.

The typed models of kubernetes 37 cost ~20x `json.loads` and validate strictly; the testbed only needs
plain dicts, so it reuses the ApiClient for connection pooling, TLS and auth and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from omereconcile.cluster.kube import RestVerbs

JSON = dict[str, Any]
Timeout = float | tuple[float, float]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


class RawKube(RestVerbs):
    """Minimal JSON client; errors raise `kubernetes.client.exceptions.ApiException` with status set."""

    def __init__(self, api_client: ApiClient) -> None:
        self.api_client = api_client

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Timeout = (5.0, 30.0),
    ) -> Any:
        headers = {"Accept": "application/json"}
        payload: Any = None
        if body is not None:
            headers["Content-Type"] = content_type
            # The REST layer json.dumps() bodies of JSON/YAML content types itself: hand it objects.
            payload = json.loads(body) if isinstance(body, bytes | str) else body
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        _m, url, hdrs, _b, _pp = self.api_client.param_serialize(
            method,
            path,
            query_params=params,
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        return self.api_client.call_api(method, url, hdrs, payload, None, _request_timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Timeout = (5.0, 30.0),
    ) -> JSON:
        resp = self._send(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
        data = resp.read()
        if not 200 <= resp.status <= 299:
            raise ApiException.from_response(http_resp=resp, body=data.decode(errors="replace"), data=None)
        return cast(JSON, json.loads(data)) if data else {}

    def watch(
        self,
        path: str,
        *,
        resource_version: str | None,
        timeout_seconds: int = 60,
        on_open: Callable[[Any], None] | None = None,
        **query: Any,
    ) -> Iterator[JSON]:
        """Yield watch events (dicts with type/object) until the server closes the stream.

        The server ends the watch after `timeout_seconds`; the client read timeout is longer so a silent
        connection cannot hang the caller forever. A 410 arrives as an ERROR event, not an exception:
        callers must check for it and relist. `on_open` receives the urllib3 response so another thread
        can `shutdown()` it to end a blocked read.
        """
        q: dict[str, Any] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
            "resourceVersion": resource_version,
            **query,
        }
        resp = self._send("GET", path, query=q, timeout=(5.0, float(timeout_seconds) + 30.0))
        raw = resp.response
        if on_open is not None:
            on_open(raw)
        try:
            if not 200 <= resp.status <= 299:
                data = raw.data
                raise ApiException.from_response(
                    http_resp=resp, body=data.decode(errors="replace"), data=None
                )
            buf = b""
            for chunk in raw.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield cast(JSON, json.loads(line))
            if buf.strip():
                yield cast(JSON, json.loads(buf))
        finally:
            raw.release_conn()


def is_gone(event: JSON) -> bool:
    """True for the watch ERROR event that means "resourceVersion too old" (HTTP 410 Gone)."""
    obj = event.get("object") or {}
    return event.get("type") == "ERROR" and obj.get("code") == 410


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an ApiException, else None."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None
