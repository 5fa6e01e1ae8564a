"""Go's ``text/template/parse`` parser (parse.go): the tree and Go's parse error texts.

Errors read ``template: <name>:<line>: <what>``, exactly as ``(*template.Template).Parse`` returns them.
Only the built-in functions exist at parse time: ``html/template`` adds its escapers when it executes.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Final

from omerender.errors import OmeRenderError
from omerender.gotemplate.lex import Item, Kind, go_quote, lex
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

__all__ = ["BUILTINS", "GoTemplateError", "Tree", "parse"]

BUILTINS = frozenset(
    [
        "and",
        "call",
        "html",
        "index",
        "slice",
        "js",
        "len",
        "not",
        "or",
        "print",
        "printf",
        "println",
        "urlquery",
        "eq",
        "ge",
        "gt",
        "le",
        "lt",
        "ne",
    ]
)
_OPERANDS = frozenset(
    {
        Kind.BOOL,
        Kind.CHAR_CONSTANT,
        Kind.COMPLEX,
        Kind.DOT,
        Kind.FIELD,
        Kind.IDENTIFIER,
        Kind.NUMBER,
        Kind.NIL,
        Kind.RAW_STRING,
        Kind.STRING,
        Kind.VARIABLE,
        Kind.LEFT_PAREN,
    }
)
_OCTAL = re.compile(r"[+-]?0[0-7_]+")


class GoTemplateError(OmeRenderError):
    """Go's ``text/template`` or ``html/template`` refuses the template; the text is Go's."""


class GoTemplateUnsupported(OmeRenderError):
    """The template uses something Go accepts that omerender does not reproduce."""


# Parenthesized pipelines and if/with/range bodies nested together. Go's parser caps parentheses at
# 10,000 (text/template/parse/parse.go, Tree.term: maxStackDepth, "max expression depth exceeded") and
# leaves control nesting to its growable goroutine stacks; this recursive parser and executor stay far
# below Python's recursion limit at this depth, and no placeholder nests past a handful of levels.
MAX_NESTING: Final = 100


class _End:
    def __init__(self, pos: int) -> None:
        self.pos = pos

    def __str__(self) -> str:
        return "{{end}}"


class _Else:
    def __init__(self, pos: int) -> None:
        self.pos = pos

    def __str__(self) -> str:
        return "{{else}}"


class Tree:
    """One parse of a template text: the main tree and any ``define``/``block`` trees."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.items = lex(text)
        self.i = 0
        self.vars: list[str] = ["$"]
        self.range_depth = 0
        self.nesting = 0
        self.trees: dict[str, ListNode] = {}
        self.last: Item = self.items[0]

    # -- token stream ---------------------------------------------------------------------------
    def next(self) -> Item:
        item = self.items[min(self.i, len(self.items) - 1)]
        self.i += 1
        self.last = item
        return item

    def backup(self, n: int = 1) -> None:
        self.i -= n

    def peek(self) -> Item:
        return self.items[min(self.i, len(self.items) - 1)]

    def next_non_space(self) -> Item:
        while (item := self.next()).kind == Kind.SPACE:
            pass
        return item

    def peek_non_space(self) -> Item:
        item = self.next_non_space()
        self.backup()
        return item

    def errorf(self, message: str) -> GoTemplateError:
        return GoTemplateError(f"template: {self.name}:{self.last.line}: {message}")

    def unexpected(self, item: Item, context: str) -> GoTemplateError:
        if item.kind == Kind.ERROR:
            return self.errorf(str(item))
        return self.errorf(f"unexpected {item} in {context}")

    def expect(self, kind: Kind, context: str) -> Item:
        item = self.next_non_space()
        if item.kind != kind:
            raise self.unexpected(item, context)
        return item

    # -- structure ------------------------------------------------------------------------------
    def parse(self) -> ListNode:
        root = ListNode(self.peek().pos)
        while self.peek().kind != Kind.EOF:
            if self.peek().kind == Kind.LEFT_DELIM:
                self.next()
                if self.next_non_space().kind == Kind.DEFINE:
                    self._definition()
                    continue
                self.i = self._rewind_to_delim()
            node = self._text_or_action()
            if isinstance(node, (_End, _Else)):
                raise self.errorf(f"unexpected {node}")
            root.nodes.append(node)
        self._add(self.name, root)
        return root

    def _rewind_to_delim(self) -> int:
        j = self.i - 1
        while self.items[j].kind != Kind.LEFT_DELIM:
            j -= 1
        return j

    def _add(self, name: str, root: ListNode) -> None:
        existing = self.trees.get(name)
        if existing is None or _is_empty(existing):
            self.trees[name] = root
        elif not _is_empty(root):
            raise self.errorf(f"template: multiple definition of template {go_quote(name)}")

    def _definition(self) -> None:
        context = "define clause"
        name = self._template_name(self.next_non_space(), context)
        self.expect(Kind.RIGHT_DELIM, context)
        self._named_body(name, context)

    def _named_body(self, name: str, context: str) -> None:
        """The body of ``define`` or ``block`` up to its ``end``: a tree of its own, with fresh variables."""
        saved, self.vars = self.vars, ["$"]
        body, end = self._item_list()
        self.vars = saved
        if not isinstance(end, _End):
            raise self.errorf(f"unexpected {end} in {context}")
        self._add(name, body)

    def _item_list(self) -> tuple[ListNode, _End | _Else]:
        body = ListNode(self.peek_non_space().pos)
        while self.peek_non_space().kind != Kind.EOF:
            node = self._text_or_action()
            if isinstance(node, (_End, _Else)):
                return body, node
            body.nodes.append(node)
        raise self.errorf("unexpected EOF")

    def _text_or_action(self) -> Node | _End | _Else:
        token = self.next_non_space()
        if token.kind == Kind.TEXT:
            return Text(token.pos, token.val)
        if token.kind == Kind.LEFT_DELIM:
            return self._action()
        raise self.unexpected(token, "input")

    def _action(self) -> Node | _End | _Else:
        token = self.next_non_space()
        kind = token.kind
        if kind == Kind.BLOCK:
            return self._block()
        if kind in (Kind.BREAK, Kind.CONTINUE):
            word = "break" if kind == Kind.BREAK else "continue"
            after = self.next_non_space()
            if after.kind != Kind.RIGHT_DELIM:
                raise self.unexpected(after, "{{" + word + "}}")
            if self.range_depth == 0:
                raise self.errorf("{{" + word + "}} outside {{range}}")
            return LoopControl(token.pos, word)
        if kind == Kind.ELSE:
            peek = self.peek_non_space()
            if peek.kind in (Kind.IF, Kind.WITH):
                return _Else(peek.pos)
            return _Else(self.expect(Kind.RIGHT_DELIM, "else").pos)
        if kind == Kind.END:
            return _End(self.expect(Kind.RIGHT_DELIM, "end").pos)
        if kind in (Kind.IF, Kind.RANGE, Kind.WITH):
            return self._control(token.val)
        if kind == Kind.TEMPLATE:
            return self._template_call()
        self.backup()
        start = self.peek()
        return Action(start.pos, self.pipeline("command", Kind.RIGHT_DELIM))

    def _nest(self) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise GoTemplateUnsupported(
                f"parentheses and if/with/range nested deeper than {MAX_NESTING} levels are not reproduced "
                "by omerender (Go's parser allows 10,000 levels of parentheses)"
            )

    def _control(self, context: str) -> Branch:
        self._nest()
        try:
            return self._control_body(context)
        finally:
            self.nesting -= 1

    def _control_body(self, context: str) -> Branch:
        depth = len(self.vars)
        pipe = self.pipeline(context, Kind.RIGHT_DELIM)
        if context == "range":
            self.range_depth += 1
        body, nxt = self._item_list()
        if context == "range":
            self.range_depth -= 1
        else_body = None
        if isinstance(nxt, _Else):
            follows = self.peek().kind
            if context in ("if", "with") and follows == (Kind.IF if context == "if" else Kind.WITH):
                self.next()
                else_body = ListNode(nxt.pos, [self._control(context)])
            else:
                else_body, end = self._item_list()
                if not isinstance(end, _End):
                    raise self.errorf(f"expected end; found {end}")
        del self.vars[depth:]
        return Branch(context, pipe.pos, pipe, body, else_body)

    def _template_name(self, token: Item, context: str) -> str:
        if token.kind not in (Kind.STRING, Kind.RAW_STRING):
            raise self.unexpected(token, context)
        return self._unquote(token)

    def _template_call(self) -> TemplateCall:
        context = "template clause"
        token = self.next_non_space()
        name = self._template_name(token, context)
        pipe = None
        if self.next_non_space().kind != Kind.RIGHT_DELIM:
            self.backup()
            pipe = self.pipeline(context, Kind.RIGHT_DELIM)
        return TemplateCall(token.pos, name, pipe)

    def _block(self) -> TemplateCall:
        context = "block clause"
        token = self.next_non_space()
        name = self._template_name(token, context)
        pipe = self.pipeline(context, Kind.RIGHT_DELIM)
        self._named_body(name, context)
        return TemplateCall(token.pos, name, pipe)

    # -- pipelines ------------------------------------------------------------------------------
    def pipeline(self, context: str, end: Kind) -> Pipe:
        pipe = Pipe(self.peek_non_space().pos)
        while (v := self.peek_non_space()).kind == Kind.VARIABLE:
            self.next()
            after = self.peek()
            nxt = self.peek_non_space()
            if nxt.kind in (Kind.ASSIGN, Kind.DECLARE):
                pipe.is_assign = nxt.kind == Kind.ASSIGN
                self.next_non_space()
                pipe.decl.append(_variable(v))
                self.vars.append(v.val)
                break
            if nxt.kind == Kind.CHAR and nxt.val == ",":
                self.next_non_space()
                pipe.decl.append(_variable(v))
                self.vars.append(v.val)
                if context == "range" and len(pipe.decl) < 2:
                    if self.peek_non_space().kind in (Kind.VARIABLE, Kind.RIGHT_DELIM, Kind.RIGHT_PAREN):
                        continue
                    raise self.errorf("range can only initialize variables")
                raise self.errorf(f"too many declarations in {context}")
            self.backup(2 if after.kind == Kind.SPACE else 1)
            break
        while True:
            token = self.next_non_space()
            if token.kind == end:
                self._check_pipeline(pipe, context)
                return pipe
            if token.kind in _OPERANDS:
                self.backup()
                pipe.cmds.append(self._command())
                continue
            raise self.unexpected(token, context)

    def _check_pipeline(self, pipe: Pipe, context: str) -> None:
        if not pipe.cmds:
            raise self.errorf(f"missing value for {context}")
        for stage, cmd in enumerate(pipe.cmds[1:], start=2):
            if isinstance(cmd.args[0], (Bool, Dot, Nil, Number, StringNode)):
                raise self.errorf(f"non executable command in pipeline stage {stage}")

    def _command(self) -> Command:
        cmd = Command(self.peek_non_space().pos)
        while True:
            self.peek_non_space()
            operand = self._operand()
            if operand is not None:
                cmd.args.append(operand)
            token = self.next()
            if token.kind == Kind.SPACE:
                continue
            if token.kind in (Kind.RIGHT_DELIM, Kind.RIGHT_PAREN):
                self.backup()
            elif token.kind != Kind.PIPE:
                raise self.unexpected(token, "operand")
            break
        if not cmd.args:
            raise self.errorf("empty command")
        return cmd

    def _operand(self) -> Node | None:
        node = self._term()
        if node is None:
            return None
        if self.peek().kind == Kind.FIELD:
            pos = self.peek().pos
            fields: list[str] = []
            while self.peek().kind == Kind.FIELD:
                fields.extend(self.next().val[1:].split("."))
            if isinstance(node, Field):
                return Field(pos, node.idents + tuple(fields))
            if isinstance(node, Variable):
                return Variable(pos, node.idents + tuple(fields))
            if isinstance(node, (Bool, StringNode, Number, Nil, Dot)):
                raise self.errorf(f"unexpected . after term {go_quote(str(node))}")
            return Chain(pos, node, tuple(fields))
        return node

    def _term(self) -> Node | None:
        token = self.next_non_space()
        kind = token.kind
        if kind == Kind.IDENTIFIER:
            if token.val not in BUILTINS:
                raise self.errorf(f"function {go_quote(token.val)} not defined")
            return Identifier(token.pos, token.val)
        if kind == Kind.DOT:
            return Dot(token.pos)
        if kind == Kind.NIL:
            return Nil(token.pos)
        if kind == Kind.VARIABLE:
            var = _variable(token)
            if var.idents[0] not in self.vars:
                raise self.errorf(f"undefined variable {go_quote(var.idents[0])}")
            return var
        if kind == Kind.FIELD:
            return Field(token.pos, tuple(token.val[1:].split(".")))
        if kind == Kind.BOOL:
            return Bool(token.pos, token.val == "true")
        if kind in (Kind.CHAR_CONSTANT, Kind.COMPLEX, Kind.NUMBER):
            return self._number(token)
        if kind == Kind.LEFT_PAREN:
            self._nest()
            try:
                return self.pipeline("parenthesized pipeline", Kind.RIGHT_PAREN)
            finally:
                self.nesting -= 1
        if kind in (Kind.STRING, Kind.RAW_STRING):
            return StringNode(token.pos, token.val, self._unquote(token))
        self.backup()
        return None

    def _unquote(self, token: Item) -> str:
        if token.kind == Kind.RAW_STRING:
            return token.val[1:-1]
        try:
            return _unquote_go(token.val[1:-1])
        except ValueError:
            raise self.errorf("invalid syntax") from None

    def _number(self, token: Item) -> Number:
        text = token.val
        if token.kind == Kind.CHAR_CONSTANT:
            try:
                value = _unquote_go(text[1:-1])
            except ValueError:
                raise self.errorf("invalid syntax") from None
            if len(value) != 1:
                raise self.errorf(f"malformed character constant: {text}")
            return Number(token.pos, text, ord(value))
        if token.kind == Kind.COMPLEX or text.endswith("i"):
            return Number(token.pos, text, None)  # parses in Go; evaluating it is not reproduced
        # Go's Tree.newNumber (text/template/parse/node.go): ParseUint, then ParseInt, then ParseFloat;
        # a float that ParseFloat refuses (out of float64's range: ErrRange) is "illegal number syntax",
        # one it reads from text with no '.', 'e' or 'p' is "integer overflow".
        digits = text.replace("_", "")
        value_int: int | None = None
        if len(digits.lstrip("+-").lstrip("0")) <= 400:  # longer is past float64's range anyway
            with contextlib.suppress(ValueError):
                # Go reads a leading 0 as octal; Python's int(..., 0) refuses it.
                value_int = int(digits, 8) if _OCTAL.fullmatch(text) else int(text, 0)
        if value_int is not None and -(1 << 63) <= value_int < (1 << 64):
            return Number(token.pos, text, value_int)
        f = _go_parse_float(digits)
        if f is None:
            raise self.errorf(f"illegal number syntax: {go_quote(text)}")
        if not any(c in text for c in ".eEpP"):
            raise self.errorf(f"integer overflow: {go_quote(text)}")
        return Number(token.pos, text, f)


