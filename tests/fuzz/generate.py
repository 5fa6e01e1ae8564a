"""Structure-aware hostile inputs: the repository's own documents, mutated.

A case is fully determined by ``(seed, index)``: the seed document set (the example replica and catalog,
each golden case) is picked and mutated by a ``random.Random`` seeded from both numbers, so a failure is
reproduced by its two numbers alone. Each mutation is kept as a :class:`Mutation` record, so a failing
case can be shrunk by dropping mutations (:func:`build` takes the list back).

Mutations: a node replaced by a value of another type or a hostile scalar (YAML tags whose value the
tag cannot hold, numbers at and past every limit, unicode the terminal or the encoder trips on); Go
templates in container strings (numbers past float range, deep nesting, ``range`` over a huge
integer); ``inferenceservice-config`` values (integers of thousands of digits, JSON nested thousands
deep); names with terminal escapes; keys dropped; subtrees shared by anchors; the file written as JSON
with ``\\uXXXX`` escapes (as Python's ``json.dump`` writes it).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "cases"
EXAMPLES = ROOT / "examples"


class Raw:
    """YAML text emitted verbatim in a flow node (tags, special floats, huge numbers)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:60]!r})"


def _deep_json(depth: int, opener: str = "[") -> str:
    closer = {"[": "]", "{": "}"}[opener]
    if opener == "{":
        return '{"a":' * depth + "1" + "}" * depth
    return opener * depth + closer * depth


# Scalars and subtrees no well-formed object holds. Raw ones are YAML text.
HOSTILE: list[Any] = [
    None,
    True,
    False,
    "",
    "x",
    [],
    {},
    [None],
    [[]],
    {"": None},
    0,
    -1,
    1.5,
    -0.0,
    2**31,
    2**31 - 1,
    2**53 + 1,
    2**63,
    -(2**63) - 1,
    2**64,
    Raw("9" * 5000),
    Raw("-" + "9" * 400),
    Raw("1e309"),
    Raw("-1e309"),
    Raw("4.9e-325"),
    Raw(".nan"),
    Raw(".inf"),
    Raw("-.inf"),
    Raw("0x" + "f" * 40),
    Raw("0o777777777777777777777777"),
    Raw("!!bool 1.5"),
    Raw("!!bool ''"),
    Raw("!!float ~"),
    Raw("!!float ''"),
    Raw("!!float x"),
    Raw("!!int ''"),
    Raw("!!int 1.5"),
    Raw("!!int " + "9" * 5000),
    Raw("!!null x"),
    Raw("!!str"),
    Raw("!!binary aGk="),
    Raw("!!binary '!!!'"),
    Raw("!!timestamp 2020-13-45"),
    Raw("!!timestamp 2020-01-01"),
    Raw("!!set {a, b}"),
    Raw("!!omap [a: 1]"),
    Raw("!!pairs [a: 1]"),
    Raw("!!map []"),
    Raw("!!seq {}"),
    Raw("!!python/object:os.system x"),
    Raw("!custom x"),
    Raw("!<tag:yaml.org,2002:int> zz"),
    Raw('"\\ud800"'),
    Raw('"\\udfff tail"'),
    Raw('"\\ud83d\\ude80"'),
    Raw('"\\x00\\x1b[2J"'),
    "\x1b[2J\x1b[H",
    "\u202egnp.exe",
    "🚀" * 3,
    "a" * 70_000,
    "{{",
    "}}",
    "-- --",
    "--objects",
    "../../etc/passwd",
    Raw(_deep_json(3000)),
    Raw(_deep_json(200)),
    Raw(_deep_json(1200, "{")),
    [0] * 5000,
    {f"k{i}": i for i in range(2000)},
]

