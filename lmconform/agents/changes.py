"""What changed between two requests an agent sent: when a server refuses a request and the agent asks again, the
difference is how it worked round the refusal (Claude Code drops the system turn, a beta flag, a field), said in a
few words a reader can act on."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from lmconform.wire.http import HttpRequest

MOST_SHOWN = 4  # changes named; the rest are counted
LISTED_HEADERS = ("anthropic-beta",)  # headers whose value is a comma-separated list of flags an agent drops one by one


def request_changes(before: HttpRequest, after: HttpRequest) -> list[str]:
    """The differences of `after` from `before`, each in a few words (`without messages[1] (a system turn)`, `without
    the beta flag X`, `with max_tokens 4096 instead of 32000`); empty when it is the same request again."""
    changes = _query_changes(before.url, after.url)
    for name in LISTED_HEADERS:
        changes += _flag_changes(_header(before, name), _header(after, name), f"the {name.split('-')[-1]} flag")
    changes += _body_changes(_json(before.body), _json(after.body))
    return changes


def changes_words(changes: list[str]) -> str:
    """`without output_config and without messages[1] (a system turn)`; `the same request again` when none."""
    if not changes:
        return "the same request again"
    shown = changes[:MOST_SHOWN]
    more = f" and {len(changes) - MOST_SHOWN} more changes" if len(changes) > MOST_SHOWN else ""
    return (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]) + more


def _header(request: HttpRequest, name: str) -> str:
    return next((value for key, value in request.headers.items() if key.lower() == name), "")


def _json(body: Any) -> Any:
    if isinstance(body, str | bytes):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return body


def _query_changes(before: str, after: str) -> list[str]:
    old, new = dict(parse_qsl(urlsplit(before).query)), dict(parse_qsl(urlsplit(after).query))
    return ([f"without ?{key}={old[key]}" for key in old if key not in new]
            + [f"with ?{key}={new[key]}" for key in new if key not in old])


def _flag_changes(before: str, after: str, what: str) -> list[str]:
    old = [flag.strip() for flag in before.split(",") if flag.strip()]
    new = [flag.strip() for flag in after.split(",") if flag.strip()]
    return [f"without {what} {flag}" for flag in old if flag not in new] + \
        [f"with {what} {flag}" for flag in new if flag not in old]


def _body_changes(before: Any, after: Any) -> list[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [] if before == after else ["with another body"]
    changes = []
    for key in before:
        if key not in after:
            changes.append(f"without {key}")
        elif isinstance(before[key], list) and isinstance(after[key], list):
            changes += _list_changes(key, before[key], after[key])
        elif before[key] != after[key]:
            changes.append(f"with another {key}" if isinstance(before[key], dict | list)
                           else f"with {key} {_shown(after[key])} instead of {_shown(before[key])}")
    return changes + [f"with {key}" for key in after if key not in before]


def _list_changes(key: str, before: list, after: list) -> list[str]:
    """Items of a list (messages, input items, tools) left out or added, matched by their content."""
    left = list(after)
    removed = []
    for position, item in enumerate(before):
        if item in left:
            left.remove(item)
        else:
            removed.append((position, item))
    if removed and len(removed) == len(left) and len(before) == len(after):
        return [f"with {key}[{position}] changed" for position, _ in removed]
    return ([f"without {key}[{position}]{_kind(item)}" for position, item in removed]
            + [f"with a new item in {key}{_kind(item)}" for item in left])


def _kind(item: Any) -> str:
    """What an item is, as the request says: its role (`a system turn`), or its type, or its name."""
    if not isinstance(item, dict):
        return ""
    if isinstance(item.get("role"), str):
        article = "an" if item["role"][:1] in tuple("aeio") else "a"  # a user, an assistant
        return f" ({article} {item['role']} turn)"
    for key in ("type", "name"):
        if isinstance(item.get(key), str):
            return f" ({key} {item[key]})"
    return ""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"
