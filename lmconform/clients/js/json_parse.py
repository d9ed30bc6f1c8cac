"""`JSON.parse` as V8 does it, error messages and positions included: what a JavaScript client shows when the
arguments it accumulated are not JSON."""

from __future__ import annotations

import json
import struct
from typing import Any, NoReturn

from lmconform.clients.js.values import Thrown


def json_parse(text: str) -> Any:
    """JSON.parse: Python's parser accepts exactly the same texts (NaN and Infinity refused) and builds the same
    values, and is fast; only a text it refuses is parsed again by the port, for V8's own message and position."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return _V8JsonParser(text).parse()


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_STRING, _NUMBER, _LBRACK, _LBRACE, _RBRACK, _RBRACE = "string", "number", "[", "{", "]", "}"
_TRUE, _FALSE, _NULL, _WHITESPACE, _COLON, _COMMA = "true", "false", "null", " ", ":", ","
_ILLEGAL, _EOS = "illegal", "eos"
_ONE_CHAR_TOKENS = {
    ord('"'): _STRING, ord("-"): _NUMBER, ord("["): _LBRACK, ord("{"): _LBRACE, ord("]"): _RBRACK,
    ord("}"): _RBRACE, ord("t"): _TRUE, ord("f"): _FALSE, ord("n"): _NULL, ord(" "): _WHITESPACE,
    ord("\t"): _WHITESPACE, ord("\r"): _WHITESPACE, ord("\n"): _WHITESPACE, ord(":"): _COLON, ord(","): _COMMA,
    **{ord(d): _NUMBER for d in "0123456789"},
}
_END = -1  # V8's kEndOfString
_NUMBER_PARTS = frozenset(map(ord, ".eE0123456789-+"))
_SIMPLE_ESCAPES = {ord('"'): 0x22, ord("\\"): 0x5C, ord("/"): 0x2F, ord("b"): 0x08, ord("f"): 0x0C,
                   ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09}
# V8's messages without their tail, which is always " at position P (line L column C)".
_PROP_NAME_OR_RBRACE = "Expected property name or '}' in JSON"
_DOUBLE_QUOTED_PROP = "Expected double-quoted property name in JSON"
_COLON_AFTER_NAME = "Expected ':' after property name in JSON"
_COMMA_OR_RBRACE = "Expected ',' or '}' after property value in JSON"
_COMMA_OR_RBRACK = "Expected ',' or ']' after array element in JSON"
_NON_WHITESPACE_AFTER = "Unexpected non-whitespace character after JSON"
_UNTERMINATED_STRING = "Unterminated string in JSON"
_BAD_ESCAPE = "Bad escaped character in JSON"
_BAD_UNICODE_ESCAPE = "Bad Unicode escape in JSON"
_BAD_CONTROL = "Bad control character in string literal in JSON"
_NO_NUMBER_AFTER_MINUS = "No number after minus sign in JSON"
_UNTERMINATED_FRACTION = "Unterminated fractional number in JSON"
_EXPONENT_MISSING = "Exponent part is missing a number in JSON"
_MAX_CONTEXT = 10  # kMaxContextCharacters


def _token_of(unit: int) -> str:
    return _EOS if unit == _END else _ONE_CHAR_TOKENS.get(unit, _ILLEGAL)


class _V8JsonParser:
    """A port of V8's JsonParser over UTF-16 code units, so positions and messages match `JSON.parse`.

    It follows the V8 of Electron 34: older ones (Node 20's) leave out "(line L column C)" and word a missing
    colon after a later property as an unexpected token.
    """

    def __init__(self, text: str) -> None:
        self.source = text.encode("utf-16-le", "surrogatepass")
        self.units = struct.unpack(f"<{len(self.source) // 2}H", self.source)
        self.pos = 0
        self.next = _EOS

    def parse(self) -> Any:
        value = self.value()
        if not self.check(_EOS):
            self.fail(self.next, _NON_WHITESPACE_AFTER)
        return value

    def current(self) -> int:
        return self.units[self.pos] if self.pos < len(self.units) else _END

    def next_unit(self) -> int:
        self.pos += 1
        return self.current()

    def skip_whitespace(self) -> None:
        while self.pos < len(self.units) and _token_of(self.units[self.pos]) == _WHITESPACE:
            self.pos += 1
        self.next = _token_of(self.current())

    def check(self, token: str) -> bool:
        self.skip_whitespace()
        if self.next != token:
            return False
        self.pos += 1
        return True

    def expect(self, token: str, message: str) -> None:
        if self.next != token:
            self.fail(self.next, message)
        self.pos += 1

    def expect_next(self, token: str, message: str) -> None:
        self.skip_whitespace()
        self.expect(token, message)

    def value(self) -> Any:
        self.skip_whitespace()
        token = self.next
        if token == _STRING:
            self.pos += 1
            return self.string()
        if token == _NUMBER:
            return self.number()
        if token in (_TRUE, _FALSE, _NULL):
            self.literal(token)
            return {_TRUE: True, _FALSE: False, _NULL: None}[token]
        if token == _LBRACE:
            return self.object()
        if token == _LBRACK:
            return self.array()
        self.fail(_token_of(self.current()))

    def object(self) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        if self.check(_RBRACE):
            return result
        first = True
        while True:
            self.expect_next(_STRING, _PROP_NAME_OR_RBRACE if first else _DOUBLE_QUOTED_PROP)
            key = self.string()
            self.expect_next(_COLON, _COLON_AFTER_NAME)
            result[key] = self.value()
            first = False
            if not self.check(_COMMA):
                break
        self.expect(_RBRACE, _COMMA_OR_RBRACE)
        return result

    def array(self) -> list[Any]:
        self.pos += 1
        if self.check(_RBRACK):
            return []
        items = [self.value()]
        while self.check(_COMMA):
            items.append(self.value())
        self.expect(_RBRACK, _COMMA_OR_RBRACK)
        return items

    def literal(self, word: str) -> None:
        remaining = len(self.units) - self.pos
        rest = [ord(c) for c in word[1:]]
        if remaining > len(rest) and list(self.units[self.pos + 1 : self.pos + 1 + len(rest)]) == rest:
            self.pos += len(word)
            return
        self.pos += 1
        for expected in rest[: remaining - 1]:
            if self.units[self.pos] != expected:
                self.fail(_token_of(self.units[self.pos]))
            self.pos += 1
        self.fail(_EOS)

    def string(self) -> str:
        out: list[int] = []
        while True:
            unit = self.current()
            if unit == _END:
                self.fail(_ILLEGAL, _UNTERMINATED_STRING)
            if unit == 0x22:
                self.pos += 1
                return struct.pack(f"<{len(out)}H", *out).decode("utf-16-le", "surrogatepass")
            if unit == 0x5C:
                escaped = self.next_unit()
                if escaped == _END or escaped > 0xFF:
                    self.fail(_token_of(escaped))
                if escaped == ord("u"):
                    out.append(self.unicode_escape())
                elif escaped in _SIMPLE_ESCAPES:
                    out.append(_SIMPLE_ESCAPES[escaped])
                else:
                    self.fail(_ILLEGAL, _BAD_ESCAPE)
                self.pos += 1
                continue
            if unit < 0x20:
                self.fail(_ILLEGAL, _BAD_CONTROL)
            out.append(unit)
            self.pos += 1

    def unicode_escape(self) -> int:
        value = 0
        for _ in range(4):
            unit = self.next_unit()
            digit = int(chr(unit), 16) if unit != _END and chr(unit) in "0123456789abcdefABCDEF" else -1
            if digit < 0:
                self.fail(_ILLEGAL, _BAD_UNICODE_ESCAPE)
            value = value * 16 + digit
        return value

    def number(self) -> int | float:
        start = self.pos
        unit = self.current()
        negative = unit == ord("-")
        if negative:
            unit = self.next_unit()
        if unit == ord("0"):
            unit = self.next_unit()
            if unit in _NUMBER_PARTS:
                if ord("0") <= unit <= ord("9"):
                    self.fail(_NUMBER)
            elif not negative:
                return 0
        else:
            digits_start = self.pos
            self.skip_digits()
            if self.pos == digits_start:
                self.fail(_ILLEGAL, _NO_NUMBER_AFTER_MINUS)
        if self.current() == ord("."):
            if not ord("0") <= self.next_unit() <= ord("9"):
                self.fail(_ILLEGAL, _UNTERMINATED_FRACTION)
            self.skip_digits()
        if self.current() in (ord("e"), ord("E")):
            unit = self.next_unit()
            if unit in (ord("-"), ord("+")):
                unit = self.next_unit()
            if not ord("0") <= unit <= ord("9"):
                self.fail(_ILLEGAL, _EXPONENT_MISSING)
            self.skip_digits()
        literal = self.source[start * 2 : self.pos * 2].decode("utf-16-le")
        return float(literal) if any(c in literal for c in ".eE") else int(literal)

    def skip_digits(self) -> None:
        while ord("0") <= self.current() <= ord("9"):
            self.pos += 1

    def fail(self, token: str, message: str | None = None) -> NoReturn:
        """`ReportUnexpectedToken`: a custom message wins; otherwise the token picks one."""
        pos = self.pos
        line, column = self.location()
        at = f" at position {pos} (line {line} column {column})"
        if message is not None:
            text = message + at
        elif token == _EOS:
            text = "Unexpected end of JSON input"
        elif token in (_NUMBER, _STRING):
            text = f"Unexpected {token} in JSON{at}"
        elif (whole := self.slice(0, len(self.units))) in ("[object Object]", "undefined", "Infinity", "NaN"):
            text = f'"{whole}" is not valid JSON'
        else:
            text = self.unexpected_token(pos)
        raise Thrown("SyntaxError: " + text)

    def unexpected_token(self, pos: int) -> str:
        token = self.slice(pos, pos + 1)
        length = len(self.units)
        if length < 2 * _MAX_CONTEXT + 1:
            return f"Unexpected token '{token}', \"{self.slice(0, length)}\" is not valid JSON"
        if pos < _MAX_CONTEXT:
            return f"Unexpected token '{token}', \"{self.slice(0, pos + _MAX_CONTEXT)}\"... is not valid JSON"
        if pos < length - _MAX_CONTEXT:
            context = self.slice(pos - _MAX_CONTEXT, pos + _MAX_CONTEXT)
            return f"Unexpected token '{token}', ...\"{context}\"... is not valid JSON"
        return f"Unexpected token '{token}', ...\"{self.slice(pos - _MAX_CONTEXT, length)}\" is not valid JSON"

    def slice(self, start: int, end: int) -> str:
        return self.source[start * 2 : end * 2].decode("utf-16-le", "surrogatepass")

    def location(self) -> tuple[int, int]:
        """`CalculateFileLocation`: CR, LF and CRLF end a line."""
        line, line_start, i = 1, 0, 0
        while i < self.pos:
            if self.units[i] == 0x0D and i < self.pos - 1 and self.units[i + 1] == 0x0A:
                i += 1
            if self.units[i] in (0x0D, 0x0A):
                line, line_start = line + 1, i + 1
            i += 1
        return line, 1 + i - line_start
