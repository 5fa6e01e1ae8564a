"""Go's ``text/template/parse`` lexer (lex.go), with the default ``{{`` ``}}`` delimiters.

Token kinds, state functions and error texts follow Go 1.26 one for one: the parser reports the first
error token it meets, so the lexer must stop where Go stops and say what Go says.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from enum import IntEnum
from typing import Any

from omerender._records import record

__all__ = ["Item", "Kind", "go_quote", "lex", "unicode_verb"]

LEFT, RIGHT = "{{", "}}"
LEFT_COMMENT, RIGHT_COMMENT = "/*", "*/"
SPACES = " \t\r\n"
# A state of the lexer returns the next state (Go's stateFn); None stops it.
StateFn = Callable[[], Any]


class Kind(IntEnum):
    ERROR = 0
    BOOL = 1
    CHAR = 2
    CHAR_CONSTANT = 3
    COMMENT = 4
    COMPLEX = 5
    ASSIGN = 6
    DECLARE = 7
    EOF = 8
    FIELD = 9
    IDENTIFIER = 10
    LEFT_DELIM = 11
    LEFT_PAREN = 12
    NUMBER = 13
    PIPE = 14
    RAW_STRING = 15
    RIGHT_DELIM = 16
    RIGHT_PAREN = 17
    SPACE = 18
    STRING = 19
    TEXT = 20
    VARIABLE = 21
    KEYWORD = 22  # keywords follow; only used as a divider, as in Go
    BLOCK = 23
    BREAK = 24
    CONTINUE = 25
    DOT = 26
    DEFINE = 27
    ELSE = 28
    END = 29
    IF = 30
    NIL = 31
    RANGE = 32
    TEMPLATE = 33
    WITH = 34


KEYWORDS = {
    ".": Kind.DOT,
    "block": Kind.BLOCK,
    "break": Kind.BREAK,
    "continue": Kind.CONTINUE,
    "define": Kind.DEFINE,
    "else": Kind.ELSE,
    "end": Kind.END,
    "if": Kind.IF,
    "range": Kind.RANGE,
    "nil": Kind.NIL,
    "template": Kind.TEMPLATE,
    "with": Kind.WITH,
}


def _is_print(ch: str) -> bool:
    """Go's ``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and U+0020."""
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def go_quote(s: str) -> str:
    """``strconv.Quote``."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif _is_print(ch):
            out.append(ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def unicode_verb(ch: str) -> str:
    """``fmt``'s ``%#U``: ``U+0022 '"'``."""
    code = f"U+{ord(ch):04X}"
    return f"{code} '{ch}'" if _is_print(ch) else code


@record
class Item:
    kind: Kind
    pos: int  # offset in characters; the parser converts to Go's byte offsets where it reports them
    val: str
    line: int

    def __str__(self) -> str:  # Go's item.String
        if self.kind == Kind.EOF:
            return "EOF"
        if self.kind == Kind.ERROR:
            return self.val
        if self.kind > Kind.KEYWORD:
            return f"<{self.val}>"
        if len(self.val) > 10:
            return go_quote(self.val[:10]) + "..."
        return go_quote(self.val)


