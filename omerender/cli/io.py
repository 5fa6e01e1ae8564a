"""The command line's only I/O: reading objects from YAML files and folders, writing YAML streams."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from omerender.cli.shards import in_parts, parts_for
from omerender.cli.yamlsafe import MAX_FILE_BYTES, YamlLimitError, load_documents

__all__ = [
    "InputError",
    "dump_stream",
    "forget_origins",
    "load_objects",
    "load_one",
    "loaded_from",
    "loading_in",
    "origin_of",
    "strip_nulls",
]

_SUFFIXES = (".yaml", ".yml", ".json")


class InputError(Exception):
    """A file cannot be read or parsed; the message says which and why."""


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        # Sorted so that the same folder always loads in the same order.
        yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    elif path.is_file():
        yield path
    else:
        raise InputError(f"{path}: no such file or folder")


# How many processes may build one file's documents (``--jobs``; None: one per core). One unless
# omerender's command line says otherwise for the command it runs (loading_in).
_LOAD_JOBS: list[int | None] = [1]
# Bytes of YAML per process at the least: about 50 ms of libyaml's work, against a fork and a pickled
# result of a few milliseconds.
_BYTES_PER_PROCESS = 64 * 1024


@contextmanager
def loading_in(jobs: int | None) -> Iterator[None]:
    """Within the block, load large files in up to ``jobs`` processes (None: one per core)."""
    before = _LOAD_JOBS[0]
    _LOAD_JOBS[0] = jobs
    try:
        yield
    finally:
        _LOAD_JOBS[0] = before


def _read(path: Path) -> list[Any]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(
                f"{path}: {size} bytes is more than the {MAX_FILE_BYTES} a file may hold; split it"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if b"\0" in data[:8192]:
        raise InputError(f"{path}: a binary file, not YAML or JSON; give the manifests only")
    try:
        # Counted in blocks, so that --jobs never splits a small file.
        parts = parts_for(_LOAD_JOBS[0], len(data) // _BYTES_PER_PROCESS, per_part=1)
        return load_documents(data, parts=parts, run_parts=in_parts)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: byte {exc.start} is not UTF-8; save the file as UTF-8 (Kubernetes manifests are UTF-8)"
        ) from None
    except YamlLimitError as exc:
        raise InputError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}") from None


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    for number, doc in enumerate(_read(path), start=1):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise InputError(
                f"{path}: document {number} is a {type(doc).__name__}, expected a Kubernetes object"
            )
        kind = doc.get("kind")
        if not isinstance(kind, str | None):
            raise InputError(
                f"{path}: document {number}: kind is a {type(kind).__name__}; "
                "it must be a string such as ClusterServingRuntime"
            )
        # A `kind: List` (or FooList) holds its objects under items: flatten it.
        if (kind or "").endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                if isinstance(item, dict) and not isinstance(item.get("kind"), str | None):
                    raise InputError(f"{path}: document {number}: an item's kind is not a string")
                if isinstance(item, dict):
                    yield item
        else:
            yield doc


# Where each object loaded by this process came from, so that an error about an object (raised by
# the library, which never sees files) can name its file. A CLI process loads a few files once.
_ORIGINS: list[tuple[Mapping[str, Any], Path]] = []


def loaded_from(paths: Iterable[str | Path]) -> list[tuple[dict[str, Any], Path]]:
    """Every object in the given files and folders (recursively) with its file, in path order: the
    paths as given, a folder's files sorted by path, a file's documents in order."""
    out: list[tuple[dict[str, Any], Path]] = []
    for path in paths:
        for file in _files(Path(path)):
            for doc in _documents(file):
                _ORIGINS.append((doc, file))
                out.append((doc, file))
    return out


def load_objects(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every object in the given files and folders (recursively), multi-document YAML allowed."""
    return [doc for doc, _ in loaded_from(paths)]


def forget_origins() -> None:
    """Start a new command: objects loaded before it are not its inputs."""
    _ORIGINS.clear()


def origin_of(kind: str, name: str) -> Path | None:
    """The file the last loaded object of this kind and name came from, if any."""
    for doc, file in reversed(_ORIGINS):
        meta = doc.get("metadata")
        if doc.get("kind") == kind and isinstance(meta, Mapping) and meta.get("name", "") == name:
            return Path(file)
    return None


def load_one(path: str | Path, kind: str) -> dict[str, Any]:
    """The single object of ``kind`` in ``path``; an error if there is none or more than one."""
    found = [doc for doc in load_objects([path]) if doc.get("kind") == kind]
    if len(found) != 1:
        raise InputError(f"{path}: expected exactly one {kind}, found {len(found)}")
    return found[0]


def strip_nulls(value: Any) -> Any:
    """Drop null fields: they carry no meaning in a manifest and make noisy diffs."""
    if isinstance(value, Mapping):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [strip_nulls(v) for v in value]
    return value


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(obj: Any) -> str:
    return yaml.dump(strip_nulls(obj), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


def dump_stream(documents: Iterable[tuple[str, Any]]) -> str:
    """A multi-document YAML stream, each document after a ``# Source:`` line saying what made it."""
    return "".join(f"---\n# Source: {source}\n{dump_yaml(doc)}" for source, doc in documents)
