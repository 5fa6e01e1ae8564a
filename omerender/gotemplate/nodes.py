"""The parse tree of Go's ``text/template/parse`` (node.go), with each node's ``String()`` text.

Execution errors quote a node as Go prints it (``executing "t" at <.Foo>``), so ``__str__`` follows
Go's ``writeTo`` methods.
"""

from __future__ import annotations

from dataclasses import field

from omerender._records import record

__all__ = [
    "Action",
    "Bool",
    "Branch",
    "Chain",
    "Command",
    "Dot",
    "Field",
    "Identifier",
    "ListNode",
    "LoopControl",
    "Nil",
    "Node",
    "Number",
    "Pipe",
    "StringNode",
    "TemplateCall",
    "Text",
    "Variable",
]


@record(frozen=False)
class Text:
    pos: int
    text: str

    def __str__(self) -> str:
        from omerender.gotemplate.lex import go_quote

        return go_quote(self.text)


@record(frozen=False)
class Dot:
    pos: int

    def __str__(self) -> str:
        return "."


@record(frozen=False)
class Nil:
    pos: int

    def __str__(self) -> str:
        return "nil"


@record(frozen=False)
class Bool:
    pos: int
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@record(frozen=False)
class Number:
    pos: int
    text: str
    value: int | float | complex | None  # an int when Go's IsInt holds

    def __str__(self) -> str:
        return self.text


@record(frozen=False)
class StringNode:
    pos: int
    quoted: str
    text: str

    def __str__(self) -> str:
        return self.quoted


@record(frozen=False)
class Identifier:
    pos: int
    name: str

    def __str__(self) -> str:
        return self.name


@record(frozen=False)
class Field:
    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return "".join("." + i for i in self.idents)


@record(frozen=False)
class Variable:
    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join(self.idents)


@record(frozen=False)
class Chain:
    pos: int
    node: Node
    fields: tuple[str, ...]

    def __str__(self) -> str:
        inner = str(self.node)
        if isinstance(self.node, Pipe):
            inner = f"({inner})"
        return inner + "".join("." + f for f in self.fields)


@record(frozen=False)
class Command:
    pos: int
    args: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        parts = []
        for arg in self.args:
            parts.append(f"({arg})" if isinstance(arg, Pipe) else str(arg))
        return " ".join(parts)


@record(frozen=False)
class Pipe:
    pos: int
    decl: list[Variable] = field(default_factory=list)
    is_assign: bool = False
    cmds: list[Command] = field(default_factory=list)

    def __str__(self) -> str:
        head = ""
        if self.decl:
            head = ", ".join(str(v) for v in self.decl) + (" = " if self.is_assign else " := ")
        return head + " | ".join(str(c) for c in self.cmds)


@record(frozen=False)
class Action:
    pos: int
    pipe: Pipe

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@record(frozen=False)
class ListNode:
    pos: int
    nodes: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


@record(frozen=False)
class Branch:
    """``if``, ``with`` and ``range`` (``keyword``), with their ``else`` list."""

    keyword: str
    pos: int
    pipe: Pipe
    body: ListNode
    else_body: ListNode | None

    def __str__(self) -> str:
        text = "{{" + self.keyword + " " + str(self.pipe) + "}}" + str(self.body)
        if self.else_body is not None:
            text += "{{else}}" + str(self.else_body)
        return text + "{{end}}"


@record(frozen=False)
class TemplateCall:
    pos: int
    name: str
    pipe: Pipe | None

    def __str__(self) -> str:
        from omerender.gotemplate.lex import go_quote

        if self.pipe is None:
            return "{{template " + go_quote(self.name) + "}}"
        return "{{template " + go_quote(self.name) + " " + str(self.pipe) + "}}"


@record(frozen=False)
class LoopControl:
    pos: int
    keyword: str  # "break" or "continue"

    def __str__(self) -> str:
        return "{{" + self.keyword + "}}"


Node = (
    Text
    | Dot
    | Nil
    | Bool
    | Number
    | StringNode
    | Identifier
    | Field
    | Variable
    | Chain
    | Command
    | Pipe
    | Action
    | ListNode
    | Branch
    | TemplateCall
    | LoopControl
)