# Go templates where OME runs them: a container's JSON (runtime containers, the replica's runners).
TEMPLATES = [
    "{{ 1e309 }}",
    "{{ -1e309 }}",
    "{{ 0x1p2000 }}",
    "{{ 99999999999999999999999999 }}",
    "{{ 1e-400 }}",
    "{{ 0x" + "f" * 40 + " }}",
    "{{ 1_000 }}",
    "{{ 'x' }}",
    "{{ 1i }}",
    "{{ range 100000000000000 }}x{{ end }}",
    "{{ range 5 }}{{ . }}{{ end }}",
    "{{ range $i, $v := 9999999999 }}{{ end }}",
    "{{ range -1 }}{{ end }}",
    "{{ range 1e20 }}{{ end }}",
    "{{" + "(" * 5000 + "1" + ")" * 5000 + "}}",
    "{{" + "(" * 100 + "1" + ")" * 100 + "}}",
    "{{ if 1 }}" * 3000 + "{{ end }}" * 3000,
    "{{ with 1 }}" * 80 + "{{ end }}" * 80,
    '{{ printf "%d" 1e309 }}',
    '{{ printf "%0999999999d" 1 }}',
    '{{ printf "%*d" 999999999 1 }}',
    '{{ printf "%.999999999f" 1.0 }}',
    "{{ index .Name 99999999999999999999 }}",
    "{{ slice .Name 0 99999999999 }}",
    "{{ len 1 }}",
    "{{ print " + "1 " * 20000 + "}}",
    '{{ .Name | printf "%q" | printf "%q" }}',
    "{{ $x := 1 }}" * 2000,
    "{{ and " + "1 " * 5000 + "}}",
    "{{ eq 1 1.5 }}",
    "{{ lt 9223372036854775807 9223372036854775808 }}",
    "{{ not }}",
    "{{ .Name.Foo.Bar }}",
    "{{ /* c */ }}",
    "{{- -}}",
    '{{ template "x" }}',
    '{{ block "b" . }}{{ end }}',
    '{{ define "d" }}{{ end }}',
    "{{ break }}",
    "{{ .Name",
    '{{ "\\ud800" }}',
    "{{ '\\U0010ffff' }}",
    "{{ '\\U00110000' }}",
]

CONFIG_KEYS = ["deploy", "acceleratorResources", "inferenceReplica", "lifecycle"]
CONFIG_VALUES = [
    _deep_json(5000),
    _deep_json(5000, "{"),
    '{"controllerIdentity": {"usernames": ' + _deep_json(3000) + "}}",
    '{"terminationGracePeriodSeconds": ' + "9" * 5000 + "}",
    '{"revisionHistoryLimit": ' + "9" * 5000 + "}",
    '{"revisionHistoryLimit": 1e309}',
    '{"autoMigrate": {"maxAttempts": ' + "9" * 5000 + "}}",
    '{"updateRetry": {"maxAttempts": 3, "multiplier": 1e308, "initialDelay": "1s", "maxDelay": "99999999999h"}}',
    '{"updateRetry": {"maxAttempts": 3, "multiplier": NaN, "initialDelay": "1s", "maxDelay": "2s"}}',
    '{"instanceReadyTimeout": "9999999999999999999h"}',
    '{"instanceReadyTimeout": "1e309s"}',
    '{"stuckPodGracePeriod": "-9223372036854775808ns"}',
    '{"defaultDeploymentMode": ' + _deep_json(3000) + "}",
    '{"defaultDeploymentMode": "\\ud800"}',
    '"\\ud83d\\ude80"',
    '["nvidia.com/gpu", ' + _deep_json(3000) + "]",
    "nvidia.com/gpu," * 5000,
    "\x1b[2J",
    "Infinity",
    "-Infinity",
    "NaN",
    '{"a": 1, "a": 2}',
    "",
]


@dataclass
class Mutation:
    kind: str
    doc: int
    path: tuple[Any, ...]
    value: Any = None

    def __repr__(self) -> str:
        return (
            f"{self.kind} doc{self.doc} at {'.'.join(map(str, self.path)) or '(root)'}: {self.value!r:.120}"
        )


@dataclass
class Case:
    seed_name: str
    command: str  # render | validate | lint | library | webhook
    docs: list[Any]
    mutations: list[Mutation] = field(default_factory=list)
    as_json: bool = False  # the objects file written as escaped JSON (json.dump)
    split: bool = False  # objects one per file in a folder (lint, --objects DIR)

    def describe(self) -> str:
        lines = [f"seed document set: {self.seed_name}; command: {self.command}"]
        lines += [f"  {m!r}" for m in self.mutations]
        return "\n".join(lines)


