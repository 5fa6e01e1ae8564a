"""Revision identity, exactly as OME's Go controller computes it (01-contract.md §9).

- :func:`revision_payload` — the canonical bytes: Go ``json.Marshal`` of
  ``{podSpec, podMeta, workerPodSpec, topologyKey, pairingProtocol}`` (§9.1).
- :func:`revision_hash` — FNV-32a over the bytes, then ``|cc=N|`` and ``|uid=UID|``, ``%08x`` (§9.2).
- :func:`revision_name`, :func:`controller_revision`, :func:`next_revision_number` (§9.4).
- :func:`revisions_to_prune` — retention (§9.5).

All pure: values in, values out. The rules follow ome-projects/ome
``pkg/controller/v1beta1/workload/revision/revision.go`` (``HashWithWorkerTopologyAndPairing``,
``TemplateMeta``, ``EnsureControllerRevisionFromHash``).
"""

from __future__ import annotations

import json
import pickle
import struct
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping
from functools import lru_cache
from types import BuiltinFunctionType
from typing import Any, Final

from omerender.gojson import GoJSONError, GoTypeError, fragment_encoder, to_bytes

__all__ = [
    "ALWAYS_EXCLUDED_ANNOTATIONS",
    "DERIVED_LABELS",
    "FNV_IN_C",
    "MIGRATION_REQUEST_ANNOTATION_PREFIX",
    "controller_revision",
    "fnv32a",
    "fnv32a_python",
    "hashed_annotations",
    "hashed_labels",
    "next_revision_number",
    "payload_matches",
    "revision_hash",
    "revision_name",
    "revision_payload",
    "revisions_to_prune",
    "stored_payload",
]

MIGRATION_REQUEST_ANNOTATION_PREFIX: Final = "ome.io/migration-request-v1-"
# revision.go isLifecycleAnnotation and isSchedulingAnnotation (constants.LocalQueue), and the
# InferenceReplica operator verbs (release-held-revision, reset-instances), which never mint a
# revision even inherited onto the pod template (ome-projects/ome inferencereplica
# revision_exclude_test.go @ ae683e3f, TestRevisionHashUnchangedByIROperatorVerbAnnotations).
ALWAYS_EXCLUDED_ANNOTATIONS: Final = frozenset(
    {
        "ome.io/rollout-paused",
        "ome.io/rollout-promote",
        "ome.io/rollout-rollback",
        "ome.io/local-queue",
        "ome.io/release-held-revision",
        "ome.io/reset-instances",
    }
)
# revision.go isDerivedLabel: Kueue's queue and priority (isSchedulingLabel) and the multi-cluster
# control plane's provenance markers (isPlacementMarker). Written from cluster state, never hashed.
DERIVED_LABELS: Final = frozenset(
    {
        "kueue.x-k8s.io/queue-name",
        "kueue.x-k8s.io/priority-class",
        "ome.io/placement-origin",
        "ome.io/placement-control-plane",
    }
)
PAIRING_PROTOCOL_ANNOTATION: Final = "ome.io/pairing-protocol"

_POD_SPEC = fragment_encoder("core/v1.PodSpec")
_STRING_MAP = fragment_encoder("map[string]string")
_OBJECT_META = fragment_encoder("meta/v1.ObjectMeta")
_STRING = fragment_encoder("string")


def hashed_annotations(annotations: Mapping[str, str], excluded_keys: Collection[str] = ()) -> dict[str, str]:
    """The annotations that feed the hash: §9.1's filter applied to ``annotations``.

    Drops ``ome.io/migration-request-v1-*``, the rollout control annotations, the replica operator
    verbs, and the replica's ``excluded_keys`` (its ``ome.io/revision-excluded-annotation-keys`` list,
    and a refs replica's own object annotation keys).
    """
    return {
        k: v
        for k, v in annotations.items()
        if not k.startswith(MIGRATION_REQUEST_ANNOTATION_PREFIX)
        and k not in ALWAYS_EXCLUDED_ANNOTATIONS
        and k not in excluded_keys
    }


