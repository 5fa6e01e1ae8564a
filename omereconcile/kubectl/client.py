"""The one API client every ``kubectl ome`` verb shares, and the kubectl conventions around it.

All API I/O goes through :class:`omereconcile.cluster.kube.Kube` (the only module that imports the Kubernetes
client); this module adds what a kubectl plugin needs on top: the kubeconfig's namespace, names checked
and escaped as client-go does, ``TYPE/NAME`` arguments, ``--request-timeout``, and API errors worded as
kubectl words them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from omereconcile.cluster.kube import MERGE_PATCH, ApiError, Kube, NotFound, WatchEvent

__all__ = [
    "EXIT_API",
    "EXIT_CONFLICT",
    "EXIT_FAILED",
    "EXIT_SHORT_OF_CAPACITY",
    "EXIT_USAGE",
    "GROUP_VERSION",
    "REPLICA_KIND",
    "Client",
    "ClusterError",
    "CommandError",
    "ConflictError",
    "UsageError",
    "api_error",
    "default_namespace",
    "parse_duration",
    "replica_target",
    "segment",
]

# libyaml's loader where PyYAML has it: a kubeconfig of many clusters loads ten times faster.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

GROUP_VERSION = "ome.io/v1beta1"
REPLICA_KIND = "InferenceReplica"
# OME's label and annotation names (``omerender.constants``, which a unit test keeps these equal to):
# spelled here so that the verbs that only read the API do not load the rendering library.
LABEL_INFERENCESERVICE = "ome.io/inferenceservice"
LABEL_COMPONENT = "component"
LABEL_INSTANCE_INDEX = "ome.io/instance-index"
LABEL_INSTANCE_INCARNATION = "ome.io/instance-incarnation"
LABEL_REVISION_HASH = "ome.io/revision-hash"
ANNOTATION_RESET_INSTANCES = "ome.io/reset-instances"
ANNOTATION_RELEASE_HELD_REVISION = "ome.io/release-held-revision"

# kubectl's TYPE/NAME spellings of the replica's type (``irep``, the CRD's short name, is kubectl's own).
REPLICA_TYPES: tuple[str, ...] = ("inferencereplicas", "inferencereplica", "ir")


# The exit codes every verb shares (``app.main`` maps the errors below to them).
EXIT_FAILED = 1  # the answer is a failure: a held or failed roll, a timeout, a --fail-on verdict
EXIT_USAGE = 2  # a flag or argument the command cannot use, or bad files
EXIT_CONFLICT = 3  # a guarded write's precondition failed
EXIT_SHORT_OF_CAPACITY = 4  # diff --forecast: the rolls cannot complete on the live nodes
EXIT_API = 5  # the cluster could not be read: kubeconfig, connection, or an API error


class CommandError(Exception):
    """Printed as ``error: <message>`` with exit code 1."""


class UsageError(CommandError):
    """A flag's value the command cannot use (a duration, a ``--for``): exit code 2, as argparse's."""


class ConflictError(CommandError):
    """A guarded write's precondition failed (the object changed since it was read): exit code 3."""


class ClusterError(CommandError):
    """The cluster could not be read: the kubeconfig is unusable, or the API server is unreachable or
    refused a request (a 404 of the named replica included). Exit code 5, so that a caller tells "the
    command could not run" from an answer (a verdict, a held roll, a timeout: 1)."""


# -- kubeconfig ---------------------------------------------------------------------------------------


def _kubeconfig_files(explicit: str | None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def default_namespace(explicit: str | None, context: str | None) -> str:
    """The namespace of the kubeconfig context (``--context``, else current-context); ``default`` if none.

    Files merge as kubectl merges them: the first file that sets a key wins.
    """
    current = context
    contexts: dict[str, Any] = {}
    for path in _kubeconfig_files(explicit):
        try:
            doc = yaml.load(path.read_text(), Loader=_LOADER) or {}
        except (OSError, ValueError, yaml.YAMLError):  # ValueError: bytes that are not UTF-8 text
            continue  # the client's load names the file and what is wrong with it
        if not isinstance(doc, dict):
            continue
        if current is None and doc.get("current-context"):
            current = str(doc["current-context"])
        for entry in doc.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") and entry["name"] not in contexts:
                contexts[str(entry["name"])] = entry.get("context") or {}
    ctx = contexts.get(current or "") or {}
    return str(ctx.get("namespace") or "default")


# -- names --------------------------------------------------------------------------------------------


def segment(what: str, value: str) -> str:
    """``value`` as one URL path segment: refused as client-go refuses it, then percent-escaped.

    client-go's ``rest.Request.Name``/``Namespace`` reject what
    ``k8s.io/apimachinery/pkg/api/validation/path.IsValidPathSegmentName`` flags (``.``, ``..``, or a
    ``/`` or ``%`` anywhere), with ``invalid resource name "x": [may not contain '/']``; anything else
    (spaces, ``?``, ``#``, non-ASCII) is escaped so it cannot change the request's path or query.
    """
    problems = [f"may not be '{value}'"] if value in (".", "..") else []
    problems += [f"may not contain '{ch}'" for ch in ("/", "%") if ch in value]
    if problems:
        label = "resource name" if what == "name" else what
        raise CommandError(f"invalid {label} {json.dumps(value)}: [{', '.join(problems)}]")
    return quote(value, safe="")


def replica_target(text: str) -> str:
    """The replica name of a kubectl ``TYPE/NAME`` argument (``ir/NAME``, ``inferencereplica/NAME``…)."""
    kind, sep, name = text.partition("/")
    if not sep:
        raise CommandError(
            f'"{text}" is not TYPE/NAME: name the replica as ir/{text} (or inferencereplica/{text})'
        )
    if kind.lower() not in REPLICA_TYPES:
        raise CommandError(
            f'unknown resource type "{kind}" in "{text}" (valid types: {", ".join(REPLICA_TYPES)})'
        )
    if not name:
        raise CommandError(f'"{text}" names no replica: give it as ir/NAME')
    return name


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|m|s|ms)")