def _seed_sets() -> list[tuple[str, list[Any]]]:
    sets: list[tuple[str, list[Any]]] = []
    example = [yaml.safe_load((EXAMPLES / "llama-pool.yaml").read_text())]
    example += [yaml.safe_load(p.read_text()) for p in sorted((EXAMPLES / "catalog").glob("*.yaml"))]
    sets.append(("examples/", example))
    for path in sorted(GOLDEN.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        sets.append((f"golden/cases/{path.name}", docs))
    return sets


SEEDS = _seed_sets()


def _paths(
    node: Any, prefix: tuple[Any, ...] = (), seen: frozenset[int] = frozenset()
) -> list[tuple[Any, ...]]:
    out = [prefix]
    if id(node) in seen or len(prefix) > 60:
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k), seen | {id(node)})
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i), seen | {id(node)})
    return out


def _string_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [p for p in _paths(node, prefix) if isinstance(_get(node, p), str)]


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = _get(root, path[:-1])
    parent[path[-1]] = value
    return root


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _other_type(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return rng.choice([[value], "x", 1, None, [], True])
    if isinstance(value, list):
        return rng.choice([{"a": value}, "x", 0, None, [[x] for x in value[:3]], {}])
    if isinstance(value, str):
        return rng.choice([[value], {value: value}, 1, True, None, [], Raw("1e309")])
    if isinstance(value, bool):
        return rng.choice(["true", 1, [], None])
    if isinstance(value, int | float):
        return rng.choice([str(value), [value], {"v": value}, True, Raw("9" * 5000), Raw(".nan")])
    return rng.choice(["x", [], {}])


def propose(rng: random.Random, docs: list[Any]) -> Mutation:
    """One mutation of ``docs`` (which it does not change)."""
    d = rng.randrange(len(docs))
    doc = docs[d]
    roll = rng.random()
    paths = _paths(doc)
    if roll < 0.30:
        path = rng.choice(paths)
        return Mutation("hostile", d, path, _copy(rng.choice(HOSTILE)))
    if roll < 0.50:
        path = rng.choice(paths)
        return Mutation("retype", d, path, _other_type(_get(doc, path), rng))
    if roll < 0.65:
        strings = [p for p in _string_paths(doc) if p and p[0] == "spec"]
        if strings:
            path = rng.choice(strings)
            tpl = rng.choice(TEMPLATES)
            return Mutation("template", d, path, rng.choice([tpl, f"--x={tpl}", tpl + _get(doc, path)]))
    if roll < 0.72:
        cms = [i for i, x in enumerate(docs) if isinstance(x, dict) and x.get("kind") == "ConfigMap"]
        if cms:
            return Mutation(
                "config", rng.choice(cms), ("data", rng.choice(CONFIG_KEYS)), rng.choice(CONFIG_VALUES)
            )
        return Mutation("add-config", d, (), (rng.choice(CONFIG_KEYS), rng.choice(CONFIG_VALUES)))
    if roll < 0.78:
        return Mutation(
            "name",
            d,
            ("metadata", "name"),
            rng.choice(["\x1b[2J\x1b[31mred", "a\nb", "\u202eevil", "x" * 300, "", "-", "A_B", "\ud800"]),
        )
    if roll < 0.88:
        keyed = [p for p in paths if p and isinstance(p[-1], str)]
        if keyed:
            return Mutation("drop", d, rng.choice(keyed))
    if roll < 0.94:
        path = rng.choice(paths)
        return Mutation("anchor", d, path, rng.choice(paths))
    return Mutation("duplicate-doc", d, ())


def apply(docs: list[Any], m: Mutation) -> list[Any]:
    """``docs`` with ``m`` applied (paths that no longer exist leave them unchanged)."""
    if m.doc >= len(docs):
        return docs
    try:
        target = _get(docs[m.doc], m.path[:-1]) if m.path else None
        if m.path and not isinstance(target, dict | list):
            return docs
        if (
            m.path
            and isinstance(target, list)
            and not (isinstance(m.path[-1], int) and m.path[-1] < len(target))
        ):
            return docs
        if (
            m.path
            and isinstance(target, dict)
            and m.kind not in ("config", "name")
            and m.path[-1] not in target
        ):
            return docs
    except (KeyError, IndexError, TypeError):
        return docs
    if m.kind in ("hostile", "retype", "template", "name"):
        docs[m.doc] = _set(docs[m.doc], m.path, _copy(m.value))
    elif m.kind == "config":
        data = docs[m.doc].get("data") if isinstance(docs[m.doc], dict) else None
        if isinstance(data, dict):
            data[m.path[1]] = m.value
    elif m.kind == "add-config":
        key, value = m.value
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
                "data": {key: value},
            }
        )
    elif m.kind == "drop":
        parent = _get(docs[m.doc], m.path[:-1])
        if isinstance(parent, dict):
            parent.pop(m.path[-1], None)
    elif m.kind == "anchor":
        try:
            shared = _get(docs[m.doc], m.value)
        except (KeyError, IndexError, TypeError):
            return docs
        if m.path and tuple(m.path[: len(m.value)]) != tuple(m.value):  # a shared node, not a cycle
            docs[m.doc] = _set(docs[m.doc], m.path, shared)
    elif m.kind == "duplicate-doc":
        docs.append(_copy(docs[m.doc]))
    return docs