def hashed_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels that feed the hash: :data:`DERIVED_LABELS` dropped (``TemplateMeta``)."""
    return {k: v for k, v in labels.items() if k not in DERIVED_LABELS}


_META_MAPS: Final = ("labels", "annotations")


def _template_parts(template: Any, name: str, *, maps_checked_later: bool) -> tuple[Any, Mapping[str, Any]]:
    """(spec, metadata) of a PodTemplateSpec-shaped dict, validated as Go would decode it.

    Go decodes the whole PodTemplateSpec, so a bad value anywhere in its metadata is an error,
    hashed or not. With ``maps_checked_later`` the labels and annotations are left to the caller,
    which validates them while encoding them.
    """
    if template is None:
        return None, {}
    if not isinstance(template, Mapping):
        raise GoTypeError("a pod template must be an object", value=template).prepend(name)
    meta = template.get("metadata")
    if meta is None:
        return template.get("spec"), {}
    try:
        if not isinstance(meta, Mapping) or not maps_checked_later:
            _OBJECT_META(meta)
        elif any(k not in _META_MAPS for k in meta):
            _OBJECT_META({k: v for k, v in meta.items() if k not in _META_MAPS})
    except GoJSONError as e:
        raise e.prepend(name, "metadata") from None
    return template.get("spec"), meta


def _map_piece(value: Any, path: tuple[str, ...]) -> str | None:
    """A map[string]string encoded, or None when it is null or empty."""
    if value is None:
        return None
    try:
        piece = _STRING_MAP(value)
    except GoJSONError as e:
        raise e.prepend(*path) from None
    return None if piece == "{}" else piece


def _hashed_annotations_piece(annotations: Any, excluded: Collection[str]) -> str | None:
    path = ("podTemplate", "metadata", "annotations")
    if not isinstance(annotations, Mapping):
        return _map_piece(annotations, path)  # null, or the decoder's type error
    kept: dict[Any, Any] = {}
    for k, v in annotations.items():
        if isinstance(k, str) and (
            k.startswith(MIGRATION_REQUEST_ANNOTATION_PREFIX)
            or k in ALWAYS_EXCLUDED_ANNOTATIONS
            or k in excluded
        ):
            if v is not None and not isinstance(v, str):  # dropped from the hash, still decoded by Go
                _map_piece({k: v}, path)
            continue
        kept[k] = v
    return _map_piece(kept, path)


def _hashed_labels_piece(labels: Any) -> str | None:
    path = ("podTemplate", "metadata", "labels")
    if not isinstance(labels, Mapping) or not DERIVED_LABELS.intersection(labels):
        return _map_piece(labels, path)
    _map_piece(labels, path)  # Go decodes the dropped labels too: a bad value is still an error
    return _map_piece({k: v for k, v in labels.items() if k not in DERIVED_LABELS}, path)


def _spec_fragment(
    spec: Any, name: str, encodings: MutableMapping[bytes, str] | None = None, pickled: bytes | None = None
) -> str:
    key = None
    if pickled is not None:  # the caller holds the spec's pickle: no need to make one
        key = pickled
        if encodings is not None and key in encodings:
            return encodings[key]
        spec = pickle.loads(pickled)
    elif encodings is not None:
        try:
            # Equal pickles are the same data, types and order included: the same Go encoding.
            key = pickle.dumps(spec, _PICKLE_PROTOCOL)
        except Exception:  # not plain data: encode it (and let the encoder name the problem)
            key = None
        if key is not None and key in encodings:
            return encodings[key]
    try:
        fragment = _POD_SPEC(spec)
    except GoJSONError as e:
        raise e.prepend(name, "spec") from None
    if encodings is not None and key is not None:
        if len(encodings) >= _ENCODINGS_MAX:
            encodings.clear()  # specs changed by their callers; keep the memory bounded
        encodings[key] = fragment
    return fragment


def revision_payload(
    *,
    pod_template: Mapping[str, Any],
    worker_template: Mapping[str, Any] | None = None,
    topology_key: str | None = None,
    pairing_protocol: str | None = None,
    excluded_annotation_keys: Collection[str] = (),
    encodings: MutableMapping[bytes, str] | None = None,
    pod_spec_pickle: bytes | None = None,
    worker_spec_pickle: bytes | None = None,
) -> bytes:
    """The canonical bytes OME hashes for a component (§9.1).

    ``pod_template`` is the default (or leader) runner's ``template`` and ``worker_template``
    the worker runner's, both PodTemplateSpec-shaped (``{"metadata": …, "spec": …}``). Only the
    pod template's labels and annotations are hashed, after :func:`hashed_annotations`.
    ``topology_key`` counts only with a worker template; an empty ``pairing_protocol`` is
    omitted. Raises a :class:`~omerender.gojson.GoJSONError` subclass (with the path inside
    ``podTemplate`` / ``workerTemplate``) for a value Go would refuse to decode. ``encodings``, when
    given, remembers pod specs' encodings by the specs' pickled bytes (renders of one memo entry
    share one, ``Render.encodings``). ``pod_spec_pickle`` / ``worker_spec_pickle``, when given, are the
    pickled pod specs, read in place of the templates' ``spec`` (a memoized render's, not yet copied).
    """
    spec, meta = _template_parts(pod_template, "podTemplate", maps_checked_later=True)
    labels = _hashed_labels_piece(meta.get("labels"))
    if not isinstance(excluded_annotation_keys, frozenset | set):
        excluded_annotation_keys = frozenset(excluded_annotation_keys)
    annotations = _hashed_annotations_piece(meta.get("annotations"), excluded_annotation_keys)
    out = ['{"podSpec":', _spec_fragment(spec, "podTemplate", encodings, pod_spec_pickle), ',"podMeta":']
    if labels or annotations:
        out.append('{"creationTimestamp":null')
        if labels:
            out += (',"labels":', labels)
        if annotations:
            out += (',"annotations":', annotations)
        out.append("}")
    else:
        out.append("null")
    if worker_template is not None:
        worker_spec, _ = _template_parts(worker_template, "workerTemplate", maps_checked_later=False)
        out += (
            ',"workerPodSpec":',
            _spec_fragment(worker_spec, "workerTemplate", encodings, worker_spec_pickle),
        )
        if topology_key:
            out += (',"topologyKey":', _STRING(topology_key))
    if pairing_protocol:
        out += (',"pairingProtocol":', _STRING(pairing_protocol))
    out.append("}")
    return to_bytes("".join(out))


_PICKLE_PROTOCOL: Final = 5
# A catalog's renders share one dict (omerender.render.memo): room for its distinct pod specs.
_ENCODINGS_MAX: Final = 2048

_FNV_OFFSET: Final = 0x811C9DC5
_FNV_PRIME: Final = 0x01000193
_MASK32: Final = 0xFFFFFFFF
_EIGHT: Final = struct.Struct("8B")


def fnv32a_python(data: bytes, h: int = _FNV_OFFSET) -> int:
    """FNV-1a, 32 bits, continuing from ``h`` (Go's ``hash/fnv.New32a``), in Python: the fallback
    where the ``fnv-hash-fast`` wheel is missing, and the reference the C one is tested against."""
    p = _FNV_PRIME
    m = _MASK32
    n8 = len(data) - len(data) % 8
    # Eight bytes per step, masking every few products: XOR with a byte and multiplication
    # both commute with reduction modulo 2**32, so a late mask gives the same result.
    for a, b, c, d, e, f, g, k in _EIGHT.iter_unpack(data[:n8]):
        h = (((h ^ a) * p ^ b) * p & m ^ c) * p
        h = ((h ^ d) * p & m ^ e) * p
        h = (((h ^ f) * p ^ g) * p & m ^ k) * p & m
    for x in data[n8:]:
        h = (h ^ x) * p & m
    return h


def _c_fnv() -> Callable[[bytes], int] | None:
    """``fnv_hash_fast.fnv1a_32`` when it is the compiled one; its own fallback is slower than ours."""
    try:
        from fnv_hash_fast import fnv1a_32
    except ImportError:
        return None
    return fnv1a_32 if isinstance(fnv1a_32, BuiltinFunctionType) else None


_C_FNV: Final = _c_fnv()
# Whether FNV-32a runs in C here (the fnv-hash-fast wheel); benchmarks report it.
FNV_IN_C: Final = _C_FNV is not None


def fnv32a(data: bytes, h: int = _FNV_OFFSET) -> int:
    """FNV-1a, 32 bits, continuing from ``h`` (Go's ``hash/fnv.New32a``): in C from the start, in
    Python when continuing or without the wheel."""
    if _C_FNV is not None and h == _FNV_OFFSET:
        return _C_FNV(data)
    return fnv32a_python(data, h)


@lru_cache(maxsize=256)
def _payload_fnv(payload: bytes) -> int:
    # Without the wheel a reconcile pass hashes the same payloads again and again; FNV in Python
    # costs tens of nanoseconds a byte, a dictionary hit on the bytes almost nothing.
    return fnv32a_python(payload)


def revision_hash(payload: bytes, *, collision_count: int = 0, scope_uid: str = "") -> str:
    """``%08x`` of FNV-32a over ``payload``, then ``|cc=<n>|``, then ``|uid=<scope UID>|`` (§9.2).

    The scope UID is the replica's own UID for a standalone replica, the parent
    InferenceService's for a projected one.
    """
    suffix = f"|cc={int(collision_count)}||uid={scope_uid}|".encode()
    if _C_FNV is not None:
        # One pass in C over the joined bytes: copying a few kilobytes costs less than a cache lookup.
        return f"{_C_FNV(bytes(payload) + suffix):08x}"
    return f"{fnv32a_python(suffix, _payload_fnv(bytes(payload))):08x}"


def revision_name(prefix: str, component: str, hash_: str) -> str:
    """``{prefix}-{component}-{hash}`` (§9.4)."""
    return f"{prefix}-{component}-{hash_}"


def controller_revision(
    *,
    name: str,
    namespace: str,
    prefix: str,
    component: str,
    owner: Mapping[str, str],
    payload: bytes,
    revision: int,
    pairing_protocol: str | None = None,
) -> dict[str, Any]:
    """The ``apps/v1`` ControllerRevision holding ``payload`` (§9.4).

    ``owner`` is the replica: ``apiVersion``, ``kind``, ``name``, ``uid``; it becomes the
    controller owner reference (``blockOwnerDeletion: true``). ``data`` is the payload decoded
    as a JSON object, so that the API server stores exactly those bytes' content.
    """
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {
            "ome.io/inferenceservice": prefix,
            "component": component,
            "ome.io/managed-by": "OMENative",
        },
    }
    if pairing_protocol:
        metadata["annotations"] = {PAIRING_PROTOCOL_ANNOTATION: pairing_protocol}
    metadata["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["name"],
            "uid": owner["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": metadata,
        "data": json.loads(payload),
        "revision": revision,
    }


def stored_payload(data: Any) -> bytes:
    """The ``data.raw`` bytes of a stored ControllerRevision, as Go's controller reads them.

    ``data`` is what a client got back: raw bytes or text, ``{"raw": ...}``, or the payload decoded
    as JSON. Decoding keeps values and key order, so encoding a decoded payload again as Go's
    ``json.Marshal`` does (``<``, ``>``, ``&`` escaped, UTF-8 kept, no spaces) gives back its bytes.
    """
    if isinstance(data, Mapping) and "raw" in data:
        data = data["raw"]
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    if isinstance(data, str):
        return data.encode()
    return to_bytes(json.dumps(data, separators=(",", ":"), ensure_ascii=False))


def payload_matches(data: Any, payload: bytes) -> bool:
    """Whether a stored ControllerRevision's ``data`` is ``payload``, byte for byte, as
    ``EnsureControllerRevisionFromHash`` compares ``existing.Data.Raw`` with the new bytes."""
    return stored_payload(data) == bytes(payload)


def _revision_number(obj: Mapping[str, Any]) -> int:
    rev = obj.get("revision")
    return rev if isinstance(rev, int) and not isinstance(rev, bool) else 0


def next_revision_number(existing: Iterable[Mapping[str, Any]]) -> int:
    """max(``.revision``) + 1 over the component's existing revisions; 1 when there are none.

    The caller passes the revisions selected by the component's labels.
    """
    return max((_revision_number(r) for r in existing), default=0) + 1


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ValueError("a ControllerRevision without metadata.name")
    return name


def revisions_to_prune(
    revisions: Iterable[Mapping[str, Any]], live_names: Collection[str], limit: int | None
) -> list[str]:
    """Names of the revisions to delete, oldest first (§9.5).

    Live revisions (``currentRevision``, ``updateRevision`` and every Instance's running and
    target revision, given as ``live_names``) are never deleted. Of the others, the ``limit``
    most recent by ``.revision`` are kept (ties broken by creation time, then name, as the
    Kubernetes controller history does). ``limit=None`` keeps everything.
    """
    if limit is None:
        return []
    if limit < 0:
        raise ValueError(f"revision history limit must be >= 0, got {limit}")
    candidates = []
    for r in revisions:
        name = _name(r)
        if name in live_names:
            continue
        meta = r.get("metadata")
        created = meta.get("creationTimestamp") if isinstance(meta, Mapping) else None
        candidates.append((_revision_number(r), created if isinstance(created, str) else "", name))
    candidates.sort()
    excess = len(candidates) - limit
    return [name for _, _, name in candidates[:excess]] if excess > 0 else []
