"""The reconciler's only door to the API server: raw JSON over the ``kubernetes`` client.

This is the one module that imports ``kubernetes`` (an import-linter contract says so). It borrows the
client's configuration loading, TLS, auth and connection pooling, and nothing else: requests go out with
``_preload_content=False`` and answers are decoded with ``json.loads`` (the typed models cost ~20x and
validate strictly). Errors come back as this module's typed exceptions (``NotFound``, ``Conflict``,
``AlreadyExists``, ``Gone``, ``Forbidden``, ``Invalid``…), each chained to the client's original.

``Kube.writes`` counts every non-GET request, so tests and benchmarks can assert on API writes.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import kubernetes.client as _kclient
import kubernetes.config as _kconfig
import yaml
from kubernetes.client.exceptions import ApiException as _ApiException

__all__ = [
    "JSON",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "AlreadyExists",
    "ApiError",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "Kube",
    "KubeconfigError",
    "NotFound",
    "RestVerbs",
    "TooManyRequests",
    "Unavailable",
    "WatchEvent",
]

JSON = dict[str, Any]
Timeout = float | tuple[float, float]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class ApiError(Exception):
    """An API request failed. ``status`` is the HTTP code (0 when the connection itself failed)."""

    def __init__(self, status: int, reason: str, message: str, body: JSON | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409 on a write: a stale resourceVersion or a failed UID precondition. Replan."""


class AlreadyExists(Conflict):
    """409 with reason AlreadyExists on a create."""


class Gone(ApiError):
    """410: the resourceVersion is compacted. Relist."""


class Forbidden(ApiError):
    """403: RBAC (or admission) refused it."""


class Invalid(ApiError):
    """422: the object does not validate, or the namespace is terminating."""


class TooManyRequests(ApiError):
    """429: throttled; ``retry_after`` in seconds when the server said."""

    retry_after: float | None = None


class Unavailable(ApiError):
    """5xx or a connection failure: retry with backoff."""


class KubeconfigError(Exception):
    """The kubeconfig (or the pod's service account) cannot be loaded. The message is one line that
    names the file, what is wrong with it and the fix; callers print it as it is."""


_KUBECONFIG_FIX = "pass a working one with --kubeconfig (`kubectl config view --minify --flatten` writes one)"


def _kubeconfig_error(path: str | Path | None, exc: BaseException) -> KubeconfigError:
    """One line for a kubeconfig the client refused: the client's own words for what it checks (a missing
    file, an empty one, a missing context), plain words for what it trips over (bytes that are not
    text, YAML that does not parse, a document of the wrong shape)."""
    where = str(path) if path else _kconfig.kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    if path and not Path(path).exists():
        detail = "no such file"
    elif isinstance(exc, UnicodeDecodeError):
        detail = "not a text file (a kubeconfig is YAML)"
    elif isinstance(exc, _kconfig.ConfigException):
        detail = " ".join(str(exc).split())
    elif isinstance(exc, TypeError | AttributeError | KeyError | IndexError):
        detail = (
            "not a kubeconfig: a YAML mapping whose clusters, contexts and users are lists of named entries"
        )
    elif isinstance(exc, yaml.YAMLError):
        detail = "not valid YAML: " + " ".join(str(exc).split())
    else:
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    return KubeconfigError(f"{where}: {detail}; {_KUBECONFIG_FIX}")


def _error_from(exc: BaseException) -> ApiError:
    if isinstance(exc, _ApiException):
        status = int(exc.status or 0)
        body: JSON = {}
        try:
            loaded = json.loads(exc.body or "{}")
            body = loaded if isinstance(loaded, dict) else {}
        except (ValueError, TypeError):
            body = {}
        reason = str(body.get("reason") or exc.reason or "")
        message = str(body.get("message") or exc.body or exc.reason or "")
        return _by_status(status, reason, message, body)
    return Unavailable(0, "ConnectionError", f"{type(exc).__name__}: {exc}")


def _by_status(status: int, reason: str, message: str, body: JSON) -> ApiError:
    cls: type[ApiError]
    if status == 404:
        cls = NotFound
    elif status == 409:
        cls = AlreadyExists if reason == "AlreadyExists" else Conflict
    elif status == 410:
        cls = Gone
    elif status == 403:
        cls = Forbidden
    elif status == 422:
        cls = Invalid
    elif status == 429:
        cls = TooManyRequests
    elif status >= 500 or status == 0:
        cls = Unavailable
    else:
        cls = ApiError
    return cls(status, reason, message, body)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    object: JSON


