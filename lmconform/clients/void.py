"""What Void shows its user for a streamed chat completion.

Void (github.com/voideditor/void) reads LM Studio, vLLM, LiteLLM, Ollama and any "OpenAI-compatible" endpoint
through the npm `openai` package with `stream: true`, and folds the chunks into one text, one reasoning string
and at most one tool call. This module replays a captured exchange through a line-by-line emulation of that
code, JavaScript semantics included. Upstream sources:

- voideditor/void, src/vs/workbench/contrib/void/electron-main/llmMessage/sendLLMMessage.impl.ts at commit
  40a27cd1eede62d23034d6fc538c70e7e2d5fd58 (its last change; unchanged at the repository's head b3166e7e):
  `_sendOpenAICompatibleChat` (the accumulator and the "empty" error), `rawToolCallObjOfParamsStr` (the
  params parse), `invalidApiKeyMessage` (what a 401 shows).
- voideditor/void, src/vs/workbench/contrib/void/common/modelCapabilities.ts at commit
  940155ac80120a0cdb40f30168ec99ba092579b9: `providerReasoningIOSettings.output`, which names the delta
  field read as reasoning per provider. For `lmStudio` and `ollama` it names none (`needsManualParse`), so
  Void never reads `delta.reasoning` from LM Studio.
- Void pins openai 4.96.0 (package-lock.json) and runs on Electron 34.3.2 (.npmrc), hence V8 13.x wording.
- openai/openai-node at tag v4.96.0 (f99e7c3ca9348a8611665b54a68a9e377dc61ea9): src/streaming.ts
  (`Stream.fromSSEResponse`, `_iterSSEMessages`, `SSEDecoder`), src/internal/decoders/line.ts
  (`LineDecoder`), src/core.ts (`makeRequest`'s non-2xx path, `safeJSON`), src/error.ts
  (`APIError.makeMessage`, `APIError.generate`).
- v8/v8 src/json/json-parser.cc and src/common/message-template.h: `JSON.parse` and its error messages.

The SDK's SSE decoder is not the WHATWG algorithm that `lmconform.wire.sse` implements: it keeps a leading
byte-order mark in the first field name, tells an absent `event:` field (null) from `event: message`, and
dispatches a block that has an `event:` line but no data. Those differences decide what Void sees, so the
decoder is emulated here instead of borrowed from the wire parser.

Not emulated: the `<think>` tag splitting Void applies for models it recognises by name (it changes what the
chat pane shows, not the empty check, which reads the raw text), and what the SDK does when the connection
breaks mid-body (the captured reads are replayed as if they were the whole body).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NoReturn

from lmconform.wire.http import HttpExchange

EMPTY_RESPONSE = "Void: Response from model was empty."

# Void's provider name -> (display title used in its 401 message, delta field it reads as reasoning).
PROVIDERS: dict[str, tuple[str, str | None]] = {
    "lmStudio": ("LM Studio", None),
    "ollama": ("Ollama", None),
    "vLLM": ("vLLM", "reasoning_content"),
    "liteLLM": ("LiteLLM", "reasoning_content"),
    "openAICompatible": ("OpenAI-Compatible", "reasoning_content"),
}


@dataclass(frozen=True)
class VoidOutcome:
    """What Void ends with. On an error, the strings are what it had accumulated when it stopped."""

    text: str
    reasoning: str
    tool_name: str
    tool_id: str
    tool_params_str: str
    # The params object Void hands to the tool, or None when it makes no tool call. A JSON array passes Void's
    # `typeof input === 'object'` test, so it can be a list.
    tool_params: dict[str, Any] | list[Any] | None
    error: str | None  # exactly what Void shows: its own message, or the exception as `error + ''`


def void_read(exchange: HttpExchange, *, provider: str = "lmStudio") -> VoidOutcome:
    title, reasoning_field = PROVIDERS[provider]
    acc = _Accumulator(reasoning_field)
    try:
        for chunk in _sdk_chunks(exchange):
            acc.feed(chunk)
    except _Thrown as thrown:
        # Void: `error instanceof OpenAI.APIError && error.status === 401` gets its own message.
        return acc.outcome(f"Invalid {title} API key." if thrown.status == 401 else thrown.text)
    if not acc.text and not acc.reasoning and not acc.tool_name:
        return acc.outcome(EMPTY_RESPONSE)
    return acc.outcome(None, _raw_tool_params(acc.tool_params_str))


class _Accumulator:
    """The body of `for await (const chunk of response)` in `_sendOpenAICompatibleChat`."""

    def __init__(self, reasoning_field: str | None) -> None:
        self.reasoning_field = reasoning_field
        self.text = ""
        self.reasoning = ""
        self.tool_name = ""
        self.tool_id = ""
        self.tool_params_str = ""

    def feed(self, chunk: Any) -> None:
        # const newText = chunk.choices[0]?.delta?.content ?? ''
        self.text += _to_string(_or_empty(_get(_delta(chunk), "content", optional=True)))

        # for (const tool of chunk.choices[0]?.delta?.tool_calls ?? [])
        for tool in _iterate(_or_empty_list(_get(_delta(chunk), "tool_calls", optional=True))):
            if not _is_zero(_get(tool, "index")):  # undefined !== 0: a missing index is skipped too
                continue
            function = _get(tool, "function")
            self.tool_name += _to_string(_or_empty(_get(function, "name", optional=True)))
            self.tool_params_str += _to_string(_or_empty(_get(function, "arguments", optional=True)))
            self.tool_id += _to_string(_or_empty(_get(tool, "id")))

        if self.reasoning_field:
            # (chunk.choices[0]?.delta?.[field] || '') + ''
            reasoning = _get(_delta(chunk), self.reasoning_field, optional=True)
            self.reasoning += _to_string(reasoning) if _truthy(reasoning) else ""

    def outcome(self, error: str | None, params: dict[str, Any] | list[Any] | None = None) -> VoidOutcome:
        return VoidOutcome(
            text=self.text,
            reasoning=self.reasoning,
            tool_name=self.tool_name,
            tool_id=self.tool_id,
            tool_params_str=self.tool_params_str,
            tool_params=params,
            error=error,
        )


def _delta(chunk: Any) -> Any:
    # chunk.choices[0]?.delta — `chunk.choices[0]` throws when chunk is null or has no choices.
    return _get(_get(_get(chunk, "choices"), "0"), "delta", optional=True)


def _raw_tool_params(params_str: str) -> dict[str, Any] | list[Any] | None:
    """`rawToolCallObjOfParamsStr`: JSON.parse in a try/catch, then null and non-objects are no tool call."""
    try:
        value = _json_parse(params_str)
    except _Thrown:
        return None
    return value if isinstance(value, (dict, list)) else None


# ---- the openai npm package (v4.96.0) between the socket and Void ------------------------------------------


def _sdk_chunks(exchange: HttpExchange) -> Iterator[Any]:
    """What `for await (const chunk of stream)` yields, raising what the SDK throws (as `_Thrown`)."""
    if exchange.status is None:
        # The SDK retries and then throws APIConnectionTimeoutError or APIConnectionError.
        timed_out = exchange.error_kind in ("timeout", "deadline")
        raise _Thrown("Error: " + ("Request timed out." if timed_out else "Connection error."))
    if not 200 <= exchange.status <= 299:
        raise _status_error(exchange.status, exchange.body)
    if exchange.status in (204, 205):
        # fetch gives these statuses a null body.
        raise _Thrown("Error: Attempted to iterate over a response with no body")

    done = False
    for event, data in _sse_messages(exchange.body):
        if done:
            continue
        if data.startswith("[DONE]"):
            done = True
            continue
        parsed = _json_parse(data)
        if event is None or event.startswith("response.") or event.startswith("transcript."):
            if _truthy(parsed) and _truthy(_get(parsed, "error")):
                raise _Thrown("Error: " + _api_error_message(None, _get(parsed, "error"), UNDEFINED))
            yield parsed
        else:
            if event == "error":
                error, message = _get(parsed, "error"), _get(parsed, "message")
                raise _Thrown("Error: " + _api_error_message(None, error, message))
            yield {"event": event, "data": parsed}


def _status_error(status: int, body: bytes) -> _Thrown:
    """`makeRequest` on `!response.ok`: `APIError.generate(status, safeJSON(text), text-if-not-JSON)`."""
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")  # Response.text() drops a BOM
    try:
        parsed: Any = _json_parse(text)
    except _Thrown:
        parsed = UNDEFINED
    message = UNDEFINED if _truthy(parsed) else text
    error = _get(parsed, "error", optional=True)
    return _Thrown("Error: " + _api_error_message(status, error, message), status=status)


def _api_error_message(status: int | None, error: Any, message: Any) -> str:
    """`APIError.makeMessage`, then the template literal that turns it into the Error's message."""
    inner = _get(error, "message", optional=True)
    if _truthy(inner):
        msg = inner if isinstance(inner, str) else _stringify(inner)
    elif _truthy(error):
        msg = _stringify(error)
    else:
        msg = message
    if status and _truthy(msg):
        return f"{status} {_to_string(msg)}"
    if status:
        return f"{status} status code (no body)"
    if _truthy(msg):
        return _to_string(msg)
    return "(no status code or body)"


