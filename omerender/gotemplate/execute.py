"""Go's ``text/template`` executor (exec.go, funcs.go) run the way ``html/template`` runs it.

``html/template`` rewrites every output action of a template whose text never leaves HTML text context
(a placeholder template is JSON with ``<`` ``>`` ``&`` escaped, so it never does) to end in
``_html_template_htmlescaper`` (escape.go ``escapeAction``, ``ensurePipelineContains``); a pipeline that
already ends in the predefined ``html`` escaper keeps it instead, and a predefined escaper anywhere
else is refused. Field access, maps, variables, ``if``/``with``/``range`` and the common built-ins are
executed with Go's results and error texts; a construct outside that set raises
:class:`GoTemplateUnsupported` rather than guessing what Go would print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from omerender.gotemplate.lex import go_quote
from omerender.gotemplate.nodes import (
    Action,
    Bool,
    Branch,
    Chain,
    Command,
    Dot,
    Field,
    Identifier,
    ListNode,
    LoopControl,
    Nil,
    Node,
    Number,
    Pipe,
    StringNode,
    TemplateCall,
    Text,
    Variable,
)
from omerender.gotemplate.parse import GoTemplateError, GoTemplateUnsupported, Tree
from omerender.gotemplate.values import INVALID, NIL, GoValue, sprint, sprint_args

__all__ = ["MAX_OUTPUT", "MAX_RANGE_STEPS", "GoTemplateUnsupported", "execute"]

# What one placeholder pass may cost: Go runs any range to its end, but a container whose JSON is past
# the API server's 3 MiB request limit can never be created, and a hundred thousand iterations is far past any
# placeholder a runtime writes.
MAX_RANGE_STEPS: Final = 100_000
MAX_OUTPUT: Final = 3 * 1024 * 1024

_PREDEFINED_ESCAPERS = ("html", "urlquery")
_HTML_ESCAPER = "_html_template_htmlescaper"


_HTML_TEMPLATE_TABLE = {
    "\0": "\ufffd",
    '"': "&#34;",
    "&": "&amp;",
    "'": "&#39;",
    "+": "&#43;",
    "<": "&lt;",
    ">": "&gt;",
}
_TEXT_TEMPLATE_TABLE = {"\0": "\ufffd", '"': "&#34;", "&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;"}


def html_template_escape(s: str) -> str:
    """``html/template``'s ``htmlEscaper`` (``htmlReplacer`` with ``badRunes``)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in _HTML_TEMPLATE_TABLE:
            out.append(_HTML_TEMPLATE_TABLE[ch])
        elif 0xFDD0 <= o <= 0xFDEF or 0xFFF0 <= o <= 0xFFFF:
            out.append(f"&#x{o:x};")
        else:
            out.append(ch)
    return "".join(out)


def text_template_escape(s: str) -> str:
    """``text/template``'s ``HTMLEscapeString`` (the predefined ``html`` function)."""
    return "".join(_TEXT_TEMPLATE_TABLE.get(ch, ch) for ch in s)


