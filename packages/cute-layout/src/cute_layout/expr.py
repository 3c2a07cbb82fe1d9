"""CuTe's layout notation as a small expression language, parsed by recursive descent (never ``eval``).

Grammar (whitespace is free)::

    expr     := compose
    compose  := colon ('o' colon)*            # A o B is composition(A, B); S o off o L a ComposedLayout
    colon    := primary (':' primary)?         # shape:stride is a Layout
    primary  := INT | '-' INT | 'None' | '_'
              | '(' [expr (',' expr)* [',']] ')'   # a tuple: (4,2), ((2,2),4), (16:1,128:1)
              | '<' [expr (',' expr)*] '>'         # a by-mode tiler: <3:3,(2,4):(1,8)>
              | 'S' '<' INT ',' INT ',' INT '>'    # a swizzle: S<3,4,3>
              | NAME '(' [arg (',' arg)*] ')'      # a call of one of the package's functions
    arg      := NAME '=' expr | expr

``parse`` returns the syntax tree, ``evaluate`` its value; bad input raises ``ExprError`` (a ValueError)
with a one-line message.  ``format_value`` writes a value back in CuTe's notation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._notation import format_value

__all__ = ["ExprError", "Node", "parse", "evaluate", "format_value", "functions"]


class ExprError(ValueError):
    """A syntax error or an unknown name in a layout expression."""


@dataclass(frozen=True)
class Node:
    """A syntax-tree node: ``kind`` is int, none, tuple, tiler, layout, swizzle, call or compose."""

    kind: str
    value: Any = None
    items: tuple[Any, ...] = ()
    column: int = 0


_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<punct>[()<>,:=\-]))")


@dataclass(frozen=True)
class _Token:
    kind: str  # "int", "name", "punct" or "end"
    text: str
    column: int


def _tokenize(text: str) -> list[_Token]:
    """Split the text into tokens, raising ExprError at the first character that starts none."""
    tokens = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            tokens.append(_Token("end", "", pos + 1))
            return tokens
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExprError(f"syntax error at column {pos + 1}: unexpected character {text[pos]!r}")
        kind = m.lastgroup
        assert kind is not None
        tokens.append(_Token(kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()


def functions() -> dict[str, Any]:
    """Return the callables an expression may name: the public algebra of cute_layout (not I/O, not memo)."""
    from . import algebra, divide, int_tuple, layout, products, swizzle, tv

    out = {}
    for module in (int_tuple, layout, algebra, divide, products, tv, swizzle):
        for name in module.__all__:
            obj = getattr(module, name, None)
            if name.startswith("_") or not callable(obj):
                continue
            out[name] = obj
    return out


class _Parser:
    """Recursive-descent parser over the token list."""

    def __init__(self, text: str, known: dict[str, Any] | None) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.known = known

    # -- token helpers ------------------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind != "end":
            self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind in ("punct", "name") and tok.text == text

    def expect(self, text: str, context: str) -> _Token:
        tok = self.peek()
        if tok.kind in ("punct", "name") and tok.text == text:
            return self.advance()
        raise self.error(f"expected {text!r} {context}", tok)

    def error(self, message: str, tok: _Token | None = None) -> ExprError:
        tok = tok or self.peek()
        found = "end of input" if tok.kind == "end" else repr(tok.text)
        return ExprError(f"syntax error at column {tok.column}: {message}, found {found}")

    # -- grammar ------------------------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.compose()
        if self.peek().kind != "end":
            raise self.error("expected end of input")
        return node

    def compose(self) -> Node:
        first = self.colon()
        items = [first]
        while self.peek().kind == "name" and self.peek().text == "o":
            self.advance()
            items.append(self.colon())
        if len(items) == 1:
            return first
        return Node("compose", items=tuple(items), column=first.column)

    def colon(self) -> Node:
        shape = self.primary()
        if not self.at(":"):
            return shape
        self.advance()
        stride = self.primary()
        for part, what in ((shape, "shape"), (stride, "stride")):
            if not _is_int_tuple_node(part):
                raise ExprError(f"syntax error at column {part.column}: the {what} of a layout must be "
                                "an int or a tuple of ints")
        return Node("layout", items=(shape, stride), column=shape.column)

    def primary(self) -> Node:
        tok = self.peek()
        if tok.kind == "int":
            self.advance()
            return Node("int", _to_int(tok), column=tok.column)
        if tok.kind == "punct" and tok.text == "-":
            self.advance()
            num = self.peek()
            if num.kind != "int":
                raise self.error("expected an integer after '-'", num)
            self.advance()
            return Node("int", -_to_int(num), column=tok.column)
        if tok.kind == "punct" and tok.text == "(":
            self.advance()
            return Node("tuple", items=self.sequence(")", "to close the tuple"), column=tok.column)
        if tok.kind == "punct" and tok.text == "<":
            self.advance()
            items = self.sequence(">", "to close the tiler")
            if not items:
                raise ExprError(f"syntax error at column {tok.column}: a tiler needs at least one mode")
            return Node("tiler", items=items, column=tok.column)
        if tok.kind == "name":
            return self.named(tok)
        if tok.kind == "end":
            raise self.error("expected a value")
        raise self.error("expected a value", tok)

    def sequence(self, close: str, context: str) -> tuple[Node, ...]:
        items: list[Node] = []
        while not self.at(close):
            items.append(self.compose())
            if self.at(","):
                self.advance()
                continue
            if not self.at(close):
                raise self.error(f"expected ',' or {close!r} {context}")
        self.advance()
        return tuple(items)

    def named(self, tok: _Token) -> Node:
        self.advance()
        name = tok.text
        if name in ("None", "_"):
            return Node("none", column=tok.column)
        if name == "S" and self.at("<"):
            self.advance()
            parts = []
            for i in range(3):
                sign = -1 if self.at("-") else 1
                if sign < 0:
                    self.advance()
                num = self.peek()
                if num.kind != "int":
                    raise self.error("expected an integer in S<B,M,S>", num)
                self.advance()
                parts.append(sign * _to_int(num))
                if i < 2:
                    self.expect(",", "in S<B,M,S>")
            self.expect(">", "to close S<B,M,S>")
            return Node("swizzle", tuple(parts), column=tok.column)
        if not self.at("("):
            if name == "o":
                raise ExprError(f"syntax error at column {tok.column}: 'o' (composition) needs a value "
                                "on its left")
            raise ExprError(f"unknown name {name!r} at column {tok.column}: only calls name(...), None and _ "
                            "are names")
        if self.known is not None and name not in self.known:
            raise ExprError(f"unknown function {name!r} at column {tok.column}")
        self.advance()
        args: list[Node] = []
        kwargs: list[tuple[str, Node]] = []
        while not self.at(")"):
            if self.peek().kind == "name" and self.peek(1).kind == "punct" and self.peek(1).text == "=":
                key = self.advance().text
                self.advance()
                if any(k == key for k, _ in kwargs):
                    raise ExprError(f"syntax error at column {tok.column}: keyword {key!r} given twice")
                kwargs.append((key, self.compose()))
            else:
                if kwargs:
                    raise self.error("positional argument after a keyword argument")
                args.append(self.compose())
            if self.at(","):
                self.advance()
                continue
            if not self.at(")"):
                raise self.error(f"expected ',' or ')' in the call of {name}")
        self.advance()
        return Node("call", name, items=(tuple(args), tuple(kwargs)), column=tok.column)


def _to_int(tok: _Token) -> int:
    """Return the value of an integer token, raising ExprError for one too long to convert."""
    try:
        return int(tok.text)
    except ValueError:
        raise ExprError(f"syntax error at column {tok.column}: integer literal too long") from None


def _is_int_tuple_node(node: Node) -> bool:
    """Return True when the node is an int or a (nested) tuple of ints."""
    if node.kind == "int":
        return True
    return node.kind == "tuple" and all(_is_int_tuple_node(item) for item in node.items)


def parse(text: str) -> Node:
    """Return the syntax tree of a layout expression; raise ExprError for bad syntax or unknown functions."""
    if not isinstance(text, str):
        raise TypeError(f"parse: the expression must be a str, got {text!r}")
    return _Parser(text, functions()).parse()


def _value(node: Node, known: dict[str, Any]) -> Any:
    """Return the value of a syntax-tree node."""
    kind = node.kind
    if kind == "int":
        return node.value
    if kind == "none":
        return None
    if kind in ("tuple", "tiler"):
        return tuple(_value(item, known) for item in node.items)
    if kind == "layout":
        return known["Layout"](_value(node.items[0], known), _value(node.items[1], known))
    if kind == "swizzle":
        return known["Swizzle"](*node.value)
    if kind == "call":
        args, kwargs = node.items
        fn = known.get(node.value)
        if fn is None:
            raise ExprError(f"unknown function {node.value!r} at column {node.column}")
        return fn(*(_value(a, known) for a in args), **{k: _value(v, known) for k, v in kwargs})
    if kind == "compose":
        values = [_value(item, known) for item in node.items]
        if len(values) == 3 and type(values[1]) is int and "ComposedLayout" in known:
            return known["ComposedLayout"](values[0], values[1], values[2])
        result = values[-1]
        for lhs in reversed(values[:-1]):
            result = known["composition"](lhs, result)
        return result
    raise ExprError(f"internal: unknown node kind {kind!r}")


def evaluate(expr: str | Node) -> Any:
    """Return the value of a layout expression (text or syntax tree)."""
    known = functions()
    node = _Parser(expr, known).parse() if isinstance(expr, str) else expr
    if not isinstance(node, Node):
        raise TypeError(f"evaluate: expected a str or a Node, got {expr!r}")
    return _value(node, known)
