"""The parse tree of Go's ``text/template/parse`` (node.go), with each node's ``String()`` text.

Execution errors quote a node as Go prints it (``executing "t" at <.Foo>``), so ``__str__`` follows
Go's ``writeTo`` methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(slots=True)
class Text:
    pos: int
    text: str

    def __str__(self) -> str:
        from omerender.gotemplate.lex import go_quote

        return go_quote(self.text)


@dataclass(slots=True)
class Dot:
    pos: int

    def __str__(self) -> str:
        return "."


@dataclass(slots=True)
class Nil:
    pos: int

    def __str__(self) -> str:
        return "nil"


@dataclass(slots=True)
class Bool:
    pos: int
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(slots=True)
class Number:
    pos: int
    text: str
    value: int | float | complex | None  # an int when Go's IsInt holds

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class StringNode:
    pos: int
    quoted: str
    text: str

    def __str__(self) -> str:
        return self.quoted


@dataclass(slots=True)
class Identifier:
    pos: int
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(slots=True)
class Field:
    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return "".join("." + i for i in self.idents)


@dataclass(slots=True)
class Variable:
    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join(self.idents)


@dataclass(slots=True)
class Chain:
    pos: int
    node: Node
    fields: tuple[str, ...]

    def __str__(self) -> str:
        inner = str(self.node)
        if isinstance(self.node, Pipe):
            inner = f"({inner})"
        return inner + "".join("." + f for f in self.fields)


@dataclass(slots=True)
class Command:
    pos: int
    args: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        parts = []
        for arg in self.args:
            parts.append(f"({arg})" if isinstance(arg, Pipe) else str(arg))
        return " ".join(parts)


@dataclass(slots=True)
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


@dataclass(slots=True)
class Action:
    pos: int
    pipe: Pipe

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@dataclass(slots=True)
class ListNode:
    pos: int
    nodes: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


@dataclass(slots=True)
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


@dataclass(slots=True)
class TemplateCall:
    pos: int
    name: str
    pipe: Pipe | None

    def __str__(self) -> str:
        from omerender.gotemplate.lex import go_quote

        if self.pipe is None:
            return "{{template " + go_quote(self.name) + "}}"
        return "{{template " + go_quote(self.name) + " " + str(self.pipe) + "}}"


@dataclass(slots=True)
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