def _go_parse_float(digits: str) -> float | None:
    """``strconv.ParseFloat(s, 64)`` where it succeeds, else None: hexadecimal needs a ``p`` exponent,
    octal and binary prefixes are refused, and a value past float64's range is ErrRange."""
    bare = digits.lstrip("+-").lower()
    try:
        if bare.startswith("0x"):
            value = float.fromhex(digits) if "p" in bare else None
        elif bare.startswith(("0o", "0b")) or len(bare) > 10_000:
            value = None
        else:
            value = float(digits)
    except (ValueError, OverflowError):
        return None
    return value if value is not None and math.isfinite(value) else None


def _variable(item: Item) -> Variable:
    return Variable(item.pos, tuple(item.val.split(".")))


def _is_empty(node: ListNode) -> bool:
    return all(isinstance(n, Text) and not n.text.strip() for n in node.nodes)


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unquote_go(body: str) -> str:
    """The body of a Go interpreted string or rune literal (``strconv.Unquote``); ValueError if bad."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= len(body):
            raise ValueError(body)
        esc = body[i]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 1
        elif esc in "\"'":
            out.append(esc)
            i += 1
        elif esc in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[esc]
            digits = body[i + 1 : i + 1 + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(body)
            code = int(digits, 16)
            if esc != "x" and (code > 0x10FFFF or 0xD800 <= code <= 0xDFFF):
                raise ValueError(body)
            out.append(chr(code))
            i += 1 + width
        elif esc in "01234567":
            digits = body[i : i + 3]
            if len(digits) != 3 or any(c not in "01234567" for c in digits) or int(digits, 8) > 255:
                raise ValueError(body)
            out.append(chr(int(digits, 8)))
            i += 3
        else:
            raise ValueError(body)
    return "".join(out)


def parse(name: str, text: str) -> Tree:
    """Parse ``text`` as ``template.New(name).Parse(text)`` does; raises GoTemplateError with Go's text."""
    tree = Tree(name, text)
    tree.parse()
    return tree
