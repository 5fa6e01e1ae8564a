"""Reading Kubernetes manifests: files, folders, text, streams and kustomizations, at a bounded cost.

The one reader of ``omerender``: the command line reads through it, and a tool can too::

    from omerender import load

    loaded = load("catalog/", "replicas/llama-pool.yaml")
    catalog = loaded.catalog()
    for replica in loaded.replicas():
        ...

It is the only module of the library that reads files, and only those it is given (paths, streams,
text); it reads no environment and runs no program (a kustomization is built by the ``build``
function its caller passes, see :class:`Kustomization`).

What it keeps, what it skips, what it refuses:

- **Folders** are read recursively, their ``.yaml``, ``.yml`` and ``.json`` files sorted by path; a
  file named directly is read whatever its name.
- **Kept**: the kinds some command reads (:data:`READ_KINDS`: models, runtimes, fine-tuned weights,
  InferenceServices, InferenceReplicas) and the ``inferenceservice-config`` ConfigMap of namespace
  ``ome``. A ``kind: List`` (or ``FooList``) is expanded into its items.
- **Skipped**, counted in :attr:`Loaded.skipped` (one summary line, :meth:`Loaded.skipped_note`): a
  document that is not an object, or has no ``kind`` or no ``apiVersion`` (a kustomize patch list, a
  ``kustomization.yaml``), and objects of any other kind (a Deployment, another ConfigMap).
- **Refused** (:class:`LoadError`, every problem listed at once): a file that cannot be read, is not
  UTF-8, breaks the YAML limits (:mod:`omerender.yamlsafe`) or is larger than
  :data:`~omerender.yamlsafe.MAX_FILE_BYTES`; a ``kind`` that is not a string; an ``ome.io`` kind
  OME does not define (``ClusterBaseModle``); and, with ``check`` (the default), a catalog object
  ``kubectl apply`` with strict field validation would refuse (:func:`omerender.crds.object_problems`).
- **Duplicates** (two catalog objects of one kind, scope and name): ``kubectl apply -R`` applies them
  in path order, so the later one is what the cluster keeps. The same here, each duplicate described
  in :attr:`Loaded.duplicates`; ``duplicates="error"`` raises instead, listing them all.
  InferenceReplicas are never resolved this way: a command that reads them says which repeats.

Every kept object carries its :class:`Origin`: the file (or ``<stdin>``, a text's name, ``kustomize
build DIR``), the document's number in it and, for a List's item, the item's index.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import IO, Any, Final, Literal, TypeAlias

import yaml

from omerender._records import record
from omerender.catalog import CATALOG_KINDS, CLUSTER_SCOPED, Catalog, ControllerIdentity, is_operator_config
from omerender.crds import unknown_kind
from omerender.errors import OmeRenderError
from omerender.models import (
    FineTunedWeight,
    InferenceReplica,
    InferenceService,
    ModelResource,
    RuntimeResource,
    parse_object,
)
from omerender.yamlsafe import MAX_FILE_BYTES, PartRunner, YamlLimitError, load_documents

__all__ = [
    "READ_KINDS",
    "SUFFIXES",
    "Kustomization",
    "KustomizeBuild",
    "LoadError",
    "Loaded",
    "LoadedObject",
    "Origin",
    "Parallel",
    "Skipped",
    "Source",
    "Text",
    "load",
    "load_text",
]

REPLICA: Final = "InferenceReplica"
# Every kind some command reads; the loader keeps these (and the operator ConfigMap) and skips others.
READ_KINDS: Final = CATALOG_KINDS | {REPLICA}
# The files a folder contributes (kubectl apply -R reads the same three).
SUFFIXES: Final = (".yaml", ".yml", ".json")
KUSTOMIZATION_FILES: Final = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# The kustomization fields that change objects; read without kustomize, they are not applied.
_TRANSFORMS: Final = (
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "images",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "replicas",
    "replacements",
    "vars",
    "configMapGenerator",
    "secretGenerator",
    "generators",
    "transformers",
    "components",
    "helmCharts",
    "crds",
    "openapi",
)
# Nested kustomizations deeper than this are a mistake (or a cycle through symlinks).
_KUSTOMIZE_DEPTH: Final = 32
_FEW: Final = 3  # names quoted in a summary line before "…"


class LoadError(OmeRenderError, ValueError):
    """Input that cannot be read or is refused; the message names the file (and object) and the fix."""


@record
class Text:
    """Manifests given as text (or bytes, UTF-8); ``name`` stands for the file in messages."""

    content: str | bytes
    name: str = "<text>"


# The built stream of the kustomization in a folder, or None when no kustomize is at hand.
KustomizeBuild: TypeAlias = Callable[[Path], bytes | None]


@record
class Kustomization:
    """A folder read as ``kubectl apply -k`` reads it.

    ``build`` (the command line passes one that runs ``kustomize build`` or ``kubectl kustomize``)
    returns the built stream; without one, or when it returns None, the ``resources:`` (and ``bases:``)
    of the ``kustomization.yaml`` are read, recursively, and :attr:`Loaded.notes` says which of its
    fields (patches, images, name prefixes, generators…) were not applied.
    """

    path: str | os.PathLike[str]
    build: KustomizeBuild | None = None


@record
class Parallel:
    """Load a large file's documents in several parts: ``parts(size)`` says how many for a file of
    ``size`` bytes, ``run`` builds them (the command line's forked processes)."""

    parts: Callable[[int], int]
    run: PartRunner


Source: TypeAlias = "str | os.PathLike[str] | Text | Kustomization | IO[str] | IO[bytes]"


@record
class Origin:
    """Where an object was read: ``source`` (a file's path, ``<stdin>``, a text's name or ``kustomize
    build DIR``), the document's number in it (from 1), and the item's index in a List (from 0)."""

    source: str
    document: int
    item: int | None = None

    def __str__(self) -> str:
        where = f"{self.source}, document {self.document}"
        return where if self.item is None else f"{where}, item {self.item}"


Model: TypeAlias = InferenceReplica | ModelResource | RuntimeResource | FineTunedWeight | InferenceService
_MODELS: Final[Mapping[str, type[Any]]] = {
    "BaseModel": ModelResource,
    "ClusterBaseModel": ModelResource,
    "ServingRuntime": RuntimeResource,
    "ClusterServingRuntime": RuntimeResource,
    "FineTunedWeight": FineTunedWeight,
    "InferenceService": InferenceService,
    REPLICA: InferenceReplica,
}


@record(eq=False)
class LoadedObject:
    """One kept object as read (``raw``, a dict of JSON data), where it was read, and the input it
    came from as given (``given``: the path, stream or text passed to :func:`load`)."""

    raw: dict[str, Any]
    origin: Origin
    given: str

    @property
    def kind(self) -> str:
        """The object's ``kind`` (empty when it has none)."""
        return str(self.raw.get("kind") or "")

    @property
    def name(self) -> str:
        """The object's ``metadata.name`` (empty when it has none)."""
        meta = self.raw.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        return name if isinstance(name, str) else ""

    @property
    def namespace(self) -> str | None:
        """The namespace (``default`` when unset) of a namespaced kind; None at cluster scope."""
        if self.kind in CLUSTER_SCOPED:
            return None
        meta = self.raw.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        return namespace if isinstance(namespace, str) and namespace else "default"

    def who(self) -> str:
        """``Kind namespace/name`` (``Kind name`` at cluster scope), as messages name it."""
        name = self.name or "<unnamed>"
        return f"{self.kind} {name}" if self.namespace is None else f"{self.kind} {self.namespace}/{name}"

    def model(self) -> Model:
        """The typed object (:func:`omerender.parse_object` for its kind); raises InvalidObjectError
        when it does not fit, LoadError for a kind without a model (the operator ConfigMap)."""
        model = _MODELS.get(self.kind)
        if model is None:
            raise LoadError(f"{self.origin.source}: {self.who()}: no typed model for kind {self.kind}")
        parsed: Model = parse_object(model, self.raw)
        return parsed


@record
class Skipped:
    """A document no command reads: ``why`` is ``"no kind or apiVersion"`` or ``"kind <Kind>"``."""

    origin: Origin
    why: str
    given: str


@record
class Loaded:
    """What :func:`load` read: the kept objects in path order (duplicates resolved), what it skipped,
    each duplicate resolved (one line each, naming both files), and notes (a kustomization read
    without kustomize)."""

    objects: tuple[LoadedObject, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    duplicates: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # Every input as given, in order, with the number of files it was read from.
    inputs: tuple[tuple[str, int], ...] = field(default=())
    # Whether the catalog objects were checked against OME's CRDs as they were read (load's check).
    checked: bool = True

    def of_kind(self, *kinds: str) -> tuple[LoadedObject, ...]:
        """The kept objects of these kinds, in path order."""
        return tuple(o for o in self.objects if o.kind in kinds)

    def raw(self) -> list[dict[str, Any]]:
        """The kept objects as dicts, in path order (the objects themselves: copy before editing)."""
        return [o.raw for o in self.objects]

    def catalog_objects(self) -> list[dict[str, Any]]:
        """The objects a :class:`~omerender.Catalog` reads (no InferenceReplicas)."""
        return [o.raw for o in self.objects if o.kind in CATALOG_KINDS or is_operator_config(o.raw)]

    def catalog(
        self,
        *,
        controller_identity: ControllerIdentity | None = None,
        accelerator_resources: Sequence[str] | None = None,
        operator_config: Mapping[str, Any] | None = None,
        strict: bool | None = None,
    ) -> Catalog:
        """:meth:`Catalog.from_objects` of :meth:`catalog_objects`, with these arguments passed on.
        ``strict`` None (the default) checks the objects only when the load did not (``check=False``)."""
        return Catalog.from_objects(
            self.catalog_objects(),
            controller_identity=controller_identity,
            accelerator_resources=accelerator_resources,
            operator_config=operator_config,
            strict=not self.checked if strict is None else strict,
        )

    def replicas(self) -> tuple[InferenceReplica, ...]:
        """Every InferenceReplica, checked as ``kubectl apply`` would check it (a LoadError naming the
        file, the replica and every problem) and parsed; two with one namespace and name are an error."""
        from omerender.crds import replica_problems

        out: list[InferenceReplica] = []
        seen: dict[tuple[str, str], str] = {}
        for obj in self.of_kind(REPLICA):
            problems = replica_problems(obj.raw)
            if problems:
                raise LoadError(f"{obj.origin.source}: {obj.who()}: " + "; ".join(problems))
            key = (obj.namespace or "default", obj.name)
            if key in seen:
                raise LoadError(
                    f"{obj.origin.source}: {obj.who()} appears twice (also in {seen[key]}); keep one"
                )
            seen[key] = obj.origin.source
            out.append(parse_object(InferenceReplica, obj.raw, strict=False))  # checked just above
        return tuple(out)

    def skipped_note(self) -> str | None:
        """One line saying what was skipped, or None when nothing was."""
        return skipped_note(self.skipped)


def skipped_note(skipped: Iterable[Skipped]) -> str | None:
    """One line for documents skipped: how many of each reason, with the first few places or kinds."""
    shapeless: list[str] = []
    kinds: dict[str, int] = {}
    for item in skipped:
        if item.why.startswith("kind "):
            kinds[item.why[5:]] = kinds.get(item.why[5:], 0) + 1
        else:
            shapeless.append(item.origin.source)
    if not shapeless and not kinds:
        return None
    parts: list[str] = []
    if shapeless:
        files = list(dict.fromkeys(shapeless))
        more = f", … {len(files) - _FEW} more files" if len(files) > _FEW else ""
        parts.append(
            f"{len(shapeless)} without kind or apiVersion (patch lists and the like: "
            f"{', '.join(files[:_FEW])}{more})"
        )
    if kinds:
        count = sum(kinds.values())
        named = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in named[:_FEW])
        more = f", … {len(named) - _FEW} more kinds" if len(named) > _FEW else ""
        parts.append(f"{count} of kinds no command reads ({shown}{more})")
    total = len(shapeless) + sum(kinds.values())
    return f"skipped {total} document{'s' if total != 1 else ''}: {'; '.join(parts)}"


# -- reading -----------------------------------------------------------------------------------


def _decode(data: bytes, where: str, parallel: Parallel | None) -> list[Any]:
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(
            f"{where}: {len(data)} bytes is more than the {MAX_FILE_BYTES} a file may hold; split it"
        )
    if b"\0" in data[:8192]:
        raise LoadError(f"{where}: a binary file, not YAML or JSON; give the manifests only")
    try:
        if parallel is not None:
            return load_documents(data, parts=parallel.parts(len(data)), run_parts=parallel.run)
        return load_documents(data)
    except UnicodeDecodeError as exc:
        raise LoadError(
            f"{where}: byte {exc.start} is not UTF-8; save the file as UTF-8 (Kubernetes manifests are UTF-8)"
        ) from None
    except YamlLimitError as exc:
        raise LoadError(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise LoadError(f"{where}: not valid YAML: {exc}") from None


def _read_file(path: Path, parallel: Parallel | None) -> list[Any]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LoadError(
                f"{path}: {size} bytes is more than the {MAX_FILE_BYTES} a file may hold; split it"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror}") from None
    return _decode(data, str(path), parallel)


def _read_stream(stream: IO[Any], where: str) -> bytes:
    try:
        data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise LoadError(f"{where}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise LoadError(f"{where}: byte {exc.start} is not UTF-8; give UTF-8 manifests") from None
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _folder_files(folder: Path) -> list[Path]:
    # Sorted so that the same folder always loads in the same order.
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def kustomization_file(folder: Path) -> Path | None:
    """The ``kustomization.yaml`` (or ``.yml``, ``Kustomization``) of ``folder``, if it has one."""
    return next((folder / n for n in KUSTOMIZATION_FILES if (folder / n).is_file()), None)


@record(frozen=False)
class _Unit:
    """One stream of documents to read: a file, or bytes already read."""

    where: str
    path: Path | None = None
    data: bytes | None = None


def _kustomization_units(
    folder: Path, build: KustomizeBuild | None, notes: list[str], depth: int = 0
) -> list[_Unit]:
    if depth > _KUSTOMIZE_DEPTH:
        raise LoadError(f"{folder}: kustomizations nested deeper than {_KUSTOMIZE_DEPTH}; is there a cycle?")
    file = kustomization_file(folder)
    if file is None:
        if not folder.exists():
            raise LoadError(f"-k {folder}: no such folder")
        raise LoadError(
            f"-k {folder}: no kustomization.yaml in the folder; give it with -f to read its files instead"
        )
    if depth == 0 and build is not None:
        built = build(folder)
        if built is not None:
            return [_Unit(f"kustomize build {folder}", data=built)]
    docs = _read_file(file, None)
    spec = docs[0] if docs and isinstance(docs[0], Mapping) else {}
    units: list[_Unit] = []
    for key in ("resources", "bases"):
        entries = spec.get(key) or []
        if not isinstance(entries, list):
            raise LoadError(f"{file}: {key} is a {type(entries).__name__}; it must be a list of paths")
        for entry in entries:
            if not isinstance(entry, str) or not entry:
                raise LoadError(f"{file}: {key} holds {entry!r}; each entry is a path")
            if "://" in entry or entry.startswith(("github.com/", "git@")):
                raise LoadError(
                    f"{file}: {key} entry {entry} is remote; put kustomize (or kubectl) on PATH to read it"
                )
            target = folder / entry
            if target.is_dir():
                units += _kustomization_units(target, None, notes, depth + 1)
            elif target.is_file():
                units.append(_Unit(str(target), path=target))
            else:
                raise LoadError(f"{file}: {key} entry {entry}: no such file or folder")
    unapplied = [k for k in _TRANSFORMS if spec.get(k)]
    if unapplied:
        notes.append(
            f"{file}: read without kustomize (neither kustomize nor kubectl on PATH): its resources are "
            f"read as listed, and {', '.join(unapplied)} not applied"
        )
    return units


def _units(source: Any, parallel: Parallel | None, notes: list[str]) -> tuple[str, list[_Unit]]:
    """(the source as given, the streams it stands for)."""
    if isinstance(source, Text):
        content = source.content
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return source.name, [_Unit(source.name, data=data)]
    if isinstance(source, Kustomization):
        folder = Path(source.path)
        return f"-k {folder}", _kustomization_units(folder, source.build, notes)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            found = kustomization_file(path)
            if found is not None:
                notes.append(
                    f"{path}: read as a folder, every file in it; it holds {found.name}: read it with "
                    f"-k {path} to get what kubectl apply -k applies"
                )
            return str(path), [_Unit(str(p), path=p) for p in _folder_files(path)]
        if path.is_file():
            return str(path), [_Unit(str(path), path=path)]
        raise LoadError(f"{path}: no such file or folder")
    if hasattr(source, "read"):
        where = str(getattr(source, "name", "") or "<stream>")
        return where, [_Unit(where, data=_read_stream(source, where))]
    raise LoadError(
        f"cannot load a {type(source).__name__}; give a path, an open file, omerender.loader.Text or "
        "omerender.loader.Kustomization"
    )


# -- sorting the documents ---------------------------------------------------------------------


def _documents(unit: _Unit, parallel: Parallel | None) -> Iterator[tuple[Any, Origin]]:
    docs = (
        _read_file(unit.path, parallel)
        if unit.path is not None
        else _decode(unit.data or b"", unit.where, parallel)
    )
    for number, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        origin = Origin(unit.where, number)
        if not isinstance(doc, dict):
            yield doc, origin
            continue
        kind = doc.get("kind")
        if not isinstance(kind, str | None):
            raise LoadError(
                f"{unit.where}: document {number}: kind is a {type(kind).__name__}; "
                "it must be a string such as ClusterServingRuntime"
            )
        # A `kind: List` (or FooList) holds its objects under items: expand it.
        if (kind or "").endswith("List") and isinstance(doc.get("items"), list):
            for index, item in enumerate(doc["items"]):
                if isinstance(item, dict) and not isinstance(item.get("kind"), str | None):
                    raise LoadError(f"{unit.where}: document {number}: an item's kind is not a string")
                if item is not None:
                    yield item, Origin(unit.where, number, index)
        else:
            yield doc, origin


def _key(obj: LoadedObject) -> tuple[str, str, str] | None:
    if not obj.name:
        return None  # a nameless object is reported by the strict check, not matched as a duplicate
    return (obj.kind, obj.namespace or "", obj.name)


def _without_duplicates(
    items: list[LoadedObject], strict: bool
) -> tuple[list[LoadedObject], tuple[str, ...]]:
    last: dict[tuple[str, str, str], int] = {}
    for index, obj in enumerate(items):
        key = _key(obj)
        if key is not None and obj.kind != REPLICA:
            last[key] = index
    dropped: set[int] = set()
    lines: list[str] = []
    previous: dict[tuple[str, str, str], int] = {}
    for index, obj in enumerate(items):
        key = _key(obj)
        if key is None or key not in last:
            continue
        if key in previous:
            earlier = items[previous[key]].origin.source
            dropped.add(previous[key])
            file = obj.origin.source
            where = f"in {file}" if earlier == file else f"in {earlier} and again in {file}"
            lines.append(f"{obj.who()} is defined {'twice ' if earlier == file else ''}{where}")
        previous[key] = index
    if lines and strict:
        raise LoadError(
            f"{len(lines)} duplicate catalog object{'s' if len(lines) != 1 else ''} (--strict); keep one of each:\n  "
            + "\n  ".join(lines)
        )
    return [obj for index, obj in enumerate(items) if index not in dropped], tuple(lines)


def load(
    *sources: Source,
    duplicates: Literal["last", "error"] = "last",
    check: bool = True,
    parallel: Parallel | None = None,
    kinds: Collection[str] | None = READ_KINDS,
) -> Loaded:
    """Read every source in order (see the module docstring for what is kept, skipped and refused).

    A source is a path (file or folder), an open file or stream (``sys.stdin``), a :class:`Text`
    or a :class:`Kustomization`. ``duplicates="error"`` makes a repeated catalog object an error
    instead of "the later one wins"; ``check=False`` skips the strict field validation of catalog
    objects (they are still parsed when a :class:`~omerender.Catalog` is built). ``kinds`` are the
    kinds kept (besides the operator ConfigMap); None keeps every object (a Node list, say) and skips
    only documents that are not objects. ``parallel`` reads a large file's documents in several parts
    (:class:`Parallel`: how many parts for a size, and the runner that builds them; the command line
    passes forked processes); None, the default, reads everything in this process. Raises
    :class:`LoadError` with every problem found.
    """
    if duplicates not in ("last", "error"):
        raise LoadError(f"duplicates must be 'last' or 'error', not {duplicates!r}")
    kept: list[LoadedObject] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    inputs: list[tuple[str, int]] = []
    problems: list[str] = []
    for source in sources:
        given, units = _units(source, parallel, notes)
        inputs.append((given, len(units)))
        for unit in units:
            for doc, origin in _documents(unit, parallel):
                if not isinstance(doc, dict):
                    skipped.append(Skipped(origin, "no kind or apiVersion", given))
                    continue
                kind, api_version = doc.get("kind"), doc.get("apiVersion")
                if (kinds is None or kind in kinds) or is_operator_config(doc):
                    kept.append(LoadedObject(doc, origin, given))
                elif not kind or not api_version:
                    skipped.append(Skipped(origin, "no kind or apiVersion", given))
                elif (unknown := unknown_kind(api_version, kind)) is not None:
                    meta = doc.get("metadata")
                    name = meta.get("name") if isinstance(meta, Mapping) else None
                    problems.append(f"{origin.source}: {kind} {name or '<unnamed>'}: kind: {unknown}")
                else:
                    skipped.append(Skipped(origin, f"kind {kind}", given))
    if check:
        from omerender.crds import object_problems

        problems += [
            f"{obj.origin.source}: {obj.who()}: {problem}"
            for obj in kept
            if obj.kind in CATALOG_KINDS or is_operator_config(obj.raw)
            for problem in object_problems(obj.raw)
        ]
    if problems:
        raise LoadError(
            f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in the catalog objects, as "
            "kubectl apply with strict field validation reports them:\n  " + "\n  ".join(problems)
        )
    objects, lines = _without_duplicates(kept, duplicates == "error")
    return Loaded(tuple(objects), tuple(skipped), lines, tuple(notes), tuple(inputs), check)


def load_text(
    text: str | bytes,
    name: str = "<text>",
    *,
    duplicates: Literal["last", "error"] = "last",
    check: bool = True,
    parallel: Parallel | None = None,
    kinds: Collection[str] | None = READ_KINDS,
) -> Loaded:
    """:func:`load` of one text (a YAML stream or JSON); ``name`` stands for the file in messages, and
    the other arguments are :func:`load`'s."""
    return load(Text(text, name), duplicates=duplicates, check=check, parallel=parallel, kinds=kinds)
