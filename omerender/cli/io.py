"""The command line's only I/O: reading objects from YAML files and folders, writing YAML streams."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from omerender.cli.shards import in_parts, parts_for
from omerender.loader import (
    READ_KINDS,
    Kustomization,
    Loaded,
    LoadError,
    Parallel,
    Skipped,
    Source,
    Text,
    load,
    skipped_note,
)

__all__ = [
    "InputError",
    "dump_stream",
    "forget_origins",
    "load_objects",
    "load_one",
    "loaded_from",
    "loading_in",
    "note",
    "origin_of",
    "read",
    "skipped_summary",
    "sources",
    "strip_nulls",
]

# The loader's error: a file cannot be read or parsed, or holds what no command accepts.
InputError = LoadError

# How many processes may build one file's documents (``--jobs``; None: one per core). One unless
# omerender's command line says otherwise for the command it runs (loading_in).
_LOAD_JOBS: list[int | None] = [1]
# Bytes of YAML per process at the least: about 50 ms of libyaml's work, against a fork and a pickled
# result of a few milliseconds.
_BYTES_PER_PROCESS = 64 * 1024

# Standard input, read once: "-" may stand for it under one flag only.
STDIN = "-"
_STDIN: list[Text] = []


@contextmanager
def loading_in(jobs: int | None) -> Iterator[None]:
    """Within the block, load large files in up to ``jobs`` processes (None: one per core)."""
    before = _LOAD_JOBS[0]
    _LOAD_JOBS[0] = jobs
    try:
        yield
    finally:
        _LOAD_JOBS[0] = before


def _parallel() -> Parallel:
    # Counted in blocks, so that --jobs never splits a small file.
    return Parallel(lambda size: parts_for(_LOAD_JOBS[0], size // _BYTES_PER_PROCESS, per_part=1), in_parts)


def _stdin() -> Text:
    if _STDIN:
        raise InputError("- (standard input) is given twice; it can be read once")
    import sys

    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    _STDIN.append(Text(data, "<stdin>"))
    return _STDIN[0]


def sources(paths: Iterable[str | Path], kustomizations: Iterable[str | Path] = ()) -> list[Source]:
    """The loader's sources for paths as a command line gives them: ``-`` is standard input, and each
    of ``kustomizations`` is a folder read as ``kubectl apply -k`` reads it."""
    out: list[Source] = [_stdin() if str(p) == STDIN else Path(p) for p in paths]
    folders = list(kustomizations)
    if folders:  # the module that runs a program (subprocess) only for a command that needs it
        from omerender.cli.kustomize import build

        out += [Kustomization(k, build) for k in folders]
    return out


# Where each object loaded by this process came from, so that an error about an object (raised by
# the library, which never sees files) can name its file. A CLI process loads a few files once. And
# what each load skipped, summed up in one note at the end of the command.
_ORIGINS: list[tuple[Mapping[str, Any], Path]] = []
_SKIPPED: list[Skipped] = []
_NOTES: list[str] = []


def read(
    paths: Iterable[str | Path],
    kustomizations: Iterable[str | Path] = (),
    *,
    check: bool,
    strict: bool = False,
    every_kind: bool = False,
) -> Loaded:
    """:func:`omerender.load` of the paths a command was given (see :func:`sources`), remembering
    where each object came from (:func:`origin_of`) and what was skipped (:func:`skipped_summary`)."""
    loaded = load(
        *sources(paths, kustomizations),
        check=check,
        duplicates="error" if strict else "last",
        parallel=_parallel(),
        kinds=None if every_kind else READ_KINDS,
    )
    for obj in loaded.objects:
        _ORIGINS.append((obj.raw, Path(obj.origin.source)))
    _SKIPPED.extend(loaded.skipped)
    _NOTES.extend(n for n in loaded.notes if n not in _NOTES)
    return loaded


def loaded_from(paths: Iterable[str | Path]) -> list[tuple[dict[str, Any], Path]]:
    """Every object in the given files and folders (recursively) with its file, in path order: the
    paths as given, a folder's files sorted by path, a file's documents in order."""
    return [(obj.raw, Path(obj.origin.source)) for obj in read(paths, check=False, every_kind=True).objects]


def load_objects(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every object in the given files and folders (recursively), multi-document YAML allowed."""
    return [doc for doc, _ in loaded_from(paths)]


def forget_origins() -> None:
    """Start a new command: objects loaded before it are not its inputs."""
    _ORIGINS.clear()
    _SKIPPED.clear()
    _NOTES.clear()
    _STDIN.clear()


def note(text: str) -> None:
    """A note for the end of the command (said once)."""
    if text not in _NOTES:
        _NOTES.append(text)


def skipped_summary() -> list[str]:
    """The notes of this command's loads: kustomizations read without kustomize, one line of what
    was skipped."""
    note = skipped_note(_SKIPPED)
    return [*_NOTES, *([note] if note else [])]


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
        shown = "<stdin>" if str(path) == STDIN else path
        raise InputError(f"{shown}: expected exactly one {kind}, found {len(found)}")
    return found[0]


def strip_nulls(value: Any) -> Any:
    """Drop null fields: they carry no meaning in a manifest and make noisy diffs."""
    if isinstance(value, Mapping):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [strip_nulls(v) for v in value]
    return value


# libyaml's emitter where PyYAML was built with it (about ten times faster than the pure-Python
# one, which cost a render ~25 ms of its start-up); the two write the same bytes for every golden
# case's output (tests/unit/test_yaml_c_dumper.py). The pure-Python one is used without libyaml,
# and for the one difference found (`_keeps_final_breaks`).
_BASE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BASE_DUMPER):  # type: ignore[misc]
    pass


class _PyDumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)
_PyDumper.add_representer(str, _str)


def _dump(obj: Any, dumper: type[Any]) -> str:
    text: str = yaml.dump(obj, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1000)
    return text


_BREAKS = "\n\r\x85\u2028\u2029"


def _keeps_final_breaks(value: Any) -> bool:
    """Whether a string in ``value`` (key or value) is written as a ``|+`` block: it ends with two
    line breaks, or is one. After such a block libyaml ends the document with ``...`` even when
    more keys follow, where PyYAML's emitter writes it only at the very end."""
    if isinstance(value, str):
        return len(value) > 0 and value[-1] in _BREAKS and (len(value) == 1 or value[-2] in _BREAKS)
    if isinstance(value, Mapping):
        return any(_keeps_final_breaks(k) or _keeps_final_breaks(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_keeps_final_breaks(v) for v in value)
    return False


def dump_yaml(obj: Any) -> str:
    obj = strip_nulls(obj)
    return _dump(obj, _PyDumper if _keeps_final_breaks(obj) else _Dumper)


def dump_stream(documents: Iterable[tuple[str, Any]]) -> str:
    """A multi-document YAML stream, each document after a ``# Source:`` line saying what made it."""
    return "".join(f"---\n# Source: {source}\n{dump_yaml(doc)}" for source, doc in documents)