def _sse_messages(body: bytes) -> Iterator[tuple[str | None, str]]:
    """`_iterSSEMessages`: LineDecoder lines fed to SSEDecoder, which dispatches on a blank line only.

    LineDecoder ends a line at CR, LF or CRLF however the reads fall, and at end of body flushes a last line
    that had no terminator, so splitting the whole body at once gives the same lines.
    """
    lines = re.split(rb"\r\n|\r|\n", body)
    if lines[-1] == b"":
        lines.pop()
    event: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", errors="replace")  # Buffer#toString: replacement, BOM kept
        if not line:
            if not event and not data:
                continue
            yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)


# ---- JavaScript values -------------------------------------------------------------------------------------
# JSON gives dict, list, str, int/float, bool and None (null); UNDEFINED stands for a missing property.


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Any = _Undefined()


class _Thrown(Exception):
    """A JavaScript exception; `text` is what `error + ''` gives."""

    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _get(obj: Any, key: str, *, optional: bool = False) -> Any:
    """`obj[key]`, or `obj?.[key]` when optional."""
    if obj is None or obj is UNDEFINED:
        if optional:
            return UNDEFINED
        kind = "null" if obj is None else "undefined"
        raise _Thrown(f"TypeError: Cannot read properties of {kind} (reading '{key}')")
    if isinstance(obj, dict):
        return obj.get(key, UNDEFINED)
    if isinstance(obj, (list, str)) and _is_array_index(key) and int(key) < len(obj):
        return obj[int(key)]
    return UNDEFINED


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def _or_empty(value: Any) -> Any:
    return "" if value is None or value is UNDEFINED else value  # value ?? ''