def parse_duration(flag: str, text: str) -> float:
    """Seconds of a kubectl duration (``30s``, ``5m``, ``1h30m``, or a bare number of seconds)."""
    value = text.strip()
    if re.fullmatch(r"\d+(\.\d*)?", value):
        return float(value)
    pos, total = 0, 0.0
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for match in _DURATION_PART.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * scale[match.group(2)]
        pos = match.end()
    if pos != len(value) or not value:
        raise UsageError(f'invalid {flag} "{text}": give a duration such as 30s, 5m or 1h')
    return total


def api_error(err: ApiError) -> str:
    """An API error worded as kubectl words it: ``Error from server (Reason): message``."""
    if not err.status:
        return f"error: {err.message}"
    return (
        f"Error from server ({err.reason}): {err.message}"
        if err.reason
        else f"Error from server: {err.message}"
    )


# -- the client ---------------------------------------------------------------------------------------


@dataclass
class Client:
    """A :class:`Kube` for one command: its namespace, its request timeout, the replica paths."""

    kube: Kube
    namespace: str
    request_timeout: float | None = None

    def close(self) -> None:
        self.kube.close()

    # -- paths ----------------------------------------------------------------------------------------
    def ns_path(self, group_version: str, plural: str, namespace: str | None = None) -> str:
        ns = segment("namespace", namespace or self.namespace)
        base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        return f"{base}/namespaces/{ns}/{plural}"

    def replicas_path(self, namespace: str | None = None) -> str:
        return self.ns_path(GROUP_VERSION, "inferencereplicas", namespace)

    def replica_path(self, name: str, namespace: str | None = None) -> str:
        return f"{self.replicas_path(namespace)}/{segment('name', name)}"

    # -- requests -------------------------------------------------------------------------------------
    def _timeout(self) -> tuple[float, float]:
        if self.request_timeout:
            return (min(5.0, self.request_timeout), self.request_timeout)
        return (5.0, 30.0)

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        return self.kube.request("GET", path, query=query, timeout=self._timeout())

    def items(self, path: str, **query: Any) -> list[dict[str, Any]]:
        """Every item, following ``continue`` pages of 500."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self.get(path, limit=500, **{"continue": token}, **query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return items

    def patch(self, path: str, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        return self.kube.request(
            "PATCH",
            path,
            body=dict(body),
            content_type=MERGE_PATCH,
            query={"dryRun": "All" if dry_run else None},
            timeout=self._timeout(),
        )

    def replica(self, name: str) -> dict[str, Any]:
        """The replica, or ``ClusterError`` worded as kubectl's NotFound."""
        try:
            return self.get(self.replica_path(name))
        except NotFound as exc:
            raise ClusterError(
                f'inferencereplicas.ome.io "{name}" not found in namespace "{self.namespace}"'
            ) from exc

    def watch_replica(self, name: str, resource_version: str, seconds: int) -> Iterator[WatchEvent]:
        """Events of one replica (``fieldSelector=metadata.name``) for at most ``seconds``."""
        return self.kube.watch(
            self.replicas_path(),
            resource_version=resource_version,
            timeout_seconds=max(1, seconds),
            fieldSelector=f"metadata.name={name}",
        )

    def revisions(self, replica: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The replica's ControllerRevisions (its selector, owned by its UID), oldest revision first."""
        meta = replica.get("metadata") or {}
        spec = replica.get("spec") or {}
        selector = f"{LABEL_INFERENCESERVICE}={meta.get('name')},{LABEL_COMPONENT}={spec.get('component')}"
        uid = meta.get("uid")
        items = self.items(self.ns_path("apps/v1", "controllerrevisions"), labelSelector=selector)
        owned = [
            r
            for r in items
            if any(o.get("uid") == uid for o in (r.get("metadata") or {}).get("ownerReferences") or [])
        ]
        return sorted(owned, key=lambda r: (int(r.get("revision") or 0), r["metadata"]["name"]))

    def pods(self, replica_name: str, extra_selector: str = "") -> list[dict[str, Any]]:
        selector = f"{LABEL_INFERENCESERVICE}={replica_name}"
        if extra_selector:
            selector += "," + extra_selector
        items = self.items(self.ns_path("v1", "pods"), labelSelector=selector)
        return sorted(items, key=lambda p: str(p["metadata"]["name"]))

    def events(self, kind: str, name: str, uid: str, event_type: str = "") -> list[dict[str, Any]]:
        """The events of one object: its kind, name and UID (a name alone also matches the events of an
        earlier object of that name, such as a pod deleted and created again, or another kind)."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name},involvedObject.uid={uid}"
        if event_type:
            selector += f",type={event_type}"
        return self.items(self.ns_path("v1", "events"), fieldSelector=selector)