class _CallError(Exception):
    """A built-in function's own error; the caller prefixes ``error calling <name>:``."""


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _State:
    def __init__(self, tree: Tree, data: GoValue) -> None:
        self.tree = tree
        self.node: Node | None = None
        self.vars: list[tuple[str, GoValue]] = [("$", data)]
        self.out: list[str] = []
        self.steps = 0  # range iterations so far, every range counted
        self._measured = (0, 0)  # (parts of out, their length) when last measured

    def size(self) -> int:
        """The output's length so far, measuring only what was appended since the last call."""
        parts, length = self._measured
        length += sum(len(part) for part in self.out[parts:])
        self._measured = (len(self.out), length)
        return length

    # -- errors ---------------------------------------------------------------------------------
    def errorf(self, message: str) -> GoTemplateError:
        name = self.tree.name
        if self.node is None:
            return GoTemplateError(f"template: {name}: {message}")
        pos = len(self.tree.text[: self.node.pos].encode("utf-8"))
        line = 1 + self.tree.text.count("\n", 0, self.node.pos)
        if line > 1:
            pos -= len(self.tree.text[: self.tree.text.rfind("\n", 0, self.node.pos) + 1].encode("utf-8"))
        where = f"{name}:{line}:{pos}"
        return GoTemplateError(f"template: {where}: executing {go_quote(name)} at <{self.node}>: {message}")

    def unsupported(self, what: str) -> GoTemplateUnsupported:
        return GoTemplateUnsupported(f"{what} (at <{self.node}>) is not reproduced by omerender")

    # -- walking --------------------------------------------------------------------------------
    def walk(self, dot: GoValue, node: Node) -> None:
        self.node = node
        if isinstance(node, Text):
            self.out.append(node.text)
        elif isinstance(node, ListNode):
            for child in node.nodes:
                self.walk(dot, child)
        elif isinstance(node, Action):
            value = self.action_value(dot, node.pipe)
            if not node.pipe.decl:
                self.out.append(str(value.val))
        elif isinstance(node, Branch):
            if node.keyword == "range":
                self.walk_range(dot, node)
            else:
                self.walk_if_or_with(dot, node)
        elif isinstance(node, LoopControl):
            raise _Break() if node.keyword == "break" else _Continue()
        elif isinstance(node, TemplateCall):
            raise self.unsupported("{{template}}")
        else:  # pragma: no cover - the parser builds no other statement node
            raise self.errorf(f"unknown node: {node}")

    def action_value(self, dot: GoValue, pipe: Pipe) -> GoValue:
        """An output action after html/template's rewrite: the pipeline, then its escaper."""
        if pipe.decl:
            return self.eval_pipeline(dot, pipe)
        last = pipe.cmds[-1].args[0]
        if isinstance(last, Identifier) and last.name in _PREDEFINED_ESCAPERS:
            if last.name != "html":
                raise self.unsupported("the urlquery escaper")
            return self.eval_pipeline(dot, pipe)  # `html` stays: it stands for the htmlescaper
        value = self.eval_pipeline(dot, pipe)
        return GoValue("string", html_template_escape(sprint_args([_as_arg(value)])))

    def walk_if_or_with(self, dot: GoValue, node: Branch) -> None:
        depth = len(self.vars)
        value = self.eval_pipeline(dot, node.pipe)
        if _truth(value):
            self.walk(value if node.keyword == "with" else dot, node.body)
        elif node.else_body is not None:
            self.walk(dot, node.else_body)
        del self.vars[depth:]

    def walk_range(self, dot: GoValue, node: Branch) -> None:
        depth = len(self.vars)
        value = self.eval_pipeline(dot, node.pipe)
        items: Iterable[tuple[GoValue, GoValue]] = []
        if value.kind == "map":
            elem_type = value.typ[value.typ.index("]") + 1 :]
            mapping = value.val or {}
            items = [(GoValue("string", k), GoValue(elem_type, mapping[k])) for k in sorted(mapping)]
        elif value.kind == "slice":
            if value.typ != "[]string":
                raise self.unsupported(f"range over {value.typ}")
            items = [(GoValue("int", i), GoValue("string", x)) for i, x in enumerate(value.val or [])]
        elif value.typ in ("int", "int64"):
            # Go iterates an integer lazily (reflect.Value.Seq), so neither does this build the range.
            items = ((GoValue("int", i), GoValue("int", i)) for i in range(int(value.val)))
        elif value.typ in ("invalid", ""):
            items = []
        else:
            raise self.unsupported(f"range over {value.typ}")
        ran = False
        for key, elem in items:
            ran = True
            self.steps += 1
            if self.steps > MAX_RANGE_STEPS:
                raise GoTemplateUnsupported(
                    f"ranges of more than {MAX_RANGE_STEPS:,} iterations in all (at <{node.pipe}>) are not "
                    "reproduced by omerender"
                )
            if self.size() > MAX_OUTPUT:
                raise GoTemplateUnsupported(
                    f"output past {MAX_OUTPUT >> 20} MiB (at <{node.pipe}>) is not reproduced by omerender: "
                    "a container that large is past the API server's request limit"
                )
            decl = node.pipe.decl
            if len(decl) == 1:
                self.vars.append((decl[0].idents[0], elem))
            elif len(decl) == 2:
                self.vars.append((decl[0].idents[0], key))
                self.vars.append((decl[1].idents[0], elem))
            try:
                self.walk(elem, node.body)
            except _Continue:
                pass
            except _Break:
                break
            finally:
                del self.vars[depth + (1 if node.pipe.decl else 0) :]
        if not ran and node.else_body is not None:
            self.walk(dot, node.else_body)
        del self.vars[depth:]

    # -- pipelines and commands -----------------------------------------------------------------
    def eval_pipeline(self, dot: GoValue, pipe: Pipe) -> GoValue:
        self.node = pipe
        value: GoValue | None = None
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
        assert value is not None
        for var in pipe.decl:
            if pipe.is_assign:
                for i in range(len(self.vars) - 1, -1, -1):
                    if self.vars[i][0] == var.idents[0]:
                        self.vars[i] = (var.idents[0], value)
                        break
            else:
                self.vars.append((var.idents[0], value))
        return value

    def eval_command(self, dot: GoValue, cmd: Command, final: GoValue | None) -> GoValue:
        first = cmd.args[0]
        if isinstance(first, Field):
            self.node = first
            return self.field_chain(dot, first.idents, cmd.args, final)
        if isinstance(first, Chain):
            self.node = first
            base = self.eval_arg(dot, first.node)
            return self.field_chain(base, first.fields, cmd.args, final)
        if isinstance(first, Identifier):
            return self.call(dot, first, cmd.args, final, cmd)
        if isinstance(first, Pipe):
            self.not_a_function(cmd.args, final)
            return self.eval_pipeline(dot, first)
        if isinstance(first, Variable):
            self.node = first
            value = self.lookup(first.idents[0])
            return self.field_chain(value, first.idents[1:], cmd.args, final) if first.idents[1:] else value
        self.node = first
        self.not_a_function(cmd.args, final)
        if isinstance(first, Bool):
            return GoValue("bool", first.value)
        if isinstance(first, Dot):
            return dot
        if isinstance(first, Nil):
            raise self.errorf("nil is not a command")
        if isinstance(first, Number):
            return self.number(first)
        if isinstance(first, StringNode):
            return GoValue("string", first.text)
        raise self.errorf(f"can't evaluate command {go_quote(str(first))}")

    def not_a_function(self, args: list[Node], final: GoValue | None) -> None:
        if len(args) > 1 or final is not None:
            raise self.errorf(f"can't give argument to non-function {args[0]}")

    def lookup(self, name: str) -> GoValue:
        for var, value in reversed(self.vars):
            if var == name:
                return value
        raise self.errorf(f"undefined variable: {name}")

    def number(self, node: Number) -> GoValue:
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            if node.text.startswith("'"):
                return GoValue("int32", node.value)
            if -(1 << 63) <= node.value < (1 << 63):
                return GoValue("int", node.value)
        if isinstance(node.value, float) and not any(c in node.text for c in "xX"):
            if node.value == int(node.value) and not any(c in node.text for c in ".eEpP"):
                return GoValue("int", int(node.value))
            return GoValue("float64", node.value)
        raise self.unsupported(f"the constant {node.text}")

    def field_chain(
        self, receiver: GoValue, idents: tuple[str, ...], args: list[Node], final: GoValue | None
    ) -> GoValue:
        for i, name in enumerate(idents):
            last = i == len(idents) - 1
            receiver = self.field(receiver, name, args if last else [], final if last else None)
        return receiver

    def field(self, receiver: GoValue, name: str, args: list[Node], final: GoValue | None) -> GoValue:
        if receiver.typ == "invalid":
            return INVALID
        has_args = len(args) > 1 or final is not None
        if receiver.typ == "v1.ObjectMeta":
            if name in receiver.val:
                if has_args:
                    raise self.errorf(f"{name} has arguments but cannot be invoked as function")
                value: GoValue = receiver.val[name]
                return value
        elif receiver.kind == "map":
            if has_args:
                raise self.errorf(f"{name} is not a method but has arguments")
            mapping = receiver.val or {}
            if name in mapping:
                return GoValue(receiver.typ[receiver.typ.index("]") + 1 :], mapping[name])
            return INVALID
        elif receiver.typ in ("v1.Time", "*v1.Time") or (
            receiver.kind == "slice" and receiver.typ != "[]string"
        ):
            raise self.unsupported(f"field or method {name} of {receiver.typ}")
        elif receiver.typ == "":
            raise self.errorf(f"nil pointer evaluating interface {{}}.{name}")
        raise self.errorf(f"can't evaluate field {name} in type {receiver.typ}")

    def eval_arg(self, dot: GoValue, node: Node) -> GoValue:
        self.node = node
        if isinstance(node, Dot):
            return dot
        if isinstance(node, Field):
            return self.field_chain(dot, node.idents, [node], None)
        if isinstance(node, Variable):
            value = self.lookup(node.idents[0])
            return self.field_chain(value, node.idents[1:], [node], None) if node.idents[1:] else value
        if isinstance(node, Pipe):
            return self.eval_pipeline(dot, node)
        if isinstance(node, StringNode):
            return GoValue("string", node.text)
        if isinstance(node, Bool):
            return GoValue("bool", node.value)
        if isinstance(node, Number):
            return self.number(node)
        if isinstance(node, Nil):
            return NIL
        if isinstance(node, Chain):
            base = self.eval_arg(dot, node.node)
            return self.field_chain(base, node.fields, [node], None)
        if isinstance(node, Identifier):
            return self.call(dot, node, [node], None)
        raise self.unsupported(f"the argument {node}")

    # -- functions ------------------------------------------------------------------------------
    def call(
        self,
        dot: GoValue,
        ident: Identifier,
        args: list[Node],
        final: GoValue | None,
        command: Command | None = None,
    ) -> GoValue:
        self.node = ident
        name = ident.name
        if name in ("and", "or"):
            return self.and_or(dot, ident, args[1:], final)
        values = [self.eval_arg(dot, a) for a in args[1:]]
        if final is not None:
            values.append(final)
        self.node = ident
        fn = _FUNCS.get(name)
        if fn is None:
            raise self.unsupported(f"the function {name}")
        try:
            return fn(self, name, values)
        except _CallError as exc:
            # Go reports a failed call at the whole command (exec.go evalCall).
            self.node = command if command is not None else ident
            raise self.errorf(f"error calling {name}: {exc}") from None

    def and_or(self, dot: GoValue, ident: Identifier, args: list[Node], final: GoValue | None) -> GoValue:
        count = len(args) + (1 if final is not None else 0)
        if count < 1:
            raise self.errorf(f"wrong number of args for {ident.name}: want at least 1 got 0")
        value = NIL
        for i in range(count):
            value = self.eval_arg(dot, args[i]) if i < len(args) else final  # type: ignore[assignment]
            if _truth(value) == (ident.name == "or"):
                return value
        return value