def _or_empty_list(value: Any) -> Any:
    return [] if value is None or value is UNDEFINED else value  # value ?? []


def _is_zero(value: Any) -> bool:
    return _is_number(value) and value == 0  # value === 0 (and -0)


def _truthy(value: Any) -> bool:
    if value is None or value is UNDEFINED or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if _is_number(value):
        return value == value and value != 0
    return True


def _iterate(value: Any) -> list[Any]:
    """`for (const x of value)`: arrays and strings iterate, anything else throws."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return list(value)
    if isinstance(value, bool):
        shown = f"boolean {_to_string(value)}"
    elif _is_number(value):
        shown = f"number {_to_string(value)}"
    else:
        shown = "object"
    raise _Thrown(f"TypeError: {shown} is not iterable (cannot read property Symbol(Symbol.iterator))")


def _to_string(value: Any) -> str:
    """JavaScript's `'' + value` for a JSON value."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if _is_number(value):
        return _number_to_string(value)
    if isinstance(value, list):  # Array#join(","): null and undefined elements become ""
        return ",".join("" if e is None or e is UNDEFINED else _to_string(e) for e in value)
    return "[object Object]"


def _number_to_string(value: int | float) -> str:
    """Number::toString: JSON numbers are doubles, printed with the shortest round-trip digits."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = k + int(exponent)  # the value is 0.DIGITS x 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _stringify(value: Any) -> str:
    """JSON.stringify of a parsed JSON value (array-index keys first, as JavaScript orders them)."""
    if value is None or isinstance(value, bool):
        return _to_string(value)
    if isinstance(value, str):
        return _quote(value)
    if _is_number(value):
        text = _number_to_string(value)
        return text if text not in ("NaN", "Infinity", "-Infinity") else "null"
    if isinstance(value, list):
        return "[" + ",".join(_stringify(e) for e in value) + "]"
    indexed = sorted((k for k in value if _is_array_index(k)), key=int)
    keys = indexed + [k for k in value if not _is_array_index(k)]
    return "{" + ",".join(_quote(k) + ":" + _stringify(value[k]) for k in keys) + "}"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quote(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        ch = match.group()
        return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"

    # A surrogate left alone here is unpaired: pairs were already joined into one code point.
    return '"' + re.sub(r'["\\\x00-\x1f\ud800-\udfff]', escape, text) + '"'


# ---- JSON.parse as V8 does it, errors included --------------------------------------------------------------


def _json_parse(text: str) -> Any:
    return _V8JsonParser(text).parse()


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
        raise _Thrown("SyntaxError: " + text)

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
