"""Reading YAML from files a user or an attacker wrote, at a bounded cost.

Before anything is built, one pass over the parser's events (flat, so any depth is safe) refuses a
document nested deeper than :data:`~omerender.jsonlike.MAX_DEPTH`, an alias that refers to its own
node (a cycle), and a document whose aliases expand past :data:`~omerender.jsonlike.MAX_NODES` values
(an alias bomb). That pass costs half as much as the load itself, so it is skipped where the text
alone proves the limits hold (no anchors, shallow by a bound read from columns and brackets: see
:func:`_plainly_within_limits`), which is what a catalog or replica file usually is. Then libyaml's ``CSafeLoader`` builds the documents (the pure-Python loader only
where PyYAML was built without libyaml), with three changes that keep the result JSON data: an
unquoted timestamp stays a string, as a Kubernetes client reads it into a string field; an integer
too long for Python is an error naming its line; and ``!!binary``/``!!set`` values are refused.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

import yaml

from omerender.jsonlike import MAX_DEPTH, MAX_NODES

__all__ = ["MAX_FILE_BYTES", "YamlLimitError", "load_documents", "split_documents"]

# Far above any catalog file; refuses a file that would take minutes and gigabytes to load.
MAX_FILE_BYTES: Final = 32 * 1024 * 1024

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(ValueError):
    """A document breaks one of the limits above; the message says which, where, and what to do."""


class _Loader(_BASE):  # type: ignore[misc]
    pass


def _string(loader: Any, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _cannot_hold(node: yaml.ScalarNode, tag: str) -> yaml.constructor.ConstructorError:
    shown = node.value if len(node.value) <= 40 else node.value[:40] + "…"
    return yaml.constructor.ConstructorError(
        None,
        None,
        f"!!{tag} cannot hold {shown!r}; write {_TAG_WORDS[tag]} or remove the tag",
        node.start_mark,
    )


_TAG_WORDS: Final = {"int": "a whole number", "float": "a number", "bool": "true or false"}


def _integer(loader: Any, node: yaml.ScalarNode) -> int:
    digits = str(node.value).lstrip("+-").replace("_", "")
    if not digits.isdigit() or not digits.isascii():  # !!int '', !!int 1.5: not a whole number at all
        try:
            return int(yaml.SafeLoader.construct_yaml_int(loader, node))
        except (ValueError, IndexError, KeyError):
            raise _cannot_hold(node, "int") from None
    try:
        return int(yaml.SafeLoader.construct_yaml_int(loader, node))
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"an integer of {len(node.value)} digits is out of range (Kubernetes integers have at most 19)",
            node.start_mark,
        ) from None


def _checked(tag: str, construct: Callable[[Any, yaml.ScalarNode], Any]) -> Callable[[Any, Any], Any]:
    """PyYAML's constructor for ``!!tag``, with a value the tag cannot hold (``!!bool 1.5``, ``!!float
    ~``) an error naming its line instead of Python's KeyError or ValueError. An untagged value never
    gets here with such text: the resolver only gives a plain scalar the tag its text matches."""

    def construct_checked(loader: Any, node: Any) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"!!{tag} cannot hold a list or map; remove the tag", node.start_mark
            )
        try:
            return construct(loader, node)
        except (ValueError, KeyError, IndexError, OverflowError):
            raise _cannot_hold(node, tag) from None

    return construct_checked


def _refused(loader: Any, node: yaml.Node) -> None:
    raise yaml.constructor.ConstructorError(
        None, None, f"{node.tag} values are not JSON data; use a string, number, list or map", node.start_mark
    )


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _string)
_Loader.add_constructor("tag:yaml.org,2002:int", _integer)
_Loader.add_constructor("tag:yaml.org,2002:bool", _checked("bool", yaml.SafeLoader.construct_yaml_bool))
_Loader.add_constructor("tag:yaml.org,2002:float", _checked("float", yaml.SafeLoader.construct_yaml_float))
for _tag in ("binary", "set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


def _line(event: Any) -> str:
    mark = getattr(event, "start_mark", None)
    return f"line {mark.line + 1}" if mark is not None else "somewhere"


def _check_events(text: str) -> None:
    """Depth, cycles and alias expansion, from the event stream alone."""
    try:
        _check_event_stream(text)
    except yaml.MarkedYAMLError as exc:
        # PyYAML 6.0.4 and later stop a flow collection nested past a limit of their own while
        # scanning, ahead of the events that reach ours: the same refusal, in the same words.
        if "maximum nesting depth" not in str(exc.problem):
            raise
        mark = exc.problem_mark
        where = f"line {mark.line + 1}" if mark is not None else "somewhere"
        raise YamlLimitError(
            f"{where}: nested deeper than {MAX_DEPTH} levels; Kubernetes objects are far flatter, so flatten it"
        ) from None


def _check_event_stream(text: str) -> None:
    sizes: dict[str, int] = {}  # anchor -> values its node expands to
    open_anchors: set[str] = set()
    # (anchor, values so far) per open collection; the root's count is the document's expanded size
    stack: list[tuple[str | None, int]] = []
    for event in yaml.parse(text, Loader=_BASE):
        if isinstance(event, yaml.DocumentStartEvent):
            sizes.clear()
            continue
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise YamlLimitError(
                    f"{_line(event)}: alias *{event.anchor} refers to the node that holds it (a cycle); "
                    "write the value out instead"
                )
            count = sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise YamlLimitError(
                    f"{_line(event)}: nested deeper than {MAX_DEPTH} levels; Kubernetes objects are far "
                    "flatter, so flatten it"
                )
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            stack.append((event.anchor, 1))
            continue
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, count = stack.pop()
            if anchor is not None:
                open_anchors.discard(anchor)
                sizes[anchor] = count
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        else:
            continue
        if stack:
            anchor, so_far = stack[-1]
            stack[-1] = (anchor, so_far + count)
        if stack and stack[0][1] > MAX_NODES:
            raise YamlLimitError(
                f"{_line(event)}: the document expands to more than {MAX_NODES} values once its aliases "
                "are resolved (an alias bomb?); write it without nested aliases"
            )


# Text in which the limits cannot be broken, told apart without parsing (see _plainly_within_limits).
_UNUSUAL: Final = re.compile("[&\t\r\x85\u2028\u2029]")
_DOCUMENT_START: Final = re.compile(r"^---", re.MULTILINE)
# A line's indentation and the block indicators that open collections on it ("- - ? key: …").
_BLOCK_START: Final = re.compile(r"^ *(?:[-?:] +)*", re.MULTILINE)
_PLAIN_DOCUMENT_MAX: Final = 2 * MAX_NODES


def _plainly_within_limits(text: str) -> bool:
    """Whether ``text`` cannot break the limits, by a bound read from the text alone (C-speed string
    operations), so that the event pass may be skipped. False means "not sure": the event pass decides.

    - No ``&``: no anchor, so no alias, no cycle, no alias bomb.
    - Values: each takes at least two characters with its separator, so a document of at most
      2 × MAX_NODES characters holds at most MAX_NODES.
    - Depth: a flow collection opens with its own ``[`` or ``{``, so the flow levels of a document are
      at most its count of them. A nested block collection starts at a greater column than its parent,
      except a sequence that is a mapping's value (same column), whose own children start further right;
      so block levels are at most 2 × (the greatest column a block collection starts at + 1), and that
      column is at most a line's indentation plus its leading ``- ``/``? ``/``: `` indicators.
    - Tabs and the line breaks other than ``\n`` (``\r``, NEL, LS, PS) would defeat the column count.
    """
    if _UNUSUAL.search(text):
        return False
    column = max((len(m) for m in _BLOCK_START.findall(text)), default=0)
    block = 2 * (column + 1)
    for document in _DOCUMENT_START.split(text):
        if len(document) > _PLAIN_DOCUMENT_MAX:
            return False
        if 1 + block + document.count("[") + document.count("{") > MAX_DEPTH:
            return False
    return True


# A line that starts a document: "---" at column 0 followed by a blank or the line's end. YAML forbids
# it inside any scalar (c-forbidden), so a stream split before one parses as the whole does.
_MARKER: Final = re.compile(r"^---(?=[ \t\r\n]|\Z)", re.MULTILINE)

# Runs ``work(part, parts)`` for each part, results in part order (``omerender.cli.shards.in_parts``).
PartRunner = Callable[[Callable[[int, int], list[Any]], int], Sequence[list[Any]]]


def split_documents(text: str, parts: int) -> list[str]:
    """``text`` cut before document markers into at most ``parts`` pieces of about equal length, each
    a YAML stream of whole documents; fewer where the text has fewer markers."""
    if parts <= 1:
        return [text]
    starts = [m.start() for m in _MARKER.finditer(text)]
    cuts: list[int] = []
    for k in range(1, parts):
        target = len(text) * k // parts
        cut = min(starts, key=lambda at: abs(at - target), default=0)
        if cut > (cuts[-1] if cuts else 0):
            cuts.append(cut)
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _construct(text: str) -> list[Any]:
    loader = _Loader(text)
    try:
        return [loader.get_data() for _ in iter(loader.check_data, False)]
    finally:
        loader.dispose()


def load_documents(data: bytes, *, parts: int = 1, run_parts: PartRunner | None = None) -> list[Any]:
    """Every document in ``data`` (UTF-8 YAML or JSON), as JSON-like values.

    With ``parts`` > 1 and ``run_parts``, the stream is cut before document markers and the pieces are
    built by ``run_parts`` (the CLI's in several processes): the same documents. Where a piece fails,
    the whole is loaded again here, so an error names its line in the whole file.

    Raises UnicodeDecodeError, YamlLimitError or yaml.YAMLError; the caller names the file.
    """
    text = data.decode("utf-8")
    if not _plainly_within_limits(text):
        _check_events(text)
    if run_parts is not None and parts > 1:
        pieces = split_documents(text, parts)

        def build(part: int, _: int) -> list[Any]:
            return _construct(pieces[part])

        if len(pieces) > 1:
            try:
                return [doc for built in run_parts(build, len(pieces)) for doc in built]
            except Exception:  # the whole load below raises the error, naming its line in the file
                pass
    return _construct(text)