def _truth(value: GoValue) -> bool:
    k = value.kind
    if value.typ in ("invalid", ""):
        return False
    if k == "string":
        return bool(value.val)
    if k in ("map", "slice"):
        return bool(value.val)
    if k == "ptr":
        return value.val is not None
    if k == "struct":
        return True
    return bool(value.val)


def _as_arg(value: GoValue) -> GoValue:
    """A missing value passed to a ``...any`` parameter arrives as an untyped nil (``validateType``)."""
    return NIL if value.typ == "invalid" else value


def _byte_pos(text: str, pos: int) -> int:
    return len(text[:pos].encode("utf-8"))


def _want(state: _State, name: str, values: list[GoValue], n: int) -> None:
    if len(values) != n:
        raise state.errorf(f"wrong number of args for {name}: want {n} got {len(values)}")


def _index(state: _State, name: str, values: list[GoValue]) -> GoValue:
    if not values:
        raise state.errorf("wrong number of args for index: want at least 1 got 0")
    item = values[0]
    for key in values[1:]:
        if item.typ == "":
            raise _CallError("index of untyped nil")
        if item.kind == "map":
            if key.kind != "string":
                raise _CallError(f"value has type {key.typ or 'nil'}; should be string")
            elem = item.typ[item.typ.index("]") + 1 :]
            item = GoValue(elem, (item.val or {}).get(key.val, ""))
        elif item.typ == "invalid":
            raise _CallError("index of untyped nil")
        else:
            raise state.unsupported(f"index of {item.typ}")
    return item


