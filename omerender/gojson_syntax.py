"""Go's ``encoding/json`` syntax check (scanner.go ``checkValid``): the first error, in Go's words.

``json.Unmarshal`` scans the whole input before decoding anything, so a placeholder whose value breaks
the JSON text (a newline or a backslash from an annotation), or a malformed ``deploy`` key, fails with
exactly this message.
"""

from __future__ import annotations

from omerender.jsonlike import MAX_DEPTH

__all__ = ["check_valid"]

_WS = " \t\r\n"


def _quote_char(c: str) -> str:
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    # Imported here: only an error message needs it, and the gotemplate package costs a
    # command's start-up about 15 ms (a render that checks valid JSON never gets here).
    from omerender.gotemplate.lex import go_quote

    return "'" + go_quote(c)[1:-1] + "'"


class _Fail(Exception):
    pass


class _Scan:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.depth = 0

    def enter(self) -> None:
        # Go's scanner refuses nesting past maxNestingDepth (10,000: "invalid character '[' exceeded
        # max depth"); this recursive scan stops at MAX_DEPTH, far below Python's recursion limit and
        # far above any value OME reads (a deploy block, a container).
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail(f"nested deeper than {MAX_DEPTH} levels (the limit); flatten the value")

    def fail(self, c: str, context: str) -> _Fail:
        return _Fail(f"invalid character {_quote_char(c)} {context}")

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in _WS:
            self.i += 1

    def take(self) -> str:
        if self.i >= len(self.s):
            raise _Fail("unexpected end of JSON input")
        c = self.s[self.i]
        self.i += 1
        return c

    def value(self) -> None:
        self.skip_ws()
        c = self.take()
        if c == "{":
            self.enter()
            self.obj()
            self.depth -= 1
        elif c == "[":
            self.enter()
            self.arr()
            self.depth -= 1
        elif c == '"':
            self.string()
        elif c == "-" or "0" <= c <= "9":
            self.number(c)
        elif c in "tfn":
            word = {"t": "true", "f": "false", "n": "null"}[c]
            for expect in word[1:]:
                got = self.take()
                if got != expect:
                    raise self.fail(got, f"in literal {word} (expecting {_quote_char(expect)})")
        else:
            raise self.fail(c, "looking for beginning of value")

    def obj(self) -> None:
        self.skip_ws()
        c = self.take()
        if c == "}":
            return
        while True:
            if c != '"':
                raise self.fail(c, "looking for beginning of object key string")
            self.string()
            self.skip_ws()
            c = self.take()
            if c != ":":
                raise self.fail(c, "after object key")
            self.value()
            self.skip_ws()
            c = self.take()
            if c == "}":
                return
            if c != ",":
                raise self.fail(c, "after object key:value pair")
            self.skip_ws()
            c = self.take()

    def arr(self) -> None:
        self.skip_ws()
        if self.peek() == "]":
            self.i += 1
            return
        while True:
            self.value()
            self.skip_ws()
            c = self.take()
            if c == "]":
                return
            if c != ",":
                raise self.fail(c, "after array element")

    def string(self) -> None:
        while True:
            c = self.take()
            if c == '"':
                return
            if c == "\\":
                e = self.take()
                if e == "u":
                    for _ in range(4):
                        h = self.take()
                        if h not in "0123456789abcdefABCDEF":
                            raise self.fail(h, "in \\u hexadecimal character escape")
                elif e not in 'bfnrt\\/"':
                    raise self.fail(e, "in string escape code")
            elif ord(c) < 0x20:
                raise self.fail(c, "in string literal")

    def number(self, c: str) -> None:
        if c == "-":
            c = self.take()
            if not "0" <= c <= "9":
                raise self.fail(c, "in numeric literal")
        if c != "0":
            while "0" <= self.peek() <= "9" and self.peek():
                self.i += 1
        if self.peek() == ".":
            self.i += 1
            c = self.take()
            if not "0" <= c <= "9":
                raise self.fail(c, "after decimal point in numeric literal")
            while "0" <= self.peek() <= "9" and self.peek():
                self.i += 1
        if self.peek() in ("e", "E") and self.peek():
            self.i += 1
            c = self.take()
            if c in "+-":
                c = self.take()
            if not "0" <= c <= "9":
                raise self.fail(c, "in exponent of numeric literal")
            while "0" <= self.peek() <= "9" and self.peek():
                self.i += 1


def check_valid(text: str) -> str | None:
    """None when ``text`` is one valid JSON value, else Go's SyntaxError text."""
    scan = _Scan(text)
    try:
        scan.value()
        scan.skip_ws()
        if scan.i < len(text):
            raise scan.fail(text[scan.i], "after top-level value")
    except _Fail as exc:
        return str(exc)
    return None