@dataclass
class _Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    writes: Counter[str] = field(default_factory=Counter)  # "VERB resource" -> count
    reads: int = 0


def _resource_of(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    # /api/v1/namespaces/ns/pods/name/status -> pods/status ; /apis/g/v/namespaces/ns/x -> x
    if "namespaces" in parts:
        i = parts.index("namespaces")
        rest = parts[i + 2 :]
        if not rest:
            return "namespaces"
        return rest[0] + ("/" + rest[2] if len(rest) > 2 else "")
    base = 2 if parts and parts[0] == "api" else 3
    rest = parts[base:]
    return (rest[0] + ("/" + rest[2] if len(rest) > 2 else "")) if rest else "/".join(parts)


class RestVerbs:
    """GET/POST/PUT/PATCH/DELETE over one :meth:`request`.

    :class:`Kube` and the testbed's ``RawKube`` differ in how a request goes out and in what a failure
    raises (typed :class:`ApiError` here, the client's ``ApiException`` there), not in what a verb means:
    both subclass this and implement ``request`` only.
    """

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
        raise NotImplementedError

    def get(self, path: str, **query: Any) -> JSON:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: Any, **query: Any) -> JSON:
        return self.request("POST", path, body=body, query=query)

    def put(self, path: str, body: Any, **query: Any) -> JSON:
        return self.request("PUT", path, body=body, query=query)

    def patch(self, path: str, body: Any, content_type: str = MERGE_PATCH, **query: Any) -> JSON:
        return self.request("PATCH", path, body=body, content_type=content_type, query=query)

    def delete(self, path: str, body: Any = None, **query: Any) -> JSON:
        return self.request("DELETE", path, body=body, query=query)