def _len(state: _State, name: str, values: list[GoValue]) -> GoValue:
    _want(state, name, values, 1)
    v = values[0]
    if v.kind in ("map", "slice", "string"):
        return GoValue("int", len(v.val or ()))
    raise _CallError(f"len of type {v.typ or '<nil>'}")


def _print(state: _State, name: str, values: list[GoValue]) -> GoValue:
    args = [_as_arg(v) for v in values]
    text = " ".join(sprint([a]) for a in args) + "\n" if name == "println" else sprint(args)
    return GoValue("string", text)


def _printf(state: _State, name: str, values: list[GoValue]) -> GoValue:
    if not values or values[0].kind != "string":
        raise state.unsupported("printf without a constant format")
    fmt, args = str(values[0].val), [_as_arg(v) for v in values[1:]]
    out, i, n = [], 0, 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        verb = fmt[i + 1 : i + 2]
        i += 2
        if verb == "%":
            out.append("%")
            continue
        if verb not in ("s", "v", "d", "q") or n >= len(args):
            raise state.unsupported(f"printf verb %{verb}")
        arg = args[n]
        n += 1
        if verb == "q":
            if arg.kind != "string":
                raise state.unsupported("printf %q of a non-string")
            out.append(go_quote(str(arg.val)))
        elif verb == "d" and arg.typ not in ("int", "int64", "int32", "uint8"):
            raise state.unsupported("printf %d of a non-integer")
        else:
            out.append(sprint([arg]))
    if n != len(args):
        raise state.unsupported("printf with extra arguments")
    return GoValue("string", "".join(out))


