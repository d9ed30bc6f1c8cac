"""JavaScript's values as the JSON a stream carries gives them (dict, list, str, int/float, bool, None for null,
UNDEFINED for a missing property), and what JavaScript code does with them: property reads that throw, truthiness,
`'' + value`, `JSON.stringify`. Emulated client code (lmconform.clients.void, .openai_node) is written with these,
line by line as its TypeScript reads."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Any = _Undefined()


class Thrown(Exception):
    """A JavaScript exception; `text` is what `error + ''` gives."""

    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def get(obj: Any, key: str, *, optional: bool = False) -> Any:
    """`obj[key]`, or `obj?.[key]` when optional."""
    if obj is None or obj is UNDEFINED:
        if optional:
            return UNDEFINED
        kind = "null" if obj is None else "undefined"
        raise Thrown(f"TypeError: Cannot read properties of {kind} (reading '{key}')")
    if isinstance(obj, dict):
        return obj.get(key, UNDEFINED)
    if isinstance(obj, (list, str)) and is_array_index(key) and int(key) < len(obj):
        return obj[int(key)]
    return UNDEFINED


def is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def or_empty(value: Any) -> Any:
    return "" if value is None or value is UNDEFINED else value  # value ?? ''


def or_empty_list(value: Any) -> Any:
    return [] if value is None or value is UNDEFINED else value  # value ?? []


def is_zero(value: Any) -> bool:
    return is_number(value) and value == 0  # value === 0 (and -0)


def truthy(value: Any) -> bool:
    if value is None or value is UNDEFINED or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if is_number(value):
        return value == value and value != 0
    return True


def iterate(value: Any) -> list[Any]:
    """`for (const x of value)`: arrays and strings iterate, anything else throws."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return list(value)
    if isinstance(value, bool):
        shown = f"boolean {to_string(value)}"
    elif is_number(value):
        shown = f"number {to_string(value)}"
    else:
        shown = "object"
    raise Thrown(f"TypeError: {shown} is not iterable (cannot read property Symbol(Symbol.iterator))")


def to_string(value: Any) -> str:
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
    if is_number(value):
        return number_to_string(value)
    if isinstance(value, list):  # Array#join(","): null and undefined elements become ""
        return ",".join("" if e is None or e is UNDEFINED else to_string(e) for e in value)
    return "[object Object]"


def number_to_string(value: int | float) -> str:
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


def stringify(value: Any) -> str:
    """JSON.stringify of a parsed JSON value (array-index keys first, as JavaScript orders them)."""
    if value is None or isinstance(value, bool):
        return to_string(value)
    if isinstance(value, str):
        return quote(value)
    if is_number(value):
        text = number_to_string(value)
        return text if text not in ("NaN", "Infinity", "-Infinity") else "null"
    if isinstance(value, list):
        return "[" + ",".join(stringify(e) for e in value) + "]"
    indexed = sorted((k for k in value if is_array_index(k)), key=int)
    keys = indexed + [k for k in value if not is_array_index(k)]
    return "{" + ",".join(quote(k) + ":" + stringify(value[k]) for k in keys) + "}"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        ch = match.group()
        return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"

    # A surrogate left alone here is unpaired: pairs were already joined into one code point.
    return '"' + re.sub(r'["\\\x00-\x1f\ud800-\udfff]', escape, text) + '"'