class Kube(RestVerbs):
    """A thread-safe raw-JSON client. Build it with :meth:`from_kubeconfig` or :meth:`in_cluster`."""

    def __init__(self, api_client: Any, *, user_agent: str = "omereconcile") -> None:
        self._api = api_client
        self._api.user_agent = user_agent
        self._stats = _Stats()
        self.on_request: Callable[[str, str, int], None] | None = None  # (verb, resource, status)
        # Response body bytes received (requests and watch streams, decoded), for the sharding
        # benchmark and omereconcile_api_received_bytes: a sharded watch should receive about 1/N.
        self.received_bytes = 0

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_kubeconfig(cls, path: str | Path | None = None, *, context: str | None = None) -> Kube:
        """Raises :class:`KubeconfigError` when the file is missing, empty, not text, not YAML, of the
        wrong shape, or lacks the context."""
        cfg = _kclient.Configuration()
        try:
            _kconfig.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=str(path) if path else None, context=context, client_configuration=cfg
            )
        except Exception as exc:  # the client raises whatever its YAML walk meets
            raise _kubeconfig_error(path, exc) from exc
        cfg.connection_pool_maxsize = 32
        return cls(_kclient.ApiClient(configuration=cfg))

    @classmethod
    def in_cluster(cls) -> Kube:
        cfg = _kclient.Configuration()
        try:
            _kconfig.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except _kconfig.ConfigException as exc:
            raise KubeconfigError(
                f"no in-cluster service account ({' '.join(str(exc).split())}); run in a pod, or pass "
                "--kubeconfig"
            ) from exc
        cfg.connection_pool_maxsize = 32
        return cls(_kclient.ApiClient(configuration=cfg))

    @classmethod
    def auto(cls, kubeconfig: str | Path | None) -> Kube:
        """The kubeconfig when given, else in-cluster when running in a pod, else the default kubeconfig."""
        if kubeconfig:
            return cls.from_kubeconfig(kubeconfig)
        try:
            return cls.in_cluster()
        except KubeconfigError:
            return cls.from_kubeconfig(None)

    def set_user_agent(self, value: str) -> None:
        """The User-Agent of every later request (the API server's audit log records it per request)."""
        self._api.user_agent = value

    def close(self) -> None:
        self._api.close()

    # -- accounting -----------------------------------------------------------------------------------
    @property
    def writes(self) -> int:
        with self._stats.lock:
            return sum(self._stats.writes.values())

    def write_counts(self) -> dict[str, int]:
        with self._stats.lock:
            return dict(self._stats.writes)

    @property
    def reads(self) -> int:
        with self._stats.lock:
            return self._stats.reads

    def _count(self, method: str, path: str) -> None:
        with self._stats.lock:
            if method == "GET":
                self._stats.reads += 1
            else:
                self._stats.writes[f"{method} {_resource_of(path)}"] += 1

    # -- requests -------------------------------------------------------------------------------------
    def _send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None,
        body: Any,
        content_type: str,
        timeout: Timeout,
    ) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        _m, url, hdrs, _b, _pp = self._api.param_serialize(
            method, path, query_params=params, header_params=headers, auth_settings=["BearerToken"]
        )
        self._count(method, path)
        try:
            return self._api.call_api(method, url, hdrs, body, None, _request_timeout=timeout)
        except _ApiException as exc:
            raise _error_from(exc) from exc
        except Exception as exc:  # urllib3 connection errors, timeouts
            raise _error_from(exc) from exc

    def open_raw(
        self, path: str, *, query: Mapping[str, Any] | None = None, timeout: Timeout = (5.0, 60.0)
    ) -> Any:
        """GET ``path`` and hand back the undecoded response (``.status``, ``.response.stream()``).

        For text bodies such as pod logs, which ``request`` would try to decode as JSON; same auth, TLS
        and request accounting. The caller checks the status and closes the response.
        """
        return self._send("GET", path, query=query, body=None, content_type="", timeout=timeout)

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
        self.received_bytes += len(data)
        status = int(resp.status)
        if self.on_request is not None:
            self.on_request(method, _resource_of(path), status)
        if not 200 <= status <= 299:
            exc = _ApiException(status=status, reason=getattr(resp, "reason", ""))
            exc.body = data.decode(errors="replace")
            err = _error_from(exc)
            if isinstance(err, TooManyRequests):
                retry = resp.getheader("Retry-After") if hasattr(resp, "getheader") else None
                try:
                    err.retry_after = float(retry) if retry else None
                except ValueError:
                    err.retry_after = None
            raise err from exc
        return cast(JSON, json.loads(data)) if data else {}

    def get_or_none(self, path: str, **query: Any) -> JSON | None:
        try:
            return self.get(path, **query)
        except NotFound:
            return None

    def list(self, path: str, **query: Any) -> JSON:
        """A list; ``items`` is always a list."""
        out = self.get(path, **query)
        out["items"] = out.get("items") or []
        return out

    def watch(
        self,
        path: str,
        *,
        resource_version: str,
        timeout_seconds: int = 60,
        read_timeout: float | None = None,
        on_open: Callable[[Any], None] | None = None,
        **query: Any,
    ) -> Iterator[WatchEvent]:
        """Watch events until the server ends the stream (after ``timeout_seconds``).

        The client-side read timeout (default ``timeout_seconds + 15``) guards against a silent dead
        connection: it raises ``Unavailable``. A 410 (as an ERROR event or a status) raises ``Gone``: the
        caller relists. ``on_open`` receives the urllib3 response so another thread can close it.
        """
        q: dict[str, Any] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
            "resourceVersion": resource_version,
            **query,
        }
        rt = read_timeout if read_timeout is not None else float(timeout_seconds) + 15.0
        resp = self._send("GET", path, query=q, body=None, content_type="", timeout=(5.0, rt))
        raw = resp.response
        if on_open is not None:
            on_open(raw)
        try:
            if not 200 <= resp.status <= 299:
                exc = _ApiException(status=resp.status, reason="")
                exc.body = raw.data.decode(errors="replace")
                raise _error_from(exc) from exc
            buf = b""
            try:
                for chunk in raw.stream(65536, decode_content=True):
                    self.received_bytes += len(chunk)
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        if line.strip():
                            yield _event(json.loads(line))
            except ApiError:
                raise
            except Exception as exc:  # read timeout, connection reset, closed by on_open's owner
                raise Unavailable(0, "WatchBroken", f"{type(exc).__name__}: {exc}") from exc
            if buf.strip():
                yield _event(json.loads(buf))
        finally:
            raw.release_conn()


def _event(data: JSON) -> WatchEvent:
    etype = str(data.get("type") or "")
    obj = data.get("object") or {}
    if etype == "ERROR":
        status = int(obj.get("code") or 0)
        raise _by_status(status or 500, str(obj.get("reason") or ""), str(obj.get("message") or ""), obj)
    return WatchEvent(etype, obj)