def _html(state: _State, name: str, values: list[GoValue]) -> GoValue:
    args = [_as_arg(v) for v in values]
    text = str(args[0].val) if len(args) == 1 and args[0].typ == "string" else sprint(args)
    return GoValue("string", text_template_escape(text))


def _not(state: _State, name: str, values: list[GoValue]) -> GoValue:
    _want(state, name, values, 1)
    return GoValue("bool", not _truth(values[0]))


def _compare(state: _State, name: str, values: list[GoValue]) -> GoValue:
    if not values:
        raise state.errorf(
            f"wrong number of args for {name}: want {'at least 1' if name == 'eq' else 2} got 0"
        )
    if len(values) < 2 and name == "eq":
        raise _CallError("missing argument for comparison")
    if name != "eq":
        _want(state, name, values, 2)
    first = values[0]
    for other in values[1:]:
        for v in (first, other):
            if v.kind not in ("string", "bool", "int", "int64", "int32", "uint8"):
                raise state.unsupported(f"{name} on {v.typ or 'nil'}")
        if (first.kind == "string") != (other.kind == "string") or (first.typ == "bool") != (
            other.typ == "bool"
        ):
            raise _CallError(f"incompatible types for comparison: {first.typ} and {other.typ}")
        a, b = first.val, other.val
        result = {
            "eq": a == b,
            "ne": a != b,
            "lt": a < b,
            "le": a <= b,
            "gt": a > b,
            "ge": a >= b,
        }[name]
        if name == "eq" and result:
            return GoValue("bool", True)
        if name != "eq":
            if first.typ == "bool" and name not in ("eq", "ne"):
                raise _CallError("invalid type for comparison")
            return GoValue("bool", result)
    return GoValue("bool", False)


_FUNCS: dict[str, Callable[[_State, str, list[GoValue]], GoValue]] = {
    "index": _index,
    "len": _len,
    "print": _print,
    "println": _print,
    "printf": _printf,
    "html": _html,
    "not": _not,
    "eq": _compare,
    "ne": _compare,
    "lt": _compare,
    "le": _compare,
    "gt": _compare,
    "ge": _compare,
}


def _check_escapers(tree: Tree, node: Node) -> None:
    """html/template escapes the whole template before running it: a predefined escaper that is not
    the last command of an output action fails first (``ErrPredefinedEscaper``)."""
    if isinstance(node, ListNode):
        for child in node.nodes:
            _check_escapers(tree, child)
    elif isinstance(node, Branch):
        _check_escapers(tree, node.body)
        if node.else_body is not None:
            _check_escapers(tree, node.else_body)
    elif isinstance(node, Action) and not node.pipe.decl:
        for cmd in node.pipe.cmds[:-1]:
            first = cmd.args[0]
            if isinstance(first, Identifier) and first.name in _PREDEFINED_ESCAPERS:
                line = 1 + tree.text.count("\n", 0, node.pos)
                raise GoTemplateError(
                    f"html/template:{tree.name}:{line}:{_byte_pos(tree.text, node.pos)}: "
                    f"predefined escaper {go_quote(first.name)} disallowed in template"
                )


def execute(tree: Tree, data: GoValue) -> str:
    """``html/template``'s ``Execute`` of the parsed template named ``tree.name`` over ``data``."""
    state = _State(tree, data)
    root = tree.trees[tree.name]
    _check_escapers(tree, root)
    state.walk(data, root)
    return "".join(state.out)