def _alnum(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or unicodedata.category(ch) == "Nd" if ch else False


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.start = 0
        self.line = 1
        self.start_line = 1
        self.paren_depth = 0
        self.items: list[Item] = []
        self.done = False

    # -- Go's helpers ---------------------------------------------------------------------------
    def next(self) -> str:
        if self.pos >= len(self.text):
            self.pos = len(self.text) + 1  # remember that we read EOF, so backup is a no-op
            return ""
        ch = self.text[self.pos]
        self.pos += 1
        if ch == "\n":
            self.line += 1
        return ch

    def backup(self) -> None:
        if self.pos > len(self.text):
            self.pos = len(self.text)
            return
        if self.pos > 0:
            self.pos -= 1
            if self.text[self.pos] == "\n":
                self.line -= 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def emit(self, kind: Kind) -> None:
        self.items.append(Item(kind, self.start, self.text[self.start : self.pos], self.start_line))
        self.start = self.pos
        self.start_line = self.line

    def ignore(self) -> None:
        self.line += self.text.count("\n", self.start, self.pos)
        self.start = self.pos
        self.start_line = self.line

    def accept(self, valid: str) -> bool:
        if (ch := self.next()) and ch in valid:
            return True
        self.backup()
        return False

    def accept_run(self, valid: str) -> None:
        while (ch := self.next()) and ch in valid:
            pass
        self.backup()

    def error(self, message: str) -> None:
        self.items.append(Item(Kind.ERROR, self.start, message, self.start_line))
        self.done = True

    def at_right_delim(self) -> tuple[bool, bool]:
        rest = self.text[self.pos :]
        if len(rest) >= 2 and rest[0] in SPACES and rest[1] == "-" and rest[2:].startswith(RIGHT):
            return True, True
        return rest.startswith(RIGHT), False

    def at_terminator(self) -> bool:
        ch = self.peek()
        if ch == "" or ch in SPACES or ch in ".,|:)(":
            return True
        return self.text.startswith(RIGHT, self.pos)

    # -- states ---------------------------------------------------------------------------------
    def run(self) -> list[Item]:
        state: StateFn | None = self.lex_text
        while not self.done and state is not None:
            state = state()
        return self.items

    def lex_text(self) -> StateFn | None:
        x = self.text.find(LEFT, self.pos)
        if x >= 0:
            if x > self.pos:
                self.pos = x
                trim = 0
                after = self.text[x + len(LEFT) :]
                if len(after) >= 2 and after[0] == "-" and after[1] in SPACES:
                    body = self.text[self.start : self.pos]
                    trim = len(body) - len(body.rstrip(SPACES))
                self.pos -= trim
                self.line += self.text.count("\n", self.start, self.pos)
                item = Item(Kind.TEXT, self.start, self.text[self.start : self.pos], self.start_line)
                self.start, self.start_line = self.pos, self.line
                self.pos += trim
                self.ignore()
                if item.val:
                    self.items.append(item)
            return self.lex_left_delim
        self.pos = len(self.text)
        if self.pos > self.start:
            self.line += self.text.count("\n", self.start, self.pos)
            self.emit(Kind.TEXT)
        self.emit(Kind.EOF)
        return None

    def lex_left_delim(self) -> StateFn | None:
        self.pos += len(LEFT)
        rest = self.text[self.pos :]
        trim = len(rest) >= 2 and rest[0] == "-" and rest[1] in SPACES
        after = 2 if trim else 0
        if self.text.startswith(LEFT_COMMENT, self.pos + after):
            self.pos += after
            self.ignore()
            return self.lex_comment
        item = Item(Kind.LEFT_DELIM, self.start, self.text[self.start : self.pos], self.start_line)
        self.pos += after
        self.ignore()
        self.paren_depth = 0
        self.items.append(item)
        return self.lex_inside_action

    def lex_comment(self) -> StateFn | None:
        self.pos += len(LEFT_COMMENT)
        x = self.text.find(RIGHT_COMMENT, self.pos)
        if x < 0:
            self.error("unclosed comment")
            return None
        self.pos = x + len(RIGHT_COMMENT)
        delim, trim = self.at_right_delim()
        if not delim:
            self.error("comment ends before closing delimiter")
            return None
        if trim:
            self.pos += 2
        self.pos += len(RIGHT)
        if trim:
            rest = self.text[self.pos :]
            self.pos += len(rest) - len(rest.lstrip(SPACES))
        self.ignore()
        return self.lex_text

    def lex_right_delim(self) -> StateFn | None:
        _, trim = self.at_right_delim()
        if trim:
            self.pos += 2
            self.ignore()
        self.pos += len(RIGHT)
        item = Item(Kind.RIGHT_DELIM, self.start, self.text[self.start : self.pos], self.start_line)
        if trim:
            rest = self.text[self.pos :]
            self.pos += len(rest) - len(rest.lstrip(SPACES))
        self.ignore()
        self.items.append(item)
        return self.lex_text

    def lex_inside_action(self) -> StateFn | None:
        delim, _ = self.at_right_delim()
        if delim:
            if self.paren_depth == 0:
                return self.lex_right_delim
            self.error("unclosed left paren")
            return None
        ch = self.next()
        if ch == "":
            self.error("unclosed action")
            return None
        if ch in SPACES:
            self.backup()
            return self.lex_space
        if ch == "=":
            self.emit(Kind.ASSIGN)
        elif ch == ":":
            if self.next() != "=":
                self.error("expected :=")
                return None
            self.emit(Kind.DECLARE)
        elif ch == "|":
            self.emit(Kind.PIPE)
        elif ch == '"':
            return self.lex_quote
        elif ch == "`":
            return self.lex_raw_quote
        elif ch == "$":
            return self.lex_variable
        elif ch == "'":
            return self.lex_char
        elif ch == "." and self.pos < len(self.text) and not ("0" <= self.text[self.pos] <= "9"):
            return self.lex_field
        elif ch in ".+-" or "0" <= ch <= "9":
            self.backup()
            return self.lex_number
        elif _alnum(ch):
            self.backup()
            return self.lex_identifier
        elif ch == "(":
            self.paren_depth += 1
            self.emit(Kind.LEFT_PAREN)
        elif ch == ")":
            self.paren_depth -= 1
            if self.paren_depth < 0:
                self.error("unexpected right paren")
                return None
            self.emit(Kind.RIGHT_PAREN)
        elif ord(ch) < 0x80 and _is_print(ch):
            self.emit(Kind.CHAR)
        else:
            self.error(f"unrecognized character in action: {unicode_verb(ch)}")
            return None
        return self.lex_inside_action

    def lex_space(self) -> StateFn | None:
        spaces = 0
        while (ch := self.peek()) and ch in SPACES:
            self.next()
            spaces += 1
        rest = self.text[self.pos - 1 :]
        if len(rest) >= 2 and rest[0] in SPACES and rest[1] == "-" and rest[2:].startswith(RIGHT):
            self.backup()
            if spaces == 1:
                return self.lex_inside_action
        self.emit(Kind.SPACE)
        return self.lex_inside_action

    def lex_identifier(self) -> StateFn | None:
        while True:
            ch = self.next()
            if not _alnum(ch):
                self.backup()
                word = self.text[self.start : self.pos]
                if not self.at_terminator():
                    self.error(f"bad character {unicode_verb(ch)}")
                    return None
                kind = KEYWORDS.get(word)
                if kind is not None and kind > Kind.KEYWORD:
                    self.emit(kind)
                elif word[0] == ".":
                    self.emit(Kind.FIELD)
                elif word in ("true", "false"):
                    self.emit(Kind.BOOL)
                else:
                    self.emit(Kind.IDENTIFIER)
                return self.lex_inside_action

    def lex_field(self) -> StateFn | None:
        return self._field_or_variable(Kind.FIELD)

    def lex_variable(self) -> StateFn | None:
        if self.at_terminator():
            self.emit(Kind.VARIABLE)
            return self.lex_inside_action
        return self._field_or_variable(Kind.VARIABLE)

    def _field_or_variable(self, kind: Kind) -> StateFn | None:
        if self.at_terminator():
            self.emit(Kind.VARIABLE if kind == Kind.VARIABLE else Kind.DOT)
            return self.lex_inside_action
        while True:
            ch = self.next()
            if not _alnum(ch):
                self.backup()
                break
        if not self.at_terminator():
            self.error(f"bad character {unicode_verb(ch) if ch else 'U+FFFFFFFF'}")
            return None
        self.emit(kind)
        return self.lex_inside_action

    def _quoted(self, close: str, message: str, kind: Kind) -> StateFn | None:
        while True:
            ch = self.next()
            if ch == "\\" and close != "`":
                ch = self.next()
                if ch not in ("", "\n"):
                    continue
            if ch == "" or (ch == "\n" and close != "`"):
                self.error(message)
                return None
            if ch == close:
                break
        self.emit(kind)
        return self.lex_inside_action

    def lex_char(self) -> StateFn | None:
        return self._quoted("'", "unterminated character constant", Kind.CHAR_CONSTANT)

    def lex_quote(self) -> StateFn | None:
        return self._quoted('"', "unterminated quoted string", Kind.STRING)

    def lex_raw_quote(self) -> StateFn | None:
        return self._quoted("`", "unterminated raw quoted string", Kind.RAW_STRING)

    def lex_number(self) -> StateFn | None:
        if not self._scan_number():
            self.error(f"bad number syntax: {go_quote(self.text[self.start : self.pos])}")
            return None
        if self.peek() in ("+", "-") and self.peek():
            if not self._scan_number() or self.text[self.pos - 1] != "i":
                self.error(f"bad number syntax: {go_quote(self.text[self.start : self.pos])}")
                return None
            self.emit(Kind.COMPLEX)
        else:
            self.emit(Kind.NUMBER)
        return self.lex_inside_action

    def _scan_number(self) -> bool:
        self.accept("+-")
        digits = "0123456789_"
        if self.accept("0"):
            if self.accept("xX"):
                digits = "0123456789abcdefABCDEF_"
            elif self.accept("oO"):
                digits = "01234567_"
            elif self.accept("bB"):
                digits = "01_"
        self.accept_run(digits)
        if self.accept("."):
            self.accept_run(digits)
        if len(digits) == 11 and self.accept("eE"):
            self.accept("+-")
            self.accept_run("0123456789_")
        if len(digits) == 23 and self.accept("pP"):
            self.accept("+-")
            self.accept_run("0123456789_")
        self.accept("i")
        if _alnum(self.peek()):
            self.next()
            return False
        return True


def lex(text: str) -> list[Item]:
    """Every item up to and including EOF or the first error, as Go's lexer yields them."""
    return _Lexer(text).run()