COMMANDS = ["render", "render", "validate", "lint", "library", "library", "webhook"]


def generate(seed: int, index: int) -> Case:
    rng = random.Random(seed * 1_000_003 + index)
    name, base = SEEDS[rng.randrange(len(SEEDS))]
    docs = _copy(base)
    case = Case(name, rng.choice(COMMANDS), docs)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 5])):
        m = propose(rng, case.docs)
        case.mutations.append(m)
        case.docs = apply(case.docs, m)
    case.as_json = rng.random() < 0.1
    case.split = rng.random() < 0.3
    return case


def build(case: Case, mutations: list[Mutation]) -> Case:
    """The case's seed documents with only ``mutations`` applied (shrinking)."""
    base = next(docs for name, docs in SEEDS if name == case.seed_name)
    out = Case(case.seed_name, case.command, _copy(base), list(mutations), case.as_json, case.split)
    for m in mutations:
        out.docs = apply(out.docs, m)
    return out


# -- text --------------------------------------------------------------------------------------------


def emit(node: Any, anchors: dict[int, str] | None = None) -> str:
    """Flow-style YAML for ``node``: JSON for plain values, Raw text verbatim, anchors for shared
    containers (a container met twice is written once with ``&aN`` and then as ``*aN``)."""
    anchors = {} if anchors is None else anchors
    seen: dict[int, int] = {}
    _count(node, seen)
    return _emit(node, {k for k, n in seen.items() if n > 1}, anchors)


def _count(node: Any, seen: dict[int, int]) -> None:
    if isinstance(node, dict | list):
        seen[id(node)] = seen.get(id(node), 0) + 1
        if seen[id(node)] > 1:
            return
        for child in node.values() if isinstance(node, dict) else node:
            _count(child, seen)


def _emit(node: Any, shared: set[int], anchors: dict[int, str]) -> str:
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, dict | list):
        if id(node) in anchors:
            return "*" + anchors[id(node)]
        prefix = ""
        if id(node) in shared:
            anchors[id(node)] = f"a{len(anchors)}"
            prefix = f"&{anchors[id(node)]} "
        if isinstance(node, dict):
            body = ", ".join(f"{_scalar(k)}: {_emit(v, shared, anchors)}" for k, v in node.items())
            return prefix + "{" + body + "}"
        return prefix + "[" + ", ".join(_emit(v, shared, anchors) for v in node) + "]"
    return _scalar(node)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: YAML's escape for it
        return '"' + "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text) + '"'
    return json.dumps(text, ensure_ascii=False)


def as_json(node: Any) -> str:
    """The document as Python's ``json.dump`` writes it (ASCII, surrogate pairs escaped), or YAML flow
    when it holds a Raw node."""

    def plain(n: Any) -> Any:
        if isinstance(n, Raw):
            raise ValueError
        if isinstance(n, dict):
            return {k: plain(v) for k, v in n.items()}
        if isinstance(n, list):
            return [plain(v) for v in n]
        return n

    try:
        return json.dumps(plain(node), indent=1)
    except (ValueError, RecursionError):
        return emit(node)


def files_of(case: Case) -> list[tuple[str, str]]:
    """(file name, text): the replica's file first, then the objects' (one file or one per object)."""
    writer = as_json if case.as_json else emit
    docs = case.docs
    first = [("replica.yaml", writer(docs[0]))] if docs else [("replica.yaml", "")]
    rest = docs[1:]
    if case.split:
        return first + [(f"objects/o{i}.yaml", writer(d)) for i, d in enumerate(rest)]
    return [*first, ("objects.yaml", "\n---\n".join(writer(d) for d in rest))]
